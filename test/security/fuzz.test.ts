/**
 * Hostile and malformed requests, generated with fast-check: whatever arrives, `Auth` answers it
 * without an escaped exception, without a 5xx, without a stack trace or the secret in the body,
 * without redirecting off-site, and without ever issuing a session cookie.
 *
 * The generators never pair valid credentials with a valid CSRF pair, so no legitimate sign-in
 * can happen: any session cookie set is a bug.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth, customFetch } from '../../core/index.js'
import GitHub from '../../providers/github.js'
import { credentialsProvider, ORIGIN, SECRET, testConfig } from '../fixtures/http.js'

/** An OAuth provider too, so callbacks are fuzzed; it never reaches the network. */
const github = () =>
  GitHub({
    clientId: 'id',
    clientSecret: 'secret',
    [customFetch]: () => Promise.reject(new Error('no network in the fuzz test')),
  })

const SEED = 20261122
const ACTIONS = ['providers', 'session', 'csrf', 'signin', 'signout', 'callback', 'verify-request', 'error', 'webauthn-options']
const SESSION_NAMES = ['__Secure-authjs.session-token', 'authjs.session-token']

const tricky = fc.constantFrom(
  '',
  ' ',
  '..',
  '%2e%2e',
  '%00',
  'undefined',
  'null',
  '__proto__',
  'constructor',
  'credentials',
  'github',
  '<script>alert(1)</script>',
  'javascript:alert(1)',
  '//evil.example',
  'https://evil.example/',
  '\\\\evil.example',
  'data:text/html,<script>alert(1)</script>',
  'https://authchart.test.evil.example/',
  'http://[::1]/',
  '/%0d%0aSet-Cookie:%20x=1',
  'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIn0..AAAA.BBBB.CCCC',
  'a'.repeat(5000),
  '\u202e\u0000\uffff',
  '😀',
)
const text = fc.oneof(tricky, fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }))

const pathArb = fc.oneof(
  fc.tuple(fc.constantFrom(...ACTIONS), fc.option(text, { nil: undefined })).map(([action, provider]) =>
    provider === undefined ? `/auth/${action}` : `/auth/${action}/${encodeURIComponent(provider)}`,
  ),
  fc.constantFrom('/auth', '/auth/', '/auth//session', '/auth/session/x/y', '/elsewhere', '/', '/authsession', '/auth/%2e%2e/session'),
  fc.array(text, { maxLength: 4 }).map((segments) => `/auth/${segments.map(encodeURIComponent).join('/')}`),
)

const queryArb = fc.dictionary(
  fc.constantFrom('callbackUrl', 'error', 'email', 'code', 'state', 'provider', 'csrfToken', 'token', 'x'),
  text,
  { maxKeys: 4 },
)

const cookieArb = fc.dictionary(
  fc.constantFrom(
    ...SESSION_NAMES,
    '__Secure-authjs.session-token.0',
    '__Secure-authjs.session-token.1',
    '__Secure-authjs.session-token.99',
    '__Host-authjs.csrf-token',
    '__Secure-authjs.callback-url',
    '__Secure-authchart.flow.credentials-signin',
    '__Secure-authjs.state',
    'other',
  ),
  fc.oneof(
    text,
    fc.constant(`${'a'.repeat(64)}|${'b'.repeat(64)}`),
    fc.constant('stored-session-token'),
    fc.base64String({ maxLength: 200 }).map((s) => `eyJ${s}`),
  ),
  { maxKeys: 5 },
)

const bodyArb = fc.oneof(
  fc.constant(undefined),
  fc.constant(''),
  fc.json().map((json) => ({ type: 'application/json', body: json })),
  fc.constantFrom('{"username":"alice",', '["alice"]', '"x"', '42', 'null', '{"__proto__":{"admin":true}}').map((body) => ({ type: 'application/json', body })),
  fc
    .dictionary(fc.oneof(text, fc.constantFrom('__proto__', 'constructor', 'csrfToken', 'callbackUrl', 'username', 'password')), text, { maxKeys: 6 })
    .map((form) => ({
      type: 'application/x-www-form-urlencoded',
      // The password is never the real one: no legitimate sign-in can come out of a fuzz input.
      body: new URLSearchParams({ ...form, ...(form.password === 'wonderland' ? { password: 'x' } : {}) }).toString(),
    })),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ type: 'application/x-www-form-urlencoded', body: bytes })),
  fc.constant({ type: 'application/x-www-form-urlencoded', body: `username=${'a'.repeat(70_000)}` }),
  fc.constantFrom('text/plain', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', '').map((type) => ({ type, body: 'username=alice&password=wonderland' })),
)

