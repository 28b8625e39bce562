/**
 * The session cache of database sessions (`session.cache`), through `Auth` on the memory adapter
 * and store: a read within `maxAge` asks no adapter method (a counting adapter proves it), the
 * cache never outlives the row's expiry or the absolute lifetime and leaves `updateAge` as it is,
 * and the attacks on the cache cookie: tampered, another user's, one from before a sign-out
 * everywhere, one replayed after a revocation (each refused by a check that the unit tests below
 * take away one at a time).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { Adapter, ProviderSession } from '../../core/adapters.js'
import { assertConfig } from '../../core/index.js'
import type { RequestContext } from '../../core/http/context.js'
import {
  clearSessionCache,
  MARKER_CLOCK_SKEW,
  readSessionCache,
  refreshSessionCache,
  revokeCachedSessionTokens,
  revokeCachedProviderSessions,
  revokeCachedSessions,
  revokeCachedSessionsOf,
  writeSessionCache,
} from '../../core/session/cache.js'
import { decode, encode } from '../../core/jwt.js'
import { sessionId } from '../../core/session/id.js'
import { revokeAllSessions, revokeSession } from '../../core/session/manage.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { endProviderSessions } from '../../core/flows/logout/flow.js'
import { storedRow, VICTIM, VICTIM_PROVIDER_SESSION } from '../fixtures/dead-sessions.js'
import { Client, credentialsProvider, setCookie, testConfig, featureConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const CACHE_COOKIE = '__Secure-authjs.session-cache'
const good = { username: 'alice', password: 'wonderland' }
const BOB = { id: 'bob', name: 'Bob', email: 'bob@example.com', image: null }
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0)

/** An adapter over `store` that counts each call of each method. */
function countingAdapter(store: MemoryStore) {
  const calls = new Map<string, number>()
  const inner = MemoryAdapter(store) as unknown as Record<string, (...args: unknown[]) => unknown>
  const adapter = Object.fromEntries(
    Object.entries(inner).map(([name, method]) => [
      name,
      (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1)
        return method(...args)
      },
    ]),
  ) as Adapter
  return { adapter, calls, total: () => [...calls.values()].reduce((a, b) => a + b, 0) }
}

function app(session: Record<string, unknown> = {}, extra: Partial<AuthConfig> = {}, rows = createMemoryStore()) {
  const counting = countingAdapter(rows)
  const config = featureConfig({
    adapter: counting.adapter,
    providers: [
      credentialsProvider((c) =>
        c.password === 'wonderland' ? (c.username === 'bob' ? { ...BOB } : c.username === 'alice' ? { id: 'u-1', name: 'Alice', email: 'alice@example.com' } : null) : null,
      ),
    ],
    session: { strategy: 'database', cache: { maxAge: 60 }, ...session } as AuthConfig['session'],
    ...extra,
  })
  return { config, rows, ...counting }
}

const at = (seconds: number) => vi.setSystemTime(T0 + seconds * 1000)

/** A browser holding a copy of `client`'s cookies (an attacker's, or another tab's). */
function copyOf(client: Client, config = client.config): Client {
  const copy = new Client(config)
  for (const [name, value] of client.jar.cookies) copy.jar.cookies.set(name, value)
  return copy
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  at(0)
})
afterEach(() => {
  vi.useRealTimers()
})

