/**
 * A user's sessions (core/session/manage.ts) and sign-out everywhere (the not-before times of
 * core/session/lifecycle.ts), on the memory adapter and the memory store: what the list says of each
 * session, each revoke form under each strategy and the answer when it cannot be served, and the
 * functions an application calls.
 */
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig, Auth, listSessions, memoryAuthStore, revokeAllSessions, revokeOtherSessions, revokeSession } from '../../core/index.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { endJwtSessionsOf, endJwtSessionsOfProviderSession } from '../../core/session/lifecycle.js'
import { sessionId } from '../../core/session/manage.js'
import { decode } from '../../core/jwt.js'
import { ALICE, authRequest, Client, credentialsProvider, SECRET, testConfig } from '../fixtures/http.js'
import { auditTrail } from '../../core/audit.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'

interface Listed {
  id: string
  createdAt: string | null
  lastSeenAt: string | null
  userAgent: string | null
  expires: string | null
  current: boolean
}

function databaseConfig(overrides: Parameters<typeof testConfig>[0] = {}) {
  const store = createMemoryStore()
  return { store, config: testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database' }, ...overrides }) }
}

/** Alice (alice / wonderland) and Bob (bob / builder). */
const twoPeople = credentialsProvider((c) =>
  c.password === 'wonderland' && c.username === 'alice'
    ? { ...ALICE }
    : c.password === 'builder' && c.username === 'bob'
      ? { id: 'u-2', name: 'Bob', email: 'bob@example.com' }
      : null,
)

async function signedIn(config: ReturnType<typeof testConfig>, userAgent?: string, username = 'alice') {
  const client = new Client(config)
  await client.send({
    path: '/callback/credentials',
    body: { csrfToken: await client.csrfToken(), username, password: username === 'bob' ? 'builder' : 'wonderland' },
    ...(userAgent ? { headers: { 'user-agent': userAgent } } : {}),
  })
  return client
}

const listed = async (client: Client) => (await (await client.send({ path: '/sessions' })).json()) as Listed[]
const revoke = async (client: Client, fields: Record<string, string>) =>
  client.send({ path: '/sessions', body: { csrfToken: await client.csrfToken(), ...fields } })
const signedInUser = async (client: Client) => ((await client.session()).body as { user?: { email?: string } } | null)?.user?.email ?? null

describe('the list of database sessions', () => {
  it('describes each session by its public id, times and user agent, the asking one marked current', async () => {
    const { store, config } = databaseConfig()
    const before = Date.now()
    const laptop = await signedIn(config, 'Laptop')
    const phone = await signedIn(config)
    const token = laptop.jar.get(SESSION_COOKIE)!
    const row = store.sessions.get(token)!
    row.lastSeenAt = new Date('2030-01-02T03:04:05.000Z')
    const list = await listed(laptop)
    expect(list).toHaveLength(2)
    const mine = list.find((s) => s.current)!
    expect(mine).toEqual({
      id: await sessionId(token),
      createdAt: new Date(row.createdAt!).toISOString(),
      lastSeenAt: '2030-01-02T03:04:05.000Z',
      userAgent: 'Laptop',
      expires: new Date(row.expires).toISOString(),
      current: true,
    })
    expect(Date.parse(mine.createdAt!)).toBeGreaterThanOrEqual(before - 1000)
    const other = list.find((s) => !s.current)!
    expect(other.id).toBe(await sessionId(phone.jar.get(SESSION_COOKIE)!))
    const phoneRow = store.sessions.get(phone.jar.get(SESSION_COOKIE)!)!
    phoneRow.lastSeenAt = undefined
    expect((await listed(laptop)).find((s) => !s.current)).toMatchObject({ lastSeenAt: null, userAgent: null })
    expect(list.filter((s) => s.current)).toHaveLength(1)

    // The function gives the same, with the current session only when its token is named.
    const userId = row.userId
    const [a, b] = await listSessions(config, userId)
    expect([a, b].every((s) => s!.current === false)).toBe(true)
    expect((await listSessions(config, userId, token)).filter((s) => s.current).map((s) => s.id)).toEqual([mine.id])
    expect(await listSessions(config, 'nobody')).toEqual([])
  })

  it('names a session by a hash of its token that never shows the token', async () => {
    const id = await sessionId('some-session-token')
    expect(id).toMatch(/^[0-9a-f]{32}$/)
    expect(await sessionId('some-session-token')).toBe(id)
    expect(await sessionId('another-session-token')).not.toBe(id)
  })

  it('answers 401 with null without a session, and 400 (logged) with an adapter that cannot list sessions', async () => {
    const { config } = databaseConfig()
    for (const init of [{ path: '/auth/sessions' }, { path: '/auth/sessions', body: { revoke: 'all' } }]) {
      const response = await Auth(authRequest(init), config)
      expect(response.status).toBe(init.body ? 400 : 401) // a post without a token fails its CSRF check first
    }
    const anonymous = new Client(config)
    const post = await revoke(anonymous, { revoke: 'all' })
    expect(post.status).toBe(401)
    expect(await post.json()).toBeNull()

    const store = createMemoryStore()
    const { listSessions: _dropped, ...withoutList } = MemoryAdapter(store)
    const limited = testConfig({ adapter: withoutList as never, session: { strategy: 'database' } })
    const client = await signedIn(limited)
    expect(await signedInUser(client)).toBe('alice@example.com')
    const list = await client.send({ path: '/sessions' })
    expect(list.status).toBe(400)
    expect(await list.json()).toBeNull()
    expect(limited.logger.error).toHaveBeenCalledTimes(1)
    expect(limited.logger.error).toHaveBeenLastCalledWith(expect.objectContaining({ message: expect.stringContaining('no listSessions') }))
    const refused = await revoke(client, { revoke: 'all' })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toBeNull()
    expect(limited.logger.error).toHaveBeenCalledTimes(2)
    expect(limited.logger.error).toHaveBeenLastCalledWith(expect.objectContaining({ message: expect.stringContaining('no listSessions') }))
    expect(await signedInUser(client)).toBe('alice@example.com')
    await expect(listSessions(limited, 'u-1')).rejects.toThrow(TypeError)
    await expect(revokeSession(limited, 'u-1', 'x')).rejects.toThrow(TypeError)
    await expect(revokeOtherSessions(limited, 'u-1', 'x')).rejects.toThrow(TypeError)
    await expect(revokeAllSessions(limited, 'u-1')).rejects.toThrow(TypeError)
  })
})

describe('revoking database sessions', () => {
  it('ends one session by its id, the others, or all, and says how many', async () => {
    const { store, config } = databaseConfig()
    const laptop = await signedIn(config, 'Laptop')
    const phone = await signedIn(config, 'Phone')
    const tablet = await signedIn(config, 'Tablet')
    const phoneId = (await listed(laptop)).find((s) => s.userAgent === 'Phone')!.id

    expect(await (await revoke(laptop, { revoke: 'one', id: 'not-a-session' })).json()).toEqual({ revoked: 0 })
    expect(store.sessions.size).toBe(3)
    const one = await revoke(laptop, { revoke: 'one', id: phoneId })
    expect(one.status).toBe(200)
    expect(await one.json()).toEqual({ revoked: 1 })
    expect(one.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
    expect(await signedInUser(phone)).toBeNull()
    expect(await signedInUser(tablet)).toBe('alice@example.com')
    expect(await (await revoke(laptop, { revoke: 'one', id: phoneId })).json()).toEqual({ revoked: 0 })

    expect(await (await revoke(laptop, { revoke: 'others' })).json()).toEqual({ revoked: 1 })
    expect(await signedInUser(tablet)).toBeNull()
    expect(await signedInUser(laptop)).toBe('alice@example.com')
    expect(await (await revoke(laptop, { revoke: 'others' })).json()).toEqual({ revoked: 0 })

    const all = await revoke(laptop, { revoke: 'all' })
    expect(await all.json()).toEqual({ revoked: 'all' })
    // This browser's cookie is cleared too.
    expect(all.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`) || /session-token=;/.test(c))).toBe(true)
    expect(store.sessions.size).toBe(0)
  })

  it('refuses a revoke it cannot read: no form, an unknown form, one without a string id', async () => {
    const { store, config } = databaseConfig()
    const laptop = await signedIn(config)
    await signedIn(config)
    for (const fields of [{}, { revoke: 'everything' }, { revoke: 'one' }] as Record<string, string>[]) {
      const response = await revoke(laptop, fields)
      expect(response.status, JSON.stringify(fields)).toBe(400)
      expect(await response.json()).toBeNull()
    }
    const json = await laptop.send({ path: '/sessions', json: { csrfToken: await laptop.csrfToken(), revoke: 'one', id: 7 } })
    expect(json.status).toBe(400)
    expect(store.sessions.size).toBe(2)
    // A request the route cannot serve is the client's mistake, not an error of the server.
    expect(config.logger.error).not.toHaveBeenCalled()
  })

  it('through the functions: one by id (of this user only), the others but one, all', async () => {
    const { store, config } = databaseConfig()
    const laptop = await signedIn(config)
    const phone = await signedIn(config)
    const tablet = await signedIn(config)
    const token = (client: Client) => client.jar.get(SESSION_COOKIE)!
    const userId = store.sessions.get(token(laptop))!.userId
    expect(await revokeSession(config, userId, 'unknown')).toBe(false)
    expect(await revokeSession(config, 'someone-else', await sessionId(token(phone)))).toBe(false)
    expect(await signedInUser(phone)).toBe('alice@example.com')
    expect(await revokeSession(config, userId, await sessionId(token(phone)))).toBe(true)
    expect(await signedInUser(phone)).toBeNull()
    expect(await revokeOtherSessions(config, userId, token(tablet))).toBe(1)
    expect(await signedInUser(laptop)).toBeNull()
    expect(await signedInUser(tablet)).toBe('alice@example.com')
    expect(await revokeOtherSessions(config, userId, token(tablet))).toBe(0)
    await revokeAllSessions(config, userId)
    expect(await signedInUser(tablet)).toBeNull()
    expect(store.sessions.size).toBe(0)
  })
})

describe('revoking a database session whose reads are cached (session.cache)', () => {
  it('refuses its cached copy at once, revoked by id or among the others, through the routes and the functions', async () => {
    const { store, config } = databaseConfig({ session: { strategy: 'database', cache: { maxAge: 60 } } })
    const token = (client: Client) => client.jar.get(SESSION_COOKIE)!
    const cases: ((victim: Client, keeper: Client) => Promise<unknown>)[] = [
      async (victim, keeper) => revoke(keeper, { revoke: 'one', id: await sessionId(token(victim)) }),
      async (_victim, keeper) => revoke(keeper, { revoke: 'others' }),
      async (victim) => revokeSession(config, store.sessions.get(token(victim))!.userId, await sessionId(token(victim))),
      async (victim, keeper) => revokeOtherSessions(config, store.sessions.get(token(keeper))!.userId, token(keeper)),
    ]
    for (const [index, revokeIt] of cases.entries()) {
      const victim = await signedIn(config)
      const keeper = await signedIn(config)
      // The victim's next read is served from its cache cookie, within maxAge.
      expect(await signedInUser(victim)).toBe('alice@example.com')
      expect(victim.jar.get('__Secure-authjs.session-cache'), `case ${index}`).toBeDefined()
      await revokeIt(victim, keeper)
      expect(await signedInUser(victim), `case ${index}`).toBeNull()
      expect(await signedInUser(keeper), `case ${index}`).toBe('alice@example.com')
    }
  })
})

describe('the audit trail of revoking', () => {
  it('records each revocation that ended a session, for the user who asked, and none that ended nothing', async () => {
    const events: AuditEvent[] = []
    const { store, config } = databaseConfig({ audit: auditTrail({ sink: (event) => void events.push(event) }) })
    const laptop = await signedIn(config, 'Laptop')
    const phone = await signedIn(config, 'Phone')
    await signedIn(config, 'Tablet')
    const userId = store.sessions.get(laptop.jar.get(SESSION_COOKIE)!)!.userId
    const lifecycle = () => events.filter((event) => event.kind !== 'flow').map((event) => [event.kind, event.userId])
    events.length = 0
    await revoke(laptop, { revoke: 'one', id: 'not-a-session' })
    expect(lifecycle()).toEqual([])
    await revoke(laptop, { revoke: 'one', id: await sessionId(phone.jar.get(SESSION_COOKIE)!) })
    expect(lifecycle()).toEqual([['session-revoked', userId]])
    events.length = 0
    await revoke(laptop, { revoke: 'others' })
    expect(lifecycle()).toEqual([['session-revoked', userId]])
    events.length = 0
    await revoke(laptop, { revoke: 'others' })
    expect(lifecycle()).toEqual([])
    await revoke(laptop, { revoke: 'all' })
    expect(lifecycle()).toEqual([['sign-out-everywhere', userId]])
  })
})

describe("Alice's and Bob's database sessions", () => {
  it("lists and revokes only the asking user's own, whatever owner the body names", async () => {
    const { store, config } = databaseConfig({ providers: [twoPeople] })
    const alice = await signedIn(config, 'Alice laptop')
    const alicePhone = await signedIn(config, 'Alice phone')
    const bob = await signedIn(config, 'Bob laptop', 'bob')
    const bobPhone = await signedIn(config, 'Bob phone', 'bob')
    expect(await signedInUser(bob)).toBe('bob@example.com')
    const bobId = store.sessions.get(bob.jar.get(SESSION_COOKIE)!)!.userId
    const bobsSession = await sessionId(bob.jar.get(SESSION_COOKIE)!)
    expect((await listed(alice)).map((s) => s.userAgent).sort()).toEqual(['Alice laptop', 'Alice phone'])
    expect((await listed(bob)).map((s) => s.userAgent).sort()).toEqual(['Bob laptop', 'Bob phone'])

    const owner = { userId: bobId, user: bobId, sub: bobId }
    expect(await (await revoke(alice, { revoke: 'one', id: bobsSession, ...owner })).json()).toEqual({ revoked: 0 })
    expect(await signedInUser(bob)).toBe('bob@example.com')
    expect(await (await revoke(alice, { revoke: 'others', ...owner })).json()).toEqual({ revoked: 1 })
    expect(await signedInUser(alicePhone)).toBeNull()
    expect(await signedInUser(bobPhone)).toBe('bob@example.com')
    expect(await (await revoke(alice, { revoke: 'all', ...owner })).json()).toEqual({ revoked: 'all' })
    expect(await signedInUser(alice)).toBeNull()
    expect(await signedInUser(bob)).toBe('bob@example.com')
    expect(await signedInUser(bobPhone)).toBe('bob@example.com')
    expect(await listSessions(config, bobId)).toHaveLength(2)
  })
})

describe('JWT sessions', () => {
  it('lists the asking session only: its id and sign-in time, nothing it cannot know', async () => {
    const config = testConfig({ store: memoryAuthStore() })
    const client = await signedIn(config)
    const token = client.jar.get(SESSION_COOKIE)!
    const claims = await decode({ token, secret: SECRET, salt: SESSION_COOKIE })
    const list = await listed(client)
    expect(list).toEqual([
      {
        id: await sessionId(client.jar.get(SESSION_COOKIE)!),
        createdAt: new Date((claims!.auth_time as number) * 1000).toISOString(),
        lastSeenAt: null,
        userAgent: null,
        expires: null,
        current: true,
      },
    ])
    // Without a sign-in time in the token (no store, no absolute lifetime), none is listed.
    const plain = await signedIn(testConfig())
    expect((await listed(plain))[0]).toMatchObject({ createdAt: null, current: true })
  })

  it('refuses one and others (the other sessions live in other browsers), and all without a store', async () => {
    // An adapter that lists sessions changes nothing: JWT sessions are not its rows.
    const config = testConfig({ store: memoryAuthStore(), adapter: MemoryAdapter(createMemoryStore()), session: { strategy: 'jwt' } })
    const client = await signedIn(config)
    for (const fields of [{ revoke: 'one', id: 'x' }, { revoke: 'others' }] as Record<string, string>[]) {
      expect((await revoke(client, fields)).status, JSON.stringify(fields)).toBe(400)
    }
    expect(config.logger.error).not.toHaveBeenCalled()
    expect(await signedInUser(client)).toBe('alice@example.com')
    await expect(listSessions(config, 'u-1')).rejects.toThrow(/database sessions/)
    await expect(revokeSession(config, 'u-1', 'x')).rejects.toThrow(/database sessions/)

    const plain = testConfig()
    const alone = await signedIn(plain)
    const refused = await revoke(alone, { revoke: 'all' })
    expect(refused.status).toBe(400)
    expect(plain.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining('needs a `store`') }))
    expect(await signedInUser(alone)).toBe('alice@example.com')
    await expect(listSessions(plain, 'u-1')).rejects.toThrow(/database sessions/)
  })

  it("signs out everywhere with a store: every session of the user signed in until now ends, a later one lives, another user's too", async () => {
    const config = testConfig({ store: memoryAuthStore(), providers: [twoPeople] })
    const laptop = await signedIn(config)
    const phone = await signedIn(config)
    const bob = await signedIn(config, undefined, 'bob')
    const all = await revoke(laptop, { revoke: 'all', userId: 'u-2' })
    expect(await all.json()).toEqual({ revoked: 'all' })
    expect(all.headers.getSetCookie().some((c) => /session-token=;/.test(c))).toBe(true)
    expect(await signedInUser(phone)).toBeNull()
    expect(await signedInUser(bob)).toBe('bob@example.com')
    vi.useFakeTimers({ now: Date.now() + 2000, toFake: ['Date'] })
    try {
      const later = await signedIn(config)
      expect(await signedInUser(later)).toBe('alice@example.com')
      // The function, at its default time (now), the same way.
      await revokeAllSessions(config, 'u-1')
      expect(await signedInUser(later)).toBeNull()
      vi.setSystemTime(Date.now() + 2000)
      const again = await signedIn(config)
      expect(await signedInUser(again)).toBe('alice@example.com')
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('the not-before times of sign-out everywhere', () => {
  it('need a configured store, and are kept for the longer of maxAge and absoluteMaxAge', async () => {
    const plain = assertConfig(testConfig())
    await expect(endJwtSessionsOf(plain, 'u-1', 100)).rejects.toThrow(/needs a `store`/)
    await expect(endJwtSessionsOfProviderSession(plain, 'corp', 'sid-1', 100)).rejects.toThrow(/needs a `store`/)

    for (const [session, kept] of [
      [{ maxAge: 500, absoluteMaxAge: 9000 }, 9000],
      [{ maxAge: 5000, absoluteMaxAge: 90 }, 5000],
      [{ maxAge: 700 }, 700],
    ] as const) {
      const store = memoryAuthStore()
      const put = vi.spyOn(store, 'put')
      const config = assertConfig(testConfig({ store, session }))
      await endJwtSessionsOf(config, 'u-1', 1234)
      await endJwtSessionsOfProviderSession(config, 'corp', 'sid-1', 5678)
      expect(put.mock.calls.map(([key, value, ttl]) => [key.split(':')[1], value, ttl])).toEqual([
        ['not-before', '1234', kept],
        ['sid-not-before', '5678', kept],
      ])
      // Distinct keys per user, and per provider session.
      await endJwtSessionsOf(config, 'u-2', 1)
      await endJwtSessionsOfProviderSession(config, 'corp', 'sid-2', 1)
      await endJwtSessionsOfProviderSession(config, 'other', 'sid-1', 1)
      expect(new Set(put.mock.calls.map(([key]) => key)).size).toBe(5)
    }
  })
})
