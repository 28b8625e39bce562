/**
 * `npm run soak`: a bounded soak run on loopback. Three `Auth` processes behind a round-robin
 * proxy share a throwaway PostgreSQL (or Redis with SOAK_STORE=redis); virtual users sign in with
 * credentials, read their session several times, sign out and check they are signed out, until the
 * time is up (SOAK_SECONDS, default 180). Prints requests, unexpected 5xx, lost sessions and each
 * instance's memory at the start and the end, and exits non-zero when anything went wrong.
 *
 * @module
 */
import { startPostgres } from '../test/fixtures/postgres.js'
import { startRedis } from '../test/fixtures/redis.js'
import { HttpBrowser, startCluster } from '../test/scale/cluster.js'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 180)
const USERS = Number(process.env.SOAK_USERS ?? 24)
const STORE = process.env.SOAK_STORE === 'redis' ? 'redis' : 'postgres'
const SESSION_COOKIE = '__Secure-authjs.session-token'

const counts = { requests: 0, signIns: 0, reads: 0, signOuts: 0, status5xx: 0, lostSessions: 0, unexpected: 0 }
const problems: string[] = []
const note = (problem: string) => problems.length < 20 && problems.push(problem)

async function stats(origin: string): Promise<{ rss: number; heapUsed: number }> {
  return (await (await fetch(`${origin}/__stats`)).json()) as { rss: number; heapUsed: number }
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
  await Promise.all(Array.from({ length: USERS }, (_, i) => virtualUser(cluster.origin, i, began + SECONDS * 1000)))
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
  for (const problem of problems) console.log(`  ${problem}`)
  if (counts.status5xx || counts.lostSessions || counts.unexpected) process.exitCode = 1
} finally {
  await cluster.stop()
  await postgres?.stop()
  await redis?.stop()
}