describe('the session cache', () => {
  it('is off by default: every database session read asks the adapter, and no cache cookie is set', async () => {
    const { config, calls } = app({ cache: undefined })
    const client = new Client(config)
    await client.signIn(good)
    calls.clear()
    for (let i = 0; i < 3; i++) {
      const { response, body } = await client.session()
      expect(body).toMatchObject({ user: { email: 'alice@example.com' } })
      expect(setCookie(response, CACHE_COOKIE)).toBeUndefined()
    }
    expect(calls.get('getSessionAndUser')).toBe(3)
  })

  it('serves reads within maxAge without a single adapter call, with the body the adapter read gives', async () => {
    const { config, calls, total } = app()
    const client = new Client(config)
    await client.signIn(good)
    calls.clear()
    const first = await client.session()
    expect(calls.get('getSessionAndUser')).toBe(1)
    const cookie = setCookie(first.response, CACHE_COOKIE)!
    expect(cookie.attributes).toMatchObject({ path: '/', httponly: true, secure: true, samesite: 'Lax' })
    expect(Date.parse(cookie.attributes.expires as string)).toBe(T0 + 60_000)
    calls.clear()
    for (let i = 1; i <= 59; i++) {
      at(i)
      const read = await client.session()
      expect(read.body).toEqual(first.body)
    }
    expect(total()).toBe(0)
    at(60)
    const after = await client.session()
    expect(after.body).toEqual(first.body)
    expect(calls.get('getSessionAndUser')).toBe(1)
    // A new entry for the next minute.
    expect(setCookie(after.response, CACHE_COOKIE)).toBeDefined()
  })

  it('gives the session callback the stored user and row as the adapter does, dates as dates', async () => {
    const seen: unknown[] = []
    const { config, rows } = app({}, { callbacks: { session: ({ session, user }) => (seen.push({ session, user }), session) } })
    const client = new Client(config)
    await client.signIn(good)
    const [user] = [...rows.users.values()]
    rows.users.set(user!.id, { ...user!, emailVerified: new Date(T0 - 1000) })
    await client.session()
    await client.session()
    expect(seen).toHaveLength(2)
    expect(seen[1]).toEqual(seen[0])
    const { session, user: cached } = seen[1] as { session: Record<string, unknown>; user: Record<string, unknown> }
    expect(cached.emailVerified).toBeInstanceOf(Date)
    expect(session.expires).toBeInstanceOf(Date)
    expect(session.sessionToken).toBe(client.jar.get(SESSION_COOKIE))
  })

  it('never outlives the row: an entry minted near the idle expiry ends with it, and the session then ends as without a cache', async () => {
    const { config, calls } = app({ maxAge: 30, updateAge: 3600, cache: { maxAge: 60 } })
    const client = new Client(config)
    await client.signIn(good)
    const first = await client.session()
    expect(Date.parse(setCookie(first.response, CACHE_COOKIE)!.attributes.expires as string)).toBe(T0 + 30_000)
    calls.clear()
    at(31)
    const { response, body } = await client.session()
    expect(body).toBeNull()
    expect(calls.get('getSessionAndUser')).toBe(1)
    expect(calls.get('deleteSession')).toBe(1)
    expect(setCookie(response, CACHE_COOKIE)?.attributes['max-age']).toBe('0')
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
  })

  it('never outlives the absolute lifetime however recently the session was used', async () => {
    const { config } = app({ absoluteMaxAge: 100, updateAge: 0, cache: { maxAge: 60 } })
    const client = new Client(config)
    await client.signIn(good)
    at(90)
    const read = await client.session()
    expect(Date.parse(setCookie(read.response, CACHE_COOKIE)!.attributes.expires as string)).toBe(T0 + 100_000)
    at(101)
    expect((await client.session()).body).toBeNull()
  })

  it('extends the row on updateAge exactly as without a cache: the same writes, the same expiries', async () => {
    const run = async (cache: { maxAge: number } | undefined) => {
      at(0)
      const { config, calls } = app({ maxAge: 3600, updateAge: 10, cache })
      const client = new Client(config)
      await client.signIn(good)
      const expiries: unknown[] = []
      for (const second of [1, 5, 11, 12, 15, 22, 23, 40]) {
        at(second)
        expiries.push(((await client.session()).body as { expires: string }).expires)
      }
      return { expiries, updates: calls.get('updateSession') ?? 0, reads: calls.get('getSessionAndUser') ?? 0 }
    }
    const cached = await run({ maxAge: 60 })
    const uncached = await run(undefined)
    expect(cached.expiries).toEqual(uncached.expiries)
    expect(cached.updates).toBe(uncached.updates)
    expect(cached.updates).toBe(3)
    // One read from the adapter; the rest from the entry, re-minted with each extension.
    expect(cached.reads).toBe(1)
    expect(uncached.reads).toBe(8)
  })

  it('chunks an entry larger than one cookie and reads it back', async () => {
    const { config, rows, total, calls } = app()
    const client = new Client(config)
    await client.signIn(good)
    const [user] = [...rows.users.values()]
    rows.users.set(user!.id, { ...user!, name: 'A'.repeat(6000) })
    const first = await client.session()
    expect(setCookie(first.response, `${CACHE_COOKIE}.0`)).toBeDefined()
    expect(setCookie(first.response, `${CACHE_COOKIE}.1`)).toBeDefined()
    calls.clear()
    const second = await client.session()
    expect(total()).toBe(0)
    expect(second.body).toEqual(first.body)
  })

  it('clears the cache cookie on sign-out', async () => {
    const { config } = app()
    const client = new Client(config)
    await client.signIn(good)
    await client.session()
    expect(client.jar.get(CACHE_COOKIE)).toBeDefined()
    const response = await client.signOut()
    expect(setCookie(response, CACHE_COOKIE)?.attributes['max-age']).toBe('0')
    expect(client.jar.get(CACHE_COOKIE)).toBeUndefined()
  })

  it('answers 503 with Retry-After when the store cannot be asked for the markers, never the cached session', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })
    let storeUp = true
    const memory = memoryAuthStore()
    const store: AuthStore = {
      ...memory,
      getMany: (keys) => (storeUp ? memory.getMany!(keys) : Promise.reject(down)),
      get: (key) => (storeUp ? memory.get(key) : Promise.reject(down)),
    }
    const { config } = app({}, { store, availability: { retryAfter: 7 } })
    const client = new Client(config)
    await client.signIn(good)
    await client.session()
    storeUp = false
    const response = await client.send({ path: '/session' })
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('7')
    expect(await response.text()).not.toContain('alice')
  })
})

