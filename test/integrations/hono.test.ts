/**
 * `authchart/hono` in process (`app.request`): the `@hono/auth-js` surface over `Auth`, the URL
 * rule (a forged `X-Forwarded-Host` is not followed unless `AUTH_TRUST_PROXY=true`), and the
 * session `verifyAuth()` reads. test/apps/hono.test.ts runs the example app over HTTP.
 */
import { encode } from '@auth/core/jwt'
import { Hono } from 'hono'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { authHandler, initAuthConfig, requireRecentAuth, verifyAuth, type AuthConfig } from '../../integrations/hono/index.js'
import { credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

const HOST = 'app.example:8443'

function appWith(config: AuthConfig, mount = '/api/auth/*') {
  const app = new Hono()
  app.use('*', initAuthConfig(() => config))
  app.use(mount, authHandler())
  app.use('/api/*', verifyAuth())
  app.get('/api/protected', (c) => {
    const { session, token } = c.get('authUser')
    return c.json({ name: session.user?.name, subject: token?.sub })
  })
  return app
}

const config = (overrides: Partial<AuthConfig> = {}): AuthConfig => ({
  secret: SECRET,
  secondFactor: totp(),
  stepUp: stepUp(),
  trustHost: true,
  logger: spyLogger(),
  providers: [credentialsProvider()],
  ...overrides,
})

const get = (app: Hono, path: string, headers: Record<string, string> = {}) =>
  app.request(`http://${HOST}${path}`, { headers: { host: HOST, ...headers } })

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('authchart/hono', () => {
  it('serves the auth routes under the path authHandler() is mounted at when the config names none', async () => {
    const page = await (await get(appWith(config()), '/api/auth/signin')).text()
    expect(page).toContain(`action="http://${HOST}/api/auth/callback/credentials"`)
  })

  it('answers 401 without a session, and gives the route the session and its token', async () => {
    const app = appWith(config())
    expect((await get(app, '/api/protected')).status).toBe(401)
    const value = await encode({ token: { name: 'Alice', sub: 'alice' }, secret: SECRET, salt: 'authjs.session-token' })
    const response = await get(app, '/api/protected', { cookie: `authjs.session-token=${value}` })
    expect(await response.json()).toEqual({ name: 'Alice', subject: 'alice' })
  })

  it('answers 401 to a session sealed with another secret', async () => {
    const value = await encode({ token: { name: 'Mallory', sub: 'm' }, secret: `${SECRET}-other`, salt: 'authjs.session-token' })
    expect((await get(appWith(config()), '/api/protected', { cookie: `authjs.session-token=${value}` })).status).toBe(401)
  })

  it('does not follow a forged X-Forwarded-Host (@hono/auth-js always does)', async () => {
    vi.stubEnv('AUTH_TRUST_HOST', 'true')
    const response = await get(appWith(config()), '/api/auth/signin', { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' })
    const page = await response.text()
    expect(page).not.toContain('evil.example')
    expect(page).toContain(`action="http://${HOST}/api/auth/callback/credentials"`)
  })

  it('follows X-Forwarded-Host and -Proto with AUTH_TRUST_PROXY=true', async () => {
    vi.stubEnv('AUTH_TRUST_PROXY', 'true')
    const forwarded = { 'x-forwarded-host': 'public.example', 'x-forwarded-proto': 'https' }
    const page = await (await get(appWith(config()), '/api/auth/signin', forwarded)).text()
    expect(page).toContain('action="https://public.example/api/auth/callback/credentials"')
  })

  it('answers for AUTH_URL whatever the Host, with its path as the base path', async () => {
    vi.stubEnv('AUTH_URL', 'https://pinned.example/api/auth')
    const page = await (await get(appWith(config()), '/api/auth/signin', { host: 'evil.example' })).text()
    expect(page).toContain('action="https://pinned.example/api/auth/callback/credentials"')
    expect(page).not.toContain('evil.example')
  })

  it('answers 400 to a malformed Host', async () => {
    const response = await get(appWith(config()), '/api/auth/csrf', { host: 'a@evil.example' })
    expect(response.status).toBe(400)
  })

  it("answers 400, not 500, to a malformed or missing Host on the app's own routes (verifyAuth, getAuthUser)", async () => {
    const logger = spyLogger()
    const app = appWith(config({ logger }))
    const value = await encode({ token: { name: 'Alice', sub: 'alice' }, secret: SECRET, salt: 'authjs.session-token' })
    const forged = await get(app, '/api/protected', { host: 'a@evil.example', cookie: `authjs.session-token=${value}` })
    expect(forged.status).toBe(400)
    expect(await forged.json()).toBe('Bad request.')
    // app.request(path) without headers: a web Request has no Host header at all.
    const bare = await app.request('/api/protected', { headers: { cookie: `authjs.session-token=${value}` } })
    expect(bare.status).toBe(400)
    expect(logger.error.mock.calls.map(([error]) => (error as Error).name)).toEqual(['RequestError', 'RequestError'])
    // The session was not read for either: nothing of Alice's reached the answer.
    expect(forged.headers.getSetCookie()).toEqual([])
  })

  it('keeps the CSRF check: a cross-site credentials post without the token is refused', async () => {
    const response = await appWith(config()).request(`http://${HOST}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { host: HOST, origin: 'https://attacker.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'alice', password: 'wonderland' }),
    })
    expect(response.headers.get('location')).toContain('error=MissingCSRF')
    expect(response.headers.getSetCookie().join()).not.toContain('authjs.session-token=ey')
  })
})

describe('authchart/hono: requireRecentAuth', () => {
  const SESSION = 'authjs.session-token'
  const recentApp = () => {
    const app = new Hono()
    app.use('*', initAuthConfig(() => settingsConfig))
    app.use('/api/auth/*', authHandler())
    app.get('/settings', requireRecentAuth({ maxAge: 60 }), (c) => c.json({ verifiedAt: c.get('recentAuth').verifiedAt }))
    return app
  }
  const settingsConfig = config({ basePath: '/api/auth' })
  const cookieProvenAgo = async (seconds: number) => {
    const token = { sub: 'alice', name: 'Alice', fva: { pwd: Math.floor(Date.now() / 1000) - seconds } }
    return `${SESSION}=${await encode({ token, secret: SECRET, salt: SESSION })}`
  }
  const reauthentication = `http://${HOST}/api/auth/reauthenticate?callbackUrl=${encodeURIComponent('/settings?tab=keys')}&factors=hwk+otp+pwd+email+fed`

  it('lets a request through with a proof younger than maxAge, and gives its time to the route', async () => {
    const response = await get(recentApp(), '/settings', { cookie: await cookieProvenAgo(5) })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { verifiedAt: number }).verifiedAt).toBeGreaterThan(Date.now() / 1000 - 10)
  })

  it('sends a page request with an old proof to the re-authentication page under the configured base path', async () => {
    const response = await get(recentApp(), '/settings?tab=keys', { cookie: await cookieProvenAgo(3600), accept: 'text/html' })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe(reauthentication)
  })

  it('answers a fetch with an old proof with 401, WWW-Authenticate and the URL to open', async () => {
    const response = await get(recentApp(), '/settings?tab=keys', { cookie: await cookieProvenAgo(3600), accept: 'application/json' })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_user_authentication", max_age=60, factors="hwk otp pwd email fed", url="${reauthentication}"`,
    )
    expect(await response.json()).toMatchObject({ error: 'insufficient_user_authentication', maxAge: 60, url: reauthentication })
  })

  it('answers a signed-out fetch with 401 login_required and the sign-in URL', async () => {
    const response = await get(recentApp(), '/settings', { accept: 'application/json' })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({
      error: 'login_required',
      url: `http://${HOST}/api/auth/signin?callbackUrl=${encodeURIComponent('/settings')}`,
    })
  })
})
