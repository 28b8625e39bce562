/**
 * examples/sveltekit, installed from the packed package, built (adapter-node, production) and
 * running as its own process: over real HTTP, in headless Chromium clicking the SignIn/SignOut
 * components and the client functions, and through the test OpenID Provider.
 */
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../fixtures/chromium.js'
import { visitProvider } from '../fixtures/oidc-provider.js'
import { originAttackSuite, staleSessionCookie } from '../integrations/origin-attacks.js'
import { AppClient, expectSignInAndOutInBrowser, expectWrongPasswordShown, runningApp, type LoginForm } from './helpers.js'
import { recentAuthAppSuite } from './recent-auth.js'
import { APP_SECRET } from './setup.js'

const app = () => runningApp('sveltekit')

/** The login page's SignIn component, clicked by its label. */
const LOGIN: LoginForm = { path: '/login', username: 'input[name=username]', password: 'input[name=password]', submit: 'text=Sign in' }

describe('examples/sveltekit over HTTP', () => {
  it('serves pages in a production build with AUTH_TRUST_HOST=true (Auth.js answers UntrustedHost)', async () => {
    const response = await new AppClient(app().origin).get('/')
    expect(response.status).toBe(200)
    expect(await response.text()).toContain('Not signed in')
  })

  it('puts the attributes an app passes to SignIn and SignOut (id, data-*, aria-*) on their forms', async () => {
    const html = await (await new AppClient(app().origin).get('/components')).text()
    const form = (id: string) => new RegExp(`<form[^>]*\\bid="${id}"[^>]*>`).exec(html)?.[0] ?? ''
    expect(form('signin-form')).toMatch(/\baction="\/signin"/)
    expect(form('signin-form')).toContain('data-testid="signin"')
    expect(form('signin-form')).toContain('aria-label="Sign in with a password"')
    expect(form('signin-form')).toMatch(/\bclass="signInButton /)
    expect(form('signout-form')).toMatch(/\baction="\/signout"/)
    expect(form('signout-form')).toContain('data-testid="signout"')
    expect(form('signout-form')).toContain('aria-label="Sign out of the example"')
  })

  it('shows the e-mail field by the provider type: forwardemail, and an own id with type="email", but not OAuth', async () => {
    const html = await (await new AppClient(app().origin).get('/components')).text()
    const formBody = (id: string) => new RegExp(`<form[^>]*\\bid="${id}"[^>]*>([\\s\\S]*?)</form>`).exec(html)?.[1] ?? ''
    expect(formBody('forwardemail-form')).toMatch(/<input[^>]*type="email"[^>]*name="email"/)
    expect(formBody('custom-mail-form')).toMatch(/<input[^>]*type="email"[^>]*name="email"/)
    expect(formBody('op-form')).not.toContain('name="email"')
    expect(formBody('op-form')).toContain('value="op"')
  })

  it('redirects a visitor of the protected page to /login', async () => {
    const response = await new AppClient(app().origin).get('/protected')
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/login?callbackUrl=%2Fprotected')
  })

  it('signs in through the form action, reads the session on a server-rendered page, signs out', async () => {
    const client = new AppClient(app().origin)
    const signedIn = await client.post('/signin', {
      providerId: 'credentials',
      redirectTo: '/protected',
      username: 'alice',
      password: 'wonderland',
    })
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get('location')).toBe(`${app().origin}/protected`)
    expect(await (await client.get('/protected')).text()).toContain('Hello Alice, this page is protected.')
    expect(await (await client.get('/')).text()).toContain('Signed in as Alice')
    const signedOut = await client.post('/signout', { redirectTo: '/' })
    expect(signedOut.status).toBe(303)
    expect(await (await client.get('/')).text()).toContain('Not signed in')
  })

  it('sends a wrong password back to the sign-in page with ?error=CredentialsSignin, not a 500', async () => {
    const client = new AppClient(app().origin)
    const response = await client.post('/signin', { providerId: 'credentials', username: 'alice', password: 'wrong' })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe(`${app().origin}/login?error=CredentialsSignin&code=credentials`)
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
  })

  it('refuses a cross-site sign-in through the form action and through /auth (login CSRF)', async () => {
    const client = new AppClient(app().origin)
    const form = { providerId: 'credentials', username: 'alice', password: 'wonderland' }
    expect((await client.post('/signin', form, { origin: 'https://attacker.example' })).status).toBe(403)
    const direct = await client.post('/auth/callback/credentials', form, { origin: 'https://attacker.example' })
    expect(direct.status).toBe(403)
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
  })

  it('refuses sign-in from an origin SvelteKit trusts for other forms, by its own origin check and CSRF', async () => {
    const client = new AppClient(app().origin)
    const partner = { origin: 'https://partner.example' }
    const action = await client.post('/signin', { providerId: 'credentials', username: 'alice', password: 'wonderland' }, partner)
    expect(action.status).toBe(403)
    expect(await action.text()).toContain('Cross-site sign-in and sign-out forms are refused')
    const direct = await client.post('/auth/callback/credentials', { username: 'alice', password: 'wonderland' }, partner)
    expect(direct.status).toBe(302)
    expect(direct.headers.get('location')).toContain('error=MissingCSRF')
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
  })

  it('keeps the CSRF check on /auth even for a same-origin post (no skipCSRFCheck)', async () => {
    const client = new AppClient(app().origin)
    const form = { username: 'alice', password: 'wonderland' }
    const response = await client.post('/auth/callback/credentials', form)
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toContain('error=MissingCSRF')
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
  })

  it('signs in through the OpenID Provider with the SignIn form action', async () => {
    const client = new AppClient(app().origin)
    const start = await client.post('/signin', { providerId: 'op', redirectTo: '/protected' })
    expect(start.status).toBe(303)
    const answer = await visitProvider(start.headers.get('location')!, `${app().origin}/auth/callback/op`)
    const callback = await client.get(answer.url.href)
    expect(callback.headers.get('location')).toBe(`${app().origin}/protected`)
    expect(await (await client.get('/')).text()).toContain('Signed in as Alice Liddell')
  })
})

