/**
 * The session cookie's attributes and the session's expiry to the second, at the boundaries where
 * an off-by-one would keep an expired session alive: JWT and database strategies, idle (`maxAge`)
 * and absolute (`absoluteMaxAge`, sign-out everywhere), through `Auth` with a frozen clock, and the
 * `signedInUser` check the second-factor pages rely on.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig, memoryAuthStore } from '../../core/index.js'
import { ServiceUnavailable } from '../../core/errors.js'
import { decode, encode } from '../../core/jwt.js'
import { outageOf } from '../../core/outage.js'
import type { RequestContext } from '../../core/http/context.js'
import { currentSession, signedInAdapterUser, signedInUser } from '../../core/session/current.js'
import { createSessionRow, issueJwtSession } from '../../core/session/issue.js'
import {
  endJwtSessionsOf,
  endJwtSessionsOfProviderSession,
  isJwtSessionEnded,
  providerSessionOfToken,
} from '../../core/session/lifecycle.js'
import { ALICE, authRequest, Client, sessionReadContext, setCookie, testConfig } from '../fixtures/http.js'
import { Auth } from '../../core/index.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const SECRET = testConfig().secret as string
const T0 = 1_900_000_000
const DAY = 86_400
const MAX_AGE = 30 * DAY
const good = { username: 'alice', password: 'wonderland' }
const claims = { name: ALICE.name, email: ALICE.email, picture: ALICE.image, sub: ALICE.id }

const httpDate = (seconds: number) => new Date(seconds * 1000).toUTCString()
const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(T0 * 1000)
})
afterEach(() => vi.useRealTimers())

/** A JWT session token minted at `iat` (epoch seconds), living `maxAge`. */
async function tokenAt(iat: number, maxAge = MAX_AGE): Promise<string> {
  vi.setSystemTime(iat * 1000)
  try {
    return await encode({ token: claims, secret: SECRET, salt: SESSION_COOKIE, maxAge })
  } finally {
    vi.setSystemTime(T0 * 1000)
  }
}

/** A JWT session token minted at `iat` with `extra` claims (a sign-in time, another subject). */
async function tokenWith(iat: number, extra: Record<string, unknown>): Promise<string> {
  vi.setSystemTime(iat * 1000)
  try {
    return await encode({ token: { ...claims, ...extra }, secret: SECRET, salt: SESSION_COOKIE, maxAge: MAX_AGE })
  } finally {
    vi.setSystemTime(T0 * 1000)
  }
}

const readSession = (config: ReturnType<typeof testConfig>, token: string) =>
  Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: token } }), config)

describe('the session cookie a sign-in sets', () => {
  it('is HttpOnly, Secure, SameSite=Lax on / and expires exactly maxAge after the sign-in (JWT)', async () => {
    const client = new Client(testConfig())
    const response = await client.signIn(good)
    const cookie = setCookie(response, SESSION_COOKIE)!
    expect(cookie.attributes).toEqual({ path: '/', expires: httpDate(T0 + MAX_AGE), httponly: true, secure: true, samesite: 'Lax' })
    const token = (await decode({ token: cookie.value, secret: SECRET, salt: SESSION_COOKIE }))!
    expect(token.iat).toBe(T0)
    expect(token.exp).toBe(T0 + MAX_AGE)
    expect(response.headers.getSetCookie().find((h) => h.startsWith(`${SESSION_COOKIE}=`))).toMatch(
      /; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/,
    )
  })

  it('follows a configured maxAge to the second, in the cookie, the token and the session body', async () => {
    const config = testConfig({ session: { maxAge: 3600 } })
    const client = new Client(config)
    const cookie = setCookie(await client.signIn(good), SESSION_COOKIE)!
    expect(cookie.attributes.expires).toBe(httpDate(T0 + 3600))
    expect(cookie.attributes.httponly).toBe(true)
    expect((await decode({ token: cookie.value, secret: SECRET, salt: SESSION_COOKIE }))!.exp).toBe(T0 + 3600)
    const { body } = await client.session()
    expect(body).toMatchObject({ expires: iso(T0 + 3600) })
  })

  it('is HttpOnly with the database strategy too, and expires with the stored row', async () => {
    const store = createMemoryStore()
    const client = new Client(testConfig({ adapter: MemoryAdapter(store) }))
    const cookie = setCookie(await client.signIn(good), SESSION_COOKIE)!
    expect(cookie.attributes).toEqual({ path: '/', expires: httpDate(T0 + MAX_AGE), httponly: true, secure: true, samesite: 'Lax' })
    expect(store.sessions.get(cookie.value)!.expires.getTime()).toBe((T0 + MAX_AGE) * 1000)
  })
})