describe('attacks on the cache cookie', () => {
  it('ignores a tampered cache cookie and asks the adapter', async () => {
    const { config, calls } = app()
    const client = new Client(config)
    await client.signIn(good)
    await client.session()
    const sealed = client.jar.get(CACHE_COOKIE)!
    const flipped = sealed.slice(0, 60) + (sealed[60] === 'A' ? 'B' : 'A') + sealed.slice(61)
    client.jar.cookies.set(CACHE_COOKIE, flipped)
    calls.clear()
    const { body } = await client.session()
    expect(body).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(calls.get('getSessionAndUser')).toBe(1)
    expect(config.logger.debug).toHaveBeenCalledWith('session-cache-refused', expect.objectContaining({ reason: 'unreadable' }))
  })

  it("never serves another user's cache entry beside one's own session token", async () => {
    const { config, calls } = app()
    const alice = new Client(config)
    const bob = new Client(config)
    await alice.signIn(good)
    await bob.signIn({ username: 'bob', password: 'wonderland' })
    await bob.session()
    // Alice's session token with Bob's entry: Alice is answered, from the adapter.
    alice.jar.cookies.set(CACHE_COOKIE, bob.jar.get(CACHE_COOKIE)!)
    calls.clear()
    const { body } = await alice.session()
    expect(body).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(calls.get('getSessionAndUser')).toBe(1)
    // And Bob's entry beside a token that names no session is no session at all.
    const forged = new Client(config)
    forged.jar.cookies.set(SESSION_COOKIE, 'not-a-session')
    forged.jar.cookies.set(CACHE_COOKIE, bob.jar.get(CACHE_COOKIE)!)
    expect((await forged.session()).body).toBeNull()
  })

  it('refuses an entry replayed after the session was signed out, on the next read', async () => {
    const { config } = app()
    const client = new Client(config)
    await client.signIn(good)
    await client.session()
    const stolen = copyOf(client)
    await client.signOut()
    expect((await stolen.session()).body).toBeNull()
  })

  it('refuses an entry from before a sign-out everywhere (the /sessions form), on the next read', async () => {
    const { config } = app()
    const laptop = new Client(config)
    await laptop.signIn(good)
    const phone = new Client(config)
    await phone.signIn(good)
    await phone.session()
    const copy = copyOf(phone)
    const revoked = await laptop.send({ path: '/sessions', body: { revoke: 'all', csrfToken: await laptop.csrfToken() } })
    expect(await revoked.json()).toEqual({ revoked: 'all' })
    expect((await copy.session()).body).toBeNull()
    // A session signed in afterwards is cached and served as usual.
    at(10)
    const later = new Client(config)
    await later.signIn(good)
    await later.session()
    expect((await later.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })

  it('refuses an entry replayed after revokeSession, revokeAllSessions or the revoke-one form', async () => {
    const { config, rows } = app()
    const cases: ((victim: Client) => Promise<unknown>)[] = [
      async (victim) => {
        const token = victim.jar.get(SESSION_COOKIE)!
        return revokeSession(config, rows.sessions.get(token)!.userId, await sessionId(token))
      },
      async (victim) => revokeAllSessions(config, rows.sessions.get(victim.jar.get(SESSION_COOKIE)!)!.userId),
      async (victim) => {
        const other = new Client(config)
        await other.signIn(good)
        const id = await sessionId(victim.jar.get(SESSION_COOKIE)!)
        return other.send({ path: '/sessions', body: { revoke: 'one', id, csrfToken: await other.csrfToken() } })
      },
      async () => {
        const other = new Client(config)
        await other.signIn(good)
        return other.send({ path: '/sessions', body: { revoke: 'others', csrfToken: await other.csrfToken() } })
      },
    ]
    for (const revoke of cases) {
      const victim = new Client(config)
      await victim.signIn(good)
      await victim.session()
      await revoke(victim)
      expect((await victim.session()).body).toBeNull()
    }
  })

  it('gives a route acting for the user (GET /sessions) no session from a revoked entry, with a shared store', async () => {
    const { config } = app({}, { store: memoryAuthStore() })
    const client = new Client(config)
    await client.signIn(good)
    await client.session()
    const stolen = copyOf(client)
    expect((await stolen.send({ path: '/sessions' })).status).toBe(200)
    await client.signOut()
    expect((await stolen.send({ path: '/sessions' })).status).toBe(401)
  })
})

describe('a logout by the provider', () => {
  it("refuses the cached read of each session signed in through the provider's session (named by sid, or by subject), and no other", async () => {
    for (const named of [
      { sid: VICTIM_PROVIDER_SESSION.sid, sub: null },
      { sid: null, sub: VICTIM_PROVIDER_SESSION.sub },
    ]) {
      const rows = createMemoryStore()
      rows.users.set(VICTIM.id, { ...VICTIM })
      const { config, total } = app({}, {}, rows)
      const browser = async (token: string) => {
        const client = new Client(config)
        client.jar.cookies.set(SESSION_COOKIE, token)
        await client.session()
        return client
      }
      const throughOp = await browser(await storedRow(rows, T0 / 1000 - 60))
      const notThroughOp = await browser(await storedRow(rows, T0 / 1000 - 60))
      delete rows.sessions.get(notThroughOp.jar.get(SESSION_COOKIE)!)!.providerSession
      // The other session's entry was minted before its row lost the provider session: mint it again.
      notThroughOp.jar.cookies.delete(CACHE_COOKIE)
      await notThroughOp.session()
      const before = total()
      expect((await throughOp.session()).body).toMatchObject({ user: { email: VICTIM.email } })
      expect(total(), 'served from the cache').toBe(before)
      // What a verified Logout Token does (test/oauth/backchannel-logout.test.ts sends one to Auth).
      await endProviderSessions(contextOf(config, {}), VICTIM_PROVIDER_SESSION.provider, named)
      expect((await throughOp.session()).body).toBeNull()
      expect((await notThroughOp.session()).body).toMatchObject({ user: { email: VICTIM.email } })
    }
  })
})

describe('without a shared store', () => {
  it('refuses a revoked session on the instance that revoked it at once, and on another within maxAge', async () => {
    const rows = createMemoryStore()
    // Two instances: each its own config (its own in-memory store), one database.
    const a = app({}, {}, rows)
    const b = app({}, {}, rows)
    const onA = new Client(a.config)
    await onA.signIn(good)
    const onB = copyOf(onA, b.config)
    const onAToo = copyOf(onA, a.config)
    await onB.session()
    await onAToo.session()
    await onA.signOut()
    expect((await onAToo.session()).body).toBeNull()
    // Instance B has not heard of it: its entry is served until it expires...
    at(59)
    expect((await onB.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
    // ...and no later.
    at(60)
    expect((await onB.session()).body).toBeNull()
  })
})

/** A request context with what the cache reads: the resolved config, cookies, the clock. */
function contextOf(config: AuthConfig, cookies: Record<string, string>): RequestContext {
  const resolved = assertConfig(config)
  return {
    config: resolved,
    cookies: resolved.cookies.secure,
    request: { cookies } as never,
    at: Math.floor(Date.now() / 1000),
    logger: resolved.logger,
    setCookies: [],
  } as unknown as RequestContext
}

describe('the cache entry (unit)', () => {
  const row = (token: string, userId: string) => ({ sessionToken: token, userId, expires: new Date(T0 + 3600_000) })
  const stored = (token: string, user: typeof BOB) => ({ session: row(token, user.id), user: { ...user, emailVerified: null }, expires: T0 / 1000 + 3600, endsByLifetime: false })

  async function minted(config: AuthConfig, token: string, user = BOB) {
    const ctx = contextOf(config, {})
    await writeSessionCache(ctx, token, stored(token, user))
    return ctx.setCookies.find((c) => c.name === CACHE_COOKIE)!.value
  }

  it('serves an entry minted for this token within its time, and nothing once maxAge has passed', async () => {
    const { config } = app()
    const value = await minted(config, 'token-1')
    const read = await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), 'token-1')
    expect(read).toMatchObject({ user: { id: 'bob' }, session: { sessionToken: 'token-1', userId: 'bob' }, expires: T0 / 1000 + 3600 })
    at(60)
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), 'token-1')).toBeNull()
  })

  it('refuses an entry minted for another token', async () => {
    const { config } = app()
    const value = await minted(config, 'token-1')
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), 'token-2')).toBeNull()
  })

  it('refuses a tampered entry and one sealed under another secret', async () => {
    const { config } = app()
    const value = await minted(config, 'token-1')
    const tampered = value.slice(0, -3) + (value.endsWith('A') ? 'BBB' : 'AAA')
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: tampered }), 'token-1')).toBeNull()
    const other = await minted(featureConfig({ ...config, secret: 'another-secret-that-is-long-enough-0123456789' }), 'token-1')
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: other }), 'token-1')).toBeNull()
  })

  it('refuses an entry whose session was revoked, or whose user signed out everywhere after it was minted', async () => {
    const { config } = app()
    const value = await minted(config, 'token-1')
    const resolved = assertConfig(config)
    await revokeCachedSessions(resolved, [await sessionId('token-2')], T0 / 1000)
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), 'token-1')).not.toBeNull()
    await revokeCachedSessions(resolved, [await sessionId('token-1')], T0 / 1000)
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), 'token-1')).toBeNull()

    const fresh = await minted(config, 'token-3')
    await revokeCachedSessionsOf(resolved, 'someone-else', T0 / 1000)
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: fresh }), 'token-3')).not.toBeNull()
    await revokeCachedSessionsOf(resolved, 'bob', T0 / 1000)
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: fresh }), 'token-3')).toBeNull()
  })

  it('refuses an entry whose provider session was logged out (by sid, or by subject), and no other', async () => {
    const { config } = app()
    const resolved = assertConfig(config)
    const mint = async (token: string, sid: string) => {
      const ctx = contextOf(config, {})
      const entry = stored(token, BOB)
      await writeSessionCache(ctx, token, { ...entry, session: { ...entry.session, providerSession: { provider: 'op', sub: 'op-bob', sid } } })
      return (t: string) => readSessionCache(contextOf(config, { [CACHE_COOKIE]: ctx.setCookies.find((c) => c.name === CACHE_COOKIE)!.value }), t)
    }
    const first = await mint('token-1', 'sid-1')
    const second = await mint('token-2', 'sid-2')
    await revokeCachedProviderSessions(resolved, 'op', { sid: 'sid-1', sub: 'op-bob' }, T0 / 1000)
    expect(await first('token-1')).toBeNull()
    expect(await second('token-2')).not.toBeNull()
    await revokeCachedProviderSessions(resolved, 'other-op', { sid: null, sub: 'op-bob' }, T0 / 1000)
    expect(await second('token-2')).not.toBeNull()
    await revokeCachedProviderSessions(resolved, 'op', { sid: null, sub: 'op-bob' }, T0 / 1000)
    expect(await second('token-2')).toBeNull()
  })

  it('still refuses an entry minted before the secret was rotated when its user signs out everywhere after', async () => {
    const store = memoryAuthStore()
    const { config } = app({}, { store })
    const value = await minted(config, 'token-1')
    const rotated = featureConfig({ ...config, secret: ['a-new-secret-that-is-long-enough-for-hkdf-0123456789', config.secret as string] })
    expect(await readSessionCache(contextOf(rotated, { [CACHE_COOKIE]: value }), 'token-1')).not.toBeNull()
    await revokeCachedSessionsOf(assertConfig(rotated), 'bob', T0 / 1000)
    expect(await readSessionCache(contextOf(rotated, { [CACHE_COOKIE]: value }), 'token-1')).toBeNull()
  })

  it('asks the store for every marker of a read in one call', async () => {
    const memory = memoryAuthStore()
    const getMany = vi.fn(memory.getMany!)
    const get = vi.fn(memory.get)
    const { config } = app({}, { store: { ...memory, getMany, get } })
    const value = await minted(config, 'token-1')
    getMany.mockClear()
    await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), 'token-1')
    expect(getMany).toHaveBeenCalledTimes(1)
    // The session's revocation and re-authentication markers, and its user's sign-out everywhere.
    expect(getMany.mock.calls[0]![0]).toHaveLength(3)
    expect(get).not.toHaveBeenCalled()
  })
})

