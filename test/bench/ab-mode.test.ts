import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { abRows } from '../../bench/ab-report.js'
import { AB_CASES, parseBenchArgs } from '../../bench/args.js'
import { BUILT_MARKER, baselineDir, defaultBaselineRev, ensureBaseline } from '../../bench/baseline.js'

const KNOWN = ['floor', 'session-jwt', 'credentials-signin', 'http-session', 'cold-start', 'edge-bundle', 'edge-runtimes']

describe('bench arguments', () => {
  it('runs every case without --only, and only the listed ones with it', () => {
    const all = parseBenchArgs([], KNOWN)
    expect(KNOWN.every((name) => all.wanted(name))).toBe(true)
    const some = parseBenchArgs(['--only', 'cold-start,edge-bundle'], KNOWN)
    expect(KNOWN.filter((name) => some.wanted(name))).toEqual(['cold-start', 'edge-bundle'])
  })

  it('refuses an unknown --only name, naming it, instead of selecting nothing', () => {
    expect(() => parseBenchArgs(['--only', 'session-jwt,cold-strat'], KNOWN)).toThrow(/unknown case cold-strat;/)
    expect(() => parseBenchArgs(['--only', ','], KNOWN)).toThrow(/at least one case/)
  })

  it('selects the A/B cases for --ab unless --only names others', () => {
    const ab = parseBenchArgs(['--ab'], KNOWN)
    expect(ab.ab).toBe(true)
    expect(KNOWN.filter((name) => ab.wanted(name))).toEqual(KNOWN.filter((name) => AB_CASES.includes(name)))
    expect(ab.wanted('floor')).toBe(false)
    const narrowed = parseBenchArgs(['--ab', '--only', 'session-jwt'], KNOWN)
    expect(KNOWN.filter((name) => narrowed.wanted(name))).toEqual(['session-jwt'])
  })

  it('takes --ab-rev as --ab against that revision, and refuses a second baseline', () => {
    expect(parseBenchArgs(['--ab-rev', '8a07d45'], KNOWN)).toMatchObject({ ab: true, abRev: '8a07d45' })
    expect(() => parseBenchArgs(['--ab', '--baseline', '../main'], KNOWN)).toThrow(/both name the baseline/)
    expect(() => parseBenchArgs(['--ab-rev='], KNOWN)).toThrow(/needs a revision/)
  })

  it('takes a whole number of cold-start processes', () => {
    expect(parseBenchArgs(['--processes', '9'], KNOWN).processes).toBe(9)
    expect(() => parseBenchArgs(['--processes', '0'], KNOWN)).toThrow(/at least 1/)
    expect(() => parseBenchArgs(['--processes', '2.5'], KNOWN)).toThrow(/whole number/)
  })
})

describe('the A/B table', () => {
  it('gives B/A per case and metric, and leaves out a case only one build measured', () => {
    const rows = abRows(
      {
        scenarios: [
          { name: 'session-jwt', measured: { A: { cpuUsPerOp: 20, cpuUsPerOpMin: 16, opsPerSec: 1000 }, B: { cpuUsPerOp: 15, cpuUsPerOpMin: 4, opsPerSec: 1250 } } },
          { name: 'providers', measured: { B: { cpuUsPerOp: 5, opsPerSec: 9000 } } },
        ],
        coldStart: {
          handlers: [
            { build: 'A', shape: 'unbundled', aboveBare: { coldMs: 200, cpuMs: 250 }, cheapestAboveBare: { coldMs: 150, cpuMs: 100 }, loaded: { files: 170, bytes: 1024 * 1000 } },
            { build: 'B', shape: 'unbundled', aboveBare: { coldMs: 100, cpuMs: 200 }, cheapestAboveBare: { coldMs: 75, cpuMs: 90 }, loaded: { files: 85, bytes: 1024 * 500 } },
            { build: 'C', shape: 'unbundled', aboveBare: { coldMs: 70, cpuMs: 80 }, loaded: { files: 93, bytes: 1024 * 442 } },
          ],
        },
      },
      { a: 'A', b: 'B' },
    )
    expect(rows.map((r) => [r.case, r.metric, r.ratio])).toEqual([
      ['session-jwt', 'CPU µs/op', 0.75],
      ['session-jwt', 'CPU µs/op, best round', 0.25],
      ['session-jwt', 'ops/s', 1.25],
      ['cold-start (unbundled)', 'wall ms above bare', 0.5],
      ['cold-start (unbundled)', 'CPU ms above bare', 0.8],
      ['cold-start (unbundled)', 'CPU ms above bare, cheapest process', 0.9],
      ['cold-start (unbundled)', 'files loaded', 0.5],
      ['cold-start (unbundled)', 'KiB loaded', 0.5],
    ])
    expect(rows.find((r) => r.metric === 'KiB loaded')).toMatchObject({ a: 1000, b: 500 })
  })
})

