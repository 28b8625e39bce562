import { Auth as AuthjsAuth } from '@auth/core'
import * as authjs from '@auth/core/jwt'
import { describe, expect, it, vi } from 'vitest'
import { Auth } from '../../core/index.js'
import type { RequestContext } from '../../core/http/context.js'
import { assertConfig } from '../../core/index.js'
import { decode, encode } from '../../core/jwt.js'
import { issueJwtSession } from '../../core/session/issue.js'
import {
  ALICE,
  authRequest,
  Client,
  CookieJar,
  ORIGIN,
  SECRET,
  setCookie,
  setCookies,
  testConfig,
} from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const claims = { name: ALICE.name, email: ALICE.email, picture: ALICE.image, sub: ALICE.id }

function expectNoStore(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/json')
  expect(response.headers.get('cache-control')).toBe('private, no-cache, no-store')
  expect(response.headers.get('expires')).toBe('0')
  expect(response.headers.get('pragma')).toBe('no-cache')
}

async function mint(token: Record<string, unknown> = claims, maxAge?: number) {
  return encode({ token, secret: SECRET, salt: SESSION_COOKIE, ...(maxAge ? { maxAge } : {}) })
}

async function getSession(config: ReturnType<typeof testConfig>, cookies: Record<string, string>) {
  return Auth(authRequest({ path: '/auth/session', cookies }), config)
}