describe('the cache entry at its edges (unit)', () => {
  const row = (token: string) => ({ sessionToken: token, userId: 'bob', expires: new Date(T0 + 3600_000) })
  const stored = (token: string, user: Record<string, unknown> = { ...BOB, emailVerified: null }, expires = T0 / 1000 + 3600) => ({
    session: row(token),
    user: user as never,
    expires,
    endsByLifetime: false,
  })
  const cacheOf = (ctx: RequestContext) => ctx.setCookies.filter((c) => c.name === CACHE_COOKIE || c.name.startsWith(`${CACHE_COOKIE}.`))
  const read = (config: AuthConfig, value: string, token = 'token-1') => readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), token)
  async function mint(config: AuthConfig, token = 'token-1', entry = stored(token)) {
    const ctx = contextOf(config, {})
    await writeSessionCache(ctx, token, entry)
    return cacheOf(ctx)[0]?.value
  }
  /** An entry sealed as the cache seals one, with `change` applied to a well-formed entry's claims. */
  async function sealed(config: AuthConfig, change: (claims: Record<string, unknown>) => unknown) {
    const value = (await mint(config))!
    const resolved = assertConfig(config)
    const claims = (await decode({ token: value, secret: resolved.secrets as unknown as string[], salt: CACHE_COOKIE })) as Record<string, unknown>
    return encode({ token: change({ ...claims }) as never, secret: resolved.secrets[0]!, salt: CACHE_COOKIE, maxAge: 60 })
  }

  it('serves an entry until the last second of maxAge, and none from its end on', async () => {
    const { config } = app()
    const value = (await mint(config))!
    at(59)
    expect(await read(config, value)).not.toBeNull()
    at(60)
    expect(await read(config, value)).toBeNull()
  })

  it('refuses an entry that is sealed by us but not an entry of this version and shape', async () => {
    const { config } = app()
    expect(await read(config, await sealed(config, (c) => c))).not.toBeNull()
    const malformed: ((c: Record<string, unknown>) => unknown)[] = [
      (c) => ({ ...c, v: 2 }),
      (c) => ({ ...c, sid: 7 }),
      (c) => ({ ...c, mat: 'now' }),
      (c) => ({ ...c, until: Number.NaN }),
      (c) => ({ ...c, end: undefined }),
      (c) => ({ ...c, lt: 'no' }),
      (c) => ({ ...c, mk: 'session-cache:user:x' }),
      (c) => ({ ...c, mk: [1] }),
      (c) => ({ ...c, row: null }),
      (c) => ({ ...c, row: [] }),
      (c) => ({ ...c, row: 'row' }),
      (c) => ({ ...c, mk: [...(c.mk as string[]), 1] }),
      (c) => ({ ...c, user: { ...(c.user as object), id: 1 } }),
      (c) => ({ ...c, user: 'bob' }),
    ]
    for (const change of malformed) expect(await read(config, await sealed(config, change))).toBeNull()
  })

  it('gives back dates as dates and everything else as it was, at any depth it keeps', async () => {
    const { config } = app()
    const user = { ...BOB, emailVerified: new Date(T0 - 1000), roles: ['admin', { since: new Date(T0 - 2000), note: null }], flags: { beta: true, n: 3 } }
    const back = await read(config, (await mint(config, 'token-1', stored('token-1', user)))!)
    expect(back!.user).toEqual(user)
    expect(back!.user.emailVerified).toBeInstanceOf(Date)
    expect((back!.user as unknown as typeof user).roles[1]).toEqual({ since: new Date(T0 - 2000), note: null })
    expect(back!.session.expires).toEqual(new Date(T0 + 3600_000))
    // An object that only looks like a tagged date keeps its shape.
    const lookalike = { ...BOB, emailVerified: null, extra: { $date: 'not a number' }, pair: { $date: 1, other: 2 }, blank: { '': 4 } }
    const kept = await read(config, (await mint(config, 'token-1', stored('token-1', lookalike)))!)
    expect(kept!.user).toEqual(lookalike)
  })

  it('refuses an entry minted up to the clock skew after a sign-out everywhere, and serves one minted after', async () => {
    const { config } = app()
    const resolved = assertConfig(config)
    await revokeCachedSessionsOf(resolved, 'bob', T0 / 1000)
    at(-1)
    const before = (await mint(config))!
    at(MARKER_CLOCK_SKEW)
    const within = (await mint(config))!
    at(MARKER_CLOCK_SKEW + 1)
    const after = (await mint(config))!
    expect(await read(config, before)).toBeNull()
    expect(await read(config, within)).toBeNull()
    expect(await read(config, after)).not.toBeNull()
  })

  it('keeps each marker for maxAge and the clock skew, past which no entry it refuses is still served', async () => {
    const put = vi.fn()
    const memory = memoryAuthStore()
    const { config } = app({}, { store: { ...memory, put: (...args: Parameters<AuthStore['put']>) => (put(...args), memory.put(...args)) } })
    const resolved = assertConfig(config)
    await revokeCachedSessions(resolved, ['id-1'], T0 / 1000)
    await revokeCachedSessionsOf(resolved, 'bob', T0 / 1000)
    await revokeCachedProviderSessions(resolved, 'op', { sid: 'sid-1', sub: null }, T0 / 1000)
    expect(put.mock.calls.map(([, value, ttl]) => [value, ttl])).toEqual(Array(3).fill([String(T0 / 1000), 60 + MARKER_CLOCK_SKEW + 1]))
    // Nothing to refuse: no marker written.
    put.mockClear()
    await revokeCachedSessions(resolved, [], T0 / 1000)
    await revokeCachedProviderSessions(resolved, 'op', { sid: null, sub: null }, T0 / 1000)
    expect(put).not.toHaveBeenCalled()
  })

  it('writes no marker and mints no entry without a cache configured', async () => {
    const put = vi.fn()
    const memory = memoryAuthStore()
    const { config } = app({ cache: undefined }, { store: { ...memory, put: (...args: Parameters<AuthStore['put']>) => (put(...args), memory.put(...args)) } })
    const resolved = assertConfig(config)
    await revokeCachedSessions(resolved, ['id-1'], T0 / 1000)
    await revokeCachedSessionsOf(resolved, 'bob', T0 / 1000)
    await revokeCachedProviderSessions(resolved, 'op', { sid: 'sid-1', sub: 'sub-1' }, T0 / 1000)
    expect(put).not.toHaveBeenCalled()
    expect(await mint(config)).toBeUndefined()
  })

  it('mints nothing for a session that ends now, and one cookie however often a response mints', async () => {
    const { config } = app()
    expect(await mint(config, 'token-1', stored('token-1', undefined, T0 / 1000))).toBeUndefined()
    const ctx = contextOf(config, {})
    await writeSessionCache(ctx, 'token-1', stored('token-1'))
    at(1)
    await writeSessionCache(ctx, 'token-1', stored('token-1'))
    expect(cacheOf(ctx)).toHaveLength(1)
    expect(ctx.setCookies.filter((c) => c.name !== CACHE_COOKIE && !c.name.startsWith(`${CACHE_COOKIE}.`))).toEqual([])
  })
})

