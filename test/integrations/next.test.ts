/**
 * `authchart/next` in process, without a Next server: the route handlers and `auth` as middleware
 * take `NextRequest`s as Next hands them over on a self-hosted `next start` (its own URL names the
 * listening host, `localhost:3000`; the `Host` header names the one the browser asked for). The
 * server actions and `auth()` in server components need Next's request scope: test/apps/next.test.ts
 * drives them in the built example app.
 */
import { encode } from '@auth/core/jwt'
import { NextRequest } from 'next/server.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import NextAuth, { type NextAuthConfig } from '../../integrations/next/index.js'
import { credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { stepUp } from '../../core/step-up.js'

const NEXT_URL = 'http://localhost:3000'
const HOST = 'app.example:8443'

function config(overrides: Partial<NextAuthConfig> = {}): NextAuthConfig {
  return { secret: SECRET, trustHost: true, logger: spyLogger(), providers: [credentialsProvider()], stepUp: stepUp(), ...overrides }
}

const request = (path: string, headers: Record<string, string> = {}) =>
  new NextRequest(`${NEXT_URL}${path}`, { headers: { host: HOST, ...headers } })

async function sessionCookie(name = 'Alice'): Promise<string> {
  const value = await encode({ token: { name, sub: 'alice' }, secret: SECRET, salt: 'authjs.session-token' })
  return `authjs.session-token=${value}`
}

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('authchart/next route handlers', () => {
  it('serve /api/auth/* for the Host the browser asked for, not the host Next names its requests after', async () => {
    const { handlers } = NextAuth(config())
    const response = await handlers.GET(request('/api/auth/signin'))
    expect(response.status).toBe(200)
    const page = await response.text()
    expect(page).toContain(`action="http://${HOST}/api/auth/callback/credentials"`)
    expect(page).not.toContain('localhost:3000')
  })

  it('do not follow a forged X-Forwarded-Host or -Proto, with AUTH_TRUST_HOST set', async () => {
    vi.stubEnv('AUTH_TRUST_HOST', 'true')
    const { handlers } = NextAuth(config())
    const forged = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }
    const response = await handlers.GET(request('/api/auth/signin', forged))
    const page = await response.text()
    expect(page).not.toContain('evil.example')
    expect(page).toContain(`action="http://${HOST}/api/auth/callback/credentials"`)
  })

  it.each([['AUTH_TRUST_PROXY', 'true'], ['VERCEL', '1']])(
    'follow X-Forwarded-Host and -Proto when the deployment says a proxy sets them (%s=%s)',
    async (name, value) => {
      vi.stubEnv(name, value)
      const { handlers } = NextAuth(config())
      const forwarded = { 'x-forwarded-host': 'public.example', 'x-forwarded-proto': 'https' }
      const page = await (await handlers.GET(request('/api/auth/signin', forwarded))).text()
      expect(page).toContain('action="https://public.example/api/auth/callback/credentials"')
    },
  )

  it('answer for AUTH_URL whatever the Host, with its path as the base path (as next-auth)', async () => {
    vi.stubEnv('AUTH_URL', 'https://pinned.example/custom/auth')
    const { handlers } = NextAuth(config())
    const page = await (await handlers.GET(request('/custom/auth/signin', { host: 'evil.example' }))).text()
    expect(page).toContain('action="https://pinned.example/custom/auth/callback/credentials"')
    expect(page).not.toContain('evil.example')
  })

  it('answer 400 to a malformed Host, never a 500', async () => {
    const { handlers } = NextAuth(config())
    const response = await handlers.GET(request('/api/auth/csrf', { host: 'a@evil.example' }))
    expect(response.status).toBe(400)
    expect(await response.json()).toBe('Bad request.')
  })

  it('keep the CSRF check: a credentials post without the token is refused', async () => {
    const { handlers } = NextAuth(config())
    const post = new NextRequest(`${NEXT_URL}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { host: HOST, origin: 'https://attacker.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'alice', password: 'wonderland' }),
    })
    const response = await handlers.POST(post)
    expect(response.headers.get('location')).toContain('error=MissingCSRF')
    expect(response.headers.getSetCookie().join()).not.toContain('authjs.session-token=ey')
  })
})

describe('authchart/next auth() as middleware', () => {
  const protect: NonNullable<NextAuthConfig['callbacks']>['authorized'] = ({ request, auth }) =>
    !request.nextUrl.pathname.startsWith('/protected') || !!auth

  it('sends a visitor without a session to the sign-in page, with the requested page on the Host the browser asked for', async () => {
    const { auth } = NextAuth(config({ callbacks: { authorized: protect } }))
    const response = await auth(request('/protected?tab=2', { 'x-forwarded-host': 'evil.example' }))
    expect(response.status).toBe(307)
    const location = new URL(response.headers.get('location')!)
    expect(location.origin).toBe(`http://${HOST}`)
    expect(location.pathname).toBe('/api/auth/signin')
    // next-auth writes Next's own URL: http://localhost:3000/protected?tab=2, lost after sign-in.
    expect(location.searchParams.get('callbackUrl')).toBe(`http://${HOST}/protected?tab=2`)
  })

  it('uses pages.signIn for that redirect, and lets the sign-in page itself through', async () => {
    const { auth } = NextAuth(config({ pages: { signIn: '/login' }, callbacks: { authorized: ({ auth }) => !!auth } }))
    const response = await auth(request('/dashboard'))
    expect(new URL(response.headers.get('location')!).pathname).toBe('/login')
    expect((await auth(request('/login'))).headers.get('x-middleware-next')).toBe('1')
  })

  it('lets a request with a session minted by next-auth v5 through', async () => {
    const { auth } = NextAuth(config({ callbacks: { authorized: protect } }))
    const response = await auth(request('/protected', { cookie: await sessionCookie() }))
    expect(response.status).toBe(200)
    expect(response.headers.get('x-middleware-next')).toBe('1')
  })

  it('gives a wrapped middleware req.auth, and sends what it returns', async () => {
    const { auth } = NextAuth(config())
    const seen: unknown[] = []
    const wrapped = auth((req) => {
      seen.push(req.auth?.user?.name ?? null)
      if (!req.auth) return Response.json({ message: 'Not signed in' }, { status: 401 })
    })
    expect((await wrapped(request('/api/me'), { params: Promise.resolve({}) })).status).toBe(401)
    const signedIn = await wrapped(request('/api/me', { cookie: await sessionCookie() }), { params: Promise.resolve({}) })
    expect(signedIn.headers.get('x-middleware-next')).toBe('1')
    expect(seen).toEqual([null, 'Alice'])
  })

  it('sends the Response an authorized callback returns', async () => {
    const { auth } = NextAuth(config({ callbacks: { authorized: () => Response.json('nope', { status: 401 }) } }))
    const response = await auth(request('/anything'))
    expect(response.status).toBe(401)
    expect(await response.json()).toBe('nope')
  })

  it('calls a config function with the request', async () => {
    const seen: string[] = []
    const base = config({ callbacks: { authorized: protect } })
    const { auth } = NextAuth((req) => {
      seen.push(req ? new URL(req.url).pathname : 'none')
      return base
    })
    await auth(request('/protected'))
    expect(seen).toEqual(['/protected'])
  })

  it('fails closed, with the reason logged, when the session cannot be read (no secret)', async () => {
    const logger = spyLogger()
    const { auth } = NextAuth({ logger, providers: [credentialsProvider()], callbacks: { authorized: protect } })
    const response = await auth(request('/protected', { cookie: await sessionCookie() }))
    expect(response.status).toBe(307)
    expect(logger.error).toHaveBeenCalled()
  })
})

describe('authchart/next auth() in the Pages Router', () => {
  it('reads the session from a Node request, auth(req, res)', async () => {
    const { auth } = NextAuth(config())
    const appended: string[] = []
    const session = await auth(
      { headers: { host: HOST, cookie: await sessionCookie() } },
      { appendHeader: (_name: string, value: string | string[]) => appended.push(String(value)) },
    )
    expect(session?.user?.name).toBe('Alice')
  })
})

describe('authchart/next requireRecentAuth', () => {
  const staleCookie = async () => {
    const hourAgo = Math.floor(Date.now() / 1000) - 3600
    const value = await encode({ token: { name: 'Alice', sub: 'alice', fva: { pwd: hourAgo } }, secret: SECRET, salt: 'authjs.session-token' })
    return `authjs.session-token=${value}`
  }
  const reauthentication = `http://${HOST}/api/auth/reauthenticate?callbackUrl=${encodeURIComponent('/settings?tab=keys')}&factors=hwk+otp+pwd+email+fed`

  it('with the request: 303 for a stale page request, back to its path on the Host the browser asked for', async () => {
    const { requireRecentAuth } = NextAuth(config())
    const answer = await requireRecentAuth(request('/settings?tab=keys', { cookie: await staleCookie(), accept: 'text/html' }), { maxAge: 600 })
    expect(answer).toBeInstanceOf(Response)
    expect((answer as Response).status).toBe(303)
    expect((answer as Response).headers.get('location')).toBe(reauthentication)
  })

  it('with the request: 401 with WWW-Authenticate and the URL for a stale fetch', async () => {
    const { requireRecentAuth } = NextAuth(config())
    const answer = (await requireRecentAuth(request('/settings?tab=keys', { cookie: await staleCookie(), accept: 'application/json' }))) as Response
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_user_authentication", max_age=600, factors="hwk otp pwd email fed", url="${reauthentication}"`,
    )
    expect(await answer.json()).toMatchObject({ error: 'insufficient_user_authentication', url: reauthentication })
  })

  it('with the request: lets a fresh session through, and sends a signed-out page request to sign in', async () => {
    const { requireRecentAuth } = NextAuth(config())
    const now = Math.floor(Date.now() / 1000)
    const fresh = await encode({ token: { name: 'Alice', sub: 'alice', fva: { pwd: now } }, secret: SECRET, salt: 'authjs.session-token' })
    expect(await requireRecentAuth(request('/settings', { cookie: `authjs.session-token=${fresh}` }))).toEqual({ ok: true, verifiedAt: now })
    const signedOut = (await requireRecentAuth(request('/settings', { accept: 'text/html' }))) as Response
    expect(signedOut.headers.get('location')).toBe(`http://${HOST}/api/auth/signin?callbackUrl=%2Fsettings`)
  })

  it.each(['//evil.example/x', '/\\evil.example', 'https://evil.example/', 'settings', '', 'javascript:alert(1)'])(
    'in a server component, refuses returnTo %j before reading the request (no open redirect)',
    async (returnTo) => {
      const { requireRecentAuth } = NextAuth(config())
      await expect(requireRecentAuth({ returnTo })).rejects.toThrow(new TypeError('requireRecentAuth: returnTo must be a path of this site, such as "/settings"'))
    },
  )
})