describe('the baseline build', () => {
  let root: string
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.test', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.test' },
    }).trim()
  const commit = (file: string, text: string) => {
    writeFileSync(join(root, file), text)
    git('add', file)
    git('commit', '-q', '-m', `write ${file}`)
    return git('rev-parse', 'HEAD')
  }
  // A build stand-in: records that it ran, as `npm run build` would leave dist/ behind.
  const build: [string, string[]] = [process.execPath, ['-e', "require('fs').mkdirSync('dist'); require('fs').writeFileSync('dist/built', require('fs').readFileSync('file.txt'))"]]
  let first: string
  let second: string

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'authchart-bench-baseline-'))
    git('init', '-q', '-b', 'main')
    writeFileSync(join(root, '.gitignore'), 'node_modules/\nbench/.baseline/\n')
    mkdirSync(join(root, 'node_modules'))
    first = commit('file.txt', 'one')
    second = commit('file.txt', 'two')
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('defaults to HEAD~1 on main, and to the merge-base with main on a branch ahead of it', () => {
    expect(defaultBaselineRev(root)).toBe(first)
    git('checkout', '-q', '-b', 'topic')
    commit('other.txt', 'topic work')
    expect(defaultBaselineRev(root)).toBe(second)
    git('checkout', '-q', 'main')
  })

  it('is keyed by the full commit id', () => {
    expect(baselineDir(root, first)).toBe(join(root, 'bench', '.baseline', first))
    expect(() => baselineDir(root, first.slice(0, 7))).toThrow(/full commit id/)
  })

  it('builds the committed tree once, with this checkout’s node_modules linked, and reuses it', async () => {
    writeFileSync(join(root, 'file.txt'), 'uncommitted')
    const built = await ensureBaseline({ root, rev: first.slice(0, 7), build })
    expect(built).toEqual({ sha: first, dir: baselineDir(root, first), cached: false })
    expect(readFileSync(join(built.dir, 'dist', 'built'), 'utf8')).toBe('one')
    expect(readlinkSync(join(built.dir, 'node_modules'))).toBe(realpathSync(join(root, 'node_modules')))
    expect(readFileSync(join(built.dir, BUILT_MARKER), 'utf8').trim()).toBe(first)

    const failing: [string, string[]] = [process.execPath, ['-e', 'process.exit(3)']]
    // A cache hit runs no build at all: the failing one would throw.
    expect(await ensureBaseline({ root, rev: first, build: failing })).toEqual({ ...built, cached: true })
  })

  it('leaves nothing behind when the build fails, so a later run builds again', async () => {
    const failing: [string, string[]] = [process.execPath, ['-e', 'process.exit(3)']]
    await expect(ensureBaseline({ root, rev: second, build: failing })).rejects.toThrow(/exited 3/)
    expect(existsSync(baselineDir(root, second))).toBe(false)
    expect(readdirSync(join(root, 'bench', '.baseline'))).toEqual([first])
  })

  it('keeps the baseline another run finished meanwhile, since that run may be measuring it', async () => {
    const dir = baselineDir(root, second)
    const script = `const fs = require('fs'); fs.mkdirSync(${JSON.stringify(dir)}, { recursive: true }); fs.writeFileSync(${JSON.stringify(join(dir, BUILT_MARKER))}, 'x'); fs.writeFileSync(${JSON.stringify(join(dir, 'theirs'))}, '')`
    expect(await ensureBaseline({ root, rev: second, build: [process.execPath, ['-e', script]] })).toEqual({ sha: second, dir, cached: true })
    expect(existsSync(join(dir, 'theirs'))).toBe(true)
    expect(readdirSync(join(root, 'bench', '.baseline')).sort()).toEqual([first, second].sort())
  })

  it('refuses a revision that is not a commit', async () => {
    await expect(ensureBaseline({ root, rev: 'no-such-branch', build })).rejects.toThrow(/not a commit/)
  })
})
