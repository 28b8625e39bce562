/**
 * The one authority for "who is signed in" (`core/session/current.ts`), at the unit level: the
 * dead sessions of test/fixtures/dead-sessions.ts (as test/security/dead-session.test.ts), and each
 * at the second it ends, name no one, whichever way a caller asks (`currentSession`, `signedInUser`, `signedInAdapterUser`); the session route's own readers
 * (`liveJwtSession`, `storedSession`) give the same verdicts; database rows never outlive their
 * absolute lifetime; a JWT without a sign-in time (one minted by `@auth/core`) starts its clock at
 * its first read.
 */
import { encode as authjsEncode } from '@auth/core/jwt'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { assertConfig, memoryAuthStore } from '../../core/index.js'
import type { FlowTrace } from '../../core/engine/trace.js'
import type { RequestContext } from '../../core/http/context.js'
import { decode, encode } from '../../core/jwt.js'
import {
  currentSession,
  liveJwtSession,
  readJwtSession,
  signedInAdapterUser,
  signedInUser,
  storedSession,
} from '../../core/session/current.js'
import { createSessionRow } from '../../core/session/issue.js'
import { endJwtSessionsOf, endJwtSessionsOfProviderSession, isJwtSessionEnded, renewedExpiry } from '../../core/session/lifecycle.js'
import type { AuthConfig } from '../../core/types.js'
import { isSessionOver } from '../../machines/session.machine.js'
import { DEAD_SESSION_KINDS, SESSION_COOKIE, VICTIM, victimApp } from '../fixtures/dead-sessions.js'
import { authRequest, Client, SECRET, sessionReadContext, setCookie, testConfig } from '../fixtures/http.js'
import { Auth } from '../../core/index.js'

const T0 = 1_900_000_000
const HOUR = 3600
const DAY = 86_400
const claims = { sub: VICTIM.id, email: VICTIM.email, name: VICTIM.name }

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(T0 * 1000)
})
afterEach(() => vi.useRealTimers())

/** The request context the authority reads (config, session cookie, logger), at T0. */
const contextFor = (config: AuthConfig, value: string) => sessionReadContext(config, value, T0)

const jwt = (extra: Record<string, unknown> = {}) => encode({ token: { ...claims, ...extra }, secret: SECRET, salt: SESSION_COOKIE })

function victimStore(): MemoryStore {
  const store = createMemoryStore()
  store.users.set(VICTIM.id, { ...VICTIM })
  return store
}

function row(store: MemoryStore, token: string, { expires, createdAt }: { expires: number; createdAt?: number }) {
  store.sessions.set(token, {
    sessionToken: token,
    userId: VICTIM.id,
    expires: new Date(expires * 1000),
    ...(createdAt !== undefined ? { createdAt: new Date(createdAt * 1000) } : {}),
  })
}

type Made = { config: AuthConfig; cookie: string; live: boolean }

/** Each dead session of the shared fixture, its victim's live cookie killed the way its kind ends. */
const DEAD_SESSIONS: Record<string, () => Promise<Made>> = Object.fromEntries(
  DEAD_SESSION_KINDS.map((kind) => [
    kind.name,
    async () => {
      const { store, config } = victimApp(kind)
      return { config, cookie: await kind.kill(store, config, await kind.live(store)), live: false }
    },
  ]),
)

