/**
 * `npm run chaos`: a deploy's bad day on loopback. Three `Auth` processes (test/scale/instance.ts)
 * behind a round-robin proxy share Redis (the store: single use, limits, sign-out everywhere) and
 * PostgreSQL (the adapter of the database-session app). Virtual users sign in — with credentials
 * (JWT sessions), at the local OpenID Provider (database sessions, access tokens that need a
 * refresh on every read) and with e-mailed codes over SMTP (database sessions) — read their
 * session, sign out and check they are signed out, while this script, in turn: stops PostgreSQL
 * and starts it again, stops Redis and starts it again, kills an instance (SIGKILL) and starts a
 * replacement, and rolls the three over to the next deployment, whose e-mail chart changed
 * (`CHART=next`: e-mail flows in flight restart with the page that says so).
 *
 * `--minutes N` (default 10), `--users N` (default 24). It reports requests and their answers by
 * class; 5xx inside an outage window (503 with `Retry-After` while a part is down and until it
 * answers again, 502 from the proxy for requests an instance held when it was killed) apart from
 * those outside (unexpected); sessions lost (a read that found no session while no part was down);
 * duplicate or orphaned rows in PostgreSQL at the end; and how long each part took to serve again
 * after it came back. It exits non-zero on any unexpected 5xx, lost session or bad row.
 *
 * Run with `node --import ./test/scale/ts-register.mjs scripts/chaos.ts`.
 *
 * @module
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { PostgresAdapter } from '../adapters/postgres.js'
import { startOidcProvider, visitProvider } from '../test/fixtures/oidc-provider.js'
import { startPostgres } from '../test/fixtures/postgres.js'
import { startRedis } from '../test/fixtures/redis.js'
import { startSmtpServer } from '../test/fixtures/smtp.js'
import { HttpBrowser, startCluster, startInstance, type Instance } from '../test/scale/cluster.js'

const { values: options } = parseArgs({ options: { minutes: { type: 'string' }, users: { type: 'string' } } })
const MINUTES = Number(options.minutes ?? 10)
const USERS = Number(options.users ?? 24)
const PUBLIC_ORIGIN = 'https://authchart.test'
const DATABASE_BASE = '/db/auth'
const CLIENT_SECRET = 'chaos-client-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const JWT_COOKIE = '__Secure-authjs.session-token'
/** How long after a part is back its 503s still count as the outage's (the deadline of a call in flight). */
const GRACE_MS = 5_000

/** When a part was down: [start, end] in ms; end is undefined while it is. */
const windows: { part: string; start: number; end?: number }[] = []
const inWindow = (at: number) => windows.some((w) => at >= w.start && at <= (w.end ?? Infinity) + GRACE_MS)
const recoveries: { part: string; ms: number }[] = []