describe('the cache entry: what it logs, clears and skips (unit)', () => {
  const stored = (token: string, user: Record<string, unknown> = { ...BOB, emailVerified: null }) => ({
    session: { sessionToken: token, userId: 'bob', expires: new Date(T0 + 3600_000) },
    user: user as never,
    expires: T0 / 1000 + 3600,
    endsByLifetime: false,
  })
  const spyOn = (ctx: RequestContext) => {
    const debug = vi.fn()
    ;(ctx as { logger: unknown }).logger = { debug, warn: vi.fn(), error: vi.fn() }
    return debug
  }
  async function mint(config: AuthConfig, token = 'token-1', entry = stored(token)) {
    const ctx = contextOf(config, {})
    const debug = spyOn(ctx)
    await writeSessionCache(ctx, token, entry)
    return { value: ctx.setCookies.find((c) => c.name === CACHE_COOKIE)?.value, debug, ctx }
  }

  it('logs why it refused an entry: unreadable, malformed, foreign or revoked', async () => {
    const { config } = app()
    const { value } = await mint(config)
    const reasonOf = async (cookie: string, token = 'token-1') => {
      const ctx = contextOf(config, { [CACHE_COOKIE]: cookie })
      const debug = spyOn(ctx)
      expect(await readSessionCache(ctx, token)).toBeNull()
      return debug.mock.calls.map(([message, detail]) => [message, (detail as { reason: string }).reason])
    }
    expect(await reasonOf('not-a-sealed-value')).toEqual([['session-cache-refused', 'unreadable']])
    const resolved = assertConfig(config)
    const notAnEntry = await encode({ token: { v: 1 } as never, secret: resolved.secrets[0]!, salt: CACHE_COOKIE, maxAge: 60 })
    expect(await reasonOf(notAnEntry)).toEqual([['session-cache-refused', 'malformed']])
    expect(await reasonOf(value!, 'token-2')).toEqual([['session-cache-refused', 'foreign']])
    await revokeCachedSessions(resolved, [await sessionId('token-1')], T0 / 1000)
    expect(await reasonOf(value!)).toEqual([['session-cache-refused', 'revoked']])
  })

  it('skips an entry too large for the cookie chunks a request carries, and says so', async () => {
    const { config } = app()
    const huge = { ...BOB, emailVerified: null, bio: Array.from({ length: 4000 }, (_, i) => `${i}-${Math.random()}`).join('') }
    const { value, debug, ctx } = await mint(config, 'token-1', stored('token-1', huge))
    expect(value).toBeUndefined()
    expect(ctx.setCookies.filter((c) => c.name.startsWith(CACHE_COOKIE))).toEqual([])
    expect(debug).toHaveBeenCalledWith('session-cache-skipped', expect.objectContaining({ reason: 'too large' }))
  })

  it('clears the cookie the browser sent, and sets nothing to clear when it sent none', async () => {
    const { config } = app()
    const { value } = await mint(config)
    const sent = contextOf(config, { [CACHE_COOKIE]: value! })
    clearSessionCache(sent)
    expect(sent.setCookies.map((c) => [c.name, c.value])).toEqual([[CACHE_COOKIE, '']])
    const none = contextOf(config, {})
    clearSessionCache(none)
    expect(none.setCookies).toEqual([])
  })

  it('mints no entry on an extension and writes no marker for tokens without a cache, or for no token', async () => {
    const put = vi.fn()
    const memory = memoryAuthStore()
    const store = { ...memory, put: (...args: Parameters<AuthStore['put']>) => (put(...args), memory.put(...args)) }
    const off = app({ cache: undefined }, { store }).config
    const ctx = contextOf(off, {})
    await refreshSessionCache(ctx, 'token-1', stored('token-1').session, stored('token-1').user, T0 / 1000 + 600)
    expect(ctx.setCookies).toEqual([])
    await revokeCachedSessionTokens(assertConfig(off), ['token-1'], T0 / 1000)
    await revokeCachedSessionTokens(assertConfig(app({}, { store }).config), [], T0 / 1000)
    expect(put).not.toHaveBeenCalled()
    await revokeCachedSessionTokens(assertConfig(app({}, { store }).config), ['token-1'], T0 / 1000)
    expect(put).toHaveBeenCalledTimes(1)
  })

  it('asks a store without getMany key by key', async () => {
    const { getMany: _getMany, ...withoutGetMany } = memoryAuthStore()
    const { config } = app({}, { store: withoutGetMany as AuthStore })
    const { value } = await mint(config)
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value! }), 'token-1')).not.toBeNull()
    await revokeCachedSessionsOf(assertConfig(config), 'bob', T0 / 1000)
    expect(await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value! }), 'token-1')).toBeNull()
  })
})

