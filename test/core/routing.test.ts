import { describe, expect, it } from 'vitest'
import { Auth, isAuthAction } from '../../core/index.js'
import { authRequest, Client, ORIGIN, setCookie, testConfig } from '../fixtures/http.js'

async function badRequest(request: Request, status = 400) {
  const response = await Auth(request, testConfig())
  expect(response.status).toBe(status)
  expect(await response.json()).toBe('Bad request.')
}

describe('request parsing', () => {
  it.each(['PUT', 'DELETE', 'PATCH', 'OPTIONS'])('answers 400 "Bad request." to %s', async (method) => {
    await badRequest(new Request(`${ORIGIN}/auth/session`, { method }))
  })

  it.each([
    '/auth',
    '/auth/',
    '/auth/nope',
    '/auth/session/extra',
    '/auth/signin/credentials/extra',
    '/elsewhere/session',
    '/authsession',
    '/auth/providers/credentials',
  ])('answers 400 "Bad request." for the path %s', async (path) => {
    await badRequest(authRequest({ path }))
  })

  it('answers HEAD as GET: same status, headers and cookies (the server writing it drops the body)', async () => {
    for (const path of ['/auth/signin', '/auth/session', '/auth/providers', '/auth/csrf', '/auth/signout']) {
      const get = await Auth(authRequest({ path }), testConfig())
      const head = await Auth(authRequest({ path, method: 'HEAD' }), testConfig())
      expect(head.status, path).toBe(get.status)
      expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'))
      expect(head.headers.getSetCookie().map((c) => c.split('=')[0]), path).toEqual(get.headers.getSetCookie().map((c) => c.split('=')[0]))
    }
  })

  it('answers a step of a flow that does not exist 404 "Not found."', async () => {
    const response = await Auth(authRequest({ path: '/auth/step/nope' }), testConfig())
    expect(response.status).toBe(404)
    expect(await response.json()).toBe('Not found.')
  })

  it('answers a browser asking for a step that does not exist with a 404 page, not JSON', async () => {
    const response = await Auth(authRequest({ path: '/auth/step/nope', headers: { accept: 'text/html,application/xhtml+xml' } }), testConfig())
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toBe('text/html')
    const html = await response.text()
    expect(html).toContain('<h1>Page not found</h1>')
    expect(html).toContain(`href="${ORIGIN}/auth/signin"`)
  })

  it('tolerates trailing and doubled slashes', async () => {
    const response = await Auth(authRequest({ path: '/auth//providers/' }), testConfig())
    expect(response.status).toBe(200)
  })

  it('treats the provider id "undefined" as no provider', async () => {
    const response = await Auth(authRequest({ path: '/auth/signin/undefined' }), testConfig())
    expect(response.status).toBe(200)
    expect(await response.text()).toContain('<title>Sign In</title>')
  })

  it('answers 400 for a JSON body that does not parse', async () => {
    await badRequest(
      new Request(`${ORIGIN}/auth/callback/credentials`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"username": "alice",',
      }),
    )
  })

  it('answers 400 for a JSON body that is not an object', async () => {
    await badRequest(
      new Request(`${ORIGIN}/auth/callback/credentials`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '["alice"]',
      }),
    )
  })

  it('answers 413 for a body over 64 KiB', async () => {
    await badRequest(
      new Request(`${ORIGIN}/auth/callback/credentials`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `username=${'a'.repeat(70_000)}`,
      }),
      413,
    )
  })

  it('answers 431 for a cookie header over 64 KiB', async () => {
    await badRequest(
      new Request(`${ORIGIN}/auth/session`, { headers: { cookie: `a=${'b'.repeat(70_000)}` } }),
      431,
    )
  })

  it('serves a custom basePath and refuses the default one', async () => {
    const config = testConfig({ basePath: '/api/auth' })
    expect((await Auth(authRequest({ path: '/api/auth/providers' }), config)).status).toBe(200)
    expect((await Auth(authRequest({ path: '/auth/providers' }), config)).status).toBe(400)
  })

  it('knows the actions of the spec', () => {
    expect(isAuthAction('session')).toBe(true)
    expect(isAuthAction('webauthn-options')).toBe(true)
    expect(isAuthAction('logout')).toBe(false)
  })
})

