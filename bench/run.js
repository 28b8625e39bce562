// `npm run bench`: authchart next to @auth/core and better-auth in one process, interleaved
// rounds, medians, ratios, and the floors (the trivial route, plain node:crypto decryption, encryption
// and the CSRF hash).
// Options: --quick (shorter rounds), --only <name>[,<name>], --json, --baseline <dir> (a checkout
// of a previous authchart, built, measured in the same rounds: `git worktree add ../main main`),
// --ab (A/B against a previous commit, built once into bench/.baseline/<sha>: the merge-base with
// main, or HEAD~1 on main; --ab-rev <rev> names another), --processes <n> (fresh processes per
// cold-start handler), --runtimes node,bun,deno,workerd (the edge-runtimes scenario's runtimes; all
// by default), --http (only the latency under load: bench/http-load.js; with --quick, shorter rounds).
import { execFileSync, fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Auth as AuthJs, customFetch as customFetchJs } from '@auth/core'
import { encode as encodeJs } from '@auth/core/jwt'
import CredentialsJs from '@auth/core/providers/credentials'
import { Auth, customFetch } from 'authchart'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
import { fastifyAuth } from 'authchart/fastify'
import { abRows } from './ab-report.js'
import { OTHER_CASES, parseBenchArgs } from './args.js'
import { defaultBaselineRev, ensureBaseline } from './baseline.js'
import { coldStarts } from './cold-start.js'
import { bundleSizes, runtimeCosts } from './edge.js'
import { compare } from './harness.js'
import { HTTP_FLOORS, httpSession } from './http.js'
import { httpLoadReport } from './http-report.js'
import { scenarios, sessionCookieSize } from './scenarios.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
let values
try {
  values = parseBenchArgs(process.argv.slice(2), [...scenarios.map((s) => s.name), ...OTHER_CASES])
} catch (error) {
  console.error(`bench: ${error.message}`)
  process.exit(2)
}
if (values.http) {
  await httpLoadReport(values)
  process.exit(0)
}
const { wanted } = values
const timing = values.quick
  ? { rounds: 3, budgetMs: 250, warmupMs: 150, httpRounds: 2, httpSeconds: 2 }
  : { rounds: 7, budgetMs: 600, warmupMs: 400, httpRounds: 5, httpSeconds: 3 }

const AUTHCHART = 'authchart'
const AUTHJS = '@auth/core'
const BASELINE = 'authchart (baseline)'
const log = (line) => process.stderr.write(`${line}\n`)
const git = (args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()

// A/B: A is the baseline (a previous commit's build), B this checkout's dist/ (built from the
// working tree by `npm run bench`). Only the two run, with no other library, so every round is
// theirs alone.
let ab
if (values.ab) {
  const rev = values.abRev ?? defaultBaselineRev(ROOT)
  const { sha, dir, cached } = await ensureBaseline({ root: ROOT, rev, log })
  log(`  baseline ${sha.slice(0, 12)} ${cached ? 'from the cache' : 'built'}: ${dir}`)
  values.baseline = dir
  const head = git(['rev-parse', 'HEAD'])
  // What B's dist/ is built from: changes to the bench itself do not change B.
  const dirty = git(['status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench']) !== ''
  ab = {
    a: { name: BASELINE, rev: values.abRev ?? 'merge-base with main (HEAD~1 on main)', sha },
    b: { name: AUTHCHART, sha: head, uncommittedChanges: dirty },
  }
}
const libs = [
  { name: AUTHCHART, Auth, Credentials, encode, customFetch, fastifyAuth },
  ...(ab ? [] : [{ name: AUTHJS, Auth: AuthJs, Credentials: CredentialsJs, encode: encodeJs, customFetch: customFetchJs }]),
]
if (values.baseline) {
  const dist = (path) => import(pathToFileURL(resolve(values.baseline, 'dist', path)).href)
  const [core, jwt, credentials, fastify] = await Promise.all([
    dist('core/index.js'),
    dist('core/jwt.js'),
    dist('providers/credentials.js'),
    dist('integrations/fastify/index.js'),
  ])
  libs.push({ name: BASELINE, Auth: core.Auth, Credentials: credentials.default, encode: jwt.encode, customFetch: core.customFetch, fastifyAuth: fastify.fastifyAuth })
}

async function startOp() {
  const child = fork(new URL('./oidc-op.js', import.meta.url), { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] })
  const { issuer } = await new Promise((resolve, reject) => {
    child.once('message', resolve)
    child.once('exit', (code) => reject(new Error(`the OP exited (${code})`)))
  })
  return { issuer, stop: () => child.kill() }
}

