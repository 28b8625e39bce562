/**
 * `npm run soak`: a bounded soak run on loopback. Three `Auth` processes behind a round-robin
 * proxy share a throwaway PostgreSQL (or Redis with SOAK_STORE=redis); virtual users sign in with
 * credentials, read their session several times, sign out and check they are signed out, until the
 * time is up (`--minutes N`, or SOAK_SECONDS, default 180 s). Prints requests, unexpected 5xx, lost
 * sessions and each instance's memory at the start and the end, and exits non-zero when anything
 * went wrong.
 *
 * The heap: every instance runs with `--expose-gc`; at fixed intervals (20 per run, at least 10 s
 * apart) each is asked for its heap after a full collection. A leak is a heap that keeps what it
 * should have let go: the run fails when the last quarter's median post-GC heap exceeds the first
 * quarter's (after the warm-up) by more than 10 % plus 2 MB. The samples and each instance's slope
 * (least squares, MB per minute) are printed; `--snapshots` also writes a V8 heap snapshot of each
 * instance at the first and the last sample, to compare in DevTools.
 *
 * @module
 */
import { parseArgs } from 'node:util'
import { startPostgres } from '../test/fixtures/postgres.js'
import { startRedis } from '../test/fixtures/redis.js'
import { HttpBrowser, startCluster } from '../test/scale/cluster.js'

const { values: options } = parseArgs({ options: { minutes: { type: 'string' }, snapshots: { type: 'boolean' } } })
const SECONDS = options.minutes !== undefined ? Number(options.minutes) * 60 : Number(process.env.SOAK_SECONDS ?? 180)
const USERS = Number(process.env.SOAK_USERS ?? 24)
const STORE = process.env.SOAK_STORE === 'redis' ? 'redis' : 'postgres'
const SESSION_COOKIE = '__Secure-authjs.session-token'

const counts = { requests: 0, signIns: 0, reads: 0, signOuts: 0, status5xx: 0, lostSessions: 0, unexpected: 0 }
const problems: string[] = []
const note = (problem: string) => problems.length < 20 && problems.push(problem)

async function stats(origin: string, collect = false): Promise<{ rss: number; heapUsed: number }> {
  return (await (await fetch(`${origin}/__stats${collect ? '?gc=1' : ''}`)).json()) as { rss: number; heapUsed: number }
}

async function heapSnapshot(origin: string): Promise<string> {
  return ((await (await fetch(`${origin}/__heap-snapshot`)).json()) as { path: string }).path
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** Least-squares slope of `values` against `minutes`. */
function slope(minutes: number[], values: number[]): number {
  const n = values.length
  const mx = minutes.reduce((a, b) => a + b, 0) / n
  const my = values.reduce((a, b) => a + b, 0) / n
  const sxx = minutes.reduce((sum, x) => sum + (x - mx) ** 2, 0)
  return sxx === 0 ? 0 : minutes.reduce((sum, x, i) => sum + (x - mx) * (values[i]! - my), 0) / sxx
}

/** Post-GC heap of every instance at fixed intervals until `until`: [minutes since start, heap per instance]. */
async function sampleHeaps(origins: string[], began: number, until: number): Promise<{ at: number[]; heaps: number[][] }> {
  const interval = Math.max(10_000, (until - began) / 20)
  const at: number[] = []
  const heaps: number[][] = origins.map(() => [])
  for (let next = began; next <= until; next += interval) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())))
    const sample = await Promise.all(origins.map((origin) => stats(origin, true)))
    at.push((Date.now() - began) / 60_000)
    sample.forEach((s, i) => heaps[i]!.push(s.heapUsed))
  }
  return { at, heaps }
}

