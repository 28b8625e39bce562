/**
 * Killed mid-sign-in: an instance killed (SIGKILL) at each effect boundary of a credentials, an
 * OpenID Connect and an e-mail sign-in leaves nothing that breaks the user's next try. The test
 * hook is the `telemetry` option (test/scale/instance.ts, EFFECT_HOOK): its effect spans name each
 * effect as it starts and ends, and KILL_AT/KILL_WHEN kill the process just before an effect or
 * just after it finished, before the flow goes on. For every effect a healthy sign-in runs (listed
 * by the same hook), a fresh instance is killed there; the user then starts again on another
 * instance and must sign in, and the PostgreSQL database (database sessions, the bundled adapter)
 * must hold no user without its account, no duplicate user or account, and no row pointing at
 * nothing.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startSmtpServer, type RunningSmtpServer } from '../fixtures/smtp.js'
import { CLIENT_SECRET, opClient } from '../oauth/helpers.js'
import { HttpBrowser, startInstance, type Instance } from '../scale/cluster.js'

const SECRET = 'kill-test-secret-that-is-long-enough-0123456789'
/** The origin every instance serves (test/scale/instance.ts's PUBLIC_ORIGIN). */
const PUBLIC_ORIGIN = 'https://authchart.test'
/** The instances' database-session app (test/scale/instance.ts's DATABASE_BASE_PATH). */
const DATABASE_BASE = '/db/auth'
const DATABASE_CLIENT = 'op-db'
const JWT_COOKIE = '__Secure-authjs.session-token'
/** The e-mail sign-in's address: one mailbox per attempt, so that its send throttle never refuses one. */
let mailbox = 0
const address = () => `reader-${mailbox}@example.com`

let op: RunningOidcProvider
let postgres: PostgresServer
let smtp: RunningSmtpServer
let rows: pg.Pool
let env: Record<string, string>
/** The instance the user comes back to after the one they were on was killed. */
let healthy: Instance
/** The provider's cookies: the user stays signed in there, as a browser would. */
const opCookies = new Map<string, string>()

beforeAll(async () => {
  ;[op, postgres, smtp] = await Promise.all([
    startOidcProvider({
      clients: [
        await opClient('client_secret_basic', DATABASE_CLIENT, {
          redirect_uris: [`${PUBLIC_ORIGIN}${DATABASE_BASE}/callback/op`],
        } as never),
      ],
    }),
    startPostgres(),
    startSmtpServer(),
  ])
  const adapterUrl = await postgres.createDatabase('kill_rows')
  rows = postgres.pool(adapterUrl, { max: 2 })
  await PostgresAdapter(rows).migrate()
  env = {
    STORE: 'postgres',
    STORE_URL: await postgres.createDatabase('kill_store'),
    ADAPTER_URL: adapterUrl,
    AUTH_SECRET: SECRET,
    OP_ISSUER: op.issuer,
    OP_CLIENT_SECRET: CLIENT_SECRET,
    OP_DATABASE_CLIENT_ID: DATABASE_CLIENT,
    SMTP_URL: smtp.url,
    EFFECT_HOOK: '1',
  }
  healthy = await startInstance(env)
}, 120_000)

afterAll(async () => {
  if (healthy && healthy.process.exitCode === null) {
    const exited = new Promise((resolve) => healthy.process.once('exit', resolve))
    healthy.process.kill('SIGTERM')
    await exited
  }
  await rows?.end()
  await Promise.all([op?.close(), smtp?.close(), postgres?.stop()])
})

/** One sign-in, driven as a browser would, against `origin`: resolves once it is signed in. */
type SignIn = (browser: HttpBrowser, origin: string) => Promise<void>

async function csrfToken(browser: HttpBrowser, origin: string, base: string): Promise<string> {
  return ((await (await browser.send(origin, `${base}/csrf`)).json()) as { csrfToken: string }).csrfToken
}

function expectSignedIn(response: Response): void {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).not.toMatch(/error=/)
}

const credentials: SignIn = async (browser, origin) => {
  const token = await csrfToken(browser, origin, '/auth')
  expectSignedIn(await browser.send(origin, '/auth/callback/credentials', { form: { csrfToken: token, username: 'kim', password: 'wonderland' } }))
}

const openIdConnect: SignIn = async (browser, origin) => {
  const token = await csrfToken(browser, origin, DATABASE_BASE)
  const start = await browser.send(origin, `${DATABASE_BASE}/signin/op`, { form: { csrfToken: token } })
  expect(start.status).toBe(302)
  const answer = await visitProvider(start.headers.get('location')!, `${PUBLIC_ORIGIN}${DATABASE_BASE}/callback/`, opCookies)
  expectSignedIn(await browser.send(origin, `${answer.url.pathname}${answer.url.search}`))
}

/** The first message the outbox receives after it held `count`. */
async function mailAfter(count: number): Promise<string> {
  const deadline = Date.now() + 15_000
  while (smtp.messages.length <= count) {
    if (Date.now() > deadline) throw new Error('no message arrived')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return /^(https:\/\/\S+)$/m.exec(smtp.messages[count]!.text ?? '')![1]!
}

const email: SignIn = async (browser, origin) => {
  const sent = smtp.messages.length
  const token = await csrfToken(browser, origin, DATABASE_BASE)
  const asked = await browser.send(origin, `${DATABASE_BASE}/signin/nodemailer`, { form: { csrfToken: token, email: address() } })
  expect(asked.status).toBe(302)
  const link = new URL(await mailAfter(sent))
  const page = await browser.send(origin, `${link.pathname}${link.search}`)
  expect(page.status).toBe(200)
  const html = await page.text()
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]),
  )
  const action = new URL(/<form action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&'))
  expectSignedIn(await browser.send(origin, action.pathname, { form: fields }))
}

