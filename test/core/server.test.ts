/**
 * The in-process session read, sign-in, sign-out and update (`core/server.ts`) that the framework
 * integrations call from the application's own server code: the same answers as the routes over
 * HTTP (`Auth`), no web `Request` built on the way, and, in place of the double-submit token, the
 * request's origin checked (a cross-site form must not sign a browser in or out).
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth } from '../../core/auth.js'
import { CredentialsSignin, MissingCSRF, RequestError, UntrustedHost } from '../../core/errors.js'
import { encode } from '../../core/jwt.js'
import { readSession, signIn, signOut, updateSession, type ServerRequest } from '../../core/server.js'
import type { AuthConfig } from '../../core/types.js'
import GitHub from '../../providers/github.js'
import { DEAD_SESSION_KINDS, SESSION_COOKIE as VICTIM_COOKIE, VICTIM, victimApp } from '../fixtures/dead-sessions.js'
import { ALICE, authRequest, Client, credentialsProvider, ORIGIN, SECRET, setCookies, testConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const ATTACKER = 'https://attacker.example'

/** The application's request: a same-origin form post from a browser, unless `headers` say otherwise. */
function appRequest(cookie: string | null = null, headers: Record<string, string> = { origin: ORIGIN }): ServerRequest {
  return { origin: ORIGIN, cookie, headers: new Headers({ 'user-agent': 'test-browser', ...headers }) }
}

const cookieHeader = (cookies: readonly { name: string; value: string }[]) =>
  cookies.map(({ name, value }) => `${name}=${encodeURIComponent(value)}`).join('; ')

async function jwtCookie(token: Record<string, unknown>, secret = SECRET): Promise<string> {
  return `${SESSION_COOKIE}=${await encode({ token, secret, salt: SESSION_COOKIE })}`
}

/** The session route over HTTP: its JSON body (`null` for none) and the names of the cookies it sets. */
async function sessionOverHttp(config: AuthConfig, cookie: string | null) {
  const response = await Auth(authRequest({ path: '/auth/session', ...(cookie ? { headers: { cookie } } : {}) }), config)
  const body = (await response.json()) as Record<string, unknown> | null
  return { session: body && Object.keys(body).length > 0 ? body : null, cookies: setCookies(response).map((c) => c.name) }
}

/** Counts the web `Request`s built while `run` runs. */
async function requestsBuiltBy(run: () => Promise<unknown>): Promise<number> {
  const Original = globalThis.Request
  let built = 0
  globalThis.Request = class extends Original {
    constructor(...args: ConstructorParameters<typeof Request>) {
      super(...args)
      built++
    }
  }
  try {
    await run()
  } finally {
    globalThis.Request = Original
  }
  return built
}

afterEach(() => {
  vi.useRealTimers()
})

