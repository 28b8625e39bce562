/**
 * The session cache of database sessions across three instances (test/scale/instance.ts, each with
 * its own memory) sharing a real PostgreSQL for the rows and, as the store, PostgreSQL and then
 * Redis. Each instance serves a cache entry without asking the database (a row deleted behind the
 * engine's back is still served until the entry's `maxAge`), and yet a session revoked through any
 * instance, by sign-out or sign-out everywhere, is refused on the very next read on every one: the
 * revocation marker in the shared store, not the database, is what refuses it. Without a store,
 * the instance that revoked it refuses it at once and the others once their entry expires.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { endPool, startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'
import { HttpBrowser, adapterDatabase, startCluster, type Cluster } from './cluster.js'

const SECRET = 'scale-test-secret-that-is-long-enough-0123456789'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const CACHE_COOKIE = '__Secure-authjs.session-cache'
/** The instances' database-session app (instance.ts's DATABASE_BASE_PATH). */
const BASE = '/db/auth'

let postgres: PostgresServer
let redis: RedisServer

beforeAll(async () => {
  ;[postgres, redis] = await Promise.all([startPostgres(), startRedis()])
}, 120_000)
afterAll(async () => {
  await Promise.all([postgres?.stop(), redis?.stop()])
})

describe.each([
  { name: 'PostgreSQL', env: async () => ({ STORE: 'postgres', STORE_URL: await postgres.createDatabase('cache_store') }) },
  { name: 'Redis', env: async () => ({ STORE: 'redis', STORE_URL: redis.url }) },
])('the session cache on three instances sharing $name', ({ name, env }) => {
  let cluster: Cluster
  let rows: pg.Pool
  let adapter: ReturnType<typeof PostgresAdapter>

  beforeAll(async () => {
    const adapterUrl = await adapterDatabase(postgres, `cache_rows_${name.toLowerCase()}`)
    rows = new pg.Pool({ connectionString: adapterUrl, max: 2 })
    adapter = PostgresAdapter(rows)
    cluster = await startCluster({
      ...(await env()),
      ADAPTER_URL: adapterUrl,
      AUTH_SECRET: SECRET,
      // The app's OpenID provider is never reached: these sessions are made in the database.
      OP_ISSUER: 'https://op.authchart.test',
      OP_CLIENT_SECRET: 'unused',
      OP_DATABASE_CLIENT_ID: 'op-db',
      SESSION_CACHE_MAX_AGE: '300',
    })
  }, 120_000)
  afterAll(async () => {
    await cluster?.stop()
    if (rows) await endPool(rows)
    for (const instance of cluster?.instances ?? []) expect(instance.stderr()).not.toMatch(/TypeError|ReferenceError/)
  })

  /** A user with a live session row, and a browser holding its token and, after one read, its cache entry. */
  async function signedIn(userId: string = randomUUID()): Promise<{ browser: HttpBrowser; userId: string }> {
    if (!(await adapter.getUser(userId))) await adapter.createUser({ id: userId, email: `${userId}@example.com`, name: 'Ada', emailVerified: null })
    const sessionToken = randomUUID()
    // Signed in by password just now: revoking sessions is a sensitive action that asks for a recent proof.
    const now = Date.now()
    await adapter.createSession({ sessionToken, userId, expires: new Date(now + 3600_000), createdAt: new Date(now), fva: { pwd: Math.floor(now / 1000) } })
    const browser = new HttpBrowser()
    browser.cookies.set(SESSION_COOKIE, sessionToken)
    expect(await read(browser, cluster.instances[0]!.origin)).toMatchObject({ user: { name: 'Ada' } })
    expect(browser.cookies.get(CACHE_COOKIE)).toBeDefined()
    return { browser, userId }
  }

  const read = async (browser: HttpBrowser, origin: string) => (await browser.send(origin, `${BASE}/session`)).json()
  const everyInstance = (browser: HttpBrowser) => Promise.all(cluster.instances.map((instance) => read(browser.clone(), instance.origin)))
  const csrfToken = async (browser: HttpBrowser, origin: string) =>
    ((await (await browser.send(origin, `${BASE}/csrf`)).json()) as { csrfToken: string }).csrfToken

  it('serves the entry on every instance without the database: a row deleted behind its back is still served', async () => {
    const { browser } = await signedIn()
    await rows.query('DELETE FROM sessions WHERE "sessionToken" = $1', [browser.cookies.get(SESSION_COOKIE)])
    for (const body of await everyInstance(browser)) expect(body).toMatchObject({ user: { name: 'Ada' } })
  })

  it('refuses a session signed out through one instance on the very next read on every instance', async () => {
    const { browser } = await signedIn()
    const copy = browser.clone()
    for (const body of await everyInstance(copy)) expect(body).toMatchObject({ user: { name: 'Ada' } })
    const origin = cluster.instances[1]!.origin
    const signedOut = await browser.send(origin, `${BASE}/signout`, { form: { csrfToken: await csrfToken(browser, origin) } })
    expect(signedOut.status).toBe(302)
    expect(browser.cookies.get(CACHE_COOKIE)).toBeUndefined()
    expect(await everyInstance(copy)).toEqual([null, null, null])
  })

  it('refuses every session of a user who signed out everywhere, on the very next read on every instance', async () => {
    const { browser: phone, userId } = await signedIn()
    const { browser: laptop } = await signedIn(userId)
    const origin = cluster.instances[2]!.origin
    const revoked = await laptop.send(origin, `${BASE}/sessions`, { form: { revoke: 'all', csrfToken: await csrfToken(laptop, origin) } })
    expect(await revoked.json()).toEqual({ revoked: 'all' })
    expect(await everyInstance(phone)).toEqual([null, null, null])
  })
})