describe('the cache entry: how deep it keeps dates (unit)', () => {
  it('gives back a date as a date down to the eighth level of a user field, and deeper ones as JSON writes them', async () => {
    const { config } = app()
    const nest = (levels: number, leaf: unknown): unknown => (levels === 0 ? leaf : { x: nest(levels - 1, leaf) })
    const when = new Date(T0 - 5000)
    const user = { ...BOB, emailVerified: null, shallow: nest(7, when), listed: [nest(6, when)], ninth: nest(8, when), ninthLookalike: nest(8, { $date: 5 }), deep: nest(10, when) }
    const ctx = contextOf(config, {})
    await writeSessionCache(ctx, 'token-1', { session: { sessionToken: 'token-1', userId: 'bob', expires: new Date(T0 + 3600_000) }, user: user as never, expires: T0 / 1000 + 3600, endsByLifetime: false })
    const value = ctx.setCookies.find((c) => c.name === CACHE_COOKIE)!.value
    const back = (await readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), 'token-1'))!.user as unknown as typeof user
    expect(back.shallow).toEqual(nest(7, when))
    expect(back.listed).toEqual([nest(6, when)])
    // The first level not restored: the date is JSON's string there, never the tag's inner object.
    expect(back.ninth).toEqual(nest(8, when.toISOString()))
    // Nor is anything at that level read as a tag: an object shaped like one stays an object.
    expect(back.ninthLookalike).toEqual(nest(8, { $date: 5 }))
    expect(back.deep).toEqual(nest(10, when.toISOString()))
  })
})