/** A config and a cookie for each kind of session, live or dead: the fixture's dead ones and each side of the second a session ends. */
const SESSIONS: Record<string, () => Promise<Made>> = {
  ...DEAD_SESSIONS,
  'a live JWT': async () => ({ config: testConfig({ adapter: MemoryAdapter(victimStore()), session: { strategy: 'jwt' } }), cookie: await jwt(), live: true }),
  'a JWT signed in the second of a sign-out everywhere': async () => {
    const config = testConfig({ adapter: MemoryAdapter(victimStore()), session: { strategy: 'jwt' }, store: memoryAuthStore() })
    await endJwtSessionsOf(assertConfig(config), VICTIM.id, T0 - 10)
    return { config, cookie: await jwt({ auth_time: T0 - 10 }), live: false }
  },
  'a JWT signed in after sign-out everywhere': async () => {
    const config = testConfig({ adapter: MemoryAdapter(victimStore()), session: { strategy: 'jwt' }, store: memoryAuthStore() })
    await endJwtSessionsOf(assertConfig(config), VICTIM.id, T0 - 10)
    return { config, cookie: await jwt({ auth_time: T0 - 9 }), live: true }
  },
  'a JWT at its absolute lifetime to the second': async () => ({
    config: testConfig({ adapter: MemoryAdapter(victimStore()), session: { strategy: 'jwt', absoluteMaxAge: HOUR } }),
    cookie: await jwt({ auth_time: T0 - HOUR }),
    live: false,
  }),
  'a JWT one second short of it': async () => ({
    config: testConfig({ adapter: MemoryAdapter(victimStore()), session: { strategy: 'jwt', absoluteMaxAge: HOUR } }),
    cookie: await jwt({ auth_time: T0 - HOUR + 1 }),
    live: true,
  }),
  'a live row': async () => {
    const store = victimStore()
    row(store, 'row', { expires: T0, createdAt: T0 - HOUR })
    return { config: testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database', absoluteMaxAge: HOUR } }), cookie: 'row', live: true }
  },
  'a row one second past its expiry, not yet deleted': async () => {
    const store = victimStore()
    row(store, 'row', { expires: T0 - 1, createdAt: T0 - 60 })
    return { config: testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database' } }), cookie: 'row', live: false }
  },
}

/** Where the session route's chart ends each of them: a dead session's end says why it is dead. */
const ENDS: Record<keyof typeof SESSIONS, string> = {
  'a JWT after sign-out everywhere': 'signedOutEverywhere',
  'a JWT whose provider session the provider logged out': 'providerLoggedOut',
  'a JWT past its absolute lifetime': 'pastAbsoluteLifetime',
  'a database row past its expiry, not yet deleted': 'expired',
  'a database row past its absolute lifetime': 'pastAbsoluteLifetime',
  'a live JWT': 'active',
  'a JWT signed in the second of a sign-out everywhere': 'signedOutEverywhere',
  'a JWT signed in after sign-out everywhere': 'active',
  'a JWT at its absolute lifetime to the second': 'pastAbsoluteLifetime',
  'a JWT one second short of it': 'active',
  'a live row': 'active',
  'a row one second past its expiry, not yet deleted': 'expired',
}

describe.each(Object.entries(SESSIONS))('the authority, for %s', (name, make) => {
  it('names the user exactly when the session is live, whichever way it is asked', async () => {
    const { config, cookie, live } = await make()
    const ctx = contextFor(config, cookie)
    expect(await signedInUser(ctx)).toEqual(live ? { id: VICTIM.id, email: VICTIM.email, name: VICTIM.name } : null)
    expect((await signedInAdapterUser(ctx))?.id ?? null).toBe(live ? VICTIM.id : null)
    expect((await currentSession(ctx))?.value ?? null).toBe(live ? cookie : null)
  })

  it("agrees with the session route's own verdict", async () => {
    const { config, cookie, live } = await make()
    const response = await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: cookie } }), config)
    expect(((await response.json()) as { user?: unknown } | null) !== null).toBe(live)
  })

  it('ends the session route in the state that says why, with the same answer for every dead session', async () => {
    const { config, cookie, live } = await make()
    const ends: string[] = []
    const inspected = { ...config, inspect: (trace: FlowTrace) => ends.push(trace.steps.at(-1)!.to) }
    const response = await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: cookie } }), inspected)
    expect(ends).toEqual([ENDS[name]])
    if (!live) {
      expect(await response.json()).toBeNull()
      expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    }
  })
})

