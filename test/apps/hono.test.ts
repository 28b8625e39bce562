/**
 * examples/hono (`@hono/node-server`, `initAuthConfig`, `authHandler()`, `verifyAuth()`), installed
 * from the packed package and running as its own process, over real HTTP.
 */
import { encode } from '@auth/core/jwt'
import { describe, expect, it } from 'vitest'
import { visitProvider } from '../fixtures/oidc-provider.js'
import { originAttackSuite, staleSessionCookie } from '../integrations/origin-attacks.js'
import { AppClient, expectCrossSiteSignInRefused, runningApp } from './helpers.js'
import { APP_SECRET } from './setup.js'

const app = () => runningApp('hono')

/** A CSRF token from the app's auth routes, served under `/api/auth`. */
const csrfToken = (client: AppClient) => client.csrfToken('/api/auth')

describe('examples/hono over HTTP', () => {
  it('answers 401 on a protected route without a session (verifyAuth)', async () => {
    const response = await new AppClient(app().origin).get('/api/protected')
    expect(response.status).toBe(401)
    expect(await response.text()).toBe('Unauthorized')
  })

  it('signs in with credentials, gives c.get("authUser") to the route, and signs out', async () => {
    const client = new AppClient(app().origin)
    const signedIn = await client.post('/api/auth/callback/credentials', {
      csrfToken: await csrfToken(client),
      username: 'alice',
      password: 'wonderland',
      callbackUrl: '/api/protected',
    })
    expect(signedIn.status).toBe(302)
    expect(signedIn.headers.get('location')).toBe(`${app().origin}/api/protected`)
    expect(await (await client.get('/api/protected')).json()).toEqual({ name: 'Alice', subject: 'alice' })
    const signedOut = await client.post('/api/auth/signout', { csrfToken: await csrfToken(client), callbackUrl: '/' })
    expect(signedOut.status).toBe(302)
    expect((await client.get('/api/protected')).status).toBe(401)
  })

  it('reads a session cookie minted by @hono/auth-js (@auth/core) as the same user', async () => {
    const value = await encode({ token: { name: 'Alice', sub: 'alice' }, secret: APP_SECRET, salt: 'authjs.session-token' })
    const response = await new AppClient(app().origin).get('/api/protected', { cookie: `authjs.session-token=${value}` })
    expect(await response.json()).toEqual({ name: 'Alice', subject: 'alice' })
  })

  it('sends a wrong password back to the sign-in page with the error', async () => {
    const client = new AppClient(app().origin)
    const response = await client.post('/api/auth/callback/credentials', {
      csrfToken: await csrfToken(client),
      username: 'alice',
      password: 'wrong',
    })
    expect(response.headers.get('location')).toBe(`${app().origin}/api/auth/signin?error=CredentialsSignin&code=credentials`)
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
  })

  it('refuses a cross-site sign-in form without the CSRF token (login CSRF)', () =>
    expectCrossSiteSignInRefused(app().origin, '/api/auth'))

  it('signs in through the OpenID Provider', async () => {
    const client = new AppClient(app().origin)
    const start = await client.post('/api/auth/signin/op', { csrfToken: await csrfToken(client), callbackUrl: '/api/protected' })
    expect(start.status).toBe(302)
    const answer = await visitProvider(start.headers.get('location')!, `${app().origin}/api/auth/callback/op`)
    const callback = await client.get(answer.url.href)
    expect(callback.headers.get('location')).toBe(`${app().origin}/api/protected`)
    expect(((await (await client.get('/api/protected')).json()) as { name: string }).name).toBe('Alice Liddell')
  })
})

describe('examples/hono: the request URL', () => {
  originAttackSuite({ port: () => app().port, basePath: '/api/auth', oauthProvider: 'op', staleSession: () => staleSessionCookie(APP_SECRET) })
})
