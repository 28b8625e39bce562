#!/usr/bin/env node
/**
 * `npm run seeded`: seeds one-line defects into security rules, one at a time, and checks that the
 * suite catches each. Stryker's operators flip conditions and literals; they never write "accept a
 * proof from another user" or "log the code". Each seed of `test/seeded/seeds.json` does.
 *
 * For each seed: apply its one replacement (`find` must occur exactly once in `file`, else the seed
 * is stale) in a scratch copy of the checkout, run its `tests` (Vitest's `unit` project), record
 * caught (a test failed) or survived (all passed), restore the file. At most two seeds run at once,
 * each in a scratch copy of its own. Writes the table to stdout and `test/seeded/REPORT.md`; exits 1
 * when a seed survived or is stale.
 *
 * Usage: node scripts/seeded.mjs [--list] [--only id,id] [--jobs 1|2] [--timeout seconds] [--seeds file]
 * (`--seeds` reads another list, e.g. while writing a seed; the report is then not rewritten).
 *
 * @module
 */
import { spawn } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  realpathSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadSeeds, occurrences } from '../test/seeded/seeds.mjs'

const USAGE = 'node scripts/seeded.mjs [--list] [--only id,id] [--jobs 1|2] [--timeout seconds] [--seeds file]'
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const REPORT = join(ROOT, 'test', 'seeded', 'REPORT.md')
/** Never copied into a scratch checkout: dependencies are linked, the rest is output or history. */
const SKIPPED = new Set(['node_modules', '.git', 'dist', 'reports', '.stryker-tmp', '.demo-data', 'tmp'])
/**
 * Not linked from the real `node_modules`: caches a run writes (the model-coverage records, Vite's
 * cache), which two runs at once would otherwise clear under each other.
 */
const UNSHARED = new Set(['.cache', '.vite', '.vitest'])

/** Scratch checkouts and test runs under way, cleaned up if the run is interrupted. */
const scratchDirs = new Set()
const running = new Set()

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) {
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {}
    }
    for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true })
    process.exit(130)
  })
}

function parseArgs(argv) {
  const options = { list: false, only: undefined, jobs: 2, timeout: 300, seeds: undefined }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const next = argv[++i]
      if (next === undefined) throw new Error(`${arg} needs a value`)
      return next
    }
    if (arg === '--list') options.list = true
    else if (arg === '--only') options.only = value().split(',').map((id) => id.trim()).filter(Boolean)
    else if (arg.startsWith('--only=')) options.only = arg.slice(7).split(',').map((id) => id.trim()).filter(Boolean)
    else if (arg === '--jobs') options.jobs = Number(value())
    else if (arg === '--timeout') options.timeout = Number(value())
    else if (arg === '--seeds') options.seeds = resolve(value())
    else if (arg === '--help' || arg === '-h') {
      console.log(USAGE)
      process.exit(0)
    } else throw new Error(`unknown argument ${arg}`)
  }
  // Two cores: never more than two seeds at once.
  if (!Number.isInteger(options.jobs) || options.jobs < 1 || options.jobs > 2) throw new Error('--jobs is 1 or 2')
  if (!(options.timeout > 0)) throw new Error('--timeout is a positive number of seconds')
  return options
}

/** A copy of the checkout without `node_modules`, whose `node_modules` links the real one's entries. */
function scratchCheckout() {
  const dir = mkdtempSync(join(tmpdir(), 'authchart-seeded-'))
  scratchDirs.add(dir)
  for (const entry of readdirSync(ROOT)) {
    if (SKIPPED.has(entry)) continue
    cpSync(join(ROOT, entry), join(dir, entry), {
      recursive: true,
      filter: (source) => !relative(ROOT, source).split('/').some((part) => part === 'node_modules'),
    })
  }
  const modules = realpathSync(join(ROOT, 'node_modules'))
  mkdirSync(join(dir, 'node_modules'))
  for (const entry of readdirSync(modules)) {
    if (UNSHARED.has(entry)) continue
    symlinkSync(join(modules, entry), join(dir, 'node_modules', entry))
  }
  return dir
}

/** The first failed test (or file that failed to load) in Vitest's JSON report, or undefined. */
function firstFailure(reportPath) {
  if (!existsSync(reportPath)) return undefined
  let report
  try {
    report = JSON.parse(readFileSync(reportPath, 'utf8'))
  } catch {
    return undefined
  }
  for (const file of report.testResults ?? []) {
    const name = relative(process.cwd(), file.name ?? '')
    const failed = (file.assertionResults ?? []).find((test) => test.status === 'failed')
    if (failed) return `${name} > ${failed.fullName ?? failed.title}`
  }
  for (const file of report.testResults ?? []) {
    if (file.status === 'failed') {
      const message = String(file.message ?? '').split('\n')[0]
      return `${relative(process.cwd(), file.name ?? '')} (did not run: ${message.slice(0, 100)})`
    }
  }
  return undefined
}

