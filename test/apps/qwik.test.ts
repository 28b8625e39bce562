/**
 * examples/qwik, installed from the packed package (its `index.qwik.js` run through the app's
 * Qwik optimizer), built for the Node server and running as its own process: over real HTTP,
 * through the useSignIn/useSignOut actions in headless Chromium, and against login CSRF.
 */
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../fixtures/chromium.js'
import { originAttackSuite, staleSessionCookie } from '../integrations/origin-attacks.js'
import { AppClient, expectSignInAndOutInBrowser, expectWrongPasswordShown, runningApp, type LoginForm } from './helpers.js'
import { recentAuthAppSuite } from './recent-auth.js'
import { APP_SECRET } from './setup.js'

const app = () => runningApp('qwik')

/** The login page's form: the useSignIn action's fields are named after its `options`. */
const LOGIN: LoginForm = {
  path: '/login/',
  username: 'input[name="options.username"]',
  password: 'input[name="options.password"]',
  submit: '#signin',
}

/** The `?qaction=` URL the login page's sign-in form posts to. */
async function signInActionUrl(client: AppClient): Promise<string> {
  const html = await (await client.get('/login/')).text()
  const action = /<form[^>]*action="([^"]*qaction=[^"]*)"/.exec(html)?.[1]
  if (!action) throw new Error(`no action form on /login/: ${html.slice(0, 500)}`)
  return new URL(action.replace(/&amp;/g, '&'), `${app().origin}/login/`).href
}

describe('examples/qwik over HTTP', () => {
  it('redirects a visitor of the protected page to /login', async () => {
    const response = await new AppClient(app().origin).get('/protected/')
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe('/login?callbackUrl=%2Fprotected%2F')
  })

  it('signs in with credentials, reads the session on a server-rendered page, and signs out', async () => {
    const client = new AppClient(app().origin)
    expect(await (await client.get('/')).text()).toContain('Not signed in')
    const signedIn = await client.post('/auth/callback/credentials', {
      csrfToken: await client.csrfToken(),
      username: 'alice',
      password: 'wonderland',
      callbackUrl: '/protected/',
    })
    expect(signedIn.status).toBe(302)
    expect(signedIn.headers.get('location')).toBe(`${app().origin}/protected/`)
    expect(await (await client.get('/protected/')).text()).toContain('this page is protected.')
    expect(await (await client.get('/')).text()).toMatch(/Signed in as (<!--[^>]*-->)?Alice/)
    const signedOut = await client.post('/auth/signout', { csrfToken: await client.csrfToken(), callbackUrl: '/' })
    expect(signedOut.status).toBe(302)
    expect(await (await client.get('/')).text()).toContain('Not signed in')
  })

  it('signs in through the useSignIn action posted as a plain form (no JavaScript)', async () => {
    const client = new AppClient(app().origin)
    const response = await client.post(await signInActionUrl(client), {
      providerId: 'credentials',
      'options.username': 'alice',
      'options.password': 'wonderland',
      'options.redirectTo': '/protected/',
    })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/protected/')
    expect(client.jar.get('authjs.session-token')).toBeDefined()
  })

  it('answers an invalid useSignIn input with {failed, fieldErrors, formErrors}', async () => {
    const client = new AppClient(app().origin)
    const response = await fetch(await signInActionUrl(client), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', origin: app().origin, accept: 'text/html' },
      body: JSON.stringify({ providerId: 5, options: 'abc' }),
    })
    expect(response.status).toBe(400)
    const html = await response.text()
    const shown = JSON.parse(/<p id="invalid"[^>]*>([^<]*)<\/p>/.exec(html)![1]!.replace(/&quot;/g, '"')) as {
      fieldErrors: Record<string, string[]>
      formErrors: string[]
    }
    expect(Object.keys(shown.fieldErrors).sort()).toEqual(['options', 'providerId'])
    expect(shown.fieldErrors.providerId![0]).toMatch(/Expected a string/)
    expect(shown.formErrors).toEqual([])
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
  })

  it('refuses a cross-site form post to /auth/callback/credentials (login CSRF) and to the action', async () => {
    const client = new AppClient(app().origin)
    const form = { username: 'alice', password: 'wonderland' }
    const direct = await client.post('/auth/callback/credentials', form, { origin: 'https://attacker.example' })
    expect(direct.status).toBe(302)
    expect(direct.headers.get('location')).toContain('error=MissingCSRF')
    const action = await client.post(
      await signInActionUrl(client),
      { providerId: 'credentials', 'options.username': 'alice', 'options.password': 'wonderland' },
      { origin: 'https://attacker.example' },
    )
    expect(action.status).toBe(403)
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
  })
})

describe('examples/qwik: requireRecentAuth in a routeLoader$', () => {
  recentAuthAppSuite({ app, path: '/security/', fetchData: (client) => client.get('/security/', { accept: 'application/json' }) })
})

describe('examples/qwik: the request URL', () => {
  // The app has its own sign-in page (/login), so the built-in sign-out page shows the origin.
  originAttackSuite({
    port: () => app().port,
    oauthProvider: 'op',
    page: 'signout',
    frameworkRefusesAbsoluteForm: true,
    staleSession: () => staleSessionCookie(APP_SECRET),
  })
})

describe('examples/qwik in Chromium', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })

  it('signs in with the useSignIn action and out with useSignOut', () =>
    expectSignInAndOutInBrowser(browser, app().origin, LOGIN, { protectedPath: '/protected/', signOut: '#signout' }))

  it('shows the sign-in error after a wrong password', () => expectWrongPasswordShown(browser, app().origin, LOGIN))
})