const loadBefore = loadavg()
const results = []
let op
try {
  for (const scenario of scenarios.filter((s) => wanted(s.name))) {
    const context = {}
    if (scenario.needsOp) {
      op ??= await startOp()
      context.issuer = op.issuer
    }
    const ops = {}
    const peers = { [AUTHCHART]: 'authchart', [AUTHJS]: 'authjs', [BASELINE]: 'baseline' }
    if (!scenario.floorOnly) for (const lib of libs) ops[lib.name] = await scenario.setup(lib, context)
    // In A/B only the two builds and the floors run: better-auth's modes would only lengthen the rounds.
    for (const peer of (scenario.peers ?? []).filter((p) => !ab || p.peer === 'floor')) {
      ops[peer.name] = await peer.setup(libs[0])
      peers[peer.name] = peer.peer
    }
    // A scenario of slow operations (milliseconds each) may ask for more and longer rounds.
    const measured = await compare(ops, { ...timing, ...(values.quick ? {} : scenario.timing) })
    results.push({ name: scenario.name, title: scenario.title, target: scenario.target, peers, measured })
    process.stderr.write(`  measured ${scenario.name}\n`)
  }
  if (wanted('http-session')) {
    const measured = await httpSession(libs, { rounds: timing.httpRounds, seconds: timing.httpSeconds, floors: !ab })
    const peers = { [AUTHCHART]: 'authchart', [AUTHJS]: 'authjs', [BASELINE]: 'baseline', 'authchart (Express)': 'express', '@auth/express': 'express', ...Object.fromEntries(HTTP_FLOORS.map((name) => [name, 'floor'])) }
    results.push({ name: 'http-session', title: 'GET /auth/session over HTTP (Fastify, autocannon -c 10)', peers, measured })
    log('  measured http-session')
  }
} finally {
  op?.stop()
}

// Cold start on Node, bundled and unbundled, above a bare handler (fresh processes each).
const coldStart = wanted('cold-start')
  ? await coldStarts({
      builds: [
        { name: AUTHCHART, library: 'authchart', root: ROOT },
        ...(values.baseline ? [{ name: BASELINE, library: 'authchart', root: resolve(values.baseline) }] : []),
        { name: AUTHJS, library: '@auth/core', root: ROOT },
      ],
      processes: values.processes ?? 7,
      log,
    })
  : undefined

// Edge cost: bundle sizes, then cold start and session read per runtime (fresh processes each).
const edgeBundles = wanted('edge-bundle') ? await bundleSizes() : undefined
const edgeRuntimes = wanted('edge-runtimes')
  ? await runtimeCosts({
      ...(values.runtimes ? { runtimes: values.runtimes } : {}),
      ...(values.quick ? { processes: 3, reads: 500 } : { processes: 7, reads: 2000 }),
      ...(values.processes ? { processes: values.processes } : {}),
      log,
    })
  : undefined

const libNamed = (name) => libs.find((lib) => lib.name === name)
const cookie = wanted('cookie-size')
  ? {
      authchart: await sessionCookieSize(libs[0]),
      authjs: libNamed(AUTHJS) ? await sessionCookieSize(libNamed(AUTHJS)) : undefined,
      ...(libNamed(BASELINE) ? { baseline: await sessionCookieSize(libNamed(BASELINE)) } : {}),
    }
  : undefined