async function virtualUser(origin: string, index: number, until: number): Promise<void> {
  const username = `soak-${index}`
  const send = async (browser: HttpBrowser, path: string, init?: Parameters<HttpBrowser['send']>[2]) => {
    const response = await browser.send(origin, path, init)
    counts.requests++
    if (response.status >= 500) {
      counts.status5xx++
      note(`${response.status} on ${path}`)
    }
    return response
  }
  while (Date.now() < until) {
    const browser = new HttpBrowser()
    const { csrfToken } = (await (await send(browser, '/auth/csrf')).json()) as { csrfToken: string }
    const signIn = await send(browser, '/auth/callback/credentials', { form: { csrfToken, username, password: 'wonderland' } })
    counts.signIns++
    if (signIn.status !== 302 || signIn.headers.get('location')?.includes('error=') || !browser.cookies.get(SESSION_COOKIE)) {
      counts.unexpected++
      note(`sign-in answered ${signIn.status} ${signIn.headers.get('location')}`)
      continue
    }
    for (let read = 0; read < 5; read++) {
      const body = (await (await send(browser, '/auth/session')).json()) as { user?: { name?: string } } | null
      counts.reads++
      if (body?.user?.name !== username) {
        counts.lostSessions++
        note(`session read lost ${username}: ${JSON.stringify(body)}`)
      }
    }
    const signOutToken = ((await (await send(browser, '/auth/csrf')).json()) as { csrfToken: string }).csrfToken
    const signOut = await send(browser, '/auth/signout', { form: { csrfToken: signOutToken } })
    counts.signOuts++
    const after = (await (await send(browser, '/auth/session')).json()) as unknown
    if (signOut.status !== 302 || after !== null) {
      counts.unexpected++
      note(`sign-out answered ${signOut.status}, then the session was ${JSON.stringify(after)}`)
    }
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

const postgres = STORE === 'postgres' ? await startPostgres() : undefined
const redis = STORE === 'redis' ? await startRedis() : undefined
const cluster = await startCluster({
  STORE,
  STORE_URL: postgres ? await postgres.createDatabase('soak') : redis!.url,
  AUTH_SECRET: 'soak-secret-that-is-long-enough-0123456789abcdef',
  // Every virtual user comes from 127.0.0.1: the per-address limit would stop the run, not test it.
  RATE_LIMIT_PER_ADDRESS: '100000000',
  RATE_LIMIT_PER_IDENTIFIER: '100000000',
})
try {
  // A short warm-up, so "start" memory is a warmed process, not a cold one.
  await Promise.all(Array.from({ length: 4 }, (_, i) => virtualUser(cluster.origin, 1000 + i, Date.now() + 5_000)))
  const start = await Promise.all(cluster.instances.map((i) => stats(i.origin)))
  const began = Date.now()
  console.log(`soak: ${SECONDS} s, ${USERS} virtual users, 3 instances on ${STORE}, proxy ${cluster.origin}`)
  const origins = cluster.instances.map((i) => i.origin)
  const snapshots = options.snapshots ? await Promise.all(origins.map(heapSnapshot)) : []
  const [, samples] = await Promise.all([
    Promise.all(Array.from({ length: USERS }, (_, i) => virtualUser(cluster.origin, i, began + SECONDS * 1000))),
    sampleHeaps(origins, began, began + SECONDS * 1000),
  ])
  if (options.snapshots) snapshots.push(...(await Promise.all(origins.map(heapSnapshot))))
  const elapsed = (Date.now() - began) / 1000
  const end = await Promise.all(cluster.instances.map((i) => stats(i.origin)))
  console.log(
    `requests ${counts.requests} (${(counts.requests / elapsed).toFixed(0)}/s), sign-ins ${counts.signIns}, ` +
      `session reads ${counts.reads}, sign-outs ${counts.signOuts}`,
  )
  console.log(`unexpected 5xx: ${counts.status5xx}, lost sessions: ${counts.lostSessions}, other unexpected answers: ${counts.unexpected}`)
  cluster.instances.forEach((instance, i) => {
    console.log(
      `instance ${i + 1}: rss ${mb(start[i]!.rss)} → ${mb(end[i]!.rss)}, heap ${mb(start[i]!.heapUsed)} → ${mb(end[i]!.heapUsed)}`,
    )
  })
  let leaks = 0
  const quarter = Math.max(1, Math.floor(samples.at.length / 4))
  samples.heaps.forEach((series, i) => {
    const first = median(series.slice(0, quarter))
    const last = median(series.slice(-quarter))
    const leaking = last > first * 1.1 + 2 * 1024 * 1024
    if (leaking) leaks++
    console.log(
      `instance ${i + 1} heap after GC (${series.length} samples): first quarter ${mb(first)}, last quarter ${mb(last)}, ` +
        `slope ${(slope(samples.at, series) / 1024 / 1024).toFixed(3)} MB/min: ${leaking ? 'LEAK' : 'flat'}`,
    )
    console.log(`  ${series.map((bytes) => (bytes / 1024 / 1024).toFixed(1)).join(' ')}`)
  })
  if (snapshots.length) console.log(`heap snapshots (first, then last): ${snapshots.join(', ')}`)
  for (const problem of problems) console.log(`  ${problem}`)
  if (counts.status5xx || counts.lostSessions || counts.unexpected || leaks) process.exitCode = 1
} finally {
  await cluster.stop()
  await postgres?.stop()
  await redis?.stop()
}