describe('the cache cookie in a response (unit)', () => {
  it('logs nothing for a browser that sent no cache cookie', async () => {
    const { config } = app()
    const ctx = contextOf(config, {})
    const debug = vi.fn()
    ;(ctx as { logger: unknown }).logger = { debug, warn: vi.fn(), error: vi.fn() }
    expect(await readSessionCache(ctx, 'token-1')).toBeNull()
    expect(debug).not.toHaveBeenCalled()
  })

  it('keeps one set of chunks when a response mints a chunked entry twice', async () => {
    const { config } = app()
    const user = { ...BOB, emailVerified: null, bio: 'b'.repeat(6000) }
    const ctx = contextOf(config, {})
    const entry = { session: { sessionToken: 'token-1', userId: 'bob', expires: new Date(T0 + 3600_000) }, user: user as never, expires: T0 / 1000 + 3600, endsByLifetime: false }
    await writeSessionCache(ctx, 'token-1', entry)
    const first = ctx.setCookies.map((c) => c.name)
    expect(first.length).toBeGreaterThan(1)
    expect(first.every((name) => name.startsWith(`${CACHE_COOKIE}.`))).toBe(true)
    at(1)
    await writeSessionCache(ctx, 'token-1', entry)
    expect(ctx.setCookies.map((c) => c.name).sort()).toEqual([...first].sort())
  })
})

describe('the cache entry: what its format keeps apart (unit)', () => {
  const entryOf = (user: Record<string, unknown>, providerSession?: ProviderSession) => ({
    session: { sessionToken: 'token-1', userId: 'bob', expires: new Date(T0 + 3600_000), ...(providerSession ? { providerSession } : {}) },
    user: user as never,
    expires: T0 / 1000 + 3600,
    endsByLifetime: false,
  })
  async function mint(config: AuthConfig, entry = entryOf({ ...BOB, emailVerified: null })) {
    const ctx = contextOf(config, {})
    await writeSessionCache(ctx, 'token-1', entry)
    return ctx.setCookies.find((c) => c.name === CACHE_COOKIE)!.value
  }
  const read = (config: AuthConfig, value: string) => readSessionCache(contextOf(config, { [CACHE_COOKIE]: value }), 'token-1')
  /** The reasons logged by a read of `value` (which must be refused). */
  async function refusalOf(config: AuthConfig, value: string) {
    const ctx = contextOf(config, { [CACHE_COOKIE]: value })
    const debug = vi.fn()
    ;(ctx as { logger: unknown }).logger = { debug, warn: vi.fn(), error: vi.fn() }
    expect(await readSessionCache(ctx, 'token-1')).toBeNull()
    return debug.mock.calls.map(([message, detail]) => [message, (detail as { reason: string }).reason])
  }

  it('restores nothing below the eighth level: a tagged date lookalike comes back as it was, a date as JSON writes it', async () => {
    const { config } = app()
    const nest = (levels: number, leaf: unknown): unknown => (levels === 0 ? leaf : { x: nest(levels - 1, leaf) })
    const wrap = (levels: number, leaf: unknown): unknown => (levels === 0 ? leaf : [wrap(levels - 1, leaf)])
    const when = new Date(T0 - 5000)
    const user = { ...BOB, emailVerified: null, inObjects: nest(10, { $date: 5 }), inArrays: wrap(10, { $date: 5 }), dateInArrays: wrap(11, when) }
    const back = (await read(config, await mint(config, entryOf(user))))!.user as unknown as typeof user
    expect(back.inObjects).toEqual(nest(10, { $date: 5 }))
    expect(back.inArrays).toEqual(wrap(10, { $date: 5 }))
    expect(back.dateInArrays).toEqual(wrap(11, when.toISOString()))
  })

  it('refuses an entry whose session id is not a string as malformed, not as minted for another session', async () => {
    const { config } = app()
    const resolved = assertConfig(config)
    const claims = (await decode({ token: await mint(config), secret: resolved.secrets as unknown as string[], salt: CACHE_COOKIE })) as Record<string, unknown>
    const value = await encode({ token: { ...claims, sid: 7 } as never, secret: resolved.secrets[0]!, salt: CACHE_COOKIE, maxAge: 60 })
    expect(await refusalOf(config, value)).toEqual([['session-cache-refused', 'malformed']])
  })

  it('refuses no session of a provider on a logout by another, whatever their ids and provider session', async () => {
    const { config } = app()
    const resolved = assertConfig(config)
    // The provider "x" and the provider "xsid": x's session "suby" is not xsid's subject "y".
    const value = await mint(config, entryOf({ ...BOB, emailVerified: null }, { provider: 'x', sub: 'someone', sid: 'suby' }))
    await revokeCachedProviderSessions(resolved, 'xsid', { sid: null, sub: 'y' }, T0 / 1000)
    await revokeCachedProviderSessions(resolved, 'xs', { sid: 'idsuby', sub: null }, T0 / 1000)
    expect(await read(config, value)).not.toBeNull()
    await revokeCachedProviderSessions(resolved, 'x', { sid: 'suby', sub: null }, T0 / 1000)
    expect(await read(config, value)).toBeNull()
  })

  it('seals an entry until its own end: one replayed well past it is refused by the seal (unreadable), not only by its time', async () => {
    const { config } = app()
    const value = await mint(config)
    at(600)
    expect(await refusalOf(config, value)).toEqual([['session-cache-refused', 'unreadable']])
  })
})