const counts = { requests: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx in outage': 0, '5xx unexpected': 0, signIns: 0, restarts: 0, reads: 0, lostSessions: 0 }
const problems: string[] = []
const note = (problem: string) => problems.length < 30 && problems.push(problem)

/** A request that failed because a part was down: the virtual user starts again. */
class Interrupted extends Error {}

const [postgres, redis, smtp] = await Promise.all([startPostgres(), startRedis(), startSmtpServer()])
const op = await startOidcProvider({
  clients: [
    {
      client_id: 'op-db',
      client_secret: CLIENT_SECRET,
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [`${PUBLIC_ORIGIN}${DATABASE_BASE}/callback/op`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
  ],
  refreshTokens: true,
  // Inside the 30 s leeway: every session read refreshes the account's tokens.
  accessTokenTtl: 10,
})
const adapterUrl = await postgres.createDatabase('chaos_rows')
const rows = postgres.pool(adapterUrl, { max: 2 })
await PostgresAdapter(rows).migrate()
const env = {
  STORE: 'redis',
  STORE_URL: redis.url,
  ADAPTER_URL: adapterUrl,
  AUTH_SECRET: 'chaos-secret-that-is-long-enough-0123456789abcdef',
  OP_ISSUER: op.issuer,
  OP_CLIENT_SECRET: CLIENT_SECRET,
  OP_DATABASE_CLIENT_ID: 'op-db',
  SMTP_URL: smtp.url,
  EMAIL_CODE: '1',
  // Every virtual user comes from 127.0.0.1: the per-address limit would stop the run, not test it.
  RATE_LIMIT_PER_ADDRESS: '100000000',
  RATE_LIMIT_PER_IDENTIFIER: '100000000',
}
const cluster = await startCluster(env)
const { origin } = cluster

async function send(browser: HttpBrowser, path: string, init?: Parameters<HttpBrowser['send']>[2]): Promise<Response> {
  let response: Response
  try {
    response = await browser.send(origin, path, init)
  } catch (error) {
    // The proxy itself never goes away: a failed fetch is a bug in the run, not an outage.
    throw new Error(`${path}: ${(error as Error).message}`)
  }
  counts.requests++
  const at = Date.now()
  const kind = `${Math.floor(response.status / 100)}xx` as '2xx' | '3xx' | '4xx' | '5xx'
  if (kind !== '5xx') {
    counts[kind]++
    return response
  }
  const expected = inWindow(at) && (response.status === 502 || (response.status === 503 && response.headers.has('retry-after')))
  if (expected) {
    counts['5xx in outage']++
    throw new Interrupted()
  }
  counts['5xx unexpected']++
  note(`${response.status} on ${path} at ${new Date(at).toISOString()}`)
  throw new Interrupted()
}

const csrf = async (browser: HttpBrowser, base: string) =>
  ((await (await send(browser, `${base}/csrf`)).json()) as { csrfToken: string }).csrfToken

/** A redirect that is not an error page: signed in. Anything else restarts the user (counted). */
function signedIn(response: Response, what: string): boolean {
  const location = response.headers.get('location') ?? ''
  if (response.status === 302 && !/error=/.test(location)) return true
  // A flow sealed by the previous deployment restarts (409), and a part that was down may have
  // refused a step; the user starts again.
  counts.restarts++
  if (!inWindow(Date.now()) && response.status !== 409) note(`${what}: ${response.status} ${location}`)
  return false
}

async function credentialsSignIn(browser: HttpBrowser, user: string): Promise<boolean> {
  const token = await csrf(browser, '/auth')
  return signedIn(await send(browser, '/auth/callback/credentials', { form: { csrfToken: token, username: user, password: 'wonderland' } }), 'credentials')
}

async function oidcSignIn(browser: HttpBrowser, opCookies: Map<string, string>): Promise<boolean> {
  const token = await csrf(browser, DATABASE_BASE)
  const start = await send(browser, `${DATABASE_BASE}/signin/op`, { form: { csrfToken: token } })
  if (start.status !== 302) return signedIn(start, 'OIDC start')
  const answer = await visitProvider(start.headers.get('location')!, `${PUBLIC_ORIGIN}${DATABASE_BASE}/callback/`, opCookies)
  return signedIn(await send(browser, `${answer.url.pathname}${answer.url.search}`), 'OIDC callback')
}

/** The code sent to `address` after the outbox held `count` messages, or undefined after 10 s. */
async function codeFor(address: string, count: number): Promise<string | undefined> {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const mail = smtp.messages.slice(count).find((m) => (m.to && 'text' in m.to ? m.to.text : '') === address)
    if (mail) return /Or enter this code on the sign-in page: ([0-9A-Z]{6})/.exec(mail.text ?? '')?.[1]
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return undefined
}

async function emailSignIn(browser: HttpBrowser, address: string): Promise<boolean> {
  const sent = smtp.messages.length
  const token = await csrf(browser, DATABASE_BASE)
  const asked = await send(browser, `${DATABASE_BASE}/signin/nodemailer`, { form: { csrfToken: token, email: address } })
  if (asked.status !== 302 || /error=/.test(asked.headers.get('location') ?? '')) return signedIn(asked, 'e-mail request')
  const code = await codeFor(address, sent)
  if (!code) {
    counts.restarts++
    return false
  }
  const answer = await send(browser, `${DATABASE_BASE}/callback/nodemailer`, { form: { code, csrfToken: await csrf(browser, DATABASE_BASE) } })
  return signedIn(answer, 'e-mail code')
}

async function virtualUser(index: number, until: number): Promise<void> {
  const kind = (['credentials', 'oidc', 'email'] as const)[index % 3]!
  const base = kind === 'credentials' ? '/auth' : DATABASE_BASE
  const opCookies = new Map<string, string>()
  for (let round = 0; Date.now() < until; round++) {
    const browser = new HttpBrowser()
    try {
      const ok =
        kind === 'credentials'
          ? await credentialsSignIn(browser, `chaos-${index}`)
          : kind === 'oidc'
            ? await oidcSignIn(browser, opCookies)
            : await emailSignIn(browser, `chaos-${index}-${round}@example.com`)
      if (!ok) continue
      counts.signIns++
      for (let read = 0; read < 3; read++) {
        const body = (await (await send(browser, `${base}/session`)).json()) as { user?: unknown } | null
        counts.reads++
        if (!body?.user) {
          counts.lostSessions++
          note(`${kind} session lost at ${new Date().toISOString()}: ${JSON.stringify(body)}`)
        }
      }
      const signOut = await send(browser, `${base}/signout`, { form: { csrfToken: await csrf(browser, base) } })
      const after = (await (await send(browser, `${base}/session`)).json()) as unknown
      if (signOut.status !== 302 || after !== null) note(`${kind} sign-out answered ${signOut.status}, then ${JSON.stringify(after)}`)
      if (kind === 'credentials' && browser.cookies.has(JWT_COOKIE)) note('the session cookie outlived the sign-out')
    } catch (error) {
      if (!(error instanceof Interrupted)) throw error
      // A part was down: the user tries again a moment later.
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
}

/** A browser signed in on each app before the run, whose reads say when a part serves again. */
const probes = { jwt: new HttpBrowser(), database: new HttpBrowser() }

async function servedAgain(part: string, probe: () => Promise<boolean>, since: number): Promise<void> {
  while (!(await probe().catch(() => false))) await new Promise((resolve) => setTimeout(resolve, 100))
  recoveries.push({ part, ms: Date.now() - since })
}

const readsAsSignedIn = async (browser: HttpBrowser, base: string) => {
  const response = await browser.send(origin, `${base}/session`)
  return response.status === 200 && Boolean(((await response.json()) as { user?: unknown } | null)?.user)
}

async function outage(part: string, halt: () => Promise<void>, restart: () => Promise<void>, probe: () => Promise<boolean>): Promise<void> {
  const window: (typeof windows)[number] = { part, start: Date.now() }
  windows.push(window)
  await halt()
  await new Promise((resolve) => setTimeout(resolve, 15_000))
  await restart()
  const back = Date.now()
  await servedAgain(part, probe, back)
  window.end = Date.now()
}

async function killOne(): Promise<void> {
  const index = Math.floor(Math.random() * cluster.instances.length)
  const victim = cluster.instances[index]!
  const window: (typeof windows)[number] = { part: 'instance', start: Date.now() }
  windows.push(window)
  // Out of the rotation as a load balancer's health check would take it; what it holds fails.
  cluster.instances.splice(index, 1)
  victim.process.kill('SIGKILL')
  const began = Date.now()
  const replacement = await startInstance(env)
  cluster.instances.push(replacement)
  recoveries.push({ part: 'instance (replacement listening)', ms: Date.now() - began })
  window.end = Date.now()
}

async function stopGracefully(instance: Instance): Promise<void> {
  const exited = new Promise((resolve) => instance.process.once('exit', resolve))
  instance.process.kill('SIGTERM')
  await exited
}

async function rollingUpgrade(): Promise<void> {
  const began = Date.now()
  for (let i = 0; i < 3; i++) {
    const next = await startInstance({ ...env, CHART: 'next' })
    const old = cluster.instances.shift()!
    cluster.instances.push(next)
    await stopGracefully(old)
  }
  recoveries.push({ part: 'rolling upgrade (3 instances)', ms: Date.now() - began })
}

async function orchestrate(until: number): Promise<void> {
  const steps = [
    () => outage('PostgreSQL', postgres.halt, postgres.restart, () => readsAsSignedIn(probes.database, DATABASE_BASE)),
    () => outage('Redis', redis.halt, redis.restart, () => readsAsSignedIn(probes.jwt, '/auth')),
    killOne,
    rollingUpgrade,
  ]
  const pause = Math.max(5_000, (until - Date.now()) / (steps.length * 2 + 1))
  for (let i = 0; Date.now() + pause < until; i++) {
    await new Promise((resolve) => setTimeout(resolve, pause))
    if (Date.now() >= until) break
    await steps[i % steps.length]!()
  }
}

let exitCode = 0
try {
  await credentialsSignIn(probes.jwt, 'probe')
  await oidcSignIn(probes.database, new Map())
  const began = Date.now()
  const until = began + MINUTES * 60_000
  console.log(`chaos: ${MINUTES} min, ${USERS} virtual users, 3 instances behind ${origin}, Redis store, PostgreSQL adapter`)
  await Promise.all([...Array.from({ length: USERS }, (_, i) => virtualUser(i, until)), orchestrate(until)])
  const elapsed = (Date.now() - began) / 1000

  const count = async (sql: string) => Number((await rows.query<{ n: string }>(sql)).rows[0]!.n)
  const bad = {
    'duplicate users (same e-mail)': await count('SELECT count(*) AS n FROM (SELECT email FROM users GROUP BY email HAVING count(*) > 1) d'),
    'OpenID users without their account': await count(
      `SELECT count(*) AS n FROM users u WHERE u.email NOT LIKE 'chaos-%' AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a."userId" = u.id)`,
    ),
    'duplicate accounts': await count('SELECT count(*) AS n FROM (SELECT 1 FROM accounts GROUP BY provider, "providerAccountId" HAVING count(*) > 1) d'),
    'sessions without a user': await count('SELECT count(*) AS n FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = s."userId")'),
  }
  console.log(`requests ${counts.requests} (${(counts.requests / elapsed).toFixed(0)}/s), sign-ins ${counts.signIns}, session reads ${counts.reads}, restarted attempts ${counts.restarts}`)
  console.log(`answers: 2xx ${counts['2xx']}, 3xx ${counts['3xx']}, 4xx ${counts['4xx']}, 5xx in outage windows ${counts['5xx in outage']}, 5xx unexpected ${counts['5xx unexpected']}`)
  console.log(`lost sessions: ${counts.lostSessions}`)
  console.log(`rows: ${Object.entries(bad).map(([what, n]) => `${what} ${n}`).join(', ')}`)
  console.log(`outages: ${windows.map((w) => `${w.part} ${(((w.end ?? Date.now()) - w.start) / 1000).toFixed(1)} s`).join(', ')}`)
  console.log(`served again after: ${recoveries.map((r) => `${r.part} ${(r.ms / 1000).toFixed(2)} s`).join(', ')}`)
  for (const problem of problems) console.log(`  ${problem}`)
  if (counts['5xx unexpected'] || counts.lostSessions || Object.values(bad).some(Boolean)) exitCode = 1
} finally {
  await cluster.stop()
  await rows.end()
  await Promise.all([op.close(), smtp.close(), redis.stop(), postgres.stop()])
}
process.exit(exitCode)
