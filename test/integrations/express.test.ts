/**
 * The Express integration over real HTTP, in-process: the request-URL rule, the mount point as
 * base path, bodies with and without the app's own body parsers, cookies, errors and getSession.
 * (test/apps/express.test.ts runs the same integration as a user's app, from the packed package.)
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express, { type Express } from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ExpressAuth, getSession, requireRecentAuth } from '../../integrations/express/index.js'
import { UntrustedHost } from '../../core/errors.js'
import { CookieJar, credentialsProvider, SECRET } from '../fixtures/http.js'
import { attackTargetConfig, originAttackSuite, staleSessionCookie } from './origin-attacks.js'
import { recentAuthSuite } from './recent-auth-suite.js'

const makeConfig = attackTargetConfig

async function listen(app: Express): Promise<{ server: Server; origin: string; port: number }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  const { port } = server.address() as AddressInfo
  return { server, origin: `http://127.0.0.1:${port}`, port }
}

const servers: Server[] = []
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** An app in the documented shape: auth routes, `res.locals.session`, a protected page. */
async function documentedApp(mount: string, options: { parsers?: boolean; listHosts?: boolean } = {}) {
  const config = makeConfig({ listHosts: options.listHosts ?? false })
  const app = express()
  if (options.parsers) app.use(express.json(), express.urlencoded({ extended: true }))
  app.use(mount, ExpressAuth(config))
  app.use(async (req, res, next) => {
    res.locals.session = await getSession(req, config)
    next()
  })
  app.get('/settings', requireRecentAuth(config, { maxAge: 60 }), (_req, res) => {
    res.json({ ok: true })
  })
  app.get('/account', (_req, res) => {
    if (!res.locals.session?.user) return res.redirect('/login')
    res.send(`Hello ${res.locals.session.user.name}`)
  })
  const running = await listen(app)
  servers.push(running.server)
  return running
}