describe('readSession: the session route in process', () => {
  it.each([
    ['no cookie', async () => null],
    ['a live JWT', () => jwtCookie({ sub: ALICE.id, name: ALICE.name, email: ALICE.email })],
    ['a JWT sealed with another secret', () => jwtCookie({ sub: 'm', name: 'Mallory' }, `${SECRET}-other`)],
    ['a JWT past its exp', () => jwtCookie({ sub: ALICE.id, name: ALICE.name, exp: Math.floor(Date.now() / 1000) - 10 })],
    ['a cookie that is not a JWT', async () => `${SESSION_COOKIE}=garbage`],
  ])('answers as GET /session does, for %s', async (_name, cookieOf) => {
    const config = testConfig()
    const cookie = await cookieOf()
    const overHttp = await sessionOverHttp(config, cookie)
    const read = await readSession(appRequest(cookie), config)
    expect(read.session).toEqual(overHttp.session)
    expect(read.cookies.map((c) => c.name)).toEqual(overHttp.cookies)
  })

  it('refreshes a session past updateAge, as the route does, and hands back the cookie to set', async () => {
    const config = testConfig({ session: { updateAge: 60 } })
    // The token is sealed two minutes ago (encode stamps iat and exp with the clock).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 120_000 })
    const cookie = await jwtCookie({ sub: ALICE.id, name: ALICE.name })
    vi.useRealTimers()
    const read = await readSession(appRequest(cookie), config)
    expect(read.session?.user?.name).toBe(ALICE.name)
    expect(read.cookies.map((c) => c.name)).toEqual((await sessionOverHttp(config, cookie)).cookies)
    expect(read.cookies.map((c) => c.name)).toContain(SESSION_COOKIE)
  })

  it('reads a database session, and none from a row past its expiry', async () => {
    const store = createMemoryStore()
    const config = testConfig({ adapter: MemoryAdapter(store) })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const cookie = `${SESSION_COOKIE}=${client.jar.get(SESSION_COOKIE)}`
    const read = await readSession(appRequest(cookie), config)
    expect(read.session).toEqual((await sessionOverHttp(config, cookie)).session)
    expect(read.session?.user?.name).toBe(ALICE.name)
    for (const row of store.sessions.values()) row.expires = new Date(Date.now() - 1000)
    expect((await readSession(appRequest(cookie), config)).session).toBeNull()
  })

  it('runs the session callback as for the client', async () => {
    const session = vi.fn(({ session: s, token }) => ({ ...s, subject: token.sub }))
    const config = testConfig({ callbacks: { session } })
    const read = await readSession(appRequest(await jwtCookie({ sub: ALICE.id, name: ALICE.name })), config)
    expect(read.session).toMatchObject({ subject: ALICE.id })
    expect(session).toHaveBeenCalledTimes(1)
  })

  it.each(DEAD_SESSION_KINDS.map((kind) => [kind.name, kind] as const))(
    'reads no one from %s, as the session route (the one authority) does',
    async (_name, kind) => {
      const { store, config } = victimApp(kind)
      const live = `${VICTIM_COOKIE}=${await kind.live(store)}`
      expect((await readSession(appRequest(live), config)).session?.user?.name).toBe(VICTIM.name)
      const dead = `${VICTIM_COOKIE}=${await kind.kill(store, config, live.slice(VICTIM_COOKIE.length + 1))}`
      const read = await readSession(appRequest(dead), config)
      expect(read.session).toBeNull()
      expect(read.session).toEqual((await sessionOverHttp(config, dead)).session)
    },
  )

  it('builds no web Request', async () => {
    const config = testConfig()
    const cookie = await jwtCookie({ sub: ALICE.id, name: ALICE.name })
    await readSession(appRequest(cookie), config)
    expect(await requestsBuiltBy(() => readSession(appRequest(cookie), config))).toBe(0)
  })

  it('throws UntrustedHost, and the configuration error, each with its own class', async () => {
    await expect(readSession(appRequest(), testConfig({ trustHost: false }))).rejects.toBeInstanceOf(UntrustedHost)
    await expect(readSession(appRequest(), { providers: [credentialsProvider()], secret: 'short' })).rejects.toThrow(/secret/)
  })
})

