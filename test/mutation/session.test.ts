/**
 * The session cookie's attributes and the session's expiry to the second, at the boundaries where
 * an off-by-one would keep an expired session alive: JWT and database strategies, through `Auth`
 * with a frozen clock, and the `signedInUser` check the second-factor pages rely on.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig } from '../../core/index.js'
import { decode, encode } from '../../core/jwt.js'
import type { RequestContext } from '../../core/http/context.js'
import { signedInUser } from '../../core/session/current.js'
import { ALICE, authRequest, Client, setCookie, testConfig } from '../fixtures/http.js'
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

describe('signedInUser (who the second-factor pages serve)', () => {
  function contextFor(config: ReturnType<typeof testConfig>, value: string): RequestContext {
    const resolved = assertConfig(config)
    return {
      config: resolved,
      cookies: resolved.cookies.secure,
      sessionCookie: { value, names: [SESSION_COOKIE] },
      at: T0,
    } as unknown as RequestContext
  }

  it('names the user of a live JWT session, and nobody for an expired, subject-less or missing one', async () => {
    const config = testConfig()
    expect(await signedInUser(contextFor(config, await tokenAt(T0 - 60)))).toEqual({ id: ALICE.id, email: ALICE.email, name: ALICE.name })
    // exp = T0: over, even within the decoder's clock tolerance.
    expect(await signedInUser(contextFor(config, await tokenAt(T0 - 3600, 3600)))).toBeNull()
    expect(await signedInUser(contextFor(config, await tokenAt(T0 - 3599, 3600)))).not.toBeNull()
    vi.setSystemTime(T0 * 1000)
    const anonymous = await encode({ token: { name: 'x' }, secret: SECRET, salt: SESSION_COOKIE })
    expect(await signedInUser(contextFor(config, anonymous))).toBeNull()
    expect(await signedInUser(contextFor(config, ''))).toBeNull()
    expect(await signedInUser(contextFor(config, 'garbage'))).toBeNull()
  })

  it('names the user of a live database session, and nobody from the second it expires', async () => {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    const config = testConfig({ adapter: MemoryAdapter(store) })
    store.sessions.set('live', { sessionToken: 'live', userId: ALICE.id, expires: new Date((T0 + 1) * 1000) })
    store.sessions.set('ending', { sessionToken: 'ending', userId: ALICE.id, expires: new Date(T0 * 1000) })
    expect(await signedInUser(contextFor(config, 'live'))).toEqual({ id: ALICE.id, email: ALICE.email, name: ALICE.name })
    expect(await signedInUser(contextFor(config, 'ending'))).toBeNull()
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