describe('a JWT session at its expiry', () => {
  it('reports the expiry of a fresh token as it is, without re-issuing it', async () => {
    const response = await readSession(testConfig(), await tokenAt(T0 - 60))
    expect(((await response.json()) as { expires: string }).expires).toBe(iso(T0 - 60 + MAX_AGE))
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  })

  it('re-issues a token exactly updateAge old with a new expiry, HttpOnly', async () => {
    const response = await readSession(testConfig(), await tokenAt(T0 - DAY))
    const cookie = setCookie(response, SESSION_COOKIE)!
    expect(cookie.attributes).toEqual({ path: '/', expires: httpDate(T0 + MAX_AGE), httponly: true, secure: true, samesite: 'Lax' })
    expect(((await response.json()) as { expires: string }).expires).toBe(iso(T0 + MAX_AGE))
  })

  it('keeps a token one second short of updateAge as it is', async () => {
    const response = await readSession(testConfig(), await tokenAt(T0 - DAY + 1))
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  })

  it('still accepts a token 15 s past its exp (clock tolerance) and refuses it at 15 s, clearing the cookie', async () => {
    const live = await readSession(testConfig(), await tokenAt(T0 - 3600 - 14, 3600))
    expect(await live.json()).toMatchObject({ user: { email: ALICE.email } })
    const dead = await readSession(testConfig(), await tokenAt(T0 - 3600 - 15, 3600))
    expect(await dead.json()).toBeNull()
    expect(setCookie(dead, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
  })
})

describe('a database session at its expiry', () => {
  const TOKEN = 'stored-session-token'

  function storeWith(expires: number) {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    store.sessions.set(TOKEN, { sessionToken: TOKEN, userId: ALICE.id, expires: new Date(expires * 1000) })
    return { store, config: testConfig({ adapter: MemoryAdapter(store) }) }
  }

  it('is active up to the second it expires, as in Auth.js (expires < now ends it), and then extended', async () => {
    const { store, config } = storeWith(T0)
    const response = await readSession(config, TOKEN)
    expect(await response.json()).toMatchObject({ user: { email: ALICE.email }, expires: iso(T0 + MAX_AGE) })
    expect(store.sessions.get(TOKEN)!.expires.getTime()).toBe((T0 + MAX_AGE) * 1000)
  })

  it('is ended, deleted and its cookie cleared one second after it expired', async () => {
    const { store, config } = storeWith(T0 - 1)
    const response = await readSession(config, TOKEN)
    expect(await response.json()).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    expect(store.sessions.has(TOKEN)).toBe(false)
  })

  it('is extended, cookie and row alike, once updateAge has passed since the last extension', async () => {
    const { store, config } = storeWith(T0 + MAX_AGE - DAY)
    const response = await readSession(config, TOKEN)
    expect(((await response.json()) as { expires: string }).expires).toBe(iso(T0 + MAX_AGE))
    expect(setCookie(response, SESSION_COOKIE)?.attributes).toEqual({
      path: '/',
      expires: httpDate(T0 + MAX_AGE),
      httponly: true,
      secure: true,
      samesite: 'Lax',
    })
    expect(store.sessions.get(TOKEN)!.expires.getTime()).toBe((T0 + MAX_AGE) * 1000)
  })

  it('is not extended one second before updateAge has passed', async () => {
    const { store, config } = storeWith(T0 + MAX_AGE - DAY + 1)
    const response = await readSession(config, TOKEN)
    expect(((await response.json()) as { expires: string }).expires).toBe(iso(T0 + MAX_AGE - DAY + 1))
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect(store.sessions.get(TOKEN)!.expires.getTime()).toBe((T0 + MAX_AGE - DAY + 1) * 1000)
  })
})

/** The request context `signedInUser` reads: the config and the session cookie, at T0. */
const contextFor = (config: ReturnType<typeof testConfig>, value: string) => sessionReadContext(config, value, T0)

describe('signedInUser (who the second-factor pages serve)', () => {

  it('names the user of a live JWT session, and nobody for an expired, subject-less or missing one', async () => {
    const config = testConfig()
    expect(await signedInUser(contextFor(config, await tokenAt(T0 - 60)))).toEqual({ id: ALICE.id, email: ALICE.email, name: ALICE.name })
    // As the session route: accepted up to 15 s past exp (the decoder's clock tolerance), not at 15 s.
    expect(await signedInUser(contextFor(config, await tokenAt(T0 - 3615, 3600)))).toBeNull()
    expect(await signedInUser(contextFor(config, await tokenAt(T0 - 3614, 3600)))).not.toBeNull()
    vi.setSystemTime(T0 * 1000)
    const anonymous = await encode({ token: { name: 'x' }, secret: SECRET, salt: SESSION_COOKIE })
    expect(await signedInUser(contextFor(config, anonymous))).toBeNull()
    expect(await signedInUser(contextFor(config, ''))).toBeNull()
    expect(await signedInUser(contextFor(config, 'garbage'))).toBeNull()
  })

  it('names the user of a token without a numeric exp from a custom decoder, as the session route re-issues it', async () => {
    // null and a string are what a decoder in plain JavaScript may give (JWT types exp as a number).
    for (const exp of [undefined, null, String(T0 - 60)]) {
      const config = testConfig({ jwt: { decode: async () => ({ ...claims, iat: T0 - 60, exp }) as never } })
      expect(await signedInUser(contextFor(config, 'opaque'))).toEqual({ id: ALICE.id, email: ALICE.email, name: ALICE.name })
    }
  })

  it('names the user of a live database session, and nobody after the second it expires (as the session route)', async () => {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    const config = testConfig({ adapter: MemoryAdapter(store) })
    store.sessions.set('live', { sessionToken: 'live', userId: ALICE.id, expires: new Date(T0 * 1000) })
    store.sessions.set('ended', { sessionToken: 'ended', userId: ALICE.id, expires: new Date((T0 - 1) * 1000) })
    expect(await signedInUser(contextFor(config, 'live'))).toEqual({ id: ALICE.id, email: ALICE.email, name: ALICE.name })
    expect(await signedInUser(contextFor(config, 'ended'))).toBeNull()
    expect(await signedInUser(contextFor(config, 'unknown'))).toBeNull()
  })
})

describe('database session rows with an unusual expiry', () => {
  const TOKEN = 'stored-session-token'
  function configWith(store: ReturnType<typeof createMemoryStore>, adapter: Partial<ReturnType<typeof MemoryAdapter>> = {}) {
    return testConfig({ adapter: { ...MemoryAdapter(store), ...adapter } })
  }

  it('serves no session from a row whose expiry is not a date, keeps the cookie and logs why', async () => {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    store.sessions.set(TOKEN, { sessionToken: TOKEN, userId: ALICE.id, expires: new Date('not a date') })
    const config = configWith(store)
    const response = await readSession(config, TOKEN)
    expect(await response.json()).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    const [error] = config.logger.error.mock.calls.map(([e]) => e as Error & { type: string })
    expect(error?.type).toBe('SessionTokenError')
    expect((error?.cause as { err?: Error })?.err?.message ?? (error?.cause as Error)?.message).toBe('the stored session has no valid expiry')
  })

  it('extends to now + maxAge when the adapter returns nothing from updateSession', async () => {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    store.sessions.set(TOKEN, { sessionToken: TOKEN, userId: ALICE.id, expires: new Date((T0 + MAX_AGE - DAY) * 1000) })
    const memory = MemoryAdapter(store)
    const config = configWith(store, {
      updateSession: async (session) => {
        await memory.updateSession(session)
        return null
      },
    })
    const response = await readSession(config, TOKEN)
    expect(((await response.json()) as { expires: string }).expires).toBe(iso(T0 + MAX_AGE))
    expect(setCookie(response, SESSION_COOKIE)?.attributes.expires).toBe(httpDate(T0 + MAX_AGE))
  })

  it('sets the cookie of a new row to the expiry the adapter stored, or to now + maxAge when it returns none', async () => {
    const store = createMemoryStore()
    const memory = MemoryAdapter(store)
    const shortened = testConfig({
      adapter: { ...memory, createSession: async (session) => ({ ...(await memory.createSession(session)), expires: new Date((T0 + 60) * 1000) }) },
    })
    const cookie = setCookie(await new Client(shortened).signIn(good), SESSION_COOKIE)!
    expect(cookie.attributes.expires).toBe(httpDate(T0 + 60))
    const silent = testConfig({
      adapter: {
        ...memory,
        createSession: async (session) => {
          const { expires: _expires, ...row } = await memory.createSession(session)
          return row as never
        },
      },
    })
    expect(setCookie(await new Client(silent).signIn(good), SESSION_COOKIE)!.attributes.expires).toBe(httpDate(T0 + MAX_AGE))
  })
})

describe('a sign-in whose jwt callback returns null', () => {
  it('sets no session cookie and serves no session', async () => {
    const client = new Client(testConfig({ callbacks: { jwt: () => null } }))
    const response = await client.signIn(good)
    expect(response.status).toBe(302)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect((await client.session()).body).toBeNull()
  })

  it('issues a session with the default callback, passing signIn as the trigger of a returning user', async () => {
    const triggers: unknown[] = []
    const client = new Client(testConfig({ callbacks: { jwt: ({ token, trigger }) => (triggers.push(trigger), token) } }))
    await client.signIn(good)
    expect(triggers).toEqual(['signIn'])
  })
})

describe('a JWT session token without an expiry (a custom decoder)', () => {
  it('is re-issued with a fresh expiry rather than served without one', async () => {
    const config = testConfig({ jwt: { decode: async () => ({ ...claims, iat: T0 - 60 }) } })
    const response = await readSession(config, 'opaque')
    expect(((await response.json()) as { expires: string }).expires).toBe(iso(T0 + MAX_AGE))
    const cookie = setCookie(response, SESSION_COOKIE)!
    expect(cookie.attributes.expires).toBe(httpDate(T0 + MAX_AGE))
    expect((await decode({ token: cookie.value, secret: SECRET, salt: SESSION_COOKIE }))!.exp).toBe(T0 + MAX_AGE)
  })
})

const HOUR = 3600
const json = async (response: Response) => (await response.json()) as { user?: { email: string }; expires?: string } | null
const sessionCookieOf = async (response: Response) =>
  decode({ token: setCookie(response, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE })

describe('the absolute lifetime of a JWT session (session.absoluteMaxAge)', () => {
  const limited = () => testConfig({ session: { absoluteMaxAge: HOUR } })

  it('stamps the sign-in time into the token only when something is measured from it', async () => {
    expect(await sessionCookieOf(await new Client(testConfig()).signIn(good))).not.toHaveProperty('auth_time')
    expect((await sessionCookieOf(await new Client(limited()).signIn(good)))!.auth_time).toBe(T0)
    // Sign-out everywhere compares it with the store's not-before time.
    expect((await sessionCookieOf(await new Client(testConfig({ store: memoryAuthStore() })).signIn(good)))!.auth_time).toBe(T0)
  })

  it('ends the session the second its lifetime is reached, however recently the token was issued', async () => {
    expect(await json(await readSession(limited(), await tokenWith(T0 - 60, { auth_time: T0 - HOUR + 1 })))).toMatchObject({
      user: { email: ALICE.email },
    })
    const ended = await readSession(limited(), await tokenWith(T0 - 60, { auth_time: T0 - HOUR }))
    expect(await json(ended)).toBeNull()
    expect(setCookie(ended, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    // The sign-in time counts, not the issue time of a re-issued token.
    expect(await json(await readSession(limited(), await tokenWith(T0 - HOUR, { auth_time: T0 - 60 })))).not.toBeNull()
  })

  it('starts the clock of a token without a sign-in time at its first read, and carries it in the reissued token', async () => {
    // Reissued on every read, so a re-stamp would show.
    const config = testConfig({ session: { absoluteMaxAge: HOUR, updateAge: 0 } })
    // Issued an hour ago, before the lifetime was configured: not ended by its issue time.
    const first = await readSession(config, await tokenAt(T0 - HOUR))
    expect(await json(first)).toMatchObject({ user: { email: ALICE.email } })
    const stamped = (await sessionCookieOf(first))!
    expect(stamped.auth_time).toBe(T0)
    // Reissued again later, the sign-in time stays that first read.
    vi.setSystemTime((T0 + HOUR - 1) * 1000)
    const later = await readSession(config, setCookie(first, SESSION_COOKIE)!.value)
    expect(await json(later)).not.toBeNull()
    expect((await sessionCookieOf(later))!.auth_time).toBe(T0)
    vi.setSystemTime((T0 + HOUR) * 1000)
    expect(await json(await readSession(config, setCookie(later, SESSION_COOKIE)!.value))).toBeNull()
  })

  it('holds a token whose sign-in time is no number to maxAge alone', async () => {
    // Not read as a time: JavaScript would take `'' + 3600` for a second of 1970.
    expect(await json(await readSession(limited(), await tokenWith(T0 - 60, { auth_time: '' })))).toMatchObject({
      user: { email: ALICE.email },
    })
  })

  it('names nobody for a session past it (signedInUser)', async () => {
    expect(await signedInUser(contextFor(limited(), await tokenWith(T0 - 60, { auth_time: T0 - HOUR })))).toBeNull()
    expect(await signedInUser(contextFor(limited(), await tokenWith(T0 - 60, { auth_time: T0 - HOUR + 1 })))).toEqual({
      id: ALICE.id,
      email: ALICE.email,
      name: ALICE.name,
    })
  })
})

describe('sign-out everywhere of JWT sessions (a configured store)', () => {
  it('ends every session signed in up to the second of the sign-out, and none signed in after or of another user', async () => {
    const config = testConfig({ store: memoryAuthStore() })
    await endJwtSessionsOf(assertConfig(config), ALICE.id, T0 - 100)
    expect(await json(await readSession(config, await tokenWith(T0 - 60, { auth_time: T0 - 101 })))).toBeNull()
    expect(await json(await readSession(config, await tokenWith(T0 - 60, { auth_time: T0 - 100 })))).toBeNull()
    expect(await json(await readSession(config, await tokenWith(T0 - 60, { auth_time: T0 - 99 })))).toMatchObject({
      user: { email: ALICE.email },
    })
    expect(await json(await readSession(config, await tokenWith(T0 - 60, { auth_time: T0 - 101, sub: 'u-2' })))).not.toBeNull()
    expect(await signedInUser(contextFor(config, await tokenWith(T0 - 60, { auth_time: T0 - 100 })))).toBeNull()
  })

  it('reads the store only for a token with a subject and a sign-in time, and only when one is configured', async () => {
    const counted = (store: { get: (key: string) => Promise<string | null> }) => {
      let gets = 0
      const get = store.get.bind(store)
      store.get = (key) => (gets++, get(key))
      return () => gets
    }
    const shared = assertConfig(testConfig({ store: memoryAuthStore() }))
    const sharedGets = counted(shared.store)
    expect(await isJwtSessionEnded(shared, { sub: ALICE.id, iat: T0 - 60 }, T0)).toBe(false)
    expect(sharedGets()).toBe(1)
    expect(await isJwtSessionEnded(shared, { iat: T0 - 60 }, T0)).toBe(false)
    expect(await isJwtSessionEnded(shared, { sub: ALICE.id }, T0)).toBe(false)
    expect(sharedGets()).toBe(1)
    // Number(null) is 0: with no sign-out recorded, a sign-in at the epoch is no sign-in before it.
    expect(await isJwtSessionEnded(shared, { sub: ALICE.id, auth_time: 0 }, T0)).toBe(false)

    const plain = assertConfig(testConfig())
    const plainGets = counted(plain.store)
    expect(await isJwtSessionEnded(plain, { sub: ALICE.id, iat: T0 - 60 }, T0)).toBe(false)
    expect(plainGets()).toBe(0)
  })
})

describe('the absolute lifetime of a database session', () => {
  const TOKEN = 'stored-session-token'

  function storeWith(createdAt: Date | undefined, expires: number) {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    store.sessions.set(TOKEN, { sessionToken: TOKEN, userId: ALICE.id, expires: new Date(expires * 1000), ...(createdAt ? { createdAt } : {}) })
    return { store, config: testConfig({ adapter: MemoryAdapter(store), session: { absoluteMaxAge: HOUR } }) }
  }

  // The absolute expiry of a row is read as its idle one is (`expires < now` ends it, as in
  // Auth.js): the row lives through the second signedIn + absoluteMaxAge, a JWT ends at it.
  it('ends a row signed in more than absoluteMaxAge ago however active, deleting it and clearing the cookie', async () => {
    const { store, config } = storeWith(new Date((T0 - HOUR - 1) * 1000), T0 + MAX_AGE - 60)
    const response = await readSession(config, TOKEN)
    expect(await json(response)).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    expect(store.sessions.has(TOKEN)).toBe(false)
  })

  it('serves a row up to that second, extended no further than its absolute lifetime', async () => {
    for (const signedIn of [T0 - HOUR, T0 - HOUR + 1]) {
      const { store, config } = storeWith(new Date(signedIn * 1000), T0 + MAX_AGE - DAY)
      const response = await readSession(config, TOKEN)
      expect(await json(response)).toMatchObject({ user: { email: ALICE.email }, expires: iso(signedIn + HOUR) })
      expect(setCookie(response, SESSION_COOKIE)?.attributes.expires).toBe(httpDate(signedIn + HOUR))
      expect(store.sessions.get(TOKEN)!.expires.getTime()).toBe((signedIn + HOUR) * 1000)
    }
  })

  it('extends to maxAge a row without a sign-in time (an Auth.js table) or with one that is no date', async () => {
    for (const createdAt of [undefined, new Date('not a date')]) {
      const { store, config } = storeWith(createdAt, T0 + 60)
      expect(await json(await readSession(config, TOKEN))).toMatchObject({ user: { email: ALICE.email }, expires: iso(T0 + MAX_AGE) })
      expect(store.sessions.get(TOKEN)!.expires.getTime()).toBe((T0 + MAX_AGE) * 1000)
    }
  })
})

describe('createSessionRow (the database session a sign-in stores)', () => {
  function rowContext(adapter: ReturnType<typeof MemoryAdapter>, headers: Record<string, string> = {}): RequestContext {
    return { config: assertConfig(testConfig({ adapter })), at: T0, request: { headers: new Headers(headers) } } as unknown as RequestContext
  }
  function aliceStore() {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    return store
  }

  it('stores the expiry, the second factors, the sign-in time and the user agent cut to 512 characters', async () => {
    const store = aliceStore()
    const { value, expires } = await createSessionRow(rowContext(MemoryAdapter(store), { 'user-agent': 'x'.repeat(600) }), ALICE.id, ['pwd', 'otp'])
    expect(expires).toBe(T0 + MAX_AGE)
    expect(store.sessions.get(value)).toEqual({
      sessionToken: value,
      userId: ALICE.id,
      expires: new Date((T0 + MAX_AGE) * 1000),
      amr: ['pwd', 'otp'],
      createdAt: new Date(T0 * 1000),
      lastSeenAt: new Date(T0 * 1000),
      userAgent: 'x'.repeat(512),
    })
  })

  it('stores a null user agent when the request names none, and no lifecycle details where sessions cannot be listed', async () => {
    const store = aliceStore()
    const { value } = await createSessionRow(rowContext(MemoryAdapter(store)), ALICE.id)
    expect(store.sessions.get(value)).toMatchObject({ createdAt: new Date(T0 * 1000), userAgent: null })
    const { listSessions: _listSessions, ...authjs } = MemoryAdapter(store)
    const plain = await createSessionRow(rowContext(authjs as ReturnType<typeof MemoryAdapter>, { 'user-agent': 'ua' }), ALICE.id)
    expect(store.sessions.get(plain.value)).toEqual({ sessionToken: plain.value, userId: ALICE.id, expires: new Date((T0 + MAX_AGE) * 1000) })
  })
})

describe('issueJwtSession (the JWT a sign-in issues)', () => {
  const account = { provider: 'credentials', type: 'credentials', providerAccountId: 'alice' } as const

  /** Issues a session with a jwt callback that records what it was given, and decodes the token. */
  async function issue(input: Omit<Parameters<typeof issueJwtSession>[1], 'account'>) {
    const seen: Record<string, unknown>[] = []
    const config = testConfig({
      callbacks: {
        jwt: (params) => {
          seen.push({ ...params })
          return params.token
        },
      },
    })
    const issued = await issueJwtSession(contextFor(config, ''), { account, ...input })
    const token = (await decode({ token: issued.value!, secret: SECRET, salt: SESSION_COOKIE }))!
    return { issued, token, params: seen[0]! }
  }

  it("starts the token from the user's name, e-mail, picture and id as a string subject", async () => {
    const { token, params } = await issue({ user: { id: 42 as never, name: 'Alice', email: 'a@example.com', image: 'https://img/a' }, isNewUser: false })
    expect(params.token).toEqual({ name: 'Alice', email: 'a@example.com', picture: 'https://img/a', sub: '42' })
    expect(token).toMatchObject({ name: 'Alice', email: 'a@example.com', picture: 'https://img/a', sub: '42' })
  })

  it('leaves the subject out for a user without an id, rather than the string "undefined"', async () => {
    const { params } = await issue({ user: { name: 'Alice' } as never, isNewUser: false })
    expect(params.token).toEqual({ name: 'Alice', email: undefined, picture: undefined, sub: undefined })
  })

  it('adds the claims it is given (refreshable provider tokens) over the defaults', async () => {
    const { params } = await issue({ user: { id: 'u1' }, isNewUser: false, claims: { sub: 'other', oauth: { provider: 'op' } } })
    expect(params.token).toMatchObject({ sub: 'other', oauth: { provider: 'op' } })
  })

  it('tells the jwt callback signUp and hands it the profile for a new user, signIn and no profile key otherwise', async () => {
    const profile = { sub: 'p1', email: 'a@example.com' }
    const first = await issue({ user: { id: 'u1' }, isNewUser: true, profile })
    expect(first.params).toMatchObject({ trigger: 'signUp', isNewUser: true, profile })
    const again = await issue({ user: { id: 'u1' }, isNewUser: false })
    expect(again.params.trigger).toBe('signIn')
    expect('profile' in again.params).toBe(false)
  })

  it('expires maxAge after the sign-in', async () => {
    const { issued, token } = await issue({ user: { id: 'u1' }, isNewUser: false })
    expect(issued.expires).toBe(T0 + MAX_AGE)
    expect(token.exp).toBe(T0 + MAX_AGE)
  })
})

describe('the provider session a JWT names (a logout from the provider ends it)', () => {
  it('is named only by a string provider and a string session id', () => {
    expect(providerSessionOfToken({ idp: 'op', sid: 'sid-1' })).toEqual({ provider: 'op', sid: 'sid-1' })
    expect(providerSessionOfToken({ idp: 'op' })).toBeUndefined()
    expect(providerSessionOfToken({ sid: 'sid-1' })).toBeUndefined()
    expect(providerSessionOfToken({ idp: 7, sid: 'sid-1' })).toBeUndefined()
    expect(providerSessionOfToken({ idp: 'op', sid: 7 })).toBeUndefined()
  })

  it('a logout of one provider session ends the sessions it signed in, not those of another session or provider', async () => {
    const config = assertConfig(testConfig({ store: memoryAuthStore() }))
    const through = (idp: string, sid: string) => ({ ...claims, auth_time: T0 - 60, idp, sid })
    await endJwtSessionsOfProviderSession(config, 'op', 'sid-1', T0 - 30)
    expect(await isJwtSessionEnded(config, through('op', 'sid-1'), T0)).toBe('provider-logout')
    expect(await isJwtSessionEnded(config, through('op', 'sid-2'), T0)).toBe(false)
    expect(await isJwtSessionEnded(config, through('other-op', 'sid-1'), T0)).toBe(false)
    expect(await isJwtSessionEnded(config, { ...claims, auth_time: T0 - 60, idp: 'op' }, T0)).toBe(false)
  })
})

describe('who is signed in, while the database is down', () => {
  const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  const contextFor = (config: ReturnType<typeof testConfig>, value: string) => sessionReadContext(config, value, T0)

  it('is an outage, never "nobody": a database session the adapter cannot read', async () => {
    const adapter = { ...MemoryAdapter(createMemoryStore()), getSessionAndUser: async () => Promise.reject(down()) }
    const ctx = contextFor(testConfig({ adapter, session: { strategy: 'database' } }), 'some-session')
    expect(outageOf(await currentSession(ctx).catch((e: unknown) => e))).toBeInstanceOf(ServiceUnavailable)
    expect(outageOf(await signedInUser(ctx).catch((e: unknown) => e))).toBeInstanceOf(ServiceUnavailable)
  })

  it("is an outage, never \"nobody\": a JWT session's user the adapter cannot look up", async () => {
    const adapter = { ...MemoryAdapter(createMemoryStore()), getUser: async () => Promise.reject(down()) }
    const ctx = contextFor(testConfig({ adapter, session: { strategy: 'jwt' } }), await tokenAt(T0 - 60))
    expect(outageOf(await signedInAdapterUser(ctx).catch((e: unknown) => e))).toBeInstanceOf(ServiceUnavailable)
  })
})