/** The fastest of a scenario's better-auth modes (by ops/s), if it has any. */
function fastestBetterAuth(r) {
  const modes = Object.keys(r.measured).filter((name) => r.peers[name] === 'better-auth')
  if (modes.length === 0) return undefined
  const name = modes.reduce((a, b) => (r.measured[a].opsPerSec >= r.measured[b].opsPerSec ? a : b))
  return { name, ...r.measured[name] }
}

const byName = Object.fromEntries(results.map((r) => [r.name, r]))
const rows = results.map((r) => {
  const ours = r.measured[AUTHCHART]
  const versus = (other) =>
    other && ours ? { speedUp: ours.opsPerSec / other.opsPerSec, cpu: other.cpuUsPerOp / ours.cpuUsPerOp } : undefined
  const betterAuth = fastestBetterAuth(r)
  const row = {
    name: r.name,
    title: r.title,
    target: r.target,
    measured: r.measured,
    vsAuthjs: versus(r.measured[AUTHJS]),
    ...(betterAuth ? { betterAuthFastest: betterAuth.name, vsBetterAuth: versus(betterAuth) } : {}),
    ...(r.measured[BASELINE] ? { vsBaseline: versus(r.measured[BASELINE]) } : {}),
  }
  if (r.name === 'http-session' && r.measured['bare Fastify']) {
    row.fractionOfBare = ours.opsPerSec / r.measured['bare Fastify'].opsPerSec
    row.webRequestFractionOfBare = r.measured['bare Fastify + web Request'].opsPerSec / r.measured['bare Fastify'].opsPerSec
    row.decryptionFractionOfBare = r.measured['bare Fastify + decryption'].opsPerSec / r.measured['bare Fastify'].opsPerSec
    // The target: the plugin against the floor route of its own framework, in the same rounds.
    row.fractionOfFloor = ours.opsPerSec / r.measured['bare Fastify + decryption'].opsPerSec
    const expressFloor = r.measured['bare Express + decryption']?.opsPerSec
    row.express = {
      authchartFractionOfFloor: r.measured['authchart (Express)']?.opsPerSec / expressFloor,
      authjsFractionOfFloor: r.measured['@auth/express']?.opsPerSec / expressFloor,
      floorFractionOfBare: expressFloor / r.measured['bare Express']?.opsPerSec,
      authchartCpuUs: r.measured['authchart (Express)']?.cpuUsPerOp,
      authjsCpuUs: r.measured['@auth/express']?.cpuUsPerOp,
      floorCpuUs: r.measured['bare Express + decryption']?.cpuUsPerOp,
    }
  }
  return row
})

// The floor: a session read next to (trivial route + decryption), in CPU µs per operation.
const floor = byName.floor
  ? (() => {
      const { measured } = byName.floor
      const decrypt = measured['node:crypto decrypt'].cpuUsPerOp
      const trivial = measured['authchart trivial route'].cpuUsPerOp
      const session = measured['authchart session read'].cpuUsPerOp
      const best = (name) => measured[name].cpuUsPerOpMin
      const bestMultiple = best('authchart session read') / (best('authchart trivial route') + best('node:crypto decrypt'))
      return { decryptCpuUs: decrypt, trivialRouteCpuUs: trivial, sessionReadCpuUs: session, multiple: session / (trivial + decrypt), bestRoundMultiple: bestMultiple, target: 1.5 }
    })()
  : undefined

// The sign-in's floor, same rounds: two trivial routes (GET /csrf, POST /callback) + the session
// token's encryption + the CSRF cookie's hash, in CPU µs per operation.
const signInFloor = byName.floor?.measured['authchart credentials sign-in']
  ? (() => {
      const { measured } = byName.floor
      const cpu = (name) => measured[name].cpuUsPerOp
      const best = (name) => measured[name].cpuUsPerOpMin
      const floorOf = (of) => 2 * of('authchart trivial route') + of('node:crypto encrypt') + of('node:crypto CSRF hash')
      const signIn = cpu('authchart credentials sign-in')
      return {
        signInCpuUs: signIn,
        trivialRouteCpuUs: cpu('authchart trivial route'),
        encryptCpuUs: cpu('node:crypto encrypt'),
        csrfHashCpuUs: cpu('node:crypto CSRF hash'),
        floorCpuUs: floorOf(cpu),
        multiple: signIn / floorOf(cpu),
        bestRoundMultiple: best('authchart credentials sign-in') / floorOf(best),
        target: 1.5,
      }
    })()
  : undefined

