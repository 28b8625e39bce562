/**
 * Regression tests for the smaller holes of issue 11 (items 3 to 11), each written from the
 * attacker's side: secrets in config errors, a sign-out that pretends, forged log lines, session
 * tokens in debug output, non-Latin-1 redirects, script URLs in page attributes, cacheable pages
 * with CSRF tokens, chunk-cookie amplification and content-type sniffing.
 */
import { inspect } from 'node:util'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { resolveConfig } from '../../core/config/resolve-config.js'
import { MAX_SESSION_CHUNKS } from '../../core/cookies.js'
import { encodeLocation } from '../../core/http/dispatch.js'
import { parseRequest } from '../../core/http/request.js'
import { Auth } from '../../core/index.js'
import { createLogger } from '../../core/logger.js'
import { attributes } from '../../core/pages/html.js'
import { instrumentAdapter } from '../../core/session/adapter.js'
import type { AuthConfig } from '../../core/types.js'
import Credentials from '../../providers/credentials.js'
import {
  ALICE,
  authRequest,
  Client,
  CookieJar,
  credentialsProvider,
  ORIGIN,
  SECRET,
  setCookie,
  setCookies,
  spyLogger,
  testConfig,
} from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const good = { username: 'alice', password: 'wonderland' }

afterEach(() => {
  vi.restoreAllMocks()
})

/** Everything an error exposes to a log pipeline: message, stack, cause chain, own properties. */
function everythingIn(error: unknown): string {
  return [
    inspect(error, { depth: Infinity, showHidden: true }),
    JSON.stringify(error, (_key, value) => (value instanceof Error ? { ...value, message: value.message, stack: value.stack } : value)),
  ].join('\n')
}

/** Console output of the default logger, one entry per printed line. */
function captureConsole(): { lines: () => string[] } {
  const printed: string[] = []
  for (const method of ['error', 'warn', 'log'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(' ')))
  }
  return { lines: () => printed.flatMap((entry) => entry.split('\n')) }
}

describe('config validation errors (item 3)', () => {
  const SHORT = 'short-secret-value-0123456789ab' // 31 characters
  const CLIENT_SECRET = 'client-secret-value-that-must-not-leak'
  const cases: Record<string, { config: Record<string, unknown>; secrets: string[] }> = {
    'a secret one character short': { config: { secret: SHORT }, secrets: [SHORT] },
    // An older short secret after a long one is accepted (switching from Auth.js); a short first one is not.
    'a secret array whose first entry is short': { config: { secret: [SHORT, SECRET] }, secrets: [SECRET, SHORT] },
    'a short jwt.secret': { config: { secret: SECRET, jwt: { secret: SHORT } }, secrets: [SECRET, SHORT] },
    'a jwt.secret array with an entry of the wrong type': {
      config: { secret: SECRET, jwt: { secret: [SECRET, 42] } },
      secrets: [SECRET],
    },
    'a client secret misplaced at the top level': {
      config: { secret: SECRET, clientSecret: CLIENT_SECRET },
      secrets: [SECRET, CLIENT_SECRET],
    },
    'a token where a function belongs': {
      config: { secret: SECRET, session: { generateSessionToken: CLIENT_SECRET } },
      secrets: [SECRET, CLIENT_SECRET],
    },
    'a secret of the wrong shape': { config: { secret: { value: SHORT } }, secrets: [SHORT] },
  }

  it.each(Object.keys(cases))('carry no secret for %s, and the cause agrees with the message', (name) => {
    const { config, secrets } = cases[name]!
    const resolution = resolveConfig({ providers: [], ...config } as unknown as AuthConfig)
    expect(resolution.ok).toBe(false)
    const error = (resolution as { error: Error }).error
    const exposed = everythingIn(error)
    for (const secret of secrets) expect(exposed, `the error shows ${secret.slice(0, 10)}…`).not.toContain(secret)
    expect(error.message).toMatch(/^config\.\S+: /)
    if (error.cause !== undefined) expect((error.cause as Error).message).toBe(error.message)
  })

  it('never prints a secret through the default logger, on any route', async () => {
    const console = captureConsole()
    const config = { secret: [SHORT, SECRET], trustHost: true, providers: [credentialsProvider()] } as unknown as AuthConfig
    await Auth(authRequest({ path: '/auth/session' }), config)
    await Auth(authRequest({ path: '/auth/signin' }), config)
    const printed = console.lines().join('\n')
    expect(printed).toMatch(/config\.secret/)
    for (const secret of [SECRET, SHORT]) expect(printed).not.toContain(secret)
  })
})