/** The effects `instance` has run so far, in order. */
async function effectsRun(instance: Instance): Promise<string[]> {
  return ((await (await fetch(`${instance.origin}/__stats`)).json()) as { effectsRun: string[] }).effectsRun
}

/** Whether the session `browser` holds reads as a session on `origin` under `base`. */
async function sessionOf(browser: HttpBrowser, origin: string, base: string): Promise<{ user?: { email?: string; name?: string } } | null> {
  return (await (await browser.send(origin, `${base}/session`)).json()) as { user?: { email?: string; name?: string } } | null
}

/** Rows that a half-finished sign-in could leave behind, and the rows of the user. */
async function databaseState(): Promise<{ users: number; duplicateUsers: number; usersWithoutAccount: number; accounts: number; orphanedSessions: number }> {
  const count = async (sql: string) => Number((await rows.query<{ n: string }>(sql)).rows[0]!.n)
  return {
    users: await count('SELECT count(*) AS n FROM users'),
    duplicateUsers: await count('SELECT count(*) AS n FROM (SELECT email FROM users GROUP BY email HAVING count(*) > 1) d'),
    usersWithoutAccount: await count('SELECT count(*) AS n FROM users u WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a."userId" = u.id)'),
    accounts: await count('SELECT count(*) AS n FROM accounts'),
    orphanedSessions: await count('SELECT count(*) AS n FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = s."userId")'),
  }
}

async function emptyDatabase(): Promise<void> {
  await rows.query('TRUNCATE users, accounts, sessions, verification_token CASCADE')
}

/** Runs `signIn` on a new instance killed at `boundary`; resolves once the instance is dead. */
async function signInUntilKilled(signIn: SignIn, browser: HttpBrowser, boundary: { effect: string; when: 'before' | 'after' }): Promise<void> {
  const victim = await startInstance({ ...env, KILL_AT: boundary.effect, KILL_WHEN: boundary.when })
  const died = new Promise<NodeJS.Signals | null>((resolve) => victim.process.once('exit', (_code, signal) => resolve(signal)))
  // The request the instance dies in fails as a browser's would (the connection closes).
  await expect(signIn(browser, victim.origin), `the sign-in reached ${boundary.when} ${boundary.effect}`).rejects.toThrow()
  expect(await died).toBe('SIGKILL')
}

/** Every boundary a healthy `signIn` passes: before its first effect, and after each effect. */
async function boundariesOf(signIn: SignIn): Promise<{ effect: string; when: 'before' | 'after' }[]> {
  const before = (await effectsRun(healthy)).length
  await signIn(new HttpBrowser(), healthy.origin)
  const path = [...new Set((await effectsRun(healthy)).slice(before))]
  expect(path.length, 'the sign-in runs effects').toBeGreaterThan(0)
  return [{ effect: path[0]!, when: 'before' as const }, ...path.map((effect) => ({ effect, when: 'after' as const }))]
}

describe.each([
  { name: 'credentials (JWT session)', signIn: credentials, base: '/auth', user: { name: 'kim' }, database: false },
  { name: 'OpenID Connect (database session)', signIn: openIdConnect, base: DATABASE_BASE, user: { email: OP_ACCOUNT.email.toLowerCase() }, database: true },
  { name: 'e-mail link (database session)', signIn: email, base: DATABASE_BASE, user: { email: expect.stringMatching(/^reader-\d+@example\.com$/) }, database: true },
])('an instance killed during a $name sign-in', ({ signIn, base, user, database }) => {
  it('leaves nothing that stops the user signing in on another instance, at every effect boundary', async () => {
    await emptyDatabase()
    const boundaries = await boundariesOf(signIn)
    console.log(boundaries.map((b) => `${b.when} ${b.effect}`).join(', '))
    for (const boundary of boundaries) {
      await emptyDatabase()
      mailbox++
      const browser = new HttpBrowser()
      await signInUntilKilled(signIn, browser, boundary)
      // The user tries again, in the same browser (whatever cookies the dead instance set), elsewhere.
      await signIn(browser, healthy.origin)
      expect(await sessionOf(browser, healthy.origin, base), `signed in after a kill ${boundary.when} ${boundary.effect}`).toMatchObject({ user })
      if (!database) {
        expect(browser.cookies.get(JWT_COOKIE)).toBeDefined()
        continue
      }
      const state = await databaseState()
      expect(state, `rows after a kill ${boundary.when} ${boundary.effect}`).toMatchObject({ users: 1, duplicateUsers: 0, orphanedSessions: 0 })
      // Both rows or neither: a provider's user never exists without the account that signs it in.
      if (signIn === openIdConnect) expect(state, `rows after a kill ${boundary.when} ${boundary.effect}`).toMatchObject({ usersWithoutAccount: 0, accounts: 1 })
    }
  }, 300_000)
})
