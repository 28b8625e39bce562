/**
 * Where a sign-in or sign-out may send the browser: the default `redirect` callback (our origin
 * only), the syntactic check on a requested `callbackUrl`, the callback-url cookie (a forged one
 * is ignored, never followed), and the redirect proxy's origin allowlist.
 */
import { describe, expect, it } from 'vitest'
import { compileOriginPattern, isAllowedOrigin, type OriginPattern } from '../../core/config/origins.js'
import { defaultCallbacks } from '../../core/flows/callbacks.js'
import { isValidCallbackUrl } from '../../core/http/dispatch.js'
import { authRequest, Client, ORIGIN, setCookie, testConfig } from '../fixtures/http.js'
import { Auth } from '../../core/index.js'

const CALLBACK_COOKIE = '__Secure-authjs.callback-url'
const redirect = (url: string) => defaultCallbacks.redirect({ url, baseUrl: ORIGIN }) as string

describe('the default redirect callback', () => {
  it('prefixes a path with our origin', () => {
    expect(redirect('/dashboard?x=1')).toBe(`${ORIGIN}/dashboard?x=1`)
    expect(redirect('/')).toBe(`${ORIGIN}/`)
  })

  it('keeps an absolute URL on our origin as it is', () => {
    expect(redirect(`${ORIGIN}/a/b#c`)).toBe(`${ORIGIN}/a/b#c`)
  })

  it.each([
    'https://evil.example/',
    'https://authchart.test.evil.example/',
    'http://authchart.test/',
    'https://authchart.test:8443/',
    'https://evil.example@authchart.test.evil/',
    'javascript:alert(1)',
    'not a url',
    '',
  ])('sends %j to our origin instead', (url) => {
    expect(redirect(url)).toBe(ORIGIN)
  })
})

describe('isValidCallbackUrl', () => {
  it.each(['/x', '/', `${ORIGIN}/x`, 'http://other.example/', 'HTTPS://A.EXAMPLE'])('accepts %j', (url) => {
    expect(isValidCallbackUrl(url, ORIGIN)).toBe(true)
  })

  it.each(['javascript:alert(1)', 'data:text/html,x', 'ftp://a.example/', 'x', '', 'https:', 'mailto:a@b.example', 'xhttps://a.example', 'httpsx://a.example', 'http+x://a.example'])(
    'refuses %j',
    (url) => {
      expect(isValidCallbackUrl(url, ORIGIN)).toBe(false)
    },
  )
})

describe('the callback URL of a request', () => {
  it('is remembered in the callback-url cookie, HttpOnly, and not set again when unchanged', async () => {
    const client = new Client(testConfig())
    const first = await client.send({ path: '/signin', query: { callbackUrl: '/dashboard' } })
    expect(setCookie(first, CALLBACK_COOKIE)).toEqual({
      name: CALLBACK_COOKIE,
      value: `${ORIGIN}/dashboard`,
      attributes: { path: '/', httponly: true, secure: true, samesite: 'Lax' },
    })
    const again = await client.send({ path: '/signin' })
    expect(setCookie(again, CALLBACK_COOKIE)).toBeUndefined()
    const changed = await client.send({ path: '/signin', query: { callbackUrl: '/elsewhere' } })
    expect(setCookie(changed, CALLBACK_COOKIE)?.value).toBe(`${ORIGIN}/elsewhere`)
  })

  it('comes from the cookie when the request names none, and the sign-in lands there', async () => {
    const client = new Client(testConfig())
    client.jar.cookies.set(CALLBACK_COOKIE, `${ORIGIN}/from-cookie`)
    const response = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/from-cookie`)
  })

  it('prefers the body over the query, and the query over the cookie', async () => {
    const client = new Client(testConfig())
    client.jar.cookies.set(CALLBACK_COOKIE, `${ORIGIN}/cookie`)
    const csrfToken = await client.csrfToken()
    const response = await client.send({
      path: '/callback/credentials',
      query: { callbackUrl: '/query' },
      body: { username: 'alice', password: 'wonderland', csrfToken, callbackUrl: '/body' },
    })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/body`)
    const viaQuery = new Client(testConfig())
    viaQuery.jar.cookies.set(CALLBACK_COOKIE, `${ORIGIN}/cookie`)
    const token = await viaQuery.csrfToken()
    const second = await viaQuery.send({
      path: '/callback/credentials',
      query: { callbackUrl: '/query' },
      body: { username: 'alice', password: 'wonderland', csrfToken: token },
    })
    expect(second.headers.get('location')).toBe(`${ORIGIN}/query`)
  })

  it('ignores a forged cookie (logging it) and lands on our origin, never on the forged target', async () => {
    const config = testConfig()
    const client = new Client(config)
    client.jar.cookies.set(CALLBACK_COOKIE, 'javascript:alert(1)')
    const response = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ type: 'InvalidCallbackUrl', message: 'Invalid callback URL cookie. Received: javascript:alert(1)' }),
    )
  })

  it('sends an off-origin cookie value through the redirect callback, which keeps us home', async () => {
    const client = new Client(testConfig())
    client.jar.cookies.set(CALLBACK_COOKIE, 'https://evil.example/phish')
    const response = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(ORIGIN)
  })

  it.each(['javascript:alert(1)', 'ftp://evil.example/'])('answers 400 to a requested callbackUrl %j, logging why', async (callbackUrl) => {
    const config = testConfig()
    const response = await Auth(authRequest({ path: '/auth/signin', query: { callbackUrl } }), config)
    expect(response.status).toBe(400)
    const logged = config.logger.error.mock.calls.map(([error]) => [(error as Error).name, (error as Error).message])
    expect(logged).toEqual([
      ['InvalidCallbackUrl', `Invalid callback URL. Received: ${callbackUrl}`],
      ['RequestError', 'Invalid callbackUrl'],
    ])
    expect(setCookie(response, CALLBACK_COOKIE)).toBeUndefined()
  })

  it('answers 400 to a callbackUrl on our origin too long for its cookie, logging its length, and sets no cookie', async () => {
    const config = testConfig()
    const callbackUrl = `${ORIGIN}/${'a'.repeat(2100)}`
    const response = await Auth(authRequest({ path: '/auth/signin', query: { callbackUrl } }), config)
    expect(response.status).toBe(400)
    const logged = config.logger.error.mock.calls.map(([error]) => [(error as Error).name, (error as Error).message])
    expect(logged).toEqual([
      ['InvalidCallbackUrl', `Invalid callback URL: ${callbackUrl.length} characters, at most 2048 whose cookie fits in 4096 bytes`],
      ['RequestError', 'Invalid callbackUrl'],
    ])
    expect(setCookie(response, CALLBACK_COOKIE)).toBeUndefined()
  })

  it('answers 400 to a callbackUrl that is not a string (a JSON body)', async () => {
    const client = new Client(testConfig())
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/signout', json: { csrfToken, callbackUrl: ['/x'] } })
    expect(response.status).toBe(400)
  })

  it('is our origin when nothing names one, quietly; an empty callbackUrl is refused', async () => {
    const config = testConfig()
    const client = new Client(config)
    const response = await client.send({ path: '/signin' })
    expect(setCookie(response, CALLBACK_COOKIE)?.value).toBe(ORIGIN)
    expect(config.logger.error).not.toHaveBeenCalled()
    expect((await client.send({ path: '/signin', query: { callbackUrl: '' } })).status).toBe(400)
  })
})