describe("the session route's readers", () => {
  it('answers a JWT read synchronously on the common path (built-in codec, no store), and asynchronously with a store', async () => {
    const token = await jwt()
    const plain = contextFor(testConfig(), token)
    liveJwtSession(plain, token) // derives the keys once
    expect(liveJwtSession(plain, token)).toMatchObject(claims)
    const shared = contextFor(testConfig({ store: memoryAuthStore() }), token)
    const pending = liveJwtSession(shared, token)
    expect(pending).toBeInstanceOf(Promise)
    expect(await pending).toMatchObject(claims)
  })

  it('refuses a token an application decoder returns past its exp (15 s tolerance, as the built-in decoder)', async () => {
    const decoding = (exp: number) => testConfig({ jwt: { decode: async () => ({ ...claims, iat: T0 - DAY, exp }) } })
    expect(await liveJwtSession(contextFor(decoding(T0 - 15), 'opaque'), 'opaque')).toBeNull()
    expect(await liveJwtSession(contextFor(decoding(T0 - 14), 'opaque'), 'opaque')).toMatchObject(claims)
  })

  it('says why a JWT session ended: past exp, past its absolute lifetime, signed out everywhere (before the provider logout)', async () => {
    const decoding = (exp: number) => testConfig({ jwt: { decode: async () => ({ ...claims, iat: T0 - DAY, exp }) } })
    expect(await readJwtSession(contextFor(decoding(T0 - 15), 'opaque'), 'opaque')).toBe('expired')
    expect(await readJwtSession(contextFor(decoding(T0 - 14), 'opaque'), 'opaque')).toMatchObject(claims)
    const limited = assertConfig(testConfig({ session: { absoluteMaxAge: HOUR } }))
    expect(isJwtSessionEnded(limited, { ...claims, auth_time: T0 - HOUR }, T0)).toBe('absolute-lifetime')
    expect(isJwtSessionEnded(limited, { ...claims, auth_time: T0 - HOUR + 1 }, T0)).toBe(false)
    expect(isJwtSessionEnded(limited, { ...claims, auth_time: T0 - HOUR, exp: T0 - 15 }, T0), 'exp is checked first').toBe('expired')
    const shared = assertConfig(testConfig({ store: memoryAuthStore() }))
    const signedInThroughOp = { ...claims, auth_time: T0 - 60, idp: 'op', sid: 'sid-1' }
    await endJwtSessionsOfProviderSession(shared, 'op', 'sid-1', T0 - 30)
    expect(await isJwtSessionEnded(shared, signedInThroughOp, T0)).toBe('provider-logout')
    await endJwtSessionsOf(shared, VICTIM.id, T0 - 30)
    expect(await isJwtSessionEnded(shared, signedInThroughOp, T0), 'both: the user’s own sign-out is named').toBe('signed-out-everywhere')
  })

  it('throws for a token that cannot be read or decodes to nothing, and names no one for it', async () => {
    const empty = testConfig({ jwt: { decode: async () => null } })
    await expect(liveJwtSession(contextFor(empty, 'opaque'), 'opaque')).rejects.toThrow('Invalid JWT')
    await expect(Promise.resolve().then(() => liveJwtSession(contextFor(testConfig(), 'garbage'), 'garbage'))).rejects.toThrow()
    expect(await signedInUser(contextFor(empty, 'opaque'))).toBeNull()
  })

  it('gives a stored session the end its absolute lifetime sets, and none for an unknown token', async () => {
    const store = victimStore()
    row(store, 'row', { expires: T0 + DAY, createdAt: T0 - 60 })
    const ctx = contextFor(testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database', absoluteMaxAge: HOUR } }), 'row')
    expect((await storedSession(ctx, 'row'))?.expires).toBe(T0 - 60 + HOUR)
    expect(await storedSession(ctx, 'unknown')).toBeNull()
    // Over only after the second it ends, as Auth.js's `expires < now`.
    expect(isSessionOver(T0, T0)).toBe(false)
    expect(isSessionOver(T0 - 1, T0)).toBe(true)
  })

  it('names no one for a token without a string subject: sign-out everywhere could not reach it', async () => {
    for (const sub of [undefined, '', 42]) {
      const token = await encode({ token: { ...claims, sub }, secret: SECRET, salt: SESSION_COOKIE })
      expect(await signedInUser(contextFor(testConfig(), token))).toBeNull()
    }
  })
})

describe('database rows never outlive their absolute lifetime', () => {
  it('creates a row that expires at createdAt + absoluteMaxAge when that comes before maxAge', async () => {
    const store = victimStore()
    const ctx = { ...contextFor(testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database', absoluteMaxAge: HOUR } }), ''), request: { headers: new Headers() } }
    const { value, expires } = await createSessionRow(ctx as RequestContext, VICTIM.id)
    expect(expires).toBe(T0 + HOUR)
    expect(store.sessions.get(value)!.expires.getTime()).toBe((T0 + HOUR) * 1000)
    expect(store.sessions.get(value)!.createdAt!.getTime()).toBe(T0 * 1000)
  })

  it('caps an Auth.js adapter row (no createdAt kept) at creation too', async () => {
    const store = victimStore()
    const { listSessions: _listSessions, ...authjs } = MemoryAdapter(store)
    const ctx = { ...contextFor(testConfig({ adapter: authjs, session: { strategy: 'database', absoluteMaxAge: HOUR } }), ''), request: { headers: new Headers() } }
    const { value } = await createSessionRow(ctx as RequestContext, VICTIM.id)
    expect(store.sessions.get(value)).toEqual({ sessionToken: value, userId: VICTIM.id, expires: new Date((T0 + HOUR) * 1000) })
  })

  it('renews to maxAge from now, never past createdAt + absoluteMaxAge, and to maxAge without an absolute lifetime', () => {
    const limited = assertConfig(testConfig({ session: { strategy: 'jwt', maxAge: DAY, absoluteMaxAge: 2 * DAY } }))
    expect(renewedExpiry(limited, new Date((T0 - DAY - 1) * 1000), T0)).toBe(T0 + DAY - 1)
    expect(renewedExpiry(limited, new Date((T0 - DAY) * 1000), T0)).toBe(T0 + DAY)
    expect(renewedExpiry(limited, undefined, T0)).toBe(T0 + DAY)
    expect(renewedExpiry(assertConfig(testConfig({ session: { maxAge: DAY } })), new Date(0), T0)).toBe(T0 + DAY)
  })

  it('signs in with credentials to a row and a cookie that both end at the absolute lifetime', async () => {
    const store = createMemoryStore()
    const client = new Client(testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database', absoluteMaxAge: HOUR } }))
    const response = await client.signIn({ username: 'alice', password: 'wonderland' })
    const cookie = setCookie(response, SESSION_COOKIE)!
    expect(cookie.attributes.expires).toBe(new Date((T0 + HOUR) * 1000).toUTCString())
    expect(store.sessions.get(cookie.value)!.expires.getTime()).toBe((T0 + HOUR) * 1000)
    // Read (and extended) half an hour later: still no later than the absolute lifetime.
    vi.setSystemTime((T0 + HOUR / 2) * 1000)
    const body = (await client.session()).body as { expires: string }
    expect(body.expires).toBe(new Date((T0 + HOUR) * 1000).toISOString())
    expect(store.sessions.get(cookie.value)!.expires.getTime()).toBe((T0 + HOUR) * 1000)
  })
})

describe('a JWT without a sign-in time (issue 24, finding 10)', () => {
  const limited = () => testConfig({ session: { absoluteMaxAge: HOUR, updateAge: 0 } })
  const read = (config: AuthConfig, token: string) =>
    Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: token } }), config)
  const claimsOf = async (response: Response) =>
    decode({ token: setCookie(response, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE })

  it('minted by @auth/core, starts its absolute clock at the first read and ends an absoluteMaxAge later, never re-stamped', async () => {
    vi.setSystemTime((T0 - DAY) * 1000)
    const authjsToken = await authjsEncode({ token: claims, secret: SECRET, salt: SESSION_COOKIE })
    vi.setSystemTime(T0 * 1000)
    const first = await read(limited(), authjsToken)
    expect(await first.json()).toMatchObject({ user: { email: VICTIM.email } })
    expect((await claimsOf(first))!.auth_time).toBe(T0)

    vi.setSystemTime((T0 + HOUR - 1) * 1000)
    const second = await read(limited(), setCookie(first, SESSION_COOKIE)!.value)
    expect(await second.json()).not.toBeNull()
    expect((await claimsOf(second))!.auth_time).toBe(T0)

    vi.setSystemTime((T0 + HOUR) * 1000)
    const carried = setCookie(second, SESSION_COOKIE)!.value
    expect(await (await read(limited(), carried)).json()).toBeNull()
    const ctx = { ...contextFor(limited(), carried), at: T0 + HOUR }
    expect(await signedInUser(ctx)).toBeNull()
  })

  it('is reissued at its first read even before updateAge, and keeps Auth.js’s token exactly when nothing is measured', async () => {
    const token = await authjsEncode({ token: claims, secret: SECRET, salt: SESSION_COOKIE })
    const measured = await read(testConfig({ session: { absoluteMaxAge: HOUR } }), token)
    expect((await claimsOf(measured))!.auth_time).toBe(T0)
    const plain = await read(testConfig(), token)
    expect(setCookie(plain, SESSION_COOKIE)).toBeUndefined()
  })

  it('is still ended by a sign-out everywhere after its issue time, by its iat', async () => {
    const config = assertConfig(testConfig({ store: memoryAuthStore() }))
    await endJwtSessionsOf(config, VICTIM.id, T0 - 10)
    expect(await isJwtSessionEnded(config, { ...claims, iat: T0 - 10 }, T0)).toBe('signed-out-everywhere')
    expect(await isJwtSessionEnded(config, { ...claims, iat: T0 - 9 }, T0)).toBe(false)
    // Its age alone ends nothing without an absolute lifetime.
    expect(await isJwtSessionEnded(assertConfig(testConfig()), { ...claims, iat: T0 - 365 * DAY }, T0)).toBe(false)
  })
})

describe("the authority's answers in full", () => {
  it('gives the strategy, the user, the cookie and what the session carries', async () => {
    const token = await jwt({ auth_time: T0 - 60, email: 42, name: ['not', 'a', 'name'] })
    const config = testConfig({ session: { absoluteMaxAge: HOUR } })
    expect(await currentSession(contextFor(config, token))).toEqual({
      strategy: 'jwt',
      user: { id: VICTIM.id, email: null, name: null },
      value: token,
      token: expect.objectContaining({ sub: VICTIM.id, auth_time: T0 - 60 }),
      signedInAt: T0 - 60,
    })
    const store = victimStore()
    row(store, 'row', { expires: T0 + DAY, createdAt: T0 - 60 })
    const database = testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database', absoluteMaxAge: HOUR } })
    expect(await currentSession(contextFor(database, 'row'))).toEqual({
      strategy: 'database',
      user: { id: VICTIM.id, email: VICTIM.email, name: VICTIM.name },
      value: 'row',
      session: store.sessions.get('row'),
      stored: expect.objectContaining({ id: VICTIM.id }),
      expires: T0 - 60 + HOUR,
    })
  })

  it("gives a database session's stored user as the adapter returned it, without asking getUser", async () => {
    const store = victimStore()
    row(store, 'row', { expires: T0 + DAY })
    const adapter = { ...MemoryAdapter(store), getUser: vi.fn(async () => null) }
    const ctx = contextFor(testConfig({ adapter, session: { strategy: 'database' } }), 'row')
    expect(await signedInAdapterUser(ctx)).toMatchObject({ id: VICTIM.id, email: VICTIM.email })
    expect(adapter.getUser).not.toHaveBeenCalled()
  })

  it("names no stored user for a JWT whose subject the adapter cannot find or read", async () => {
    const adapter = { ...MemoryAdapter(victimStore()), getUser: () => Promise.reject(new Error('database down')) }
    const config = testConfig({ adapter, session: { strategy: 'jwt' } })
    expect(await signedInAdapterUser(contextFor(config, await jwt()))).toBeNull()
    expect(await signedInAdapterUser(contextFor(testConfig({ adapter: MemoryAdapter(createMemoryStore()), session: { strategy: 'jwt' } }), await jwt()))).toBeNull()
  })

  it('refuses what an application decoder returns that is no claims object, as the session route does', async () => {
    const config = testConfig({ jwt: { decode: async () => 'a string' as never } })
    await expect(liveJwtSession(contextFor(config, 'opaque'), 'opaque')).rejects.toThrow('Invalid JWT')
    const response = await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: 'opaque' } }), config)
    expect(await response.json()).toBeNull()
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ name: 'JWTSessionError' }))
  })

  it('logs why a session was unreadable by the error class alone, never the message that may quote the token', async () => {
    const token = 'secret-session-token-value'
    const config = testConfig({ jwt: { decode: async ({ token: t }) => { throw new RangeError(`cannot decode ${t}`) } } })
    expect(await currentSession(contextFor(config, token))).toBeNull()
    expect(config.logger.debug).toHaveBeenCalledWith('session-unreadable', { error: 'RangeError' })
    expect(JSON.stringify([config.logger.debug.mock.calls, config.logger.error.mock.calls])).not.toContain(token)
    // Even a decoder that throws no error object is no session, not a failure.
    const odd = testConfig({ jwt: { decode: async () => { throw undefined } } })
    expect(await currentSession(contextFor(odd, token))).toBeNull()
  })
})

describe("the session route's jwt callback and the sign-in time", () => {
  const readWith = (config: AuthConfig, token: string) =>
    Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: token } }), config)

  it('keeps the sign-in time in a token the jwt callback rebuilds without it', async () => {
    const config = testConfig({
      session: { absoluteMaxAge: HOUR, updateAge: 0 },
      callbacks: { jwt: ({ token }) => ({ sub: token.sub, name: token.name, email: token.email }) },
    })
    const response = await readWith(config, await jwt({ auth_time: T0 - 60 }))
    const reissued = await decode({ token: setCookie(response, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE })
    expect(reissued!.auth_time).toBe(T0 - 60)
  })

  it('ends a session whose jwt callback returns null quietly, the sign-in time notwithstanding', async () => {
    const config = testConfig({ session: { absoluteMaxAge: HOUR }, callbacks: { jwt: () => null } })
    const response = await readWith(config, await jwt({ auth_time: T0 - 60 }))
    expect(await response.json()).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    expect(config.logger.error).not.toHaveBeenCalled()
  })
})