describe('examples/sveltekit: requireRecentAuth in load and in a form action', () => {
  recentAuthAppSuite({
    app,
    path: '/security',
    // An enhanced form (`use:enhance`) posts with fetch and asks for JSON.
    fetchData: (client) => client.post('/security', {}, { accept: 'application/json', 'x-sveltekit-action': 'true' }),
    detailOf: (body) => (body as { type: string; error: unknown }).error,
  })
})

describe('examples/sveltekit: the request URL', () => {
  // The app has its own sign-in page (/login), so the built-in sign-out page shows the origin.
  originAttackSuite({
    port: () => app().port,
    oauthProvider: 'op',
    page: 'signout',
    frameworkRefusesAbsoluteForm: true,
    staleSession: () => staleSessionCookie(APP_SECRET),
  })
})

describe('examples/sveltekit in Chromium', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })

  it('signs in by clicking the SignIn component and out by clicking SignOut', () =>
    expectSignInAndOutInBrowser(browser, app().origin, LOGIN, { protectedPath: '/protected', signOut: 'text=Sign Out' }))

  it('shows the sign-in error after a wrong password typed into the SignIn component', () =>
    expectWrongPasswordShown(browser, app().origin, LOGIN))

  it('signs in and out with the client functions', async () => {
    const page = await browser.newPage()
    await page.goto(`${app().origin}/client`)
    await page.waitForSelector('body[data-hydrated]')
    await page.click('#client-wrong')
    await page.waitForSelector('#outcome:has-text("CredentialsSignin")')
    await page.click('#client-signin')
    await page.waitForURL(`${app().origin}/`)
    expect(await page.textContent('#who')).toBe('Signed in as Alice')
    await page.goto(`${app().origin}/client`)
    await page.waitForSelector('body[data-hydrated]')
    await page.click('#client-signout')
    await page.waitForURL(`${app().origin}/`)
    expect(await page.textContent('#who')).toBe('Not signed in')
    await page.close()
  })
})
