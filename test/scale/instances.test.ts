/**
 * Three `Auth` server processes (each with its own memory) behind a round-robin proxy on loopback,
 * sharing a real PostgreSQL server and, in a second run, a real Redis: the guarantees that a sealed
 * cookie cannot give hold across instances. An OAuth flow envelope spent on one instance is refused
 * on the others; 20 racing session reads with an expired access token cause one refresh grant at
 * the OpenID Provider; a credentials rate limit holds wherever the next attempt lands; a sign-out
 * everywhere ends a JWT session on all three; and when the user ends their session at the provider,
 * whose back-channel Logout Token reaches one instance, the next request for that session on any of
 * the three finds it over: JWT sessions (the store's per-`sid` not-before) and database sessions (rows
 * in PostgreSQL, found through the adapter's provider-session column, or, for an adapter that keeps
 * none, through the index in Redis), while the same user's session through another provider
 * session stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { endSessionAtProvider, OP_ACCOUNT, startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'
import { CLIENT_SECRET, opClient } from '../oauth/helpers.js'
import { HttpBrowser, adapterDatabase, startCluster, type Cluster } from './cluster.js'

const SECRET = 'scale-test-secret-that-is-long-enough-0123456789'
const SESSION_COOKIE = '__Secure-authjs.session-token'
/** The origin every instance serves (instance.ts's PUBLIC_ORIGIN; that module starts a server when imported). */
const PUBLIC_ORIGIN = 'https://authchart.test'
/** The instances' database-session app (instance.ts's DATABASE_BASE_PATH) and its client at the provider. */
const DATABASE_BASE = '/db/auth'
const DATABASE_CLIENT = 'op-db'
const LIMIT = 4

let op: RunningOidcProvider
let postgres: PostgresServer
let redis: RedisServer
/** The cluster the provider's Logout Tokens go to (the one under test). */
let logoutTarget: Cluster | undefined

beforeAll(async () => {
  ;[op, postgres, redis] = await Promise.all([
    startOidcProvider({
      clients: [
        await opClient('client_secret_basic', 'op', {
          backchannel_logout_uri: `${PUBLIC_ORIGIN}/auth/backchannel-logout/op`,
          backchannel_logout_session_required: true,
        } as never),
        await opClient('client_secret_basic', DATABASE_CLIENT, {
          redirect_uris: [`${PUBLIC_ORIGIN}${DATABASE_BASE}/callback/op`],
          backchannel_logout_uri: `${PUBLIC_ORIGIN}${DATABASE_BASE}/backchannel-logout/op`,
          backchannel_logout_session_required: true,
        } as never),
      ],
      // Access tokens live 10 s: inside the 30 s leeway, so every read finds them due for a refresh.
      refreshTokens: true,
      accessTokenTtl: 10,
      backchannelLogout: true,
      // The registered URIs are the public ones; on this machine the proxy in front of the three serves them.
      deliver: (url, init) => {
        if (!logoutTarget) throw new Error('no cluster is listening')
        return fetch(url.replace(PUBLIC_ORIGIN, logoutTarget.origin), init)
      },
    }),
    startPostgres(),
    startRedis(),
  ])
}, 120_000)
afterAll(async () => {
  await Promise.all([op?.close(), postgres?.stop(), redis?.stop()])
})

const refreshGrants = () => op.grants.filter((g) => g.grant_type === 'refresh_token').length

/**
 * Starts an OAuth sign-in through the proxy and visits the provider (keeping the browser's session
 * there in `opCookies`): the callback to deliver.
 */
async function oauthCallback(browser: HttpBrowser, cluster: Cluster, base = '/auth', opCookies?: Map<string, string>): Promise<string> {
  const csrfToken = ((await (await browser.send(cluster.origin, `${base}/csrf`)).json()) as { csrfToken: string }).csrfToken
  const start = await browser.send(cluster.origin, `${base}/signin/op`, { form: { csrfToken } })
  expect(start.status).toBe(302)
  const answer = await visitProvider(start.headers.get('location')!, `${PUBLIC_ORIGIN}${base}/callback/`, opCookies)
  expect(answer.method).toBe('GET')
  return `${answer.url.pathname}${answer.url.search}`
}

