import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// @ts-expect-error the demo is plain JavaScript
import { createDemoApp, DEMO_USER } from '../../demo/app.js'
// @ts-expect-error the demo is plain JavaScript
import { LOCAL_OP_USER } from '../../demo/local-op.js'
import { CookieJar } from '../fixtures/http.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'

let app: FastifyInstance
let origin: string
let dataDir: string
let port: number

/** A free loopback port: the demo's in-process OpenID Provider must know its issuer URL up front. */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port: free } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return free
}

async function startDemo(): Promise<void> {
  app = (await createDemoApp({ dataDir, port, host: '127.0.0.1' })) as FastifyInstance
  origin = await app.listen({ port, host: '127.0.0.1' })
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'authchart-demo-'))
  port = await freePort()
  await startDemo()
})

afterAll(async () => {
  await app?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

async function get(path: string, jar?: CookieJar): Promise<Response> {
  const response = await fetch(`${origin}${path}`, {
    redirect: 'manual',
    headers: jar ? { cookie: jar.header() } : {},
  })
  jar?.store(response)
  return response
}

async function post(path: string, form: Record<string, string>, jar: CookieJar): Promise<Response> {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  })
  jar.store(response)
  return response
}

async function csrfToken(jar: CookieJar): Promise<string> {
  return ((await (await get('/auth/csrf', jar)).json()) as { csrfToken: string }).csrfToken
}