describe('routing', () => {
  it('sends an action without a route (POST /csrf) to the Configuration error', async () => {
    const response = await Auth(authRequest({ path: '/auth/csrf', method: 'POST' }), testConfig())
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
  })

  it('sends an unknown provider to its own error page (not Configuration) and logs the available ones', async () => {
    const config = testConfig()
    const response = await Auth(authRequest({ path: '/auth/signin/nope', method: 'POST' }), config)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=UnknownProvider`)
    expect(config.logger.error.mock.calls[0]![0].message).toBe(
      'Provider with id "nope" not found. Available providers: [credentials].',
    )
  })

  it('lists providers with absolute URLs built from the request origin', async () => {
    const response = await Auth(authRequest({ path: '/auth/providers' }), testConfig())
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(await response.json()).toEqual({
      credentials: {
        id: 'credentials',
        name: 'Credentials',
        type: 'credentials',
        signinUrl: `${ORIGIN}/auth/signin/credentials`,
        callbackUrl: `${ORIGIN}/auth/callback/credentials`,
      },
    })
  })

  it('sends POST /signin without a provider back to the sign-in page', async () => {
    const client = new Client(testConfig())
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/signin', body: { csrfToken } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
  })

  it('answers {url} for errors when asked with X-Auth-Return-Redirect', async () => {
    const response = await Auth(
      authRequest({ path: '/auth/csrf', method: 'POST', headers: { 'X-Auth-Return-Redirect': '1' } }),
      testConfig(),
    )
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ url: `${ORIGIN}/auth/error?error=Configuration` })
  })

  it('sends sign-in errors to a custom sign-in page on the same origin', async () => {
    const client = new Client(testConfig({ pages: { signIn: '/login' } }))
    const response = await client.signIn({ username: 'alice', password: 'nope' })
    expect(response.headers.get('location')).toBe(
      `${ORIGIN}/login?error=CredentialsSignin&code=credentials`,
    )
  })
})

describe('pages', () => {
  it('renders the sign-in page with a CSRF token field and sets the CSRF cookie', async () => {
    const response = await Auth(authRequest({ path: '/auth/signin' }), testConfig())
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html')
    const html = await response.text()
    const csrf = setCookie(response, '__Host-authjs.csrf-token')!
    expect(html).toContain(`name="csrfToken" value="${csrf.value.split('|')[0]}"`)
    expect(html).toContain(`action="${ORIGIN}/auth/callback/credentials"`)
    expect(html).toContain('name="username"')
  })

  it('shows the message for the error in the query', async () => {
    const response = await Auth(
      authRequest({ path: '/auth/signin', query: { error: 'CredentialsSignin' } }),
      testConfig(),
    )
    expect(await response.text()).toContain('Sign in failed. Check the details you provided are correct.')
  })

  it('redirects to a custom sign-in page with the callback URL and error', async () => {
    const response = await Auth(
      authRequest({ path: '/auth/signin', query: { callbackUrl: '/x', error: 'SessionRequired' } }),
      testConfig({ pages: { signIn: '/login' } }),
    )
    expect(response.headers.get('location')).toBe(
      `/login?callbackUrl=${encodeURIComponent(`${ORIGIN}/x`)}&error=SessionRequired`,
    )
  })

  it('tells a browser nobody is signed in on the sign-out page, with the way back', async () => {
    const response = await Auth(authRequest({ path: '/auth/signout' }), testConfig())
    const html = await response.text()
    expect(html).toContain('You are not signed in.')
    expect(html).not.toContain('Are you sure you want to sign out?')
    expect(html).toContain(`<a href="${ORIGIN}">Back</a>`)
  })

  it.each([
    ['Configuration', 500],
    ['AccessDenied', 403],
    ['Verification', 403],
    ['Anything', 200],
  ])('answers the error page for %s with status %i', async (error, status) => {
    const response = await Auth(authRequest({ path: '/auth/error', query: { error } }), testConfig())
    expect(response.status).toBe(status)
  })

  it('redirects the error page to a custom one, encoding the error', async () => {
    const response = await Auth(
      authRequest({ path: '/auth/error', query: { error: 'AccessDenied&x=1' } }),
      testConfig({ pages: { error: '/oops' } }),
    )
    expect(response.headers.get('location')).toBe('/oops?error=AccessDenied%26x%3D1')
  })

  it('renders the verify-request page, or redirects to a custom one with the query', async () => {
    const builtIn = await Auth(authRequest({ path: '/auth/verify-request' }), testConfig())
    expect(await builtIn.text()).toContain('Check your email')
    const custom = await Auth(
      authRequest({ path: '/auth/verify-request', query: { provider: 'email', type: 'email' } }),
      testConfig({ pages: { verifyRequest: '/check-mail' } }),
    )
    expect(custom.headers.get('location')).toBe('/check-mail?provider=email&type=email')
  })

  it('applies the theme to the pages', async () => {
    const response = await Auth(
      authRequest({ path: '/auth/signin' }),
      testConfig({ theme: { colorScheme: 'dark', brandColor: '#ff0066', logo: 'https://cdn.test/l.png' } }),
    )
    const html = await response.text()
    expect(html).toContain('class="__next-auth-theme-dark"')
    expect(html).toContain('--brand-color:#ff0066')
    expect(html).toContain('<img src="https://cdn.test/l.png" alt="Logo" class="logo">')
  })
})