describe('the session cache on three instances without a store', () => {
  const MAX_AGE = 3
  let cluster: Cluster
  let rows: pg.Pool
  let adapter: ReturnType<typeof PostgresAdapter>

  beforeAll(async () => {
    const adapterUrl = await adapterDatabase(postgres, 'cache_rows_none')
    rows = new pg.Pool({ connectionString: adapterUrl, max: 2 })
    adapter = PostgresAdapter(rows)
    cluster = await startCluster({
      STORE: 'none',
      ADAPTER_URL: adapterUrl,
      AUTH_SECRET: SECRET,
      OP_ISSUER: 'https://op.authchart.test',
      OP_CLIENT_SECRET: 'unused',
      OP_DATABASE_CLIENT_ID: 'op-db',
      SESSION_CACHE_MAX_AGE: String(MAX_AGE),
    })
  }, 120_000)
  afterAll(async () => {
    await cluster?.stop()
    if (rows) await endPool(rows)
    for (const instance of cluster?.instances ?? []) expect(instance.stderr()).not.toMatch(/TypeError|ReferenceError/)
  })

  it('refuses a signed-out session at once on the instance that signed it out, and on the others within maxAge', async () => {
    const userId = randomUUID()
    await adapter.createUser({ id: userId, email: `${userId}@example.com`, name: 'Ada', emailVerified: null })
    const sessionToken = randomUUID()
    await adapter.createSession({ sessionToken, userId, expires: new Date(Date.now() + 3600_000) })
    const browser = new HttpBrowser()
    browser.cookies.set(SESSION_COOKIE, sessionToken)
    const [first, second, third] = cluster.instances.map((instance) => instance.origin) as [string, string, string]
    const read = async (from: HttpBrowser, origin: string) => (await from.send(origin, `${BASE}/session`)).json()
    expect(await read(browser, first)).toMatchObject({ user: { name: 'Ada' } })
    const mintedAt = Date.now()
    const copy = browser.clone()
    const csrfToken = ((await (await browser.send(second, `${BASE}/csrf`)).json()) as { csrfToken: string }).csrfToken
    expect((await browser.send(second, `${BASE}/signout`, { form: { csrfToken } })).status).toBe(302)
    expect(await read(copy.clone(), second)).toBeNull()
    // The other instances have not heard of it: the entry is served until it expires...
    if (Date.now() - mintedAt < (MAX_AGE - 1) * 1000) {
      expect(await read(copy.clone(), first)).toMatchObject({ user: { name: 'Ada' } })
      expect(await read(copy.clone(), third)).toMatchObject({ user: { name: 'Ada' } })
    }
    // ...and no longer.
    await new Promise((resolve) => setTimeout(resolve, mintedAt + MAX_AGE * 1000 + 1000 - Date.now()))
    expect([await read(copy.clone(), first), await read(copy.clone(), second), await read(copy.clone(), third)]).toEqual([null, null, null])
  })
})
