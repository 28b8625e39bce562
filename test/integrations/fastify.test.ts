/**
 * The Fastify integration over real HTTP: the request-URL rule (scope 1), `request.auth()`, and the
 * `requireSession` pre-handler.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fastifyAuth, requireRecentAuth, requireSession } from '../../integrations/fastify/index.js'
import { CookieJar, SECRET } from '../fixtures/http.js'
import { rawRequest } from '../fixtures/raw-http.js'
import { attackTargetConfig, originAttackSuite, staleSessionCookie } from './origin-attacks.js'
import { recentAuthSuite, signInOverHttp } from './recent-auth-suite.js'

const config = attackTargetConfig({ listHosts: true })

let app: FastifyInstance
let port = 0
let origin = ''

beforeAll(async () => {
  app = Fastify()
  await app.register(fastifyAuth, config)
  app.get('/me', async (request) => ({ session: await request.auth() }))
  app.get('/account', { preHandler: requireSession({ redirectTo: '/login' }) }, async (request) => ({
    name: (await request.auth())?.user?.name,
  }))
  app.get('/settings', { preHandler: requireRecentAuth(config, { maxAge: 60 }) }, async () => ({ ok: true }))
  origin = await app.listen({ port: 0, host: '127.0.0.1' })
  port = Number(new URL(origin).port)
})

afterAll(async () => {
  await app?.close()
})

describe('Fastify: the request URL', () => {
  originAttackSuite({ port: () => port, oauthProvider: 'op', staleSession: () => staleSessionCookie(SECRET), listsHosts: true })
})

describe('Fastify: the request URL under proxy trust or AUTH_URL', () => {
  async function startWith(trustProxy: boolean, env: Record<string, string> = {}) {
    const saved = { ...process.env }
    Object.assign(process.env, env)
    try {
      const other = Fastify({ trustProxy })
      await other.register(fastifyAuth, { ...config, trustHost: true })
      const address = await other.listen({ port: 0, host: '127.0.0.1' })
      return { other, port: Number(new URL(address).port) }
    } finally {
      process.env = saved
    }
  }

  it('takes the origin from X-Forwarded-Host and -Proto when trustProxy is on', async () => {
    const { other, port: otherPort } = await startWith(true)
    try {
      const response = await rawRequest(otherPort, {
        target: '/auth/signin',
        headers: { host: `127.0.0.1:${otherPort}`, 'x-forwarded-host': 'app.example', 'x-forwarded-proto': 'https' },
      })
      expect(response.body).toContain('action="https://app.example/auth/signin/op"')
    } finally {
      await other.close()
    }
  })

  it('takes the origin from AUTH_URL whatever the Host header says', async () => {
    const { other, port: otherPort } = await startWith(false, { AUTH_URL: 'https://pinned.example/auth' })
    try {
      const response = await rawRequest(otherPort, { target: '/auth/signin', headers: { host: 'other.example' } })
      expect(response.body).toContain('action="https://pinned.example/auth/signin/op"')
    } finally {
      await other.close()
    }
  })

  it.each(['a@evil.example', 'evil.example:99999', '999.0.0.1'])(
    'answers 400 to the malformed Host header %s instead of building an origin from it (never a 500)',
    async (host) => {
      const response = await rawRequest(port, { target: '/auth/signin', headers: { host } })
      expect(response.status).toBe(400)
      expect(response.body).not.toContain('evil.example')
    },
  )
})

describe('Fastify: requireRecentAuth', () => {
  recentAuthSuite(() => origin)
})

describe('Fastify: request.auth() and requireSession', () => {
  it('reads no session for a visitor and the signed-in user after a sign-in', async () => {
    const jar = new CookieJar()
    expect(await (await fetch(`${origin}/me`)).json()).toEqual({ session: null })
    expect((await signInOverHttp(origin, jar)).status).toBe(302)
    const me = (await (await fetch(`${origin}/me`, { headers: { cookie: jar.header() } })).json()) as {
      session: { user: { name: string } }
    }
    expect(me.session.user.name).toBe('Alice')
  })

  it('redirects a visitor from a protected route to the login page, temporarily, with the page to return to', async () => {
    const response = await fetch(`${origin}/account?tab=1`, { redirect: 'manual' })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`/login?callbackUrl=${encodeURIComponent('/account?tab=1')}`)
  })

  it('lets a signed-in user through a protected route', async () => {
    const jar = new CookieJar()
    await signInOverHttp(origin, jar)
    const response = await fetch(`${origin}/account`, { headers: { cookie: jar.header() } })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ name: 'Alice' })
  })

  it('refuses a sign-in POST without the CSRF token', async () => {
    const response = await fetch(`${origin}/auth/callback/credentials`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'alice', password: 'wonderland' }),
    })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toContain('error=MissingCSRF')
    expect(response.headers.getSetCookie().some((c) => c.startsWith('authjs.session-token='))).toBe(false)
  })
})

describe('Fastify: the plugin itself', () => {
  it('is named authchart for plugins that depend on it, and its decorator reaches a sibling plugin', async () => {
    const other = Fastify()
    try {
      await other.register(fastifyAuth, { ...config })
      // A sibling registered after it, encapsulated as plugins are, declaring its dependency by name.
      await other.register(
        fastifyPlugin(
          async (scoped) => {
            scoped.get('/sibling', async (request) => ({ reads: typeof request.auth }))
          },
          { name: 'needs-auth', dependencies: ['authchart'] },
        ),
      )
      await other.ready()
      expect(other.hasPlugin('authchart')).toBe(true)
      expect((await other.inject({ url: '/sibling' })).json()).toEqual({ reads: 'function' })
    } finally {
      await other.close()
    }
  })
})
