// `npm run bench`: authchart and @auth/core side by side in one process, interleaved rounds,
// medians, ratios. Options: --quick (shorter rounds), --only <name>[,<name>], --json.
import { fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { Auth as AuthJs } from '@auth/core'
import { encode as encodeJs } from '@auth/core/jwt'
import CredentialsJs from '@auth/core/providers/credentials'
import { Auth } from 'authchart'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
import { compare } from './harness.js'
import { httpSession } from './http.js'
import { scenarios, sessionCookieSize } from './scenarios.js'

const { values } = parseArgs({
  options: { quick: { type: 'boolean' }, only: { type: 'string' }, json: { type: 'boolean' } },
})
const only = values.only ? new Set(values.only.split(',')) : undefined
const wanted = (name) => !only || only.has(name)
const timing = values.quick
  ? { rounds: 3, budgetMs: 250, warmupMs: 150, httpRounds: 2, httpSeconds: 2 }
  : { rounds: 7, budgetMs: 600, warmupMs: 400, httpRounds: 3, httpSeconds: 5 }

const libs = [
  { name: 'authchart', Auth, Credentials, encode },
  { name: '@auth/core', Auth: AuthJs, Credentials: CredentialsJs, encode: encodeJs },
]

async function startOp() {
  const child = fork(new URL('./oidc-op.js', import.meta.url), { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] })
  const { issuer } = await new Promise((resolve, reject) => {
    child.once('message', resolve)
    child.once('exit', (code) => reject(new Error(`the OP exited (${code})`)))
  })
  return { issuer, stop: () => child.kill() }
}

const results = []
const TARGETS = { 'http-session': undefined }
let op
try {
  for (const scenario of scenarios.filter((s) => wanted(s.name))) {
    const context = {}
    if (scenario.needsOp) {
      op ??= await startOp()
      context.issuer = op.issuer
    }
    const ops = {}
    for (const lib of libs) ops[lib.name] = await scenario.setup(lib, context)
    const measured = await compare(ops, timing)
    results.push({ name: scenario.name, title: scenario.title, target: scenario.target, ...measured })
    process.stderr.write(`  measured ${scenario.name}\n`)
  }
  if (wanted('http-session')) {
    const measured = await httpSession(libs, { rounds: timing.httpRounds, seconds: timing.httpSeconds })
    results.push({ name: 'http-session', title: 'GET /auth/session over HTTP (Fastify, autocannon -c 10)', target: TARGETS['http-session'], ...measured })
  }
} finally {
  op?.stop()
}

const cookie = wanted('cookie-size')
  ? { authchart: await sessionCookieSize(libs[0]), authjs: await sessionCookieSize(libs[1]) }
  : undefined

const rows = results.map((r) => {
  const ours = r.authchart
  const theirs = r['@auth/core']
  const ratio = ours.opsPerSec / theirs.opsPerSec
  const verdict = r.target === undefined ? '' : ratio >= r.target ? `PASS (≥ ${r.target}×)` : `MISS (< ${r.target}×)`
  return { ...r, ratio, cpuRatio: theirs.cpuUsPerOp / ours.cpuUsPerOp, verdict }
})

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const table = [
  ['scenario', 'authchart ops/s', '@auth/core ops/s', 'authchart µs/op', '@auth/core µs/op', 'authchart CPU µs/op', '@auth/core CPU µs/op', 'RSS MB (ac / aj)', 'speed-up', 'target'],
  ...rows.map((r) => [
    r.title,
    fmt(r.authchart.opsPerSec),
    fmt(r['@auth/core'].opsPerSec),
    fmt(r.authchart.usPerOp, 1),
    fmt(r['@auth/core'].usPerOp, 1),
    fmt(r.authchart.cpuUsPerOp, 1),
    fmt(r['@auth/core'].cpuUsPerOp, 1),
    `${fmt(r.authchart.rssMb)} / ${fmt(r['@auth/core'].rssMb)}`,
    `${fmt(r.ratio, 2)}×`,
    r.verdict,
  ]),
]
if (cookie) {
  const ratio = cookie.authchart / cookie.authjs
  table.push(['session cookie size (chars, same claims)', String(cookie.authchart), String(cookie.authjs), '', '', '', '', '', `${fmt(ratio, 2)}×`, ratio <= 1 ? 'PASS (≤ 1×)' : 'MISS (> 1×)'])
}
const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)))
const line = (row) => `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`
const environment = `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${values.quick ? 'quick' : 'full'} run`
const report = {
  date: new Date().toISOString(),
  environment,
  timing,
  scenarios: rows.map(({ title, ...r }) => ({ title, ...r })),
  cookieSize: cookie,
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true })
writeFileSync(new URL('./results/latest.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
if (values.json) {
  console.log(JSON.stringify(report, null, 2))
} else {
  console.log(`\nauthchart vs @auth/core — ${environment}; speed-up = authchart ops/s ÷ @auth/core ops/s (median of interleaved rounds)\n`)
  console.log(line(table[0]))
  console.log(`|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`)
  for (const row of table.slice(1)) console.log(line(row))
  console.log('\nJSON: bench/results/latest.json')
}
