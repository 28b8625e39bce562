import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { Auth, assertConfig } from '../../core/index.js'
import { AdapterError } from '../../core/errors.js'
import Credentials from '../../providers/credentials.js'
import type { RequestContext } from '../../core/http/context.js'
import { createSessionRow } from '../../core/session/issue.js'
import { ALICE, authRequest, Client, setCookie, spyLogger, testConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const good = { username: 'alice', password: 'wonderland' }

function databaseConfig(overrides: Parameters<typeof testConfig>[0] = {}) {
  const store = createMemoryStore()
  return { store, config: testConfig({ adapter: MemoryAdapter(store), ...overrides }) }
}

describe('database sessions', () => {
  it('defaults to the database strategy when an adapter is configured', () => {
    expect(assertConfig(databaseConfig().config).session.strategy).toBe('database')
  })

  it('creates a real database session on a first credentials sign-in: a new user, the credentials account linked to it', async () => {
    const { store, config } = databaseConfig()
    const createUser = vi.fn()
    const linkAccount = vi.fn()
    const client = new Client({ ...config, events: { createUser, linkAccount } })
    const response = await client.signIn(good)
    expect(response.headers.get('location')).toBe('https://authchart.test')
    const token = client.jar.get(SESSION_COOKIE)!
    expect(token).toMatch(/^[0-9a-f-]{36}$/)
    const [user] = [...store.users.values()]
    expect(store.users.size).toBe(1)
    expect(user).toMatchObject({ email: ALICE.email, name: ALICE.name, emailVerified: null })
    // The id authorize returned names the credentials account, never a stored user.
    expect(user!.id).not.toBe(ALICE.id)
    expect(store.accounts.get(`credentials\u0000${ALICE.id}`)).toMatchObject({
      provider: 'credentials',
      providerAccountId: ALICE.id,
      type: 'credentials',
      userId: user!.id,
    })
    expect(store.sessions.get(token)).toMatchObject({ userId: user!.id })
    expect(createUser).toHaveBeenCalledWith({ user: expect.objectContaining({ id: user!.id }) })
    expect(linkAccount).toHaveBeenCalledTimes(1)
    const { body } = await client.session()
    expect(body).toMatchObject({ user: { name: ALICE.name, email: ALICE.email, image: ALICE.image } })
  })

  it('signs a returning credentials user into the user its credentials account is linked to', async () => {
    const { store, config } = databaseConfig()
    const first = new Client(config)
    await first.signIn(good)
    const second = new Client(config)
    await second.signIn(good)
    expect(store.users.size).toBe(1)
    expect(store.accounts.size).toBe(1)
    const [user] = [...store.users.values()]
    expect(store.sessions.get(second.jar.get(SESSION_COOKIE)!)?.userId).toBe(user!.id)
  })

  it('never signs a credentials user into another user who has the same e-mail address', async () => {
    // An OAuth user already owns alice@example.com; an application's local account with the same
    // address must not open that user's session (account takeover through e-mail linking).
    const { store, config } = databaseConfig()
    store.users.set('oauth-user', { id: 'oauth-user', name: 'Alice (GitHub)', email: ALICE.email, emailVerified: null })
    const client = new Client(config)
    const response = await client.signIn(good)
    expect(response.headers.get('location')).toBe('https://authchart.test/auth/signin?error=AccountNotLinked')
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(store.sessions.size).toBe(0)
    expect(store.accounts.size).toBe(0)
    expect(store.users.size).toBe(1)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'AccountNotLinked' }))
  })

  it('links a credentials account to the user with the same e-mail address only with allowDangerousEmailAccountLinking', async () => {
    const { store, config } = databaseConfig({
      providers: [
        Credentials({
          credentials: { username: {}, password: {} },
          allowDangerousEmailAccountLinking: true,
          authorize: ({ password }) => (password === 'wonderland' ? { ...ALICE } : null),
        } as Parameters<typeof Credentials>[0]),
      ],
    })
    store.users.set('oauth-user', { id: 'oauth-user', name: 'Alice (GitHub)', email: ALICE.email, emailVerified: null })
    const client = new Client(config)
    await client.signIn(good)
    expect(store.sessions.get(client.jar.get(SESSION_COOKIE)!)?.userId).toBe('oauth-user')
    expect(store.accounts.get(`credentials\u0000${ALICE.id}`)?.userId).toBe('oauth-user')
  })

  it('signs in with an adapter whose user ids are UUIDs when authorize returns an id of its own', async () => {
    const store = createMemoryStore()
    const memory = MemoryAdapter(store)
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    // As PostgreSQL answers a uuid column: a non-UUID id is a query error, not a miss.
    const strict: Adapter = {
      ...memory,
      getUser: async (id) => {
        if (!uuid.test(id)) throw new Error(`invalid input syntax for type uuid: "${id}"`)
        return memory.getUser(id)
      },
    }
    const config = testConfig({
      adapter: strict,
      providers: [
        Credentials({
          credentials: { username: {}, password: {} },
          authorize: () => ({ id: 'ext-42', name: 'Ext', email: 'ext@example.com' }),
        }),
      ],
    })
    const client = new Client(config)
    const response = await client.signIn(good)
    expect(response.headers.get('location')).toBe('https://authchart.test')
    expect(store.accounts.get('credentials\u0000ext-42')?.userId).toMatch(uuid)
    expect(((await client.session()).body as { user: { email: string } }).user.email).toBe('ext@example.com')
  })

  it('uses generateSessionToken for new sessions', async () => {
    const { config } = databaseConfig({ session: { generateSessionToken: () => 'custom-token-1' } })
    const client = new Client(config)
    await client.signIn(good)
    expect(client.jar.get(SESSION_COOKIE)).toBe('custom-token-1')
  })

  it('deletes the row on sign-out and fires events.signOut with it', async () => {
    const { store, config } = databaseConfig()
    const signOut = vi.fn()
    const client = new Client({ ...config, events: { signOut } })
    await client.signIn(good)
    const token = client.jar.get(SESSION_COOKIE)!
    await client.signOut()
    expect(store.sessions.has(token)).toBe(false)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(signOut).toHaveBeenCalledWith({ session: expect.objectContaining({ sessionToken: token }) })
  })

  it('extends the row and rewrites the cookie with the same expiry once updateAge has passed', async () => {
    const { store, config } = databaseConfig({ session: { updateAge: 0 } })
    const client = new Client(config)
    await client.signIn(good)
    const token = client.jar.get(SESSION_COOKIE)!
    store.sessions.get(token)!.expires = new Date(Date.now() + 1000 * 60 * 60)
    const { response, body } = await client.session()
    const stored = store.sessions.get(token)!.expires
    expect(stored.getTime()).toBeGreaterThan(Date.now() + 2_591_000_000)
    const cookie = setCookie(response, SESSION_COOKIE)!
    expect(Date.parse(cookie.attributes.expires as string)).toBe(stored.getTime())
    expect((body as { expires: string }).expires).toBe(stored.toISOString())
  })

  it('leaves row and cookie alone while updateAge has not passed', async () => {
    const { store, config } = databaseConfig()
    const client = new Client(config)
    await client.signIn(good)
    const token = client.jar.get(SESSION_COOKIE)!
    const before = store.sessions.get(token)!.expires.getTime()
    const { response } = await client.session()
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect(store.sessions.get(token)!.expires.getTime()).toBe(before)
  })

  it('deletes an expired session and clears its cookie', async () => {
    const { store, config } = databaseConfig()
    const client = new Client(config)
    await client.signIn(good)
    const token = client.jar.get(SESSION_COOKIE)!
    store.sessions.get(token)!.expires = new Date(Date.now() - 1000)
    const { body } = await client.session()
    expect(body).toBeNull()
    expect(store.sessions.has(token)).toBe(false)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('ends a row past its absolute lifetime in pastAbsoluteLifetime, one idle past its expiry in expired, and serves one until the second its lifetime ends', async () => {
    const ends: string[] = []
    const inspect = (trace: { flow: string; steps: { to: string }[] }) => {
      if (trace.flow === 'session') ends.push(trace.steps.at(-1)!.to)
    }
    const HOUR = 3600
    const { store, config } = databaseConfig({ inspect, session: { strategy: 'database', absoluteMaxAge: HOUR } })
    const now = Math.floor(Date.now() / 1000)
    // Every read at the same second: the lifetime-ends-now case is exact.
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(now * 1000)
    onTestFinished(() => void vi.useRealTimers())
    const row = (token: string, expires: number, createdAt: number) => {
      store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
      store.sessions.set(token, { sessionToken: token, userId: ALICE.id, expires: new Date(expires * 1000), createdAt: new Date(createdAt * 1000) })
    }
    const read = async (token: string) => (await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: token } }), config)).json()
    // Its lifetime and its idle expiry end in the same past second: the lifetime is named.
    row('both', now - 1, now - 1 - HOUR)
    expect(await read('both')).toBeNull()
    row('idle', now - 1, now - 60)
    expect(await read('idle')).toBeNull()
    // Its lifetime ends this very second, before its idle expiry: still live (over only after it).
    row('lifetime-now', now + HOUR, now - HOUR)
    expect(await read('lifetime-now')).toMatchObject({ user: { email: ALICE.email } })
    row('lifetime-past', now + HOUR, now - HOUR - 1)
    expect(await read('lifetime-past')).toBeNull()
    expect(ends).toEqual(['pastAbsoluteLifetime', 'expired', 'active', 'pastAbsoluteLifetime'])
    expect([...store.sessions.keys()]).toEqual(['lifetime-now'])
  })

  it('passes the stored user and trigger update to the session callback on POST /session', async () => {
    const session = vi.fn(({ session }) => session)
    const { store, config } = databaseConfig({ callbacks: { session } })
    const client = new Client(config)
    await client.signIn(good)
    const csrfToken = await client.csrfToken()
    await client.send({ path: '/session', json: { csrfToken, data: { theme: 'dark' } } })
    const [stored] = [...store.users.values()]
    expect(session).toHaveBeenLastCalledWith({
      session: expect.objectContaining({ sessionToken: client.jar.get(SESSION_COOKIE), user: expect.objectContaining({ id: stored!.id }) }),
      user: expect.objectContaining({ id: stored!.id, email: ALICE.email }),
      newSession: { theme: 'dark' },
      trigger: 'update',
    })
  })

  it('answers null but keeps the cookie when the database is down, logging AdapterError', async () => {
    const store = createMemoryStore()
    const adapter: Adapter = {
      ...MemoryAdapter(store),
      getSessionAndUser: async () => {
        throw new Error('ECONNREFUSED 127.0.0.1:5432')
      },
    }
    const config = testConfig({ adapter })
    const response = await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: 'some-token' } }), config)
    expect(await response.json()).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    const logged = config.logger.error.mock.calls.map(([e]) => e)
    expect(logged[0]).toBeInstanceOf(AdapterError)
    expect(logged[0].cause.err.message).toContain('ECONNREFUSED')
  })

  it('debug-logs every adapter call as adapter_<method>', async () => {
    const { config } = databaseConfig({ logger: spyLogger() })
    await new Client(config).signIn(good)
    const messages = config.logger.debug.mock.calls.map(([m]) => m)
    expect(messages).toEqual(
      expect.arrayContaining(['adapter_getUserByAccount', 'adapter_createUserAndAccount', 'adapter_createSession']),
    )
  })

  it('creates a new user with createUser then linkAccount, as Auth.js does, through an adapter without createUserAndAccount', async () => {
    const { createUserAndAccount: _, ...authjsAdapter } = MemoryAdapter()
    const config = testConfig({ adapter: authjsAdapter, logger: spyLogger() })
    await new Client(config).signIn(good)
    const messages = config.logger.debug.mock.calls.map(([m]) => m)
    expect(messages).toEqual(expect.arrayContaining(['adapter_createUser', 'adapter_linkAccount', 'adapter_createSession']))
    expect(messages).not.toContain('adapter_createUserAndAccount')
  })

  it('refuses at boot an adapter that lacks a method the configured flows call', () => {
    const { createSession: _, ...adapter } = MemoryAdapter()
    expect(() => assertConfig(testConfig({ adapter }))).toThrow(
      'Required adapter methods were missing: createSession',
    )
    const { updateSession: __, deleteSession: ___, ...other } = MemoryAdapter()
    expect(() => assertConfig(testConfig({ adapter: other, providers: [] }))).toThrow(
      'Required adapter methods were missing: updateSession, deleteSession',
    )
  })

  it('accepts an adapter without session methods when sessions are JWTs', () => {
    expect(assertConfig(testConfig({ adapter: {}, session: { strategy: 'jwt' } })).session.strategy).toBe('jwt')
  })

  it('accepts class-based adapters whose methods live on the prototype', async () => {
    const store = createMemoryStore()
    const memory = MemoryAdapter(store)
    class ClassAdapter {
      getUser = undefined
    }
    for (const [name, method] of Object.entries(memory)) {
      Object.defineProperty(ClassAdapter.prototype, name, { value: method })
    }
    const adapter = new ClassAdapter()
    delete (adapter as { getUser?: unknown }).getUser
    const client = new Client(testConfig({ adapter: adapter as unknown as Adapter }))
    await client.signIn(good)
    expect(store.sessions.size).toBe(1)
  })
})

