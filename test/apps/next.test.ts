/**
 * examples/next (Next.js 16, App Router, `proxy.ts`, server actions, the client hooks), installed
 * from the packed package, built with `next build` and running under `next start` as a self-hosted
 * app: over real HTTP, in headless Chromium, and through the test OpenID Provider.
 *
 * Next is started with `-H 127.0.0.1`, so its own request URL names 127.0.0.1; a browser on
 * `http://localhost:<port>` is the self-hosted setting in which next-auth loses the page a visitor
 * asked for (next-auth #4435, #10928).
 */
import { encode } from '@auth/core/jwt'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { launchChromium } from '../fixtures/chromium.js'
import { visitProvider } from '../fixtures/oidc-provider.js'
import { rawRequest } from '../fixtures/raw-http.js'
import { originAttackSuite, staleSessionCookie } from '../integrations/origin-attacks.js'
import { AppClient, expectWrongPasswordShown, runningApp, submitLoginForm, type LoginForm } from './helpers.js'
import { recentAuthAppSuite, staleClient } from './recent-auth.js'
import { APP_SECRET } from './setup.js'

const app = () => runningApp('next')

/** The login page's server action form. */
const LOGIN: LoginForm = { path: '/login', username: 'input[name=username]', password: 'input[name=password]', submit: '#signin' }
const opIssuer = () => inject('apps').opIssuer
/** The origin a browser on `localhost` sees: not the host Next names its own requests after. */
const localhost = () => `http://localhost:${app().port}`

/** A session cookie as next-auth v5 writes it: `@auth/core`'s JWE, salted with the cookie's name. */
async function nextAuthCookie(name = 'Alice'): Promise<string> {
  const token = { name, email: 'alice@example.com', sub: 'alice' }
  const value = await encode({ token, secret: APP_SECRET, salt: 'authjs.session-token' })
  return `authjs.session-token=${value}`
}

/** The hidden fields of the login page's form number `index`, as a browser without JavaScript posts them. */
async function loginForm(client: AppClient, index: number): Promise<FormData> {
  const html = await (await client.get('/login?callbackUrl=%2Fprotected')).text()
  const form = [...html.matchAll(/<form[^>]*>([\s\S]*?)<\/form>/g)][index]![1]!
  const data = new FormData()
  for (const [, name, value] of form.matchAll(/<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?\/>/g)) {
    data.append(name!, (value ?? '').replaceAll('&quot;', '"').replaceAll('&amp;', '&'))
  }
  return data
}

/** Posts a server action's form as the browser would (multipart, to the page), with `headers`. */
async function postAction(client: AppClient, form: FormData, headers: Record<string, string>): Promise<Response> {
  const response = await fetch(new URL('/login', client.origin), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: client.jar.header(), accept: 'text/html', ...headers },
    body: form,
  })
  client.jar.store(response)
  return response
}