describe.each([
  {
    name: 'PostgreSQL',
    // Database sessions: our adapter, which keeps the provider session with the row.
    env: async () => ({ STORE: 'postgres', STORE_URL: await postgres.createDatabase('scale'), ADAPTER_URL: await adapterDatabase(postgres, 'scale_rows') }),
  },
  {
    name: 'Redis',
    // Database sessions: an adapter that keeps no provider session (as Auth.js adapters), so the index in Redis finds the rows.
    env: async () => ({ STORE: 'redis', STORE_URL: redis.url, ADAPTER_URL: await adapterDatabase(postgres, 'redis_rows'), ADAPTER_KEEPS: 'rows-only' }),
  },
])('three instances sharing $name', ({ env }) => {
  let cluster: Cluster
  beforeAll(async () => {
    cluster = await startCluster({
      ...(await env()),
      AUTH_SECRET: SECRET,
      OP_ISSUER: op.issuer,
      OP_CLIENT_SECRET: CLIENT_SECRET,
      OP_DATABASE_CLIENT_ID: DATABASE_CLIENT,
      RATE_LIMIT_PER_IDENTIFIER: String(LIMIT),
    })
    logoutTarget = cluster
  }, 120_000)
  afterAll(async () => {
    logoutTarget = undefined
    await cluster?.stop()
    for (const instance of cluster?.instances ?? []) expect(instance.stderr()).not.toMatch(/TypeError|ReferenceError/)
  })

  it('refuses on the other instances an OAuth flow envelope spent on one', async () => {
    const browser = new HttpBrowser()
    const callback = await oauthCallback(browser, cluster)
    const replays = [browser.clone(), browser.clone()]
    const [first, second, third] = cluster.instances.map((instance) => instance.origin)
    const done = await browser.send(first!, callback)
    expect(done.status).toBe(302)
    expect(done.headers.get('location')).not.toContain('error=')
    expect(browser.cookies.get(SESSION_COOKIE)).toBeDefined()
    for (const [i, origin] of [second!, third!].entries()) {
      const replay = await replays[i]!.send(origin, callback)
      expect(replay.headers.get('location'), `replay on instance ${i + 2}`).toContain('error=')
      expect(replays[i]!.cookies.get(SESSION_COOKIE)).toBeUndefined()
    }
  })

  it('spends the refresh token once when 20 reads with an expired access token race over the three', async () => {
    const browser = new HttpBrowser()
    await browser.send(cluster.origin, await oauthCallback(browser, cluster))
    const cookie = browser.cookies.get(SESSION_COOKIE)!
    expect(cookie).toBeDefined()
    const [grants, rejected] = [refreshGrants(), op.rejectedRefreshes]
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const reader = new HttpBrowser()
        reader.cookies.set(SESSION_COOKIE, cookie)
        const response = await reader.send(cluster.origin, '/auth/session')
        return { instance: response.headers.get('x-instance'), body: (await response.json()) as { error?: string; user?: unknown } }
      }),
    )
    expect(new Set(answers.map((a) => a.instance)).size, 'the reads reached all three').toBe(3)
    for (const { body } of answers) {
      expect(body.user).toBeDefined()
      expect(body.error).toBeUndefined()
    }
    expect(refreshGrants(), 'one refresh grant at the OP').toBe(grants + 1)
    expect(op.rejectedRefreshes, 'no replay of the spent refresh token').toBe(rejected)
  })

  it('holds a credentials rate limit wherever the next attempt lands', async () => {
    const user = `limited-${Math.random().toString(36).slice(2)}`
    for (let i = 0; i < LIMIT; i++) {
      const response = await new HttpBrowser().signIn(cluster.origin, user, 'wrong')
      expect(new URL(response.headers.get('location')!).searchParams.get('code')).toBe('credentials')
    }
    const before = await Promise.all(cluster.instances.map(async (i) => (await (await fetch(`${i.origin}/__stats`)).json()) as { authorizeCalls: number }))
    for (const instance of cluster.instances) {
      const browser = new HttpBrowser()
      const response = await browser.signIn(instance.origin, user, 'wonderland')
      const location = new URL(response.headers.get('location')!)
      expect(location.searchParams.get('code')).toBe('rate_limited')
      expect(Number(location.searchParams.get('retryAfter'))).toBeGreaterThan(0)
      expect(browser.cookies.get(SESSION_COOKIE)).toBeUndefined()
    }
    const after = await Promise.all(cluster.instances.map(async (i) => (await (await fetch(`${i.origin}/__stats`)).json()) as { authorizeCalls: number }))
    expect(after.map((s) => s.authorizeCalls), 'authorize is not called over the limit').toEqual(before.map((s) => s.authorizeCalls))
  })

  it('ends a JWT session on all three instances when the user signs out everywhere', async () => {
    const user = `everywhere-${Math.random().toString(36).slice(2)}`
    const browser = new HttpBrowser()
    await browser.signIn(cluster.origin, user)
    const cookie = browser.cookies.get(SESSION_COOKIE)!
    const elsewhere = new HttpBrowser()
    await elsewhere.signIn(cluster.origin, user)
    for (const instance of cluster.instances) expect((await browser.session(instance.origin))?.user?.name).toBe(user)

    const csrfToken = await elsewhere.csrfToken(cluster.origin)
    const revoked = await elsewhere.send(cluster.origin, '/auth/sessions', { form: { csrfToken, revoke: 'all' } })
    expect(revoked.status).toBe(200)
    for (const instance of cluster.instances) {
      const reader = new HttpBrowser()
      reader.cookies.set(SESSION_COOKIE, cookie)
      expect(await reader.session(instance.origin), `instance ${instance.port}`).toBeNull()
    }
  })

  it.each([
    { strategy: 'JWT', base: '/auth' },
    { strategy: 'database', base: DATABASE_BASE },
  ])("ends a $strategy session on every instance within one request of the user's logout at the provider", async ({ base }) => {
    const signIn = async () => {
      const browser = new HttpBrowser()
      const opCookies = new Map<string, string>()
      await browser.send(cluster.origin, await oauthCallback(browser, cluster, base, opCookies))
      expect(browser.cookies.get(SESSION_COOKIE)).toBeDefined()
      return { browser, opCookies }
    }
    const sessionOn = async (origin: string, browser: HttpBrowser) => {
      const reader = new HttpBrowser()
      reader.cookies.set(SESSION_COOKIE, browser.cookies.get(SESSION_COOKIE)!)
      return (await (await reader.send(origin, `${base}/session`)).json()) as { user?: { name?: string } } | null
    }
    const leaving = await signIn()
    const staying = await signIn()
    for (const instance of cluster.instances) {
      expect((await sessionOn(instance.origin, leaving.browser))?.user?.name, `signed in on ${instance.port}`).toBe(OP_ACCOUNT.name)
    }

    const delivered = op.backchannel.length
    await endSessionAtProvider(op.issuer, leaving.opCookies)
    expect(op.backchannel.slice(delivered), 'the provider delivered its Logout Token, and an instance took it').toEqual([
      { client: base === '/auth' ? 'op' : DATABASE_CLIENT, sid: expect.any(String), outcome: 'ok' },
    ])
    // The first read after the logout on each instance; only one of them took the token.
    for (const instance of cluster.instances) {
      expect(await sessionOn(instance.origin, leaving.browser), `ended on instance ${instance.port}`).toBeNull()
    }
    for (const instance of cluster.instances) {
      expect((await sessionOn(instance.origin, staying.browser))?.user?.name, `another provider session, on ${instance.port}`).toBe(
        OP_ACCOUNT.name,
      )
    }
  })
})
