/**
 * Sign-in through a real browser: headless Chromium, over HTTPS (a self-signed certificate for
 * `authchart.test`, mapped to 127.0.0.1), through the built-in sign-in page. Chromium enforces the
 * cookie rules a unit test can only assume: it refuses a `__Host-` cookie with a Domain or a Path
 * other than `/`, a `__Secure-` or `Secure` cookie off HTTPS, sends a `SameSite=Lax` cookie on the
 * provider's top-level redirect back but not on its cross-site POST (form_post needs
 * `SameSite=None`), and hides `HttpOnly` cookies from scripts. Each journey signs in, reads the
 * session, and signs out through the built-in pages.
 */
import type { Browser, BrowserContext, Cookie, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../fixtures/chromium.js'
import { credentialsProvider, SECRET, spyLogger, ALICE } from '../fixtures/http.js'
import { startHttpsApp, type HttpsApp } from '../fixtures/https-app.js'
import { OP_ACCOUNT, OP_LOGIN, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient } from '../oauth/helpers.js'
import { signInWithCredentials } from './page-flows-app.js'

const HOST = 'authchart.test'

let app: HttpsApp
let op: RunningOidcProvider
let browser: Browser
const logger = spyLogger()

beforeAll(async () => {
  app = await startHttpsApp(HOST, async (origin) => {
    op = await startOidcProvider({
      loginForm: true,
      clients: [
        await opClient('client_secret_basic', 'op', { redirect_uris: [`${origin}/auth/callback/op`] }),
        await opClient('client_secret_basic', 'op-post', {
          redirect_uris: [`${origin}/auth/callback/op-post`],
          response_modes: ['form_post'],
        } as never),
      ],
    })
    return {
      secret: SECRET,
      trustHost: true,
      logger,
      providers: [
        credentialsProvider(),
        appProvider(op.issuer, 'client_secret_basic', 'op', { name: 'Test OP', checks: ['pkce', 'state', 'nonce'] }),
        appProvider(op.issuer, 'client_secret_basic', 'op-post', {
          name: 'Test OP (form_post)',
          authorization: { params: { response_mode: 'form_post' } },
        }),
      ],
    } as never
  })
  browser = await launchChromium([`--host-resolver-rules=MAP ${HOST} 127.0.0.1`])
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await op?.close()
})

async function newContext(): Promise<{ context: BrowserContext; page: Page }> {
  // The certificate is self-signed; the connection is still HTTPS, so Secure cookies apply.
  const context = await browser.newContext({ ignoreHTTPSErrors: true })
  // A journey that does not come back fails here, with the URL it stopped at, before the test times out.
  context.setDefaultTimeout(10_000)
  return { context, page: await context.newPage() }
}

const byName = (cookies: Cookie[], name: string) => cookies.find((c) => c.name === name)

async function session(page: Page): Promise<{ user?: { name?: string; email?: string } } | null> {
  return page.evaluate(async () => (await fetch('/auth/session')).json())
}

/** The cookies the browser keeps after a sign-in, as it stored them. */
function expectSignedInCookies(cookies: Cookie[]) {
  expect(byName(cookies, '__Secure-authjs.session-token'), 'the browser kept the session cookie').toMatchObject({
    domain: HOST,
    path: '/',
    secure: true,
    httpOnly: true,
    sameSite: 'Lax',
  })
  expect(byName(cookies, '__Secure-authjs.session-token')!.expires).toBeGreaterThan(Date.now() / 1000 + 29 * 24 * 3600)
  expect(byName(cookies, '__Host-authjs.csrf-token'), 'the browser kept the __Host- CSRF cookie').toMatchObject({
    domain: HOST,
    path: '/',
    secure: true,
    httpOnly: true,
    sameSite: 'Lax',
  })
  expect(byName(cookies, '__Secure-authjs.state'), 'the spent flow cookie is gone').toBeUndefined()
}

/** Submits the provider's login form and waits until the browser is back home. */
async function submitProviderLogin(page: Page) {
  await page.fill('input[name=login]', OP_LOGIN.login)
  await page.fill('input[name=password]', OP_LOGIN.password)
  await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Continue' }).click()])
}

async function signOut(page: Page, context: BrowserContext) {
  await page.goto(`${app.origin}/auth/signout`)
  await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Sign out' }).click()])
  expect(await session(page)).toBeNull()
  expect(byName(await context.cookies(), '__Secure-authjs.session-token')).toBeUndefined()
}

describe('a real browser signs in through the built-in page', () => {
  it('with the OpenID Provider: its login form, back with a SameSite=Lax flow cookie, then signs out', async () => {
    const { context, page } = await newContext()
    await page.goto(`${app.origin}/auth/signin`)
    await page.getByRole('button', { name: 'Sign in with Test OP', exact: true }).click()
    await page.waitForURL(`${op.issuer}/interaction/**`)
    // While the user is at the provider, the sealed flow waits in the browser under our host only.
    expect(byName(await context.cookies(app.origin), '__Secure-authjs.state')).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax' })
    await page.fill('input[name=login]', OP_LOGIN.login)
    await page.fill('input[name=password]', 'wrong')
    await page.getByRole('button', { name: 'Continue' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong login or password.')
    await submitProviderLogin(page)

    expectSignedInCookies(await context.cookies(app.origin))
    expect(await session(page)).toMatchObject({ user: { name: OP_ACCOUNT.name, email: OP_ACCOUNT.email.toLowerCase() } })
    expect(await page.evaluate(() => document.cookie), 'HttpOnly cookies are hidden from scripts').not.toMatch(/authjs/)
    await signOut(page, context)
    await context.close()
  })

  it('with the OpenID Provider answering by form_post: the cross-site POST carries the SameSite=None flow cookie', async () => {
    const { context, page } = await newContext()
    await page.goto(`${app.origin}/auth/signin`)
    await page.getByRole('button', { name: 'Sign in with Test OP (form_post)' }).click()
    await page.waitForURL(`${op.issuer}/interaction/**`)
    // With SameSite=Lax here, Chromium would leave the cookie off the provider's POST and the
    // sign-in would never come back signed in.
    expect(byName(await context.cookies(app.origin), '__Secure-authjs.state')).toMatchObject({ secure: true, httpOnly: true, sameSite: 'None' })

    await submitProviderLogin(page)

    expectSignedInCookies(await context.cookies(app.origin))
    expect(await session(page)).toMatchObject({ user: { email: OP_ACCOUNT.email.toLowerCase() } })
    await signOut(page, context)
    await context.close()
  })

  it('with credentials: the built-in form, the session, and sign-out', async () => {
    const { context, page } = await newContext()
    await signInWithCredentials(page, app, { password: 'not-the-password', landing: /\/auth\/signin\?.*error=CredentialsSignin/ })
    expect(byName(await context.cookies(app.origin), '__Secure-authjs.session-token')).toBeUndefined()

    // Again from the page that said the password was wrong.
    await signInWithCredentials(page, app, { open: false })
    expectSignedInCookies(await context.cookies(app.origin))
    expect(await session(page)).toMatchObject({ user: { name: ALICE.name, email: ALICE.email } })
    await signOut(page, context)
    await context.close()
  })

  it('keeps cookies to their host: a sibling host sees none of them', async () => {
    const { context, page } = await newContext()
    await signInWithCredentials(page, app)
    expect(await context.cookies(`https://sub.${HOST}:${app.port}/`)).toEqual([])
    expect(await context.cookies(`http://${HOST}:${app.port}/`), 'Secure cookies are not offered to plain http').toEqual([])
    await context.close()
  })
})