describe('examples/next over HTTP', () => {
  it('serves the home page with auth() in a server component, signed out', async () => {
    const response = await new AppClient(app().origin).get('/')
    expect(response.status).toBe(200)
    expect(await response.text()).toContain('Not signed in')
  })

  it('sends a visitor of /protected (proxy.ts, authorized callback) to /login, with the page on the origin the browser asked for', async () => {
    const response = await rawRequest(app().port, { target: '/protected?tab=2', headers: { host: `localhost:${app().port}` } })
    expect(response.status).toBe(307)
    const location = new URL(response.headers.get('location')![0]!, localhost())
    expect(location.pathname).toBe('/login')
    // next-auth writes Next's own URL here: http://127.0.0.1:<port>/protected?tab=2.
    expect(location.searchParams.get('callbackUrl')).toBe(`${localhost()}/protected?tab=2`)
  })

  it('reads a session cookie minted by next-auth v5 in server components, route handlers, the wrapper and proxy.ts', async () => {
    const cookie = await nextAuthCookie()
    const client = new AppClient(app().origin)
    expect(await (await client.get('/', { cookie })).text()).toContain('Signed in as Alice')
    const page = await client.get('/protected', { cookie })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('Hello Alice, this page is protected.')
    expect(await (await client.get('/api/session', { cookie })).json()).toEqual({ name: 'Alice' })
    expect(await (await client.get('/api/me', { cookie })).json()).toEqual({ name: 'Alice' })
    expect((await client.get('/api/me')).status).toBe(401)
    const session = (await (await client.get('/api/auth/session', { cookie })).json()) as { user: { name: string } }
    expect(session.user.name).toBe('Alice')
  })

  it('reads no session from a cookie sealed with another secret', async () => {
    const value = await encode({ token: { name: 'Mallory', sub: 'm' }, secret: 'another-secret-that-is-long-enough-0123456789', salt: 'authjs.session-token' })
    const client = new AppClient(app().origin)
    expect(await (await client.get('/', { cookie: `authjs.session-token=${value}` })).text()).toContain('Not signed in')
    expect((await client.get('/protected', { cookie: `authjs.session-token=${value}` })).status).toBe(307)
  })

  it('signs in through the login page server action, posted as a form, and lands on the requested page', async () => {
    const client = new AppClient(app().origin)
    const form = await loginForm(client, 0)
    form.append('redirectTo', '/protected')
    form.append('username', 'alice')
    form.append('password', 'wonderland')
    const response = await postAction(client, form, { origin: app().origin })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe(`${app().origin}/protected`)
    expect(client.jar.get('authjs.session-token')).toBeDefined()
    expect(await (await client.get('/protected')).text()).toContain('Hello Alice, this page is protected.')
  })

  it('refuses the server action from another origin, even with X-Forwarded-Host naming it (Next lets that pair through)', async () => {
    const client = new AppClient(app().origin)
    const form = await loginForm(client, 0)
    form.append('redirectTo', 'https://evil.example/welcome')
    form.append('username', 'alice')
    form.append('password', 'wonderland')
    const response = await postAction(client, form, { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example' })
    expect(response.status).toBe(303)
    // The core refused it (no CSRF token for a cross-site request); the page reports MissingCSRF.
    expect(response.headers.get('location')).toBe('/login?error=MissingCSRF')
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
  })

  it('does not follow a forged X-Forwarded-Host in the OAuth server action', async () => {
    const client = new AppClient(app().origin)
    const form = await loginForm(client, 1)
    const forged = await postAction(client, form, { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example' })
    expect(forged.headers.get('location')).toBe('/login?error=MissingCSRF')
    const honest = await postAction(client, await loginForm(client, 1), { origin: app().origin })
    expect(honest.status).toBe(303)
    const authorize = new URL(honest.headers.get('location')!)
    expect(authorize.origin).toBe(new URL(opIssuer()).origin)
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${app().origin}/api/auth/callback/op`)
  })

  it('signs in with credentials through the route handlers, and refuses a cross-site post without the CSRF token', async () => {
    const client = new AppClient(app().origin)
    const attack = await client.post(
      '/api/auth/callback/credentials',
      { username: 'alice', password: 'wonderland' },
      { origin: 'https://attacker.example' },
    )
    expect(attack.headers.get('location')).toContain('error=MissingCSRF')
    expect(client.jar.get('authjs.session-token')).toBeUndefined()
    const csrfToken = ((await (await client.get('/api/auth/csrf')).json()) as { csrfToken: string }).csrfToken
    const signedIn = await client.post('/api/auth/callback/credentials', { csrfToken, username: 'alice', password: 'wonderland', callbackUrl: '/protected' })
    expect(signedIn.status).toBe(302)
    expect(signedIn.headers.get('location')).toBe(`${app().origin}/protected`)
    expect(await (await client.get('/')).text()).toContain('Signed in as Alice')
  })

  it('signs in through the OpenID Provider', async () => {
    const client = new AppClient(app().origin)
    const csrfToken = ((await (await client.get('/api/auth/csrf')).json()) as { csrfToken: string }).csrfToken
    const start = await client.post('/api/auth/signin/op', { csrfToken, callbackUrl: '/protected' })
    expect(start.status).toBe(302)
    const answer = await visitProvider(start.headers.get('location')!, `${app().origin}/api/auth/callback/op`)
    const callback = await client.get(answer.url.href)
    expect(callback.headers.get('location')).toBe(`${app().origin}/protected`)
    expect(await (await client.get('/')).text()).toContain('Signed in as Alice Liddell')
  })

  // proxy.ts (the `authorized` callback) asks with the request known: 303 for a page, 401 for a fetch.
  recentAuthAppSuite({
    app,
    path: '/security',
    basePath: '/api/auth',
    fetchData: (client) => client.get('/security', { accept: 'application/json' }),
  })

  it('requireRecentAuth({ returnTo }) in a server component redirects a stale session to re-authenticate, back to that path', async () => {
    const client = await staleClient(app().origin)
    const response = await client.get('/security/recent', { accept: 'text/html' })
    expect([303, 307]).toContain(response.status)
    const location = new URL(response.headers.get('location')!, app().origin)
    expect(`${location.origin}${location.pathname}`).toBe(`${app().origin}/api/auth/reauthenticate`)
    expect(location.searchParams.get('callbackUrl')).toBe('/security/recent')
    expect(location.searchParams.get('factors')).toBe('hwk otp pwd email fed')
    // Signed out: to sign in, back to the page.
    const signedOut = await new AppClient(app().origin).get('/security/recent', { accept: 'text/html' })
    const signIn = new URL(signedOut.headers.get('location')!, app().origin)
    expect(signIn.pathname).toBe('/api/auth/signin')
    expect(signIn.searchParams.get('callbackUrl')).toBe('/security/recent')
  })

  it('requireRecentAuth({ returnTo }) shows the page to a session signed in just now', async () => {
    const client = new AppClient(app().origin)
    const response = await client.post('/api/auth/callback/credentials', { csrfToken: await client.csrfToken('/api/auth'), username: 'alice', password: 'wonderland' })
    expect(response.status).toBe(302)
    const page = await client.get('/security/recent', { accept: 'text/html' })
    expect(page.status).toBe(200)
    expect(await page.text()).toMatch(/Security settings of (<!--[^>]*-->)?Alice/)
  })
})

describe('examples/next: the request URL', () => {
  // The app has its own sign-in page (/login), so the built-in sign-out page shows the origin.
  originAttackSuite({
    port: () => app().port,
    basePath: '/api/auth',
    oauthProvider: 'op',
    page: 'signout',
    frameworkRedirectsAbsoluteForm: true,
    staleSession: () => staleSessionCookie(APP_SECRET),
  })
})

describe('examples/next in Chromium', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })

  it('goes from a protected page to the sign-in page and back to it, on a host Next does not name itself after', async () => {
    const page = await browser.newPage()
    await page.goto(`${localhost()}/protected?tab=2`)
    expect(new URL(page.url()).pathname).toBe(LOGIN.path)
    await submitLoginForm(page, LOGIN, 'wonderland')
    await page.waitForSelector('#secret')
    expect(page.url()).toBe(`${localhost()}/protected?tab=2`)
    expect(await page.textContent('#secret')).toBe('Hello Alice, this page is protected.')
    await page.close()
  })

  it('reports a wrong password typed into the server action form', () => expectWrongPasswordShown(browser, app().origin, LOGIN))

  it('updates the session and signs out through server actions', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${app().origin}${LOGIN.path}`)
    await submitLoginForm(page, LOGIN, 'wonderland')
    await page.waitForSelector('text=Signed in as Alice')
    await page.click('#rename')
    await page.waitForSelector('text=Signed in as Alice (renamed on the server)')
    await page.click('#signout')
    await page.waitForSelector('text=Not signed in')
    expect((await context.cookies()).map((c) => c.name)).not.toContain('authjs.session-token')
    await context.close()
  })

  it('signs in through the OpenID Provider from the server action, back to the requested page', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const authorizations: URL[] = []
    page.on('request', (request) => {
      if (request.url().startsWith(`${opIssuer()}/auth?`)) authorizations.push(new URL(request.url()))
    })
    await page.goto(`${localhost()}/login?callbackUrl=%2Fprotected`)
    await page.click('#signin-op')
    // The test OP signs Alice in without a form: the browser comes straight back.
    await page.waitForSelector('#secret')
    expect(page.url()).toBe(`${localhost()}/protected`)
    expect(await page.textContent('#secret')).toBe('Hello Alice Liddell, this page is protected.')
    expect(authorizations.map((url) => url.searchParams.get('redirect_uri'))).toEqual([`${localhost()}/api/auth/callback/op`])
    await context.close()
  })

  it('keeps useSession in step: sign-in and update from the client hooks, sign-out broadcast to another tab, refetch on focus', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${app().origin}/client`)
    await page.waitForSelector('#status:text-is("unauthenticated")')
    await page.click('#client-wrong')
    await page.waitForSelector('#outcome:has-text("CredentialsSignin:credentials")')
    await page.click('#client-signin')
    await page.waitForSelector('#status:text-is("authenticated")')
    await page.waitForSelector('#client-who:has-text("Alice")')
    await page.click('#client-update')
    await page.waitForSelector('#client-who:has-text("Alice (renamed in the browser)")')

    const other = await context.newPage()
    await other.goto(`${app().origin}/client`)
    await other.waitForSelector('#client-who:has-text("Alice (renamed in the browser)")')
    await page.click('#client-signout')
    await page.waitForURL(`${app().origin}/`)
    // The other tab hears the sign-out on the `next-auth` BroadcastChannel and fetches its session.
    await other.waitForSelector('#status:text-is("unauthenticated")')

    // Signed in again, then out behind the tab's back (no broadcast): it notices when it is shown.
    await other.click('#client-signin')
    await other.waitForSelector('#status:text-is("authenticated")')
    await other.evaluate(async () => {
      const { csrfToken } = (await (await fetch('/api/auth/csrf')).json()) as { csrfToken: string }
      await fetch('/api/auth/signout', { method: 'POST', body: new URLSearchParams({ csrfToken }), redirect: 'manual' })
    })
    expect(await other.textContent('#status')).toBe('authenticated')
    await other.bringToFront()
    await other.evaluate(() => document.dispatchEvent(new Event('visibilitychange')))
    await other.waitForSelector('#status:text-is("unauthenticated")')
    await context.close()
  })
})
