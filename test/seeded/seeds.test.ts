/**
 * The seed list of `npm run seeded` stays runnable: ids unique, every field there, each `find`
 * occurring exactly once in its file as the code stands (a seed whose code moved is stale and must
 * be updated with the change that moved it), and every listed test file present and in the unit
 * project. Fast: it reads files, it runs no seed.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSeeds, occurrences } from './seeds.mjs'

const seeds = loadSeeds()

describe('the seeded-defect list', () => {
  it('holds about 25 seeds with unique ids', () => {
    expect(seeds.length).toBeGreaterThanOrEqual(20)
    expect(new Set(seeds.map((seed) => seed.id)).size).toBe(seeds.length)
  })

  it.each(seeds.map((seed) => [seed.id, seed] as const))('%s: its find occurs exactly once in its file', (_id, seed) => {
    expect(existsSync(seed.file), seed.file).toBe(true)
    expect(occurrences(readFileSync(seed.file, 'utf8'), seed.find)).toBe(1)
  })

  it.each(seeds.map((seed) => [seed.id, seed] as const))('%s: states one rule and lists unit tests that exist', (_id, seed) => {
    expect(seed.rule).toMatch(/^[A-Z].*\.$/)
    expect(seed.replace).not.toBe(seed.find)
    for (const test of seed.tests) {
      expect(test).toMatch(/^test\/(?!apps\/).*\.test\.ts$/)
      expect(existsSync(test), test).toBe(true)
    }
  })
})

describe('loadSeeds', () => {
  const withFile = (content: unknown, check: (path: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), 'seeds-'))
    try {
      const path = join(dir, 'seeds.json')
      writeFileSync(path, JSON.stringify(content))
      check(path)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const seed = { id: 'a', rule: 'A rule.', file: 'core/crypto.ts', find: 'x', replace: 'y', tests: ['test/core/csrf.test.ts'] }

  it('refuses two seeds with one id', () => {
    withFile([seed, seed], (path) => expect(() => loadSeeds(path)).toThrow(/used twice/))
  })

  it('refuses a seed without tests, or one whose replace is its find', () => {
    withFile([{ ...seed, tests: [] }], (path) => expect(() => loadSeeds(path)).toThrow(/tests/))
    withFile([{ ...seed, replace: 'x' }], (path) => expect(() => loadSeeds(path)).toThrow(/replace equals find/))
    withFile([{ ...seed, find: '' }], (path) => expect(() => loadSeeds(path)).toThrow(/find/))
  })

  it('counts occurrences without overlap, and an empty needle as none', () => {
    expect(occurrences('aaaa', 'aa')).toBe(2)
    expect(occurrences('abc', 'd')).toBe(0)
    expect(occurrences('abc', '')).toBe(0)
  })
})

describe('scripts/seeded.mjs', () => {
  const script = (args: string[]) => spawnSync(process.execPath, ['scripts/seeded.mjs', ...args], { encoding: 'utf8' })

  it('lists every seed with --list, and runs none', () => {
    const listed = script(['--list'])
    expect(listed.status).toBe(0)
    for (const seed of seeds) expect(listed.stdout).toContain(seed.id)
  })

  it('reports a seed whose find text is gone as stale, and exits 1 (no test run for it)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seeds-'))
    try {
      const path = join(dir, 'seeds.json')
      const stale = { id: 'moved', rule: 'A rule.', file: 'core/crypto.ts', find: 'code that moved away', replace: 'x', tests: ['test/core/csrf.test.ts'] }
      writeFileSync(path, JSON.stringify([stale]))
      const run = script(['--seeds', path])
      expect(run.status).toBe(1)
      expect(run.stdout).toMatch(/^stale +moved/m)
      expect(run.stdout).toContain('| moved | A rule. | stale | find text found 0 times |')
      expect(run.stdout).toContain('1 seeds: 0 caught, 0 survived, 1 stale')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses an unknown seed id and more than two seeds at once', () => {
    expect(script(['--only', 'no-such-seed']).stderr).toContain('no seed no-such-seed')
    expect(script(['--jobs', '3']).status).toBe(2)
  })
})