/** Runs `tests` in `dir`; resolves to { passed, failure, timedOut, output }. */
function runTests(dir, tests, timeoutSeconds) {
  const reportPath = join(dir, '.seeded-report.json')
  rmSync(reportPath, { force: true })
  const vitest = join(dir, 'node_modules', '.bin', 'vitest')
  const args = [
    '-n', '10', vitest, 'run', '--project', 'unit', '--bail', '1', '--maxWorkers', '1',
    '--reporter', 'json', '--outputFile', reportPath, ...tests,
  ]
  return new Promise((done) => {
    const child = spawn('nice', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    running.add(child)
    let output = ''
    const keep = (chunk) => {
      output = (output + chunk).slice(-20_000)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {}
    }, timeoutSeconds * 1000)
    child.on('close', (code) => {
      running.delete(child)
      clearTimeout(timer)
      const previous = process.cwd()
      process.chdir(dir)
      const failure = firstFailure(reportPath)
      process.chdir(previous)
      done({ passed: code === 0 && !timedOut, failure, timedOut, output })
    })
  })
}

/** Applies `seed` in `dir`, runs its tests, restores the file. */
/** Why `seed` cannot be applied in `root` (its file is missing, or `find` is not there exactly once), or undefined. */
function staleness(root, seed) {
  const path = join(root, seed.file)
  if (!existsSync(path)) return 'the file is missing'
  const count = occurrences(readFileSync(path, 'utf8'), seed.find)
  return count === 1 ? undefined : `find text found ${count} times`
}

const report = (result) =>
  console.log(`${result.verdict.padEnd(8)} ${result.seed.id} (${result.seconds} s)${result.detail ? `: ${result.detail}` : ''}`)

/** Applies `seed` in the scratch checkout `dir`, runs its tests, restores the file. */
async function runSeed(dir, seed, timeoutSeconds) {
  const started = Date.now()
  const seconds = () => Math.round((Date.now() - started) / 100) / 10
  const stale = staleness(dir, seed)
  if (stale) return { seed, verdict: 'stale', detail: stale, seconds: seconds() }
  const path = join(dir, seed.file)
  const original = readFileSync(path, 'utf8')
  writeFileSync(path, original.replace(seed.find, () => seed.replace))
  try {
    const result = await runTests(dir, seed.tests, timeoutSeconds)
    if (result.passed) return { seed, verdict: 'survived', detail: '', seconds: seconds() }
    const detail = result.timedOut
      ? `timed out after ${timeoutSeconds} s${result.failure ? ` (${result.failure})` : ''}`
      : result.failure ?? `vitest failed: ${result.output.trim().split('\n').slice(-3).join(' ').slice(0, 200)}`
    return { seed, verdict: 'caught', detail, seconds: seconds() }
  } finally {
    writeFileSync(path, original)
  }
}

const cell = (text) => String(text).replaceAll('|', '\\|').replaceAll('\n', ' ')

function table(results) {
  const lines = ['| id | rule | verdict | first failing test | s |', '| --- | --- | --- | --- | ---: |']
  for (const { seed, verdict, detail, seconds } of results) {
    lines.push(`| ${cell(seed.id)} | ${cell(seed.rule)} | ${verdict} | ${cell(detail)} | ${seconds} |`)
  }
  return lines.join('\n')
}

async function main() {
  const options = parseArgs(process.argv.slice(2))
  let seeds = loadSeeds(options.seeds)
  if (options.list) {
    for (const seed of seeds) console.log(`${seed.id.padEnd(36)} ${seed.file}\n${' '.repeat(37)}${seed.rule}`)
    return 0
  }
  if (options.only) {
    const unknown = options.only.filter((id) => !seeds.some((seed) => seed.id === id))
    if (unknown.length > 0) throw new Error(`no seed ${unknown.join(', ')} (see --list)`)
    seeds = seeds.filter((seed) => options.only.includes(seed.id))
  }
  const started = Date.now()
  const results = new Array(seeds.length)
  // A stale seed is reported at once, without a scratch checkout or a test run.
  const runnable = []
  seeds.forEach((seed, index) => {
    const stale = staleness(ROOT, seed)
    if (stale) report((results[index] = { seed, verdict: 'stale', detail: stale, seconds: 0 }))
    else runnable.push(index)
  })
  const workers = Math.min(options.jobs, runnable.length)
  const dirs = Array.from({ length: workers }, scratchCheckout)
  let next = 0
  try {
    await Promise.all(
      dirs.map(async (dir) => {
        while (next < runnable.length) {
          const index = runnable[next++]
          report((results[index] = await runSeed(dir, seeds[index], options.timeout)))
        }
      }),
    )
  } finally {
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true })
      scratchDirs.delete(dir)
    }
  }
  const count = (verdict) => results.filter((result) => result.verdict === verdict).length
  const total = Math.round((Date.now() - started) / 1000)
  const summary = `${results.length} seeds: ${count('caught')} caught, ${count('survived')} survived, ${count('stale')} stale (${total} s, ${workers} at a time)`
  const body = table(results)
  console.log(`\n${body}\n\n${summary}`)
  if (!options.only && !options.seeds) {
    writeFileSync(
      REPORT,
      `# Seeded defects\n\nWritten by \`npm run seeded\` (scripts/seeded.mjs) from \`test/seeded/seeds.json\`: each seed is a one-line defect in a security rule; *caught* means one of its tests failed with it applied.\n\n${body}\n\n${summary}\n`,
    )
  }
  return count('survived') + count('stale') > 0 ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(2)
  },
)
