/**
 * The acceptance suite of the Node server examples (examples/express, examples/fastify), each
 * installed from the packed package and running as its own process: the documented pattern over
 * real HTTP (a protected page redirecting to /login, credentials sign-in, the session read on a
 * server-rendered page, sign-out), login CSRF refused, OAuth against the test OpenID Provider, the
 * sensitive page behind `requireRecentAuth`, and the request-URL attacks.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { visitProvider } from '../fixtures/oidc-provider.js'
import { originAttackSuite, staleSessionCookie } from '../integrations/origin-attacks.js'
import { AppClient, expectCrossSiteSignInRefused, runningApp } from './helpers.js'
import { recentAuthAppSuite } from './recent-auth.js'
import { APP_SECRET } from './setup.js'

/** Registers the suite for one app; `protectedRedirect` is where its protected page sends visitors. */
export function serverAppSuite(name: 'express' | 'fastify', protectedRedirect: string): void {
  const app = () => runningApp(name)

  async function signIn(client: AppClient, password = 'wonderland') {
    const csrfToken = await client.csrfToken()
    return client.post('/auth/callback/credentials', { csrfToken, username: 'alice', password, callbackUrl: '/protected' })
  }

  describe(`examples/${name}`, () => {
    it('redirects a visitor of the protected page to /login, and /login to the sign-in page', async () => {
      const client = new AppClient(app().origin)
      const protectedPage = await client.get('/protected')
      expect(protectedPage.status).toBe(302)
      expect(protectedPage.headers.get('location')).toBe(protectedRedirect)
      const login = await client.get('/login')
      expect(login.headers.get('location')).toBe('/auth/signin?callbackUrl=/protected')
      const signInPage = await client.get(login.headers.get('location')!)
      expect(await signInPage.text()).toContain(`action="${app().origin}/auth/callback/credentials"`)
    })

    it('signs in with credentials, reads the session on a server-rendered page, and signs out', async () => {
      const client = new AppClient(app().origin)
      expect(await (await client.get('/')).text()).toContain('Not signed in')
      const signedIn = await signIn(client)
      expect(signedIn.status).toBe(302)
      expect(signedIn.headers.get('location')).toBe(`${app().origin}/protected`)
      expect(await (await client.get('/')).text()).toContain('Signed in as Alice')
      expect(await (await client.get('/protected')).text()).toContain('Hello Alice, this page is protected.')

      const signedOut = await client.post('/auth/signout', { csrfToken: await client.csrfToken(), callbackUrl: '/' })
      expect(signedOut.status).toBe(302)
      expect(await (await client.get('/')).text()).toContain('Not signed in')
      expect((await client.get('/protected')).status).toBe(302)
    })

    it('sends a wrong password back to the sign-in page with the error', async () => {
      const client = new AppClient(app().origin)
      const response = await signIn(client, 'wrong')
      expect(response.headers.get('location')).toBe(`${app().origin}/auth/signin?error=CredentialsSignin&code=credentials`)
      expect(await (await client.get('/')).text()).toContain('Not signed in')
    })

    it('refuses a cross-site sign-in form without the CSRF token (login CSRF)', () => expectCrossSiteSignInRefused(app().origin))

    it('signs in through the OpenID Provider', async () => {
      const client = new AppClient(app().origin)
      const start = await client.post('/auth/signin/op', { csrfToken: await client.csrfToken(), callbackUrl: '/protected' })
      expect(start.status).toBe(302)
      const answer = await visitProvider(start.headers.get('location')!, `${app().origin}/auth/callback/op`)
      const callback = await client.get(answer.url.href)
      expect(callback.status).toBe(302)
      expect(callback.headers.get('location')).toBe(`${app().origin}/protected`)
      expect(await (await client.get('/')).text()).toContain('Signed in as Alice Liddell')
    })
  })

  describe(`examples/${name}: requireRecentAuth`, () => {
    recentAuthAppSuite({ app, path: '/security', fetchData: (client) => client.get('/security', { accept: 'application/json' }) })
  })

  describe(`examples/${name}: the request URL`, () => {
    originAttackSuite({ port: () => app().port, oauthProvider: 'op', staleSession: () => staleSessionCookie(APP_SECRET) })
  })
}