describe('redirect proxy origin patterns', () => {
  const compiled = (entry: string) => compileOriginPattern(entry) as OriginPattern

  it('matches an exact origin only exactly', () => {
    const pattern = compiled('https://app.example.com')
    expect(pattern.source).toBe('https://app.example.com')
    expect(pattern.test('https://app.example.com')).toBe(true)
    expect(pattern.test('https://app.example.com.evil')).toBe(false)
    expect(pattern.test('http://app.example.com')).toBe(false)
  })

  it('lets a wildcard stand for one or more characters of one label, never a dot', () => {
    const pattern = compiled('https://pr-*.example.com')
    expect(pattern.source).toBe('https://pr-*.example.com')
    expect(pattern.test('https://pr-12.example.com')).toBe(true)
    expect(pattern.test('https://pr-.example.com')).toBe(false)
    expect(pattern.test('https://pr-1.2.example.com')).toBe(false)
    expect(pattern.test('https://pr-1.example.com.evil')).toBe(false)
    expect(pattern.test('https://xpr-1.example.com')).toBe(false)
    expect(pattern.test('https://pr-1xexample.com')).toBe(false)
    expect(pattern.test('https://pr-A.example.com')).toBe(false)
    expect(compiled('https://*.example.com').test('https://a.example.com')).toBe(true)
    expect(compiled('https://*.example.com').test('https://example.com')).toBe(false)
    expect(compiled('http://*.localhost.test:3000').test('http://a.localhost.test:3000')).toBe(true)
    expect(compiled('http://*.localhost.test:3000').test('http://a.localhost.test:3001')).toBe(false)
  })

  it.each([
    ['https://*.*.example.com', 'must contain at most one "*"'],
    ['not a url', 'must be an origin such as "https://app.example.com"'],
    ['ftp://files.example.com', 'must be an http(s) origin'],
    ['https://app.example.com/path', 'must be an origin only, without path, query or credentials'],
    ['https://app.example.com?q=1', 'must be an origin only, without path, query or credentials'],
    ['https://app.example.com#f', 'must be an origin only, without path, query or credentials'],
    ['https://user@app.example.com', 'must be an origin only, without path, query or credentials'],
    ['https://:pw@app.example.com', 'must be an origin only, without path, query or credentials'],
    ['https://*.com', 'may hold "*" only in the leftmost label of a host with at least three labels'],
    ['https://app.*.example.com', 'may hold "*" only in the leftmost label of a host with at least three labels'],
  ])('refuses %j: %s', (entry, reason) => {
    expect(compileOriginPattern(entry)).toBe(reason)
  })

  it('allows an origin on any of the patterns and none on an empty list', () => {
    const list = [compiled('https://a.example.com'), compiled('https://b-*.example.com')]
    expect(isAllowedOrigin(list, 'https://a.example.com')).toBe(true)
    expect(isAllowedOrigin(list, 'https://b-2.example.com')).toBe(true)
    expect(isAllowedOrigin(list, 'https://c.example.com')).toBe(false)
    expect(isAllowedOrigin([], 'https://a.example.com')).toBe(false)
  })
})