describe('the session cache and the authority (core/session/current.ts)', () => {
  it('never serves a cache cookie left from before the cache was turned off', async () => {
    const rows = createMemoryStore()
    const cached = app({}, {}, rows)
    const client = new Client(cached.config)
    await client.signIn(good)
    await client.session()
    expect(client.jar.get(CACHE_COOKIE)).toBeDefined()
    const off = app({ cache: undefined }, {}, rows)
    const later = copyOf(client, off.config)
    expect((await later.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(off.calls.get('getSessionAndUser')).toBe(1)
    // The row deleted in the database (no revocation marker written): the session is over.
    rows.sessions.delete(client.jar.get(SESSION_COOKIE)!)
    expect((await later.session()).body).toBeNull()
  })

  it('mints an entry only on the session read: a route acting for the user leaves the cache cookie as it is', async () => {
    const { config, calls } = app({}, { store: memoryAuthStore() })
    const client = new Client(config)
    await client.signIn(good)
    calls.clear()
    // Turning on two-step verification: a flow acting for the signed-in user, its cookies set.
    const response = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() }, headers: { accept: 'text/html' } })
    expect(response.headers.get('location')).toMatch(/\/auth\/step\/totp-enrolment$/)
    expect(calls.get('getSessionAndUser')).toBeGreaterThan(0)
    expect(setCookie(response, CACHE_COOKIE)).toBeUndefined()
    expect(client.jar.get(CACHE_COOKIE)).toBeUndefined()
  })

  it('answers a session token that names no row as no session, without an error, and mints nothing', async () => {
    const { config } = app()
    const client = new Client(config)
    client.jar.cookies.set(SESSION_COOKIE, 'names-no-row')
    const { response, body } = await client.session()
    expect(response.status).toBe(200)
    expect(body).toBeNull()
    expect(setCookie(response, CACHE_COOKIE)).toBeUndefined()
    expect(config.logger.error).not.toHaveBeenCalled()
  })
})

describe('session.cache with JWT sessions', () => {
  const jwtApp = (session: Record<string, unknown>, extra: Partial<AuthConfig> = {}) =>
    featureConfig({ providers: [credentialsProvider()], session: session as AuthConfig['session'], ...extra })
  const warned = (config: ReturnType<typeof testConfig>) =>
    config.logger.warn.mock.calls.filter(([code]) => code === 'session-cache-ignored').length

  it('is warned once, when the config is loaded, and ignored: no cache cookie, the session in its token', async () => {
    const config = jwtApp({ strategy: 'jwt', cache: { maxAge: 60 } })
    const client = new Client(config)
    await client.signIn(good)
    for (let i = 0; i < 2; i++) {
      const { response, body } = await client.session()
      expect(body).toMatchObject({ user: { name: 'Alice' } })
      expect(setCookie(response, CACHE_COOKIE)).toBeUndefined()
    }
    expect(client.jar.get(CACHE_COOKIE)).toBeUndefined()
    expect(warned(config)).toBe(1)
  })

  it('is warned when the sessions are JWTs by default (no adapter), and never for database sessions or without a cache', () => {
    const byDefault = jwtApp({ cache: { maxAge: 60 } })
    assertConfig(byDefault)
    expect(warned(byDefault)).toBe(1)
    const database = app()
    assertConfig(database.config)
    expect(warned(database.config)).toBe(0)
    const withoutCache = jwtApp({ strategy: 'jwt' })
    assertConfig(withoutCache)
    expect(warned(withoutCache)).toBe(0)
    const explicitlyNone = jwtApp({ strategy: 'jwt', cache: undefined })
    assertConfig(explicitlyNone)
    expect(warned(explicitlyNone)).toBe(0)
  })
})
