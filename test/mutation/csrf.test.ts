/**
 * The double-submit CSRF check, tested on its own (`readCsrf`) and through a sign-out, independently
 * of test/core/csrf.test.ts (which goes through the credentials sign-in): breaking the token
 * comparison or the cookie hash must fail tests in both files.
 */
import { describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import { sha256Hex, timingSafeEqual } from '../../core/crypto.js'
import { readCsrf } from '../../core/http/csrf.js'
import { authRequest, Client, ORIGIN, SECRET, setCookie, testConfig } from '../fixtures/http.js'

const CSRF_COOKIE = '__Host-authjs.csrf-token'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const TOKEN = '0123456789abcdef'.repeat(4)
const OTHER_SECRET = 'another-secret-that-is-long-enough-for-hkdf-987654'

const cookieFor = async (token: string, secret = SECRET) => `${token}|${await sha256Hex(`${token}${secret}`)}`
/** `text` with its character at `index` replaced by another hex digit. */
const flip = (text: string, index: number) =>
  `${text.slice(0, index)}${text[index] === '0' ? '1' : '0'}${text.slice(index + 1)}`

describe('readCsrf: the token comparison', () => {
  it('verifies a POST whose body repeats the token of a cookie it hashed itself', async () => {
    const state = await readCsrf(await cookieFor(TOKEN), [SECRET], TOKEN, true)
    expect(state).toEqual({ token: TOKEN, verified: true })
  })

  it.each([0, 31, 63])('refuses a body token that differs from the cookie token at character %i', async (at) => {
    const state = await readCsrf(await cookieFor(TOKEN), [SECRET], flip(TOKEN, at), true)
    expect(state).toEqual({ token: TOKEN, verified: false })
  })

  it('refuses a body token that is a prefix of the cookie token, or the token with a suffix', async () => {
    const cookie = await cookieFor(TOKEN)
    expect((await readCsrf(cookie, [SECRET], TOKEN.slice(0, 63), true)).verified).toBe(false)
    expect((await readCsrf(cookie, [SECRET], `${TOKEN}0`, true)).verified).toBe(false)
    expect((await readCsrf(cookie, [SECRET], '', true)).verified).toBe(false)
  })

  it('refuses a body token that is not a string, and never verifies a GET', async () => {
    const cookie = await cookieFor(TOKEN)
    expect((await readCsrf(cookie, [SECRET], [TOKEN], true)).verified).toBe(false)
    expect((await readCsrf(cookie, [SECRET], undefined, true)).verified).toBe(false)
    expect(await readCsrf(cookie, [SECRET], TOKEN, false)).toEqual({ token: TOKEN, verified: false })
  })

  it('compares strings in full: equal only when every character and the length agree', () => {
    expect(timingSafeEqual(TOKEN, TOKEN)).toBe(true)
    expect(timingSafeEqual('', '')).toBe(true)
    expect(timingSafeEqual(TOKEN, flip(TOKEN, 63))).toBe(false)
    expect(timingSafeEqual(TOKEN, flip(TOKEN, 0))).toBe(false)
    expect(timingSafeEqual('ab', 'abc')).toBe(false)
    expect(timingSafeEqual('abc', 'ab')).toBe(false)
    // Differences in several places must not cancel out.
    expect(timingSafeEqual('ab', 'ba')).toBe(false)
    expect(timingSafeEqual('\u0001\u0002', '\u0002\u0001')).toBe(false)
  })
})

describe('readCsrf: the cookie hash', () => {
  it('mints a new token when the cookie hash was made with another secret (a planted cookie)', async () => {
    const state = await readCsrf(await cookieFor(TOKEN, OTHER_SECRET), [SECRET], TOKEN, true)
    expect(state.token).not.toBe(TOKEN)
    expect(state.verified).toBe(false)
    expect(state.cookie).toBe(await cookieFor(state.token))
  })

  it.each([0, 63])('mints a new token when one character of the hash is changed (at %i)', async (at) => {
    const [token, hash] = (await cookieFor(TOKEN)).split('|') as [string, string]
    const state = await readCsrf(`${token}|${flip(hash, at)}`, [SECRET], TOKEN, true)
    expect(state.verified).toBe(false)
    expect(state.token).not.toBe(TOKEN)
  })

  it('mints a new token for a cookie without a hash, with an empty token, or a token that is not 64 hex', async () => {
    for (const cookie of [TOKEN, `|${await sha256Hex(SECRET)}`, await cookieFor(TOKEN.toUpperCase()), await cookieFor(`${TOKEN}0`), await cookieFor(TOKEN.slice(1))]) {
      const state = await readCsrf(cookie, [SECRET], cookie.split('|')[0], true)
      expect(state.verified, cookie).toBe(false)
      expect(state.cookie, cookie).toMatch(/^[0-9a-f]{64}\|[0-9a-f]{64}$/)
    }
  })

  it('accepts a cookie hashed with a rotated (older) secret, and with the comma-joined secrets Auth.js uses', async () => {
    const rotated = await readCsrf(await cookieFor(TOKEN, OTHER_SECRET), [SECRET, OTHER_SECRET], TOKEN, true)
    expect(rotated).toEqual({ token: TOKEN, verified: true })
    const joined = await readCsrf(await cookieFor(TOKEN, `${SECRET},${OTHER_SECRET}`), [SECRET, OTHER_SECRET], TOKEN, true)
    expect(joined).toEqual({ token: TOKEN, verified: true })
    // With one secret there is nothing to join: a hash over `secret,` is someone else's.
    expect((await readCsrf(await cookieFor(TOKEN, `${SECRET},`), [SECRET], TOKEN, true)).verified).toBe(false)
  })

  it('hashes a new token with the first secret', async () => {
    const state = await readCsrf(undefined, [SECRET, OTHER_SECRET], undefined, false)
    expect(state.token).toMatch(/^[0-9a-f]{64}$/)
    expect(state.cookie).toBe(await cookieFor(state.token, SECRET))
    expect(state.verified).toBe(false)
  })
})

describe('sign-out through Auth: the double submit', () => {
  async function signedIn() {
    const client = new Client(testConfig())
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(client.jar.get(SESSION_COOKIE)).toMatch(/^eyJ/)
    return client
  }

  it('signs out when the body repeats the token of the CSRF cookie', async () => {
    const client = await signedIn()
    const response = await client.signOut()
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
  })

  it('refuses a sign-out whose body token differs from the cookie token in its last character', async () => {
    const client = await signedIn()
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/signout', body: { csrfToken: flip(csrfToken, 63) } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect(client.jar.get(SESSION_COOKIE)).toMatch(/^eyJ/)
  })

  it('refuses a sign-out with a planted CSRF cookie whose hash was made with another secret', async () => {
    const client = await signedIn()
    const planted = await cookieFor(TOKEN, OTHER_SECRET)
    const response = await Auth(
      authRequest({
        path: '/auth/signout',
        body: { csrfToken: TOKEN },
        cookies: { [SESSION_COOKIE]: client.jar.get(SESSION_COOKIE)!, [CSRF_COOKIE]: planted },
      }),
      client.config,
    )
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  })
})