const headerArb = fc.record(
  {
    'x-auth-return-redirect': fc.constant('1'),
    'x-forwarded-host': fc.constantFrom('evil.example', 'authchart.test'),
    'x-forwarded-proto': fc.constantFrom('http', 'https', 'javascript'),
    origin: fc.constantFrom('https://evil.example', ORIGIN, 'null'),
    'user-agent': fc.string({ maxLength: 2000 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  },
  { requiredKeys: [] },
)

interface Generated {
  method: string
  path: string
  query: Record<string, string>
  cookies: Record<string, string>
  body: undefined | '' | { type: string; body: string | Uint8Array }
  headers: Record<string, string>
  hugeCookie: boolean
}

const requestArb: fc.Arbitrary<Generated> = fc.record({
  method: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('GET', 'POST') },
    { weight: 1, arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'PROPFIND', 'get', 'X-CUSTOM') },
  ),
  path: pathArb,
  query: queryArb,
  cookies: cookieArb,
  body: bodyArb,
  headers: headerArb,
  hugeCookie: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
})

/** Builds a Request, or undefined when the Request constructor itself refuses the input. */
function toRequest(input: Generated): Request | undefined {
  try {
    const url = new URL(input.path, ORIGIN)
    for (const [k, v] of Object.entries(input.query)) url.searchParams.set(k, v)
    const headers = new Headers(input.headers)
    const cookie = Object.entries(input.cookies)
      .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
      .join('; ')
    if (cookie) headers.set('cookie', input.hugeCookie ? `${cookie}; pad=${'x'.repeat(70_000)}` : cookie)
    const canHaveBody = input.method !== 'GET' && input.method !== 'HEAD' && input.method !== 'get'
    let body: BodyInit | undefined
    if (canHaveBody && input.body) {
      if (input.body.type) headers.set('content-type', input.body.type)
      body = input.body.body as BodyInit
    }
    return new Request(url, { method: input.method, headers, ...(body !== undefined ? { body } : {}) })
  } catch {
    return undefined
  }
}

function expectHarmless(response: Response, body: string, request: Request) {
  const isConfigurationPage =
    request.method === 'GET' &&
    new URL(request.url).pathname.replace(/\/+$/, '') === '/auth/error' &&
    new URL(request.url).searchParams.get('error') === 'Configuration'
  if (isConfigurationPage) {
    // The spec's built-in Configuration error page answers 500 by design (and is HTML).
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toBe('text/html')
  } else {
    expect(response.status, `${request.method} ${request.url}`).toBeLessThan(500)
  }
  for (const cookie of response.headers.getSetCookie()) {
    const [pair] = cookie.split(';')
    const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)]
    const isSession = SESSION_NAMES.some((n) => name === n || name.startsWith(`${n}.`))
    if (isSession) expect(value, `session cookie issued for ${request.method} ${request.url}`).toBe('')
  }
  expect(body).not.toMatch(/\n\s+at .+\(?[/\\].+:\d+:\d+\)?/)
  expect(body).not.toContain(SECRET)
  const location = response.headers.get('location')
  if (location !== null) {
    const isRelative = location.startsWith('/') && !location.startsWith('//')
    expect(isRelative || new URL(location).origin === ORIGIN, `redirect to ${location}`).toBe(true)
  }
  if (response.headers.get('content-type') === 'application/json' && body) {
    const json = JSON.parse(body) as { url?: string } | null
    if (json && typeof json === 'object' && typeof json.url === 'string') {
      expect(new URL(json.url, ORIGIN).origin).toBe(ORIGIN)
    }
  }
}

describe('hostile requests', () => {
  it.each([
    ['JWT sessions', () => testConfig({ providers: [credentialsProvider(), github()] })],
    [
      'database sessions',
      () => testConfig({ providers: [credentialsProvider(), github()], adapter: MemoryAdapter(createMemoryStore()) }),
    ],
  ])(
    'answers 1,200 generated requests with %s without a 5xx, an escaped exception or a session cookie',
    async (_name, makeConfig) => {
      const config = makeConfig()
      let sent = 0
      await fc.assert(
        fc.asyncProperty(requestArb, async (input) => {
          const request = toRequest(input)
          fc.pre(request !== undefined)
          sent++
          let response: Response
          try {
            response = await Auth(request!, config)
          } catch (error) {
            throw new Error(`Auth threw for ${request!.method} ${request!.url}: ${String(error)}`)
          }
          expectHarmless(response, await response.text(), request!)
        }),
        { numRuns: 1200, seed: SEED, endOnFailure: true },
      )
      expect(sent).toBeGreaterThanOrEqual(1000)
    },
    120_000,
  )
})