const fmt = (n, digits = 0) => (n === undefined ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }))
const ratio = (v) => (v ? `${fmt(v.speedUp, 2)}×` : '–')
const verdict = (value, target) => (target === undefined || value === undefined ? '' : value >= target ? 'PASS' : 'MISS')

function renderTable(table) {
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)))
  const line = (row) => `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`
  return [line(table[0]), `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...table.slice(1).map(line)].join('\n')
}

const summary = [
  ['scenario', 'authchart CPU µs/op', '@auth/core CPU µs/op', 'better-auth CPU µs/op (fastest)', 'vs @auth/core', 'vs better-auth', 'target', 'vs baseline'],
  ...rows
    .filter((r) => r.measured[AUTHCHART])
    .map((r) => {
      const ba = r.betterAuthFastest ? r.measured[r.betterAuthFastest] : undefined
      const targetNote = r.target === undefined ? '' : `≥ ${r.target}×: ${verdict(r.vsAuthjs?.speedUp, r.target)}${ba ? ` / ${verdict(r.vsBetterAuth?.speedUp, r.target)}` : ''}`
      return [
        r.title,
        fmt(r.measured[AUTHCHART].cpuUsPerOp, 1),
        fmt(r.measured[AUTHJS]?.cpuUsPerOp, 1),
        ba ? `${fmt(ba.cpuUsPerOp, 1)} (${r.betterAuthFastest.replace(/^better-auth ?\(?|\)$/g, '') || 'no cache'})` : '–',
        ratio(r.vsAuthjs),
        ratio(r.vsBetterAuth),
        targetNote,
        ratio(r.vsBaseline),
      ]
    }),
]
const details = [
  ['scenario', 'library', 'ops/s', 'µs/op', 'CPU µs/op', 'CPU µs/op (best round)', 'RSS MB'],
  ...rows.flatMap((r) =>
    Object.entries(r.measured).map(([lib, m]) => [r.name, lib, fmt(m.opsPerSec), fmt(m.usPerOp, 1), fmt(m.cpuUsPerOp, 1), fmt(m.cpuUsPerOpMin, 1), fmt(m.rssMb)]),
  ),
]
const http = byName['http-session']?.measured['bare Fastify'] && rows.find((r) => r.name === 'http-session')
const abTable = libNamed(BASELINE) ? abRows({ scenarios: results, coldStart }, { a: BASELINE, b: AUTHCHART }) : undefined
const environment = `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${values.quick ? 'quick' : 'full'} run, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before / ${loadavg().map((l) => l.toFixed(2)).join(' ')} after`
const report = {
  date: new Date().toISOString(),
  environment,
  timing,
  floor,
  signInFloor,
  httpFractionOfBareFastify: http?.fractionOfBare,
  httpWebRequestOnlyFractionOfBareFastify: http?.webRequestFractionOfBare,
  httpDecryptionOnlyFractionOfBareFastify: http?.decryptionFractionOfBare,
  scenarios: rows,
  ...(abTable ? { ab: { ...(ab ?? { a: { name: BASELINE, dir: values.baseline }, b: { name: AUTHCHART } }), rows: abTable } } : {}),
  coldStart,
  cookieSize: cookie,
  edge: { bundles: edgeBundles, runtimes: edgeRuntimes },
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true })
writeFileSync(new URL('./results/latest.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
if (values.json) {
  console.log(JSON.stringify(report, null, 2))
} else {
  if (ab) {
    console.log(`\nauthchart A/B against a previous commit — ${environment}`)
  } else {
    console.log(`\nauthchart vs @auth/core and better-auth — ${environment}`)
    console.log('ratios = authchart ops/s ÷ the other\'s ops/s (medians of interleaved rounds); better-auth: its fastest mode\n')
    if (summary.length > 1) console.log(renderTable(summary))
  }
  if (floor) {
    console.log(
      `\nfloor: session read ${fmt(floor.sessionReadCpuUs, 1)} CPU µs = ${fmt(floor.multiple, 2)} × (trivial route ${fmt(floor.trivialRouteCpuUs, 1)} + node:crypto decryption ${fmt(floor.decryptCpuUs, 1)}); target ≤ 1.5×: ${floor.multiple <= 1.5 ? 'PASS' : 'MISS'}; from each one's cheapest round ${fmt(floor.bestRoundMultiple, 2)}×`,
    )
  }
  if (signInFloor) {
    const f = signInFloor
    console.log(
      `floor: credentials sign-in ${fmt(f.signInCpuUs, 1)} CPU µs = ${fmt(f.multiple, 2)} × (2 × trivial route ${fmt(f.trivialRouteCpuUs, 1)} + node:crypto encryption ${fmt(f.encryptCpuUs, 1)} + CSRF hash ${fmt(f.csrfHashCpuUs, 1)} = ${fmt(f.floorCpuUs, 1)}); target ≤ 1.5×: ${f.multiple <= 1.5 ? 'PASS' : 'MISS'}; from each one's cheapest round ${fmt(f.bestRoundMultiple, 2)}×`,
    )
  }
  if (http) {
    const pct = (v) => `${fmt(v * 100, 1)}%`
    const m = http.measured
    console.log(`HTTP (Fastify): session reads at ${pct(http.fractionOfFloor)} of the floor route's requests/s (target ≥ 90%: ${http.fractionOfFloor >= 0.9 ? 'PASS' : 'MISS'}); CPU µs/request ${fmt(m[AUTHCHART].cpuUsPerOp, 1)} vs the floor route's ${fmt(m['bare Fastify + decryption'].cpuUsPerOp, 1)}`)
    console.log(`      the floor route (bare Fastify + node:crypto decryption of the cookie, no library) is at ${pct(http.decryptionFractionOfBare)} of bare Fastify; the plugin at ${pct(http.fractionOfBare)}`)
    console.log(`      building the web Request alone (no auth) leaves ${pct(http.webRequestFractionOfBare)} of bare Fastify`)
    const e = http.express
    if (e.authchartFractionOfFloor) {
      console.log(`HTTP (Express): authchart/express at ${pct(e.authchartFractionOfFloor)} of the Express floor route, @auth/express at ${pct(e.authjsFractionOfFloor)}; CPU µs/request ${fmt(e.authchartCpuUs, 1)} / ${fmt(e.authjsCpuUs, 1)} / floor ${fmt(e.floorCpuUs, 1)}; the floor route at ${pct(e.floorFractionOfBare)} of bare Express`)
    }
  }
  if (cookie) console.log(`session cookie: ${cookie.authchart} chars${cookie.authjs ? ` vs @auth/core ${cookie.authjs}` : ''}${cookie.baseline ? `, baseline ${cookie.baseline}` : ''}`)
  if (coldStart) {
    const kib = (bytes) => fmt(bytes / 1024)
    console.log(`\ncold start on Node (import + first session read; median of ${coldStart.processes} fresh processes per handler, order alternating), above the bare handler's ${fmt(coldStart.bare.coldMs, 1)} ms wall / ${fmt(coldStart.bare.cpuMs, 1)} ms process CPU`)
    console.log(
      renderTable([
        ['build', 'shape', 'wall ms (above bare)', 'CPU ms (above bare)', 'files loaded', 'KiB loaded'],
        ...coldStart.handlers.map((h) => [
          h.build,
          h.shape,
          `${fmt(h.coldMs, 1)} (+${fmt(h.aboveBare.coldMs, 1)})`,
          `${fmt(h.cpuMs, 1)} (+${fmt(h.aboveBare.cpuMs, 1)})`,
          fmt(h.loaded.files),
          kib(h.loaded.bytes),
        ]),
      ]),
    )
  }
  if (coldStart) {
    for (const h of coldStart.handlers.filter((h) => h.shape === 'unbundled')) {
      const parts = Object.entries(h.loaded.byPackage).sort((x, y) => y[1].bytes - x[1].bytes)
      console.log(`  ${h.build}, unbundled, loaded: ${parts.map(([name, p]) => `${name} ${p.files} / ${fmt(p.bytes / 1024)} KiB`).join(', ')}`)
    }
  }
  if (abTable?.length) {
    const label = (side) => [side.name, side.sha ? side.sha.slice(0, 12) : side.dir, side.uncommittedChanges ? '+ uncommitted changes' : ''].filter(Boolean).join(' ')
    const sides = report.ab
    console.log(`\nA/B, interleaved in this run: A = ${label(sides.a)}, B = ${label(sides.b)}`)
    console.log('B/A below 1: B costs less (CPU, ms, files, KiB); for ops/s above 1: B is faster')
    console.log(
      renderTable([
        ['case', 'metric', 'A', 'B', 'B/A'],
        ...abTable.map((r) => [r.case, r.metric, fmt(r.a, r.metric === 'ops/s' || r.metric === 'files loaded' ? 0 : 1), fmt(r.b, r.metric === 'ops/s' || r.metric === 'files loaded' ? 0 : 1), `${fmt(r.ratio, 3)}`]),
      ]),
    )
  }
  if (edgeBundles) {
    const kb = (bytes) => fmt(bytes / 1024)
    console.log('\nbundles (esbuild, minified, KB / gzipped KB; edge: workerd conditions, node: ESM for Node); target for credentials ≤ 1.5× @auth/core')
    console.log(
      renderTable([
        ['target', 'configuration', 'authchart', '@auth/core', 'ratio', 'ratio gzipped', 'target'],
        ...edgeBundles.map((b) => [
          b.target,
          b.configuration,
          `${kb(b.authchart.bytes)} / ${kb(b.authchart.gzipBytes)}`,
          `${kb(b.authjs.bytes)} / ${kb(b.authjs.gzipBytes)}`,
          `${fmt(b.ratio, 2)}×`,
          `${fmt(b.gzipRatio, 2)}×`,
          // The target is the single-file bundle's; the split shape is reported beside it.
          b.configuration === 'credentials' && !b.split ? (b.ratio <= 1.5 && b.gzipRatio <= 1.5 ? 'PASS' : 'MISS') : '',
        ]),
      ]),
    )
  }
  if (edgeRuntimes) {
    console.log('\ncold start (import + first session read, median of fresh processes, ms) and warm session read (µs/op; workerd: per request through miniflare)')
    console.log(
      renderTable([
        ['runtime', 'bare handler', 'authchart (above bare)', '@auth/core (above bare)', 'target ≤ @auth/core', 'read bare µs', 'read authchart µs', 'read @auth/core µs'],
        ...Object.entries(edgeRuntimes).map(([runtime, r]) => [
          runtime,
          fmt(r.coldMs.bare, 1),
          `${fmt(r.coldMs.authchart, 1)} (+${fmt(r.aboveBareMs.authchart, 1)})`,
          `${fmt(r.coldMs['@auth/core'], 1)} (+${fmt(r.aboveBareMs.authjs, 1)})`,
          r.aboveBareMs.authchart <= r.aboveBareMs.authjs ? 'PASS' : 'MISS',
          fmt(r.sessionReadUs.bare, 1),
          fmt(r.sessionReadUs.authchart, 1),
          fmt(r.sessionReadUs.authjs, 1),
        ]),
      ]),
    )
  }
  if (details.length > 1) console.log(`\n${renderTable(details)}`)
  console.log('\nJSON: bench/results/latest.json')
}
