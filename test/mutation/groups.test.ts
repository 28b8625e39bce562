import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { groups, toStrykerPattern } from './groups.mjs'

describe('the mutation groups of npm run mutate', () => {
  const entries = Object.entries(groups).flatMap(([group, { mutate }]) => mutate.map((entry) => [group, entry] as const))

  it.each(entries)('%s: resolves %s to code that exists today', (_group, entry) => {
    const pattern = toStrykerPattern(entry)
    const [file, range] = pattern.split(':')
    expect(existsSync(file!)).toBe(true)
    if (range !== undefined) {
      const [from, to] = range.split('-').map(Number)
      expect(from).toBeGreaterThan(0)
      expect(to).toBeGreaterThanOrEqual(from!)
    }
  })

  it('lists only test files that exist', () => {
    const tests = Object.values(groups).flatMap(({ tests }) => tests)
    expect(tests.filter((file) => !existsSync(file))).toEqual([])
  })

  describe('a module named by declaration', () => {
    const root = mkdtempSync(join(tmpdir(), 'authchart-groups-'))
    afterAll(() => rmSync(root, { recursive: true, force: true }))
    writeFileSync(
      join(root, 'sample.ts'),
      [
        'export const SALT = "x"',
        '',
        'export function check(a: string): boolean {',
        '  return a === SALT',
        '}',
        '',
        'const guards = {',
        '  isDue: () => true,',
        '  check: () => false,',
        '}',
        'export function unique(): void {}',
      ].join('\n'),
    )

    it('spans from the first line of the first declaration to the last line of the last', () => {
      expect(toStrykerPattern('sample.ts#SALT..unique', root)).toBe('sample.ts:1-11')
      expect(toStrykerPattern('sample.ts#isDue', root)).toBe('sample.ts:8-8')
    })

    it('is refused when the name is missing, so a renamed function cannot leave the group mutating nothing', () => {
      expect(() => toStrykerPattern('sample.ts#renamed', root)).toThrow(/0 declarations named "renamed"/)
    })

    it('is refused when the name is ambiguous rather than guessed', () => {
      expect(() => toStrykerPattern('sample.ts#check', root)).toThrow(/2 declarations named "check"/)
    })

    it('is refused when the last name comes before the first', () => {
      expect(() => toStrykerPattern('sample.ts#unique..SALT', root)).toThrow(/comes before/)
    })

    it('leaves a whole file as it is', () => {
      expect(toStrykerPattern('sample.ts', root)).toBe('sample.ts')
    })
  })
})