describe('signIn: the sign-in route in process', () => {
  const good = { username: 'alice', password: 'wonderland' }

  it('signs in with credentials: the redirect and session cookie of POST /callback/credentials, no CSRF cookie', async () => {
    const config = testConfig()
    const answer = await signIn(appRequest(), config, { providerId: 'credentials', redirectTo: '/dashboard', fields: good })
    expect(answer.error).toBeUndefined()
    expect(answer.redirect).toBe(`${ORIGIN}/dashboard`)
    const names = answer.cookies.map((c) => c.name)
    expect(names).toEqual(expect.arrayContaining([SESSION_COOKIE, '__Secure-authjs.callback-url']))
    expect(names.some((name) => name.includes('csrf'))).toBe(false)
    const read = await readSession(appRequest(cookieHeader(answer.cookies)), config)
    expect(read.session?.user?.name).toBe(ALICE.name)
  })

  it('reports a wrong password as POST /callback/credentials does: CredentialsSignin with its code, and the page that says so', async () => {
    const config = testConfig()
    const overHttp = await new Client(config).signIn({ username: 'alice', password: 'nope' })
    const answer = await signIn(appRequest(), config, {
      providerId: 'credentials',
      redirectTo: '/',
      fields: { username: 'alice', password: 'nope' },
    })
    expect(answer.error).toBeInstanceOf(CredentialsSignin)
    expect((answer.error as CredentialsSignin).code).toBe('credentials')
    expect(answer.redirect).toBe(overHttp.headers.get('location'))
    expect(answer.cookies.some((c) => c.name === SESSION_COOKIE)).toBe(false)
  })

  it("gives authorize the route's request: its URL, the application's request headers and the fields", async () => {
    let seen: { url: string; agent: string | null; body: unknown } | undefined
    const config = testConfig({
      providers: [
        credentialsProvider(async (credentials, request?: unknown) => {
          const web = request as Request
          seen = { url: web.url, agent: web.headers.get('user-agent'), body: await web.json() }
          return credentials.password === 'wonderland' ? { ...ALICE } : null
        }),
      ],
    })
    await signIn(appRequest(), config, { providerId: 'credentials', redirectTo: '/', fields: good })
    expect(seen).toEqual({
      url: `${ORIGIN}/auth/callback/credentials`,
      agent: 'test-browser',
      body: { ...good, callbackUrl: '/' },
    })
  })

  it('builds no web Request when authorize does not read it', async () => {
    const config = testConfig()
    await signIn(appRequest(), config, { providerId: 'credentials', redirectTo: '/', fields: good })
    const built = await requestsBuiltBy(() => signIn(appRequest(), config, { providerId: 'credentials', redirectTo: '/', fields: good }))
    expect(built).toBe(0)
  })

  it.each([
    ['an Origin of another site', { origin: ATTACKER }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site (a sibling subdomain)', { 'sec-fetch-site': 'same-site' }],
  ])('refuses a request with %s as MissingCSRF, before authorize runs (login CSRF)', async (_name, headers) => {
    const authorize = vi.fn(() => ({ ...ALICE }))
    const config = testConfig({ providers: [credentialsProvider(authorize)] })
    const answer = await signIn(appRequest(null, headers), config, { providerId: 'credentials', redirectTo: '/', fields: good })
    expect(answer.error).toBeInstanceOf(MissingCSRF)
    expect(answer.redirect).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(answer.cookies).toEqual([])
    expect(authorize).not.toHaveBeenCalled()
    expect(config.logger.error.mock.calls.map(([error]) => (error as Error).name)).toContain('MissingCSRF')
  })

  it("accepts the framework's own origin, and a request no browser sent (neither Origin nor Sec-Fetch-Site)", async () => {
    const config = testConfig()
    const input = { providerId: 'credentials', redirectTo: '/', fields: good }
    const framework = { ...appRequest(null, { origin: 'http://internal:3000' }), origins: ['http://internal:3000'] }
    expect((await signIn(framework, config, input)).error).toBeUndefined()
    expect((await signIn(appRequest(null, {}), config, input)).error).toBeUndefined()
  })

  it('starts an OAuth sign-in with the authorization parameters, as POST /signin/<provider> does', async () => {
    const config = testConfig({ providers: [GitHub({ clientId: 'client', clientSecret: 'secret' })] })
    const answer = await signIn(appRequest(), config, {
      providerId: 'github',
      redirectTo: '/after',
      authorizationParams: { login: 'alice' },
    })
    const authorize = new URL(answer.redirect)
    expect(authorize.origin + authorize.pathname).toBe('https://github.com/login/oauth/authorize')
    expect(authorize.searchParams.get('login')).toBe('alice')
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${ORIGIN}/auth/callback/github`)
    expect(answer.cookies.length).toBeGreaterThan(0)
    const refused = await signIn(appRequest(null, { origin: ATTACKER }), config, { providerId: 'github', redirectTo: '/' })
    expect(refused.error).toBeInstanceOf(MissingCSRF)
    expect(refused.cookies).toEqual([])
  })

  it('answers the sign-in page for no provider or an unknown one', async () => {
    const answer = await signIn(appRequest(), testConfig(), { providerId: 'nope', redirectTo: '/x' })
    expect(answer).toEqual({ redirect: `${ORIGIN}/auth/signin?callbackUrl=%2Fx`, cookies: [] })
  })

  it('throws RequestError for a redirectTo that is no http(s) URL, as the route answers 400', async () => {
    const config = testConfig()
    const input = { providerId: 'credentials', redirectTo: 'javascript:alert(1)', fields: good }
    await expect(signIn(appRequest(), config, input)).rejects.toBeInstanceOf(RequestError)
  })
})

describe('signOut and updateSession in process', () => {
  async function signedIn(config: AuthConfig) {
    const answer = await signIn(appRequest(), config, {
      providerId: 'credentials',
      redirectTo: '/',
      fields: { username: 'alice', password: 'wonderland' },
    })
    return cookieHeader(answer.cookies)
  }

  it('signs out: the session cookie cleared, events.signOut fired, the redirect of POST /signout', async () => {
    const events = { signOut: vi.fn() }
    const config = testConfig({ events })
    const answer = await signOut(appRequest(await signedIn(config)), config, { redirectTo: '/goodbye' })
    expect(answer.error).toBeUndefined()
    expect(answer.redirect).toBe(`${ORIGIN}/goodbye`)
    const cleared = answer.cookies.find((c) => c.name === SESSION_COOKIE)
    expect(cleared?.value).toBe('')
    expect(events.signOut).toHaveBeenCalledWith({ token: expect.objectContaining({ sub: ALICE.id }) })
  })

  it('deletes the database session row', async () => {
    const store = createMemoryStore()
    const config = testConfig({ adapter: MemoryAdapter(store) })
    const cookie = await signedIn(config)
    expect(store.sessions.size).toBe(1)
    await signOut(appRequest(cookie), config, { redirectTo: '/' })
    expect(store.sessions.size).toBe(0)
  })

  it('refuses a cross-site sign-out as MissingCSRF and keeps the session', async () => {
    const events = { signOut: vi.fn() }
    const config = testConfig({ events })
    const answer = await signOut(appRequest(await signedIn(config), { origin: ATTACKER }), config, { redirectTo: '/' })
    expect(answer.error).toBeInstanceOf(MissingCSRF)
    expect(answer.cookies).toEqual([])
    expect(events.signOut).not.toHaveBeenCalled()
  })

  it("updates the session through the jwt callback's update trigger, and refuses a cross-site update", async () => {
    const jwt = vi.fn(({ token, trigger, session }) => (trigger === 'update' ? { ...token, name: session.name } : token))
    const config = testConfig({ callbacks: { jwt } })
    const cookie = await signedIn(config)
    const updated = await updateSession(appRequest(cookie), config, { name: 'Alice II' })
    expect(updated.error).toBeUndefined()
    expect(updated.session?.user?.name).toBe('Alice II')
    expect(updated.cookies.map((c) => c.name)).toContain(SESSION_COOKIE)
    const refused = await updateSession(appRequest(cookie, { origin: ATTACKER }), config, { name: 'Mallory' })
    expect(refused).toEqual({ session: null, cookies: [], error: expect.any(MissingCSRF) })
    expect(jwt).not.toHaveBeenCalledWith(expect.objectContaining({ session: { name: 'Mallory' } }))
  })

  it('answers a null session to an update without a session', async () => {
    expect((await updateSession(appRequest(), testConfig(), { name: 'x' })).session).toBeNull()
  })
})