describe('GET /session with a JWT session', () => {
  it('answers null with no-cache headers when there is no session cookie', async () => {
    const response = await getSession(testConfig(), {})
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('null')
    expectNoStore(response)
    expect(setCookies(response)).toEqual([])
  })

  it('returns the same JSON body as @auth/core for a cookie minted by @auth/core', async () => {
    const token = await authjs.encode({ token: claims, secret: SECRET, salt: SESSION_COOKIE })
    const cookie = `${SESSION_COOKIE}=${token}`
    const request = () => new Request(`${ORIGIN}/auth/session`, { headers: { cookie } })
    const theirs = await AuthjsAuth(request(), { secret: SECRET, trustHost: true, providers: [] })
    const ours = await Auth(request(), testConfig({ providers: [] }))
    const [theirBody, ourBody] = [await theirs.json(), await ours.json()]
    // `expires` is computed at request time by both; compare it to the second.
    const withoutExpires = ({ expires, ...rest }: { expires: string }) => rest
    expect(withoutExpires(ourBody)).toEqual(withoutExpires(theirBody))
    expect(Math.abs(Date.parse(ourBody.expires) - Date.parse(theirBody.expires))).toBeLessThan(5000)
    expect(ours.status).toBe(theirs.status)
  })

  it('exposes name, email and image (not the user id) by default', async () => {
    const response = await getSession(testConfig(), { [SESSION_COOKIE]: await mint() })
    const body = await response.json()
    expect(body).toEqual({
      user: { name: ALICE.name, email: ALICE.email, image: ALICE.image },
      expires: expect.any(String),
    })
    expectNoStore(response)
  })

  it('does not re-encrypt a fresh token, and reports its own expiry', async () => {
    const token = await mint()
    const { exp } = (await decode({ token, secret: SECRET, salt: SESSION_COOKIE }))!
    const response = await getSession(testConfig(), { [SESSION_COOKIE]: token })
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect((await response.json()).expires).toBe(new Date(exp! * 1000).toISOString())
  })

  it('re-issues the token with a new expiry once updateAge has passed', async () => {
    const config = testConfig({ session: { updateAge: 0 } })
    const response = await getSession(config, { [SESSION_COOKIE]: await mint() })
    const cookie = setCookie(response, SESSION_COOKIE)!
    expect(cookie.attributes).toMatchObject({ path: '/', httponly: true, secure: true, samesite: 'Lax' })
    const expires = Date.parse(cookie.attributes.expires as string)
    expect(expires).toBeGreaterThan(Date.now() + 2_591_000_000)
    expect(await decode({ token: cookie.value, secret: SECRET, salt: SESSION_COOKIE })).toMatchObject(claims)
  })

  it('re-issues the token when the jwt callback changes it', async () => {
    const config = testConfig({ callbacks: { jwt: ({ token }) => ({ ...token, role: 'admin' }) } })
    const response = await getSession(config, { [SESSION_COOKIE]: await mint() })
    const cookie = setCookie(response, SESSION_COOKIE)!
    expect(await decode({ token: cookie.value, secret: SECRET, salt: SESSION_COOKIE })).toMatchObject({
      role: 'admin',
    })
  })

  it('re-issues the token when the jwt callback changes it in place and returns the same object', async () => {
    const config = testConfig({
      callbacks: {
        jwt: ({ token }) => {
          token.role = 'admin'
          return token
        },
      },
    })
    const response = await getSession(config, { [SESSION_COOKIE]: await mint() })
    const cookie = setCookie(response, SESSION_COOKIE)!
    expect(await decode({ token: cookie.value, secret: SECRET, salt: SESSION_COOKIE })).toMatchObject({ role: 'admin' })
  })

  it('passes the decoded token to the jwt callback without a trigger, then to the session callback', async () => {
    const jwt = vi.fn(({ token }) => token)
    const session = vi.fn(({ session }) => session)
    const events = { session: vi.fn() }
    const config = testConfig({ callbacks: { jwt, session }, events })
    await getSession(config, { [SESSION_COOKIE]: await mint() })
    expect(jwt).toHaveBeenCalledWith({ token: expect.objectContaining(claims), session: undefined })
    expect(jwt.mock.calls[0]![0]).not.toHaveProperty('trigger')
    expect(session).toHaveBeenCalledWith({
      session: { user: { name: ALICE.name, email: ALICE.email, image: ALICE.image }, expires: expect.any(String) },
      token: expect.objectContaining(claims),
    })
    expect(events.session).toHaveBeenCalledWith({
      session: expect.objectContaining({ user: expect.any(Object) }),
      token: expect.objectContaining(claims),
    })
  })

  it('answers null and clears the cookie when the token is garbage, logging one JWTSessionError', async () => {
    const config = testConfig()
    const response = await getSession(config, { [SESSION_COOKIE]: 'garbage' })
    expect(await response.json()).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    expect(config.logger.error).toHaveBeenCalledTimes(1)
    expect(config.logger.error.mock.calls[0]![0]).toMatchObject({ type: 'JWTSessionError' })
  })

  it('refuses a token minted under the non-secure cookie name (wrong salt)', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: 'authjs.session-token' })
    const response = await getSession(testConfig(), { [SESSION_COOKIE]: token })
    expect(await response.json()).toBeNull()
  })

  it('refuses an expired token and clears it', async () => {
    const response = await getSession(testConfig(), { [SESSION_COOKIE]: await mint(claims, -60) })
    expect(await response.json()).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
  })

  it('ends an expired token in `expired`, whether the decoder refuses it or an application decoder returns it past exp', async () => {
    const ends: string[] = []
    const inspect = (trace: { steps: { to: string }[] }) => ends.push(trace.steps.at(-1)!.to)
    await getSession(testConfig({ inspect }), { [SESSION_COOKIE]: await mint(claims, -60) })
    const now = Math.floor(Date.now() / 1000)
    const decoding = (exp: number) => testConfig({ inspect, jwt: { decode: async () => ({ ...claims, iat: now - 3600, exp }) } })
    const response = await getSession(decoding(now - 16), { [SESSION_COOKIE]: 'opaque' })
    expect(await response.json()).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    await getSession(decoding(now + 60), { [SESSION_COOKIE]: 'opaque' })
    await getSession(testConfig({ inspect }), { [SESSION_COOKIE]: 'not-a-jwe' })
    expect(ends).toEqual(['expired', 'expired', 'active', 'tampered'])
  })

  it('ends the session when the jwt callback returns null', async () => {
    const config = testConfig({ callbacks: { jwt: () => null } })
    const response = await getSession(config, { [SESSION_COOKIE]: await mint() })
    expect(await response.json()).toBeNull()
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
  })

  it('opens a session written by a rotated-out secret that is still listed', async () => {
    const old = 'the-previous-secret-that-is-long-enough-000000'
    const token = await encode({ token: claims, secret: old, salt: SESSION_COOKIE })
    const response = await getSession(testConfig({ secret: [SECRET, old] }), { [SESSION_COOKIE]: token })
    expect((await response.json()).user.email).toBe(ALICE.email)
  })

  it('uses the plain cookie name over http', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: 'authjs.session-token' })
    const response = await Auth(
      authRequest({ path: '/auth/session', origin: 'http://localhost:3000', cookies: { 'authjs.session-token': token } }),
      testConfig(),
    )
    expect((await response.json()).user.email).toBe(ALICE.email)
  })
})