/** A memory adapter whose deleteSession can be made to fail. */
function flakyDatabase() {
  const store = createMemoryStore()
  const base = MemoryAdapter(store)
  const state = { failing: false }
  const adapter: Adapter = {
    ...base,
    deleteSession: (async (sessionToken: string) => {
      if (state.failing) throw new Error('connection reset by peer')
      return base.deleteSession(sessionToken)
    }) as Adapter['deleteSession'],
  }
  return { store, adapter, state }
}

describe('sign-out when the database session cannot be deleted (item 4)', () => {
  it('answers with the error instead of a success redirect, and says the session may still be live', async () => {
    const { store, adapter, state } = flakyDatabase()
    const signOut = vi.fn()
    const config = testConfig({ adapter, events: { signOut } })
    const client = new Client(config)
    await client.signIn(good)
    const token = client.jar.get(SESSION_COOKIE)!
    expect(store.sessions.has(token)).toBe(true)

    state.failing = true
    const response = await client.signOut({ callbackUrl: '/bye' })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'SignOutError' }))
    expect(signOut, 'no signOut event for a session that was not ended').not.toHaveBeenCalled()
    // The browser's copy is cleared; the row is not, and a copy of the cookie still opens it.
    expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    expect(store.sessions.has(token)).toBe(true)
    const stolen = new Client(config)
    stolen.jar.cookies.set(SESSION_COOKIE, token)
    expect((await stolen.session()).body).toMatchObject({ user: { email: ALICE.email } })
  })

  it('reports the failure to JSON clients too, not the callback URL', async () => {
    const { adapter, state } = flakyDatabase()
    const client = new Client(testConfig({ adapter }))
    await client.signIn(good)
    state.failing = true
    const csrfToken = await client.csrfToken()
    const response = await client.send({
      path: '/signout',
      body: { csrfToken, callbackUrl: '/bye' },
      headers: { 'X-Auth-Return-Redirect': '1' },
    })
    expect(await response.json()).toEqual({ url: `${ORIGIN}/auth/error?error=Configuration` })
  })
})

const FORGED_LINE = '[auth][error] AdminLogin: root signed in'
const LINE_BREAKERS = ['\r\n', '\n', '\r', '\u2028', '\u2029', '\u0085', '\u000b', '\u000c', '\u001b[2K\r']
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/

function expectNoForgedLine(lines: string[]): void {
  expect(lines.length).toBeGreaterThan(0)
  for (const line of lines) {
    expect(line, 'a raw control character reached the log').not.toMatch(RAW_CONTROL)
    // Every line the logger prints starts with its own prefix or is a stack frame of a cause.
    expect(line, 'a request value started a log line').toMatch(/^(\[auth\]\[(error|warn|debug|cause)\]|\s+at |\s*$)/)
    expect(line.startsWith(FORGED_LINE)).toBe(false)
  }
}

describe('log forging through the default logger (item 5)', () => {
  it.each(LINE_BREAKERS.map((b) => [JSON.stringify(b), b]))(
    'cannot start a line with a %s in a callbackUrl from the body, query or cookie',
    async (_name, breaker) => {
      const console = captureConsole()
      const config = { secret: SECRET, trustHost: true, providers: [credentialsProvider()] } as AuthConfig
      const forged = `javascript:x${breaker}${FORGED_LINE}`
      const client = new Client(config)
      const csrfToken = await client.csrfToken()
      await client.send({ path: '/callback/credentials', body: { ...good, csrfToken, callbackUrl: forged } })
      await client.send({ path: '/signin', query: { callbackUrl: forged } })
      await Auth(
        authRequest({ path: '/auth/signin', cookies: { '__Secure-authjs.callback-url': forged } }),
        config,
      )
      expectNoForgedLine(console.lines())
    },
  )

  it('escapes control characters in provider ids, error messages, causes and debug metadata', () => {
    const console = captureConsole()
    const logger = createLogger({ debug: true })
    const cause = new Error(`upstream said${'\n'}${FORGED_LINE}`)
    logger.error(new Error(`Provider with id "x${'\r\n'}${FORGED_LINE}" not found`, { cause }))
    logger.debug(`adapter_getUser\u2028${FORGED_LINE}`, { id: `u\u0085${FORGED_LINE}`, note: 'bell\u0007' })
    logger.warn(`debug-enabled\n${FORGED_LINE}` as never)
    const lines = console.lines()
    expectNoForgedLine(lines)
    // Escaped, not dropped: the reader still sees what was sent.
    expect(lines.join('\n')).toContain(`x\\r\\n${FORGED_LINE}`)
    expect(lines.join('\n')).toContain(`\\u2028${FORGED_LINE}`)
  })

  it('escapes an unknown provider id taken from the request path', async () => {
    const console = captureConsole()
    const config = { secret: SECRET, trustHost: true, providers: [credentialsProvider()] } as AuthConfig
    await Auth(authRequest({ path: `/auth/signin/${encodeURIComponent(`x\n${FORGED_LINE}`)}`, method: 'POST', body: {} }), config)
    expectNoForgedLine(console.lines())
  })
})

