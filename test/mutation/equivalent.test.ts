import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/** The folders whose code ships in the package (tsconfig.build.json and tsconfig.node.build.json). */
const SHIPPED = ['core', 'machines', 'providers', 'adapters', 'stores', 'extensions', 'testing', 'visualizations', 'integrations']
/** The longest directive line allowed: the reasoning lives in equivalent.md, not in the shipped text. */
const MAX_DIRECTIVE_LENGTH = 120

const root = join(import.meta.dirname, '..', '..')

interface Directive {
  readonly where: string
  readonly line: string
  readonly key: string | undefined
}

function directivesIn(folder: string): Directive[] {
  const files = (readdirSync(join(root, folder), { recursive: true }) as string[]).filter((name) => name.endsWith('.ts'))
  return files.flatMap((name) => {
    const path = join(folder, name)
    return readFileSync(join(root, path), 'utf8')
      .split('\n')
      .flatMap((line, index) => {
        if (!/\/\/ Stryker disable/.test(line)) return []
        const key = /^\s*\/\/ Stryker disable (?:next-line )?[A-Za-z,]+: eq#([a-z0-9-]+)$/.exec(line)?.[1]
        return [{ where: `${path}:${index + 1}`, line: line.trim(), key }]
      })
  })
}

function entryKeys(markdown: string): string[] {
  return [...markdown.matchAll(/^## (\S+)$/gm)].map((match) => match[1] as string)
}

describe('the reasons of the Stryker disable directives (test/mutation/equivalent.md)', () => {
  const directives = SHIPPED.flatMap(directivesIn)
  const entries = entryKeys(readFileSync(join(import.meta.dirname, 'equivalent.md'), 'utf8'))

  it('finds the directives (a scan that finds none would pass everything below)', () => {
    expect(directives.length).toBeGreaterThan(50)
  })

  it('every directive names a key, on one short line', () => {
    const malformed = directives.filter(({ key, line }) => key === undefined || line.length > MAX_DIRECTIVE_LENGTH)
    expect(malformed.map(({ where, line }) => `${where} ${line}`)).toEqual([])
  })

  it('every key a directive names has an entry', () => {
    const missing = directives.filter(({ key }) => key !== undefined && !entries.includes(key))
    expect(missing.map(({ where, key }) => `${where} eq#${key}`)).toEqual([])
  })

  it('every entry is named by a directive, and only once in the file', () => {
    const named = new Set(directives.map(({ key }) => key))
    expect(entries.filter((key) => !named.has(key))).toEqual([])
    expect(entries.filter((key, index) => entries.indexOf(key) !== index)).toEqual([])
  })
})