async function signIn(origin: string, base: string, jar: CookieJar, json = false) {
  const csrf = await fetch(`${origin}${base}/csrf`)
  jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const fields = { csrfToken, username: 'alice', password: 'wonderland' }
  const response = await fetch(`${origin}${base}/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
    body: json ? JSON.stringify(fields) : new URLSearchParams(fields),
  })
  jar.store(response)
  return response
}

describe('Express: the request URL', () => {
  let port = 0
  beforeAll(async () => {
    port = (await documentedApp('/auth', { listHosts: true })).port
  })
  originAttackSuite({ port: () => port, oauthProvider: 'op', staleSession: () => staleSessionCookie(SECRET), listsHosts: true })
})

describe('Express: the middleware', () => {
  it.each([
    ['/auth', '/auth'],
    ['/auth/*splat', '/auth'],
    ['/api/auth', '/api/auth'],
    ['/api/auth/*splat', '/api/auth'],
  ])('takes the base path from the mount point %s', async (mount, base) => {
    const { origin } = await documentedApp(mount)
    const page = await fetch(`${origin}${base}/signin`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(`action="${origin}${base}/callback/credentials"`)
    const jar = new CookieJar()
    const response = await signIn(origin, base, jar)
    expect(response.status).toBe(302)
    expect(jar.get('authjs.session-token')).toBeDefined()
  })

  it.each([
    ['form, no body parser installed', false, false],
    ['JSON, no body parser installed', false, true],
    ['form, after express.urlencoded()', true, false],
    ['JSON, after express.json()', true, true],
  ])('reads a sign-in body sent as %s', async (_name, parsers, json) => {
    const { origin } = await documentedApp('/auth', { parsers })
    const jar = new CookieJar()
    const response = await signIn(origin, '/auth', jar, json)
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(origin)
    const account = await fetch(`${origin}/account`, { headers: { cookie: jar.header() } })
    expect(await account.text()).toBe('Hello Alice')
  })

  it('keeps every Set-Cookie header of a response, and those the app set before', async () => {
    const config = makeConfig()
    const app = express()
    app.use((_req, res, next) => {
      res.cookie('app-cookie', '1')
      next()
    })
    app.use('/auth', ExpressAuth(config))
    const { server, origin } = await listen(app)
    servers.push(server)
    const jar = new CookieJar()
    const csrf = await fetch(`${origin}/auth/csrf`)
    jar.store(csrf)
    const { csrfToken } = (await csrf.json()) as { csrfToken: string }
    const response = await fetch(`${origin}/auth/callback/credentials?callbackUrl=%2Fx`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken, username: 'alice', password: 'wonderland' }),
    })
    const names = response.headers.getSetCookie().map((c) => c.split('=')[0])
    expect(names).toEqual(expect.arrayContaining(['app-cookie', 'authjs.callback-url', 'authjs.session-token']))
  })

  it('redirects a visitor of a protected page to /login', async () => {
    const { origin } = await documentedApp('/auth')
    const visitor = await fetch(`${origin}/account`, { redirect: 'manual' })
    expect(visitor.status).toBe(302)
    expect(visitor.headers.get('location')).toBe('/login')
  })

  it('refuses a sign-in without the CSRF token and sets no session', async () => {
    const { origin } = await documentedApp('/auth', { parsers: true })
    const response = await fetch(`${origin}/auth/callback/credentials`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://attacker.example' },
      body: new URLSearchParams({ username: 'alice', password: 'wonderland' }),
    })
    expect(response.headers.get('location')).toContain('error=MissingCSRF')
    expect(response.headers.getSetCookie().some((c) => c.startsWith('authjs.session-token='))).toBe(false)
  })

  it('answers 413 to a body over 64 KiB without reading it all', async () => {
    const { origin } = await documentedApp('/auth')
    const response = await fetch(`${origin}/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `a=${'x'.repeat(70 * 1024)}`,
    })
    expect(response.status).toBe(413)
  })

  it('passes an error of the response path to next(err)', async () => {
    const config = makeConfig()
    const app = express()
    app.use('/auth', (req, res, next) => {
      // A response that cannot take headers any more: the middleware's write fails.
      res.setHeader = () => {
        throw new Error('headers already sent elsewhere')
      }
      return ExpressAuth(config)(req, res, next)
    })
    let seen: unknown
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      seen = error
      res.status(599).end()
    })
    const { server, origin } = await listen(app)
    servers.push(server)
    const response = await fetch(`${origin}/auth/csrf`)
    expect(response.status).toBe(599)
    expect((seen as Error).message).toBe('headers already sent elsewhere')
  })

  it('refuses a broken configuration when the middleware is made, not at the first request', () => {
    expect(() => ExpressAuth({ providers: [credentialsProvider()], secret: 'short' })).toThrow(/secret/)
  })
})

describe('Express: getSession', () => {
  it('throws UntrustedHost itself (not a bare Error) when the host is not trusted', async () => {
    const config = { ...makeConfig(), trustHost: false }
    const app = express()
    let thrown: unknown
    app.get('/', async (req, res) => {
      thrown = await getSession(req, config).catch((error: unknown) => error)
      res.end()
    })
    const { server, origin } = await listen(app)
    servers.push(server)
    await fetch(origin)
    expect(thrown).toBeInstanceOf(UntrustedHost)
  })

  it('returns null without a session cookie and the session after sign-in', async () => {
    const config = makeConfig()
    const app = express()
    app.use('/auth', ExpressAuth(config))
    app.get('/me', async (req, res) => {
      res.json(await getSession(req, config))
    })
    const { server, origin } = await listen(app)
    servers.push(server)
    expect(await (await fetch(`${origin}/me`)).json()).toBeNull()
    const jar = new CookieJar()
    await signIn(origin, '/auth', jar)
    const session = (await (await fetch(`${origin}/me`, { headers: { cookie: jar.header() } })).json()) as {
      user: { name: string }
    }
    expect(session.user.name).toBe('Alice')
  })
})

describe('Express: requireRecentAuth', () => {
  let origin = ''
  beforeAll(async () => {
    origin = (await documentedApp('/auth')).origin
  })
  recentAuthSuite(() => origin)
})