describe('debug output of adapter calls (item 6)', () => {
  it('never shows a database session token, through sign-in, session reads and sign-out', async () => {
    const logger = spyLogger()
    const config = testConfig({ adapter: MemoryAdapter(createMemoryStore()), debug: true, logger })
    const client = new Client(config)
    await client.signIn(good)
    const token = client.jar.get(SESSION_COOKIE)!
    await client.session()
    await client.signOut()
    const debug = JSON.stringify(logger.debug.mock.calls)
    for (const method of ['adapter_createSession', 'adapter_getSessionAndUser', 'adapter_deleteSession']) {
      expect(debug).toContain(method)
    }
    expect(debug).not.toContain(token)
  })

  it('never prints one through the default debug logger either', async () => {
    const console = captureConsole()
    const config = { secret: SECRET, trustHost: true, debug: true, adapter: MemoryAdapter(createMemoryStore()), providers: [credentialsProvider()] } as unknown as AuthConfig
    const client = new Client(config)
    await client.signIn(good)
    const token = client.jar.get(SESSION_COOKIE)!
    await client.session()
    expect(console.lines().join('\n')).toContain('adapter_getSessionAndUser')
    expect(console.lines().join('\n')).not.toContain(token)
  })

  it('redacts account tokens and verification tokens in the arguments it logs', async () => {
    const logger = spyLogger()
    const adapter = instrumentAdapter(MemoryAdapter(createMemoryStore()), logger)
    const values = ['access-token-value', 'refresh-token-value', 'id-token-value', 'verification-token-value', 'updated-session-token']
    await adapter.createUser!({ id: 'u', email: 'alice@example.com', emailVerified: null })
    await adapter.linkAccount!({
      userId: 'u', type: 'oidc', provider: 'op', providerAccountId: 'a',
      access_token: values[0], refresh_token: values[1], id_token: values[2],
    } as never)
    await adapter.createVerificationToken!({ identifier: 'alice@example.com', token: values[3]!, expires: new Date() })
    await adapter.useVerificationToken!({ identifier: 'alice@example.com', token: values[3]! })
    await adapter.createSession!({ sessionToken: values[4]!, userId: 'u', expires: new Date(Date.now() + 60_000) })
    await adapter.updateSession!({ sessionToken: values[4]! })
    const debug = JSON.stringify(logger.debug.mock.calls)
    for (const value of values) expect(debug).not.toContain(value)
    expect(debug).toContain('alice@example.com')
    expect(debug).toContain('"provider":"op"')
  })
})

