/**
 * Session lifecycle (ASVS V7): a new session token on every sign-in, an absolute lifetime beside
 * the idle one under both strategies, and listing and revoking a user's database sessions through
 * the routes (CSRF-checked) and the exported functions.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig, Auth, listSessions, memoryAuthStore, revokeAllSessions } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import { authRequest, Client, SECRET, testConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const sessionOf = async (client: Client) => (await client.session()).body as { user?: { email: string } } | null

function databaseConfig() {
  const store = createMemoryStore()
  return { store, config: testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database' } }) }
}

async function signedIn(config: ReturnType<typeof testConfig>, userAgent = 'test-agent') {
  const client = new Client(config)
  const csrfToken = await client.csrfToken()
  await client.send({
    path: '/callback/credentials',
    body: { csrfToken, username: 'alice', password: 'wonderland' },
    headers: { 'user-agent': userAgent },
  })
  return client
}

describe('session lifecycle', () => {
  it('issues a new session token on every sign-in, even over an existing session', async () => {
    const jwt = testConfig()
    const client = await signedIn(jwt)
    const first = client.jar.get(SESSION_COOKIE)!
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(client.jar.get(SESSION_COOKIE)).not.toBe(first)
    const { config } = databaseConfig()
    const db = await signedIn(config)
    const row = db.jar.get(SESSION_COOKIE)!
    await db.signIn({ username: 'alice', password: 'wonderland' })
    expect(db.jar.get(SESSION_COOKIE)).not.toBe(row)
  })

  it('ends a JWT session at its absolute lifetime however active, keeping its sign-in time across reissues', async () => {
    const config = testConfig({ session: { absoluteMaxAge: 60, updateAge: 0 } })
    const client = await signedIn(config)
    const claims = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    const signedInAt = claims!.auth_time as number
    expect(Math.abs(signedInAt - Date.now() / 1000)).toBeLessThan(5)
    expect(await sessionOf(client)).toMatchObject({ user: { email: 'alice@example.com' } })
    const reissued = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(reissued!.auth_time).toBe(signedInAt)

    const later = Date.now() + 61_000
    const realNow = Date.now
    Date.now = () => later
    try {
      expect(await sessionOf(client)).toBeNull()
    } finally {
      Date.now = realNow
    }
  })

  it('ends a database session at its absolute lifetime, and keeps an Auth.js row without a sign-in time', async () => {
    const { store, config } = databaseConfig()
    const limited = { ...config, session: { strategy: 'database' as const, absoluteMaxAge: 60 } }
    const client = await signedIn(limited)
    const token = client.jar.get(SESSION_COOKIE)!
    expect(store.sessions.get(token)!.createdAt).toBeInstanceOf(Date)
    store.sessions.get(token)!.createdAt = new Date(Date.now() - 61_000)
    expect(await sessionOf(client)).toBeNull()
    expect(store.sessions.has(token)).toBe(false)

    const other = await signedIn(limited)
    delete store.sessions.get(other.jar.get(SESSION_COOKIE)!)!.createdAt
    expect(await sessionOf(other)).toMatchObject({ user: { email: 'alice@example.com' } })
  })

  it("lists a user's database sessions and revokes one, the others, then all, each POST CSRF-checked", async () => {
    const { store, config } = databaseConfig()
    const laptop = await signedIn(config, 'Laptop')
    const phone = await signedIn(config, 'Phone')
    const tablet = await signedIn(config, 'Tablet')
    const listed = (await (await laptop.send({ path: '/sessions' })).json()) as { id: string; userAgent: string; current: boolean; createdAt: string }[]
    expect(listed.map((s) => s.userAgent).sort()).toEqual(['Laptop', 'Phone', 'Tablet'])
    expect(listed.filter((s) => s.current).map((s) => s.userAgent)).toEqual(['Laptop'])
    expect(JSON.stringify(listed)).not.toContain(laptop.jar.get(SESSION_COOKIE)!)

    const withoutCsrf = await laptop.send({ path: '/sessions', body: { revoke: 'all' } })
    expect(withoutCsrf.status).toBe(400)
    expect(store.sessions.size).toBe(3)

    const phoneId = listed.find((s) => s.userAgent === 'Phone')!.id
    const one = await laptop.send({ path: '/sessions', body: { csrfToken: await laptop.csrfToken(), revoke: 'one', id: phoneId } })
    expect(await one.json()).toEqual({ revoked: 1 })
    expect(await sessionOf(phone)).toBeNull()
    expect(await sessionOf(tablet)).not.toBeNull()

    const others = await laptop.send({ path: '/sessions', body: { csrfToken: await laptop.csrfToken(), revoke: 'others' } })
    expect(await others.json()).toEqual({ revoked: 1 })
    expect(await sessionOf(tablet)).toBeNull()
    expect(await sessionOf(laptop)).not.toBeNull()

    const userId = [...store.users.keys()][0]!
    expect(await listSessions(config, userId)).toHaveLength(1)
    await revokeAllSessions(config, userId)
    expect(await sessionOf(laptop)).toBeNull()
  })

  it('reads a JWT session without asking the store when none is configured, and asks a configured one', async () => {
    const countGets = (store: ReturnType<typeof memoryAuthStore>) => {
      let gets = 0
      const get = store.get
      store.get = (key) => (gets++, get(key))
      return () => gets
    }
    const plain = testConfig()
    const defaultGets = countGets(assertConfig(plain).store as ReturnType<typeof memoryAuthStore>)
    const client = await signedIn(plain)
    for (let i = 0; i < 5; i++) expect(await sessionOf(client)).not.toBeNull()
    expect(defaultGets(), 'the default store is not read on session reads').toBe(0)
    const claims = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(claims).not.toHaveProperty('auth_time') // the default token is exactly Auth.js's

    const store = memoryAuthStore()
    const sharedGets = countGets(store)
    const shared = await signedIn(testConfig({ store }))
    await sessionOf(shared)
    expect(sharedGets()).toBe(1)
  })

  it('answers the sessions routes with 401 without a session, and refuses sign-out everywhere of JWTs without a store', async () => {
    const config = testConfig()
    expect((await Auth(authRequest({ path: '/auth/sessions' }), config)).status).toBe(401)
    const client = await signedIn(config)
    const refused = await client.send({ path: '/sessions', body: { csrfToken: await client.csrfToken(), revoke: 'all' } })
    expect(refused.status).toBe(400)
    await expect(revokeAllSessions(config, 'u-1')).rejects.toThrow(TypeError)
    expect(await sessionOf(client)).not.toBeNull()

    const shared = testConfig({ store: memoryAuthStore() })
    const signed = await signedIn(shared)
    const revoked = await signed.send({ path: '/sessions', body: { csrfToken: await signed.csrfToken(), revoke: 'all' } })
    expect(await revoked.json()).toEqual({ revoked: 'all' })
    expect(signed.jar.get(SESSION_COOKIE)).toBeUndefined()
  })
})
