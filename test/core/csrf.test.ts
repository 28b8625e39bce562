import { Auth as AuthjsAuth } from '@auth/core'
import { describe, expect, it } from 'vitest'
import { Auth, skipCSRFCheck } from '../../core/index.js'
import { sha256Hex } from '../../core/crypto.js'
import { authRequest, Client, ORIGIN, SECRET, setCookie, testConfig } from '../fixtures/http.js'

const CSRF_COOKIE = '__Host-authjs.csrf-token'

describe('GET /csrf', () => {
  it('returns a 64-hex token, sets token|hash in a __Host- cookie, and forbids caching', async () => {
    const response = await Auth(authRequest({ path: '/auth/csrf' }), testConfig())
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('private, no-cache, no-store')
    const { csrfToken } = (await response.json()) as { csrfToken: string }
    expect(csrfToken).toMatch(/^[0-9a-f]{64}$/)
    const cookie = setCookie(response, CSRF_COOKIE)!
    expect(cookie.value).toBe(`${csrfToken}|${await sha256Hex(`${csrfToken}${SECRET}`)}`)
    expect(cookie.attributes).toMatchObject({ path: '/', httponly: true, secure: true, samesite: 'Lax' })
    expect(cookie.attributes.expires).toBeUndefined()
  })

  it('reuses the token of a valid cookie without setting a new one', async () => {
    const client = new Client(testConfig())
    const first = await client.csrfToken()
    const response = await client.send({ path: '/csrf' })
    expect(((await response.json()) as { csrfToken: string }).csrfToken).toBe(first)
    expect(setCookie(response, CSRF_COOKIE)).toBeUndefined()
  })

  it('replaces a cookie whose hash does not verify (a planted cookie)', async () => {
    const planted = `${'a'.repeat(64)}|${'b'.repeat(64)}`
    const response = await Auth(
      authRequest({ path: '/auth/csrf', cookies: { [CSRF_COOKIE]: planted } }),
      testConfig(),
    )
    const { csrfToken } = (await response.json()) as { csrfToken: string }
    expect(csrfToken).not.toBe('a'.repeat(64))
    expect(setCookie(response, CSRF_COOKIE)?.value.startsWith(csrfToken)).toBe(true)
  })

  it('accepts the CSRF cookie and token issued by @auth/core', async () => {
    const theirs = await AuthjsAuth(new Request(`${ORIGIN}/auth/csrf`), {
      secret: SECRET,
      trustHost: true,
      providers: [],
    })
    const { csrfToken } = (await theirs.json()) as { csrfToken: string }
    const cookie = theirs.headers.getSetCookie().find((c) => c.startsWith(CSRF_COOKIE))!
    const value = decodeURIComponent(cookie.split(';')[0]!.split('=')[1]!)
    const ours = await Auth(authRequest({ path: '/auth/csrf', cookies: { [CSRF_COOKIE]: value } }), testConfig())
    expect(((await ours.json()) as { csrfToken: string }).csrfToken).toBe(csrfToken)
    expect(setCookie(ours, CSRF_COOKIE)).toBeUndefined()
  })

  it('answers 404 and clears the cookie when CSRF checks are skipped by an integration', async () => {
    const config = testConfig({ skipCSRFCheck })
    const response = await Auth(authRequest({ path: '/auth/csrf' }), config)
    expect(response.status).toBe(404)
    expect(await response.text()).toBe('')
    expect(setCookie(response, CSRF_COOKIE)?.attributes['max-age']).toBe('0')
    expect(config.logger.warn).toHaveBeenCalledWith('csrf-disabled')
  })

  it('sets no CSRF cookie on a session read (only routes that hand out tokens mint one)', async () => {
    const response = await Auth(authRequest({ path: '/auth/session' }), testConfig())
    expect(setCookie(response, CSRF_COOKIE)).toBeUndefined()
  })
})

describe('double-submit enforcement', () => {
  it('rejects a sign-in whose body token differs from the cookie token', async () => {
    const client = new Client(testConfig())
    await client.csrfToken()
    const response = await client.send({
      path: '/callback/credentials',
      body: { username: 'alice', password: 'wonderland', csrfToken: 'f'.repeat(64) },
    })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(client.jar.get('__Secure-authjs.session-token')).toBeUndefined()
  })

  it('rejects a sign-in that repeats the token but has no cookie (cross-site form)', async () => {
    const client = new Client(testConfig())
    const csrfToken = await client.csrfToken()
    client.jar.cookies.clear()
    const response = await client.send({
      path: '/callback/credentials',
      body: { username: 'alice', password: 'wonderland', csrfToken },
    })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
  })

  it('rejects a token sent in a header instead of the body', async () => {
    const client = new Client(testConfig())
    const csrfToken = await client.csrfToken()
    const response = await client.send({
      path: '/callback/credentials',
      body: { username: 'alice', password: 'wonderland' },
      headers: { 'x-csrf-token': csrfToken },
    })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
  })

  it('lets integrations that check origins themselves skip the check', async () => {
    const client = new Client(testConfig({ skipCSRFCheck }))
    const response = await client.send({
      path: '/callback/credentials',
      body: { username: 'alice', password: 'wonderland' },
    })
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get('__Secure-authjs.session-token')).toMatch(/^eyJ/)
  })
})