describe('a callbackUrl with characters outside Latin-1 (item 7)', () => {
  const ENCODED = `${ORIGIN}/dashboard/%E6%97%A5%E6%9C%AC?q=%C3%BC%20x`

  it('signs in and redirects to the percent-encoded URL', async () => {
    const config = testConfig()
    const client = new Client(config)
    const response = await client.signIn(good, { callbackUrl: '/dashboard/日本?q=ü x' })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(ENCODED)
    expect(setCookie(response, SESSION_COOKIE)?.value).toMatch(/^eyJ/)
    expect(config.logger.error).not.toHaveBeenCalled()
  })

  it('signs out to it, and answers JSON clients with it', async () => {
    const client = new Client(testConfig())
    await client.signIn(good)
    const response = await client.signOut({ callbackUrl: '/dashboard/日本?q=ü x' })
    expect(response.headers.get('location')).toBe(ENCODED)
    await client.signIn(good)
    const csrfToken = await client.csrfToken()
    const json = await client.send({
      path: '/signout',
      body: { csrfToken, callbackUrl: '/dashboard/日本?q=ü x' },
      headers: { 'X-Auth-Return-Redirect': '1' },
    })
    expect(await json.json()).toEqual({ url: ENCODED })
  })

  it('reaches a configured page whose path is not Latin-1, and keeps lone surrogates from throwing', async () => {
    const client = new Client(testConfig({ pages: { signIn: '/anmelden/ü' } }))
    const response = await client.send({ path: '/signin', query: { callbackUrl: '/x\ud800' } })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toMatch(/^\/anmelden\/%C3%BC\?callbackUrl=/)
  })

  it('encodes hosts as punycode, and control characters so they cannot split the header', () => {
    expect(encodeLocation('https://bücher.example/ü?x=ü#ü')).toBe('https://xn--bcher-kva.example/%C3%BC?x=%C3%BC#%C3%BC')
    expect(encodeLocation('/a\r\nSet-Cookie: x=1')).not.toMatch(/[\r\n ]/)
    expect(encodeLocation('relative/日本')).toBe('relative/%E6%97%A5%E6%9C%AC')
    expect(() => new Headers({ Location: encodeLocation('https://a.test/\ud800\u0000') })).not.toThrow()
  })

  it('leaves an already encoded URL as it is', async () => {
    const client = new Client(testConfig())
    const response = await client.signIn(good, { callbackUrl: '/a%20b?c=%E6%97%A5' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/a%20b?c=%E6%97%A5`)
  })
})

describe('config-driven attributes on the built-in pages (item 8)', () => {
  const pageWith = async (fields: Record<string, Record<string, unknown>>) => {
    const config = testConfig({
      providers: [Credentials({ credentials: fields, authorize: () => null }) as never],
    })
    return (await Auth(authRequest({ path: '/auth/signin' }), config)).text()
  }

  it('drops a javascript: formaction on a credentials field', async () => {
    const html = await pageWith({ password: { type: 'password', formaction: 'javascript:alert(document.cookie)' } })
    expect(html).toContain('name="password"')
    expect(html).not.toMatch(/javascript:/i)
    expect(html).not.toMatch(/formaction/i)
  })

  it.each([
    ['formaction', 'javascript:alert(1)'],
    ['FormAction', 'JavaScript:alert(1)'],
    ['formaction', ' \u0001javascript:alert(1)'],
    ['formaction', 'java\tscript:alert(1)'],
    ['formaction', 'java\nscript:alert(1)'],
    ['formaction', 'data:text/html,<script>alert(1)</script>'],
    ['src', 'vbscript:msgbox(1)'],
    ['action', 'javascript:alert(1)'],
    ['poster', 'javascript:alert(1)'],
    ['background', 'javascript:alert(1)'],
    ['srcset', '/ok.png 1x, javascript:alert(1) 2x'],
    ['ping', 'javascript:alert(1)'],
    ['xlink:href', 'javascript:alert(1)'],
    ['srcdoc', '<script>alert(1)</script>'],
  ])('drops %s=%j', (name, value) => {
    expect(attributes({ [name]: value }, new Set())).toBe('')
  })

  it('shows a theme or provider logo only from a safe source', async () => {
    const render = async (logo: string) =>
      (await Auth(authRequest({ path: '/auth/signin' }), testConfig({ theme: { logo } }))).text()
    expect(await render('javascript:alert(1)')).not.toContain('javascript:')
    expect(await render('data:text/html,<script>alert(1)</script>')).not.toContain('data:text/html')
    expect(await render('data:image/png;base64,AAAA')).toContain('src="data:image/png;base64,AAAA"')
    expect(await render('https://cdn.test/l.png')).toContain('src="https://cdn.test/l.png"')
  })

  it.each([
    ['formaction', '/custom/callback'],
    ['formaction', 'https://auth.example.com/callback'],
    ['href', 'mailto:help@example.com'],
    ['src', 'logo.png'],
    ['srcset', '/a.png 1x, https://cdn.example.com/b.png 2x'],
    ['autocomplete', 'javascript:is-just-text-here'],
  ])('keeps %s=%j', (name, value) => {
    expect(attributes({ [name]: value }, new Set())).toContain(`${name}="`)
  })
})

describe('pages that carry a CSRF token or cookies (item 9)', () => {
  it.each(['/auth/signin', '/auth/signout', '/auth/verify-request', '/auth/error', '/auth/error?error=Configuration'])(
    '%s is never stored by a cache',
    async (path) => {
      const [pathname, query] = path.split('?')
      const response = await Auth(
        authRequest({ path: pathname!, ...(query ? { query: Object.fromEntries(new URLSearchParams(query)) } : {}) }),
        testConfig(),
      )
      expect(response.headers.get('content-type')).toMatch(/^text\/html/)
      expect(response.headers.get('cache-control')).toMatch(/\bno-store\b/)
      expect(response.headers.get('cache-control')).toMatch(/\bprivate\b/)
    },
  )
})

describe('session-chunk cookies (item 10)', () => {
  it('answers a 64 KiB Cookie header of bogus chunk names with a small bounded number of deletions', async () => {
    const pairs: string[] = []
    let header = ''
    for (let i = 0; header.length < 64 * 1024 - 64; i++) {
      pairs.push(`${SESSION_COOKIE}.${i}=x`)
      header = pairs.join('; ')
    }
    const request = new Request(`${ORIGIN}/auth/session`, { headers: { cookie: header } })
    const response = await Auth(request, testConfig())
    expect(response.status).toBe(200)
    const deletions = setCookies(response).filter((c) => c.attributes['max-age'] === '0')
    expect(pairs.length).toBeGreaterThan(1000)
    expect(deletions.length).toBeGreaterThan(0)
    expect(deletions.length).toBeLessThanOrEqual(MAX_SESSION_CHUNKS + 1)
    for (const cookie of deletions) expect(cookie.name).toMatch(new RegExp(`^${SESSION_COOKIE.replace(/[.-]/g, '\\$&')}(\\.\\d+)?$`))
  })

  it('deletes only the chunks a session of ours could have, however the names are scattered', async () => {
    const jar = new CookieJar({
      [`${SESSION_COOKIE}.0`]: 'a',
      [`${SESSION_COOKIE}.1`]: 'b',
      [`${SESSION_COOKIE}.9999`]: 'c',
      [`${SESSION_COOKIE}.00`]: 'd',
      [`${SESSION_COOKIE}.1e3`]: 'e',
      [`${SESSION_COOKIE}.${MAX_SESSION_CHUNKS}`]: 'f',
    })
    const response = await Auth(authRequest({ path: '/auth/session', cookies: jar }), testConfig())
    const deleted = setCookies(response).filter((c) => c.attributes['max-age'] === '0').map((c) => c.name)
    expect(deleted.sort()).toEqual([`${SESSION_COOKIE}.0`, `${SESSION_COOKIE}.1`])
  })

  it('still reads a session written in chunks', async () => {
    const client = new Client(
      testConfig({ callbacks: { jwt: ({ token }) => ({ ...token, big: 'x'.repeat(9000) }) } }),
    )
    await client.signIn(good)
    expect([...client.jar.cookies.keys()].filter((n) => n.startsWith(`${SESSION_COOKIE}.`)).length).toBeGreaterThan(1)
    expect((await client.session()).body).toMatchObject({ user: { email: ALICE.email } })
  })
})

describe('the media type of a request body (item 11)', () => {
  const post = (contentType: string, body: string) =>
    parseRequest(
      new Request(`${ORIGIN}/auth/signout`, { method: 'POST', headers: { 'content-type': contentType }, body }),
      '/auth',
    )

  it.each([
    'text/plain; x=application/json',
    'text/plain;application/json',
    'application/jsonp',
    'application/json-seq',
    'text/application/json',
    'multipart/form-data; boundary=application/x-www-form-urlencoded',
    'text/plain; charset=application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded-evil',
  ])('ignores a body sent as %s', async (contentType) => {
    const body = contentType.includes('json') ? '{"csrfToken":"t"}' : 'csrfToken=t'
    expect((await post(contentType, body)).body).toBeUndefined()
  })

  it.each([
    ['application/json', '{"a":"1"}'],
    ['Application/JSON; charset=utf-8', '{"a":"1"}'],
    ['application/json ;charset=UTF-8', '{"a":"1"}'],
    ['application/x-www-form-urlencoded', 'a=1'],
    ['application/x-www-form-urlencoded;charset=UTF-8', 'a=1'],
  ])('parses a body sent as %s', async (contentType, body) => {
    expect((await post(contentType, body)).body).toEqual({ a: '1' })
  })

  it('does not sign out on a text/plain request that merely mentions application/json', async () => {
    const client = new Client(testConfig())
    await client.signIn(good)
    const csrfToken = await client.csrfToken()
    const response = await Auth(
      new Request(`${ORIGIN}/auth/signout`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; x=application/json', cookie: client.jar.header() },
        body: JSON.stringify({ csrfToken, callbackUrl: '/bye' }),
      }),
      client.config as AuthConfig,
    )
    expect(response.headers.get('location')).not.toBe(`${ORIGIN}/bye`)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect((await client.session()).body).toMatchObject({ user: { email: ALICE.email } })
  })
})