describe('a new database session row', () => {
  const at = 1_900_000_000
  const contextFor = (adapter: Adapter) =>
    ({ config: assertConfig(testConfig({ adapter })), at, request: authRequest({ path: '/auth/session' }) }) as unknown as RequestContext
  const OP_SESSION = { provider: 'op', sub: 'op-alice', sid: 'sid-1' }

  it('keeps the factor times and the provider session for an adapter that keeps them, and nothing it was not given', async () => {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    const adapter = MemoryAdapter(store)
    const kept = await createSessionRow(contextFor(adapter), ALICE.id, ['pwd'], { pwd: at }, OP_SESSION)
    expect(store.sessions.get(kept.value)).toMatchObject({ fva: { pwd: at }, providerSession: OP_SESSION, amr: ['pwd'] })
    const plain = await createSessionRow(contextFor(adapter), ALICE.id)
    const row = store.sessions.get(plain.value)!
    expect(Object.keys(row).filter((key) => ['fva', 'providerSession', 'amr'].includes(key))).toEqual([])
  })

  it('gives the provider session only to an adapter that deletes sessions by it (an Auth.js adapter may refuse the column)', async () => {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    const { deleteProviderSessions: _unused, ...adapter } = MemoryAdapter(store)
    const created = await createSessionRow(contextFor(adapter as Adapter), ALICE.id, undefined, undefined, OP_SESSION)
    expect(store.sessions.get(created.value)).not.toHaveProperty('providerSession')
  })
})
