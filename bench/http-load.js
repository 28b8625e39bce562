// `npm run bench -- --http`: latency under load. Each library runs as an Express server in its own
// process (bench/http-server.js); this process is the load generator (autocannon's API, keep-alive
// connections, no pipelining). For every scenario and concurrency (1, 16, 64), interleaved rounds
// run each library for the same time, alternating the order; each response's latency is recorded
// exactly (not autocannon's whole-millisecond histogram), and percentiles come from all rounds'
// responses together. CPU per request is the server process's own; RSS is read at the end.
import { fork } from 'node:child_process'
import { createRequire } from 'node:module'
import { median } from './harness.js'

const autocannon = createRequire(import.meta.url)('autocannon')

export const LIBRARIES = ['authchart', '@auth/core', 'better-auth']
export const CONCURRENCY = [1, 16, 64]
export const SCENARIOS = [
  { name: 'session-jwt', mode: 'jwt', title: 'session read, JWT' },
  { name: 'session-db', mode: 'db', title: 'session read, database' },
  { name: 'session-db-cache', mode: 'dbc', title: 'session read, database + session cache' },
  { name: 'credentials-signin', title: 'credentials sign-in (CSRF GET + POST)' },
]

function startServer(library) {
  const child = fork(new URL('./http-server.js', import.meta.url), [library], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve({ child, ...message }))
    child.once('exit', (code) => reject(new Error(`${library} server exited (${code}) before it was ready`)))
  })
}

function usage(server) {
  return new Promise((resolve) => {
    server.child.once('message', resolve)
    server.child.send({ type: 'usage' })
  })
}

const setCookiesOf = (headers) =>
  Object.entries(headers)
    .filter(([name]) => name.toLowerCase() === 'set-cookie')
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]))

/** The requests of one operation, and how many requests it is. */
function requestsOf(server, scenario) {
  if (scenario.mode) {
    return { perOp: 1, expected: [200], requests: [{ method: 'GET', path: server.sessionPath[scenario.mode], headers: { cookie: server.cookies[scenario.mode] } }] }
  }
  const signIn = server.signIn
  if (signIn.kind === 'better-auth') {
    // better-auth has no CSRF token to fetch (it checks the Origin): one POST per sign-in.
    return {
      perOp: 1,
      expected: [200],
      requests: [{ method: 'POST', path: signIn.postPath, headers: { 'content-type': 'application/json', origin: signIn.origin }, body: signIn.body }],
    }
  }
  return {
    perOp: 2,
    expected: [200, 302],
    requests: [
      {
        method: 'GET',
        path: signIn.csrfPath,
        onResponse: (_status, body, context, headers) => {
          context.csrfToken = JSON.parse(body).csrfToken
          context.cookie = setCookiesOf(headers).map((c) => c.slice(0, c.indexOf(';'))).join('; ')
        },
      },
      {
        method: 'POST',
        path: signIn.postPath,
        setupRequest: (request, context) => ({
          ...request,
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: context.cookie },
          body: new URLSearchParams({ csrfToken: context.csrfToken, username: signIn.username, password: 'correct horse battery' }).toString(),
        }),
      },
    ],
  }
}

/** One timed run: requests/s, every response's latency (ms), the server's CPU µs per request. */
async function run(server, scenario, connections, seconds) {
  const { requests, perOp, expected } = requestsOf(server, scenario)
  const before = await usage(server)
  const latencies = []
  const statuses = new Map()
  const instance = autocannon({ url: server.origin, connections, pipelining: 1, duration: seconds, requests })
  instance.on('response', (_client, status, _bytes, ms) => {
    latencies.push(ms)
    statuses.set(status, (statuses.get(status) ?? 0) + 1)
  })
  const result = await instance
  const after = await usage(server)
  const unexpected = [...statuses].filter(([status]) => !expected.includes(status))
  if (unexpected.length > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${scenario.name} c=${connections}: statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${result.errors} errors, ${result.timeouts} timeouts`)
  }
  const elapsed = result.duration
  return {
    requestsPerSec: latencies.length / elapsed,
    opsPerSec: latencies.length / perOp / elapsed,
    latencies,
    cpuUsPerRequest: (after.cpu - before.cpu) / latencies.length,
  }
}

/** The value below which `fraction` of the sorted values lie (nearest rank). */
const percentile = (sorted, fraction) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]

/**
 * Runs every scenario at every concurrency for every library in interleaved rounds. Returns the
 * rows (scenario, concurrency, library → rates, percentiles, CPU) and each server's RSS at the end.
 */
export async function httpLoad({ rounds, seconds, warmupSeconds, log = () => {} }) {
  const servers = {}
  try {
    for (const library of LIBRARIES) servers[library] = await startServer(library)
    const cells = SCENARIOS.flatMap((scenario) => CONCURRENCY.map((connections) => ({ scenario, connections })))
    const applies = (library, scenario) => !scenario.mode || servers[library].sessionPath[scenario.mode] !== undefined
    for (const scenario of SCENARIOS) {
      for (const library of LIBRARIES) if (applies(library, scenario)) await run(servers[library], scenario, 16, warmupSeconds)
    }
    log(`  http: warmed up; ${rounds} round(s) of ${cells.length} cells × ${LIBRARIES.length} libraries, ${seconds} s each`)
    const samples = new Map()
    for (let round = 0; round < rounds; round++) {
      for (const { scenario, connections } of cells) {
        const order = round % 2 === 0 ? LIBRARIES : [...LIBRARIES].reverse()
        for (const library of order) {
          if (!applies(library, scenario)) continue
          const key = `${scenario.name}|${connections}|${library}`
          if (!samples.has(key)) samples.set(key, [])
          samples.get(key).push(await run(servers[library], scenario, connections, seconds))
        }
      }
      log(`  http: round ${round + 1}/${rounds} done`)
    }
    const rows = []
    for (const { scenario, connections } of cells) {
      for (const library of LIBRARIES) {
        const runs = samples.get(`${scenario.name}|${connections}|${library}`)
        if (!runs) continue
        const all = runs.flatMap((r) => r.latencies).sort((a, b) => a - b)
        rows.push({
          scenario: scenario.name,
          title: scenario.title,
          connections,
          library,
          requestsPerSec: median(runs.map((r) => r.requestsPerSec)),
          opsPerSec: median(runs.map((r) => r.opsPerSec)),
          p50Ms: percentile(all, 0.5),
          p99Ms: percentile(all, 0.99),
          maxMs: all[all.length - 1],
          cpuUsPerRequest: median(runs.map((r) => r.cpuUsPerRequest)),
          requests: all.length,
        })
      }
    }
    const rssMb = {}
    for (const library of LIBRARIES) rssMb[library] = (await usage(servers[library])).rss / 2 ** 20
    return { rows, rssMb }
  } finally {
    for (const server of Object.values(servers)) server.child.kill()
  }
}