describe('the demo over real HTTP', () => {
  it('lists the credentials provider, the Local OP and passkeys at GET /auth/providers', async () => {
    const response = await get('/auth/providers')
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      credentials: {
        id: 'credentials',
        name: 'Demo account',
        type: 'credentials',
        signinUrl: `${origin}/auth/signin/credentials`,
        callbackUrl: `${origin}/auth/callback/credentials`,
      },
      'local-op': {
        id: 'local-op',
        name: 'Local OP',
        type: 'oidc',
        signinUrl: `${origin}/auth/signin/local-op`,
        callbackUrl: `${origin}/auth/callback/local-op`,
      },
      passkey: {
        id: 'passkey',
        name: 'Passkey',
        type: 'webauthn',
        signinUrl: `${origin}/auth/signin/passkey`,
        callbackUrl: `${origin}/auth/callback/passkey`,
      },
    })
  })

  /** Follows redirects like a browser until a page answers (or the app's own pages are reached). */
  async function follow(location: string, jar: CookieJar): Promise<{ url: string; response: Response }> {
    let url = new URL(location, origin).href
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } })
      jar.store(response)
      const next = response.headers.get('location')
      if (!next) return { url, response }
      url = new URL(next, url).href
      if (!new URL(url).pathname.startsWith('/op') && !new URL(url).pathname.startsWith('/auth/')) {
        return { url, response }
      }
    }
    throw new Error('too many redirects')
  }

  async function startLocalOpSignIn(jar: CookieJar) {
    const start = await post('/auth/signin/local-op', { csrfToken: await csrfToken(jar), callbackUrl: '/protected' }, jar)
    expect(start.status).toBe(302)
    expect(start.headers.get('location')).toMatch(new RegExp(`^${origin}/op/auth\\?`))
    const login = await follow(start.headers.get('location')!, jar)
    expect(login.response.status).toBe(200)
    const html = await login.response.text()
    expect(html).toContain(LOCAL_OP_USER.name)
    return new URL(/action="([^"]+)"/.exec(html)![1]!, origin).pathname
  }

  it('signs in with the Local OP, offline, through its login page', async () => {
    const signInPage = await (await get('/auth/signin')).text()
    expect(signInPage).toContain(`action="${origin}/auth/signin/local-op"`)
    expect(signInPage).toContain('Local OP')

    const jar = new CookieJar()
    const interaction = await startLocalOpSignIn(jar)
    const answer = await post(interaction, { decision: 'accept' }, jar)
    const landed = await follow(answer.headers.get('location')!, jar)
    expect(landed.url).toBe(`${origin}/protected`)
    const protectedPage = await get('/protected', jar)
    expect(protectedPage.status).toBe(200)
    expect(await protectedPage.text()).toContain(LOCAL_OP_USER.email)
  })

  it('returns to sign-in with OAuthCallbackError when the user cancels at the Local OP', async () => {
    const jar = new CookieJar()
    const interaction = await startLocalOpSignIn(jar)
    const answer = await post(interaction, { decision: 'deny' }, jar)
    const landed = await follow(answer.headers.get('location')!, jar)
    expect(landed.url).toBe(`${origin}/auth/signin?error=OAuthCallbackError`)
    expect((await get('/protected', jar)).status).toBe(302)
  })

  it('serves the built-in sign-in page with the demo form', async () => {
    const response = await get('/auth/signin?callbackUrl=/protected')
    expect(response.status).toBe(200)
    const html = await response.text()
    expect(html).toContain('name="username"')
    expect(html).toContain(`action="${origin}/auth/callback/credentials"`)
  })

  it('sends a visitor without a session from the protected page to sign-in', async () => {
    const response = await get('/protected')
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe('/auth/signin?callbackUrl=%2Fprotected')
  })

  it('signs the demo user in, shows the session on the protected page, and signs out', async () => {
    const jar = new CookieJar()
    const signIn = await post(
      '/auth/callback/credentials',
      {
        username: DEMO_USER.username,
        password: DEMO_USER.password,
        csrfToken: await csrfToken(jar),
        callbackUrl: '/protected',
      },
      jar,
    )
    expect(signIn.status).toBe(302)
    expect(signIn.headers.get('location')).toBe(`${origin}/protected`)
    // A database session: the cookie holds only the session token.
    expect(jar.get('authjs.session-token')).toMatch(/^[0-9a-f-]{36}$/)

    const protectedPage = await get('/protected', jar)
    expect(protectedPage.status).toBe(200)
    expect(await protectedPage.text()).toContain('Demo User')

    const signOut = await post('/auth/signout', { csrfToken: await csrfToken(jar) }, jar)
    expect(signOut.status).toBe(302)
    expect(jar.get('authjs.session-token')).toBeUndefined()
    expect((await get('/protected', jar)).status).toBe(302)
  })

  it('keeps users and sessions in PGlite across a restart', async () => {
    const jar = new CookieJar()
    await post(
      '/auth/callback/credentials',
      { username: DEMO_USER.username, password: DEMO_USER.password, csrfToken: await csrfToken(jar) },
      jar,
    )
    expect((await get('/protected', jar)).status).toBe(200)
    await app.close()
    await startDemo()
    const afterRestart = await get('/protected', jar)
    expect(afterRestart.status).toBe(200)
    expect(await afterRestart.text()).toContain('demo@example.com')
  })

  it('links to the flow inspector, which draws the flows the demo runs', async () => {
    const home = await (await get('/')).text()
    expect(home).toContain('href="/auth/__flows"')
    const inspector = await get('/auth/__flows')
    expect(inspector.status).toBe(200)
    const html = await inspector.text()
    for (const flow of ['session', 'credentials-signin', 'oauth-signin', 'webauthn-signin']) {
      expect(html).toContain(`data-flow="${flow}"`)
    }
  })

  it('offers a passkey on its sign-in page: sign up, sign out, sign back in (a software authenticator over real HTTP)', async () => {
    const page = await (await get('/auth/signin')).text()
    expect(page).toContain(`action="${origin}/auth/callback/passkey" method="POST" id="passkey-form"`)
    expect(page).toContain('autocomplete="username webauthn"')

    const authenticator = new SoftwareAuthenticator(origin)
    const jar = new CookieJar()
    const ceremony = async (query: string) => {
      const { action, options } = (await (await get(`/auth/webauthn-options/passkey?${query}`, jar)).json()) as {
        action: 'register' | 'authenticate'
        options: never
      }
      const answer = action === 'register' ? authenticator.register(options) : authenticator.authenticate(options)
      return post('/auth/callback/passkey', { action, data: JSON.stringify(answer), callbackUrl: '/protected' }, jar)
    }
    const signUp = await ceremony('email=pat%40example.com')
    expect(signUp.headers.get('location')).toBe(`${origin}/protected`)
    expect(await (await get('/protected', jar)).text()).toContain('pat@example.com')

    await post('/auth/signout', { csrfToken: await csrfToken(jar) }, jar)
    expect((await get('/protected', jar)).status).toBe(302)
    const signIn = await ceremony('action=authenticate')
    expect(signIn.headers.get('location')).toBe(`${origin}/protected`)
    expect(await (await get('/protected', jar)).text()).toContain('pat@example.com')
  })

  it('refuses a wrong password with the CredentialsSignin error', async () => {
    const jar = new CookieJar()
    const response = await post(
      '/auth/callback/credentials',
      { username: DEMO_USER.username, password: 'wrong', csrfToken: await csrfToken(jar) },
      jar,
    )
    expect(response.headers.get('location')).toBe(
      `${origin}/auth/signin?error=CredentialsSignin&code=credentials`,
    )
    expect(jar.get('authjs.session-token')).toBeUndefined()
  })
})