describe('large sessions', () => {
  const big = { ...claims, groups: Array.from({ length: 400 }, (_, i) => `group-${i}`) }

  it('splits a token larger than 3936 characters into numbered chunks and reads them back', async () => {
    const config = testConfig({ session: { updateAge: 0 } })
    const token = await mint(big)
    expect(token.length).toBeGreaterThan(3936)
    const jar = new CookieJar({ [`${SESSION_COOKIE}.0`]: token.slice(0, 3936), [`${SESSION_COOKIE}.1`]: token.slice(3936) })
    const response = await Auth(authRequest({ path: '/auth/session', cookies: jar }), config)
    expect((await response.json()).user.email).toBe(ALICE.email)
    const written = setCookies(response).filter((c) => c.name.startsWith(SESSION_COOKIE))
    expect(written.map((c) => c.name)).toEqual([`${SESSION_COOKIE}.0`, `${SESSION_COOKIE}.1`])
    expect(written.every((c) => c.value.length <= 3936)).toBe(true)
  })

  it('deletes stale chunks when the session shrinks back into one cookie', async () => {
    const config = testConfig({
      session: { updateAge: 0 },
      callbacks: { jwt: ({ token }) => ({ ...token, groups: undefined }) },
    })
    const token = await mint(big)
    const jar = new CookieJar({ [`${SESSION_COOKIE}.0`]: token.slice(0, 3936), [`${SESSION_COOKIE}.1`]: token.slice(3936) })
    const response = await Auth(authRequest({ path: '/auth/session', cookies: jar }), config)
    jar.store(response)
    expect([...jar.cookies.keys()]).toEqual([SESSION_COOKIE])
  })
})

describe('POST /session (update)', () => {
  it('runs the jwt callback with trigger update and the client data, and re-issues the token', async () => {
    const jwt = vi.fn(({ token, trigger, session }) =>
      trigger === 'update' ? { ...token, name: (session as { name: string }).name } : token,
    )
    const client = new Client(testConfig({ callbacks: { jwt } }))
    client.jar.cookies.set(SESSION_COOKIE, await mint())
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/session', json: { csrfToken, data: { name: 'Alice Liddell' } } })
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBeNull()
    expect((await response.json()).user.name).toBe('Alice Liddell')
    expect(jwt).toHaveBeenCalledWith(expect.objectContaining({ trigger: 'update', session: { name: 'Alice Liddell' } }))
    const token = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(token?.name).toBe('Alice Liddell')
  })

  it('answers 400 with a null body without a CSRF token', async () => {
    const client = new Client(testConfig())
    client.jar.cookies.set(SESSION_COOKIE, await mint())
    const response = await client.send({ path: '/session', json: { data: { name: 'Mallory' } } })
    expect(response.status).toBe(400)
    expect(await response.text()).toBe('null')
  })
})

describe('factor verification times in a JWT session', () => {
  it('survive a jwt callback that rebuilds the token on a read, and a revoking callback still ends it quietly', async () => {
    const verified = { pwd: Math.floor(Date.now() / 1000) - 60 }
    const old = { ...claims, fva: verified }
    const rebuilt = testConfig({ callbacks: { jwt: ({ token }) => ({ sub: token.sub, name: token.name, email: token.email, role: 'admin' }) } })
    const response = await getSession(rebuilt, { [SESSION_COOKIE]: await mint(old) })
    const reissued = await decode({ token: setCookie(response, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE })
    expect(reissued).toMatchObject({ role: 'admin', fva: verified })

    const ends: string[] = []
    const errors = vi.fn()
    const revoking = testConfig({
      logger: { error: errors, warn: () => {}, debug: () => {} },
      inspect: (trace) => ends.push(trace.steps.at(-1)!.to),
      callbacks: { jwt: () => null },
    })
    expect(await (await getSession(revoking, { [SESSION_COOKIE]: await mint(old) })).json()).toBeNull()
    expect(ends).toEqual(['revoked'])
    expect(errors).not.toHaveBeenCalled()
  })

  it('are written into a new session token only when the sign-in verified a factor', async () => {
    const at = Math.floor(Date.now() / 1000)
    const ctx = {
      config: assertConfig(testConfig()),
      at,
      cookies: { sessionToken: { name: SESSION_COOKIE } },
    } as unknown as RequestContext
    const sign = async (verified?: Record<string, number>) => {
      const { value } = await issueJwtSession(ctx, { user: { id: ALICE.id, email: ALICE.email }, account: null, profile: undefined, isNewUser: false, claims: undefined, verified } as never)
      return decode({ token: value!, secret: SECRET, salt: SESSION_COOKIE })
    }
    expect(await sign({ pwd: at })).toMatchObject({ fva: { pwd: at } })
    expect(await sign({})).not.toHaveProperty('fva')
    expect(await sign()).not.toHaveProperty('fva')
  })
})
