/**
 * Every built-in page flow a user can click, in headless Chromium: credentials; an e-mail link and
 * an e-mail code (a real SMTP server on loopback); passkey sign-up (its address proved by an
 * e-mailed code), sign-in and adding a passkey (the DevTools virtual authenticator); OpenID
 * Connect at a real provider whose login and consent
 * pages are clicked; turning on two-step verification (the key read off the page, the code computed
 * with otpauth, as an authenticator app would), then signing in with a code and with a backup code;
 * the terms step, declined and accepted; the sessions page; sign-out. Only clicks and typing: the
 * forms post themselves, so a cookie the browser drops or a form that cannot be submitted fails
 * here as it would for a person. Every page of our origin is checked for duplicate ids as it loads.
 */
import { TOTP } from 'otpauth'
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { AuthConfig } from '../../core/types.js'
import { termsExtension } from '../../extensions/terms.js'
import Credentials from '../../providers/credentials.js'
import Nodemailer from '../../providers/nodemailer.js'
import Passkey from '../../providers/passkey.js'
import { launchChromium } from '../fixtures/chromium.js'
import { seriousViolations } from '../fixtures/page-audit.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, OP_LOGIN, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { startSmtpServer, type RunningSmtpServer } from '../fixtures/smtp.js'
import { CLIENT_SECRET, opClient } from '../oauth/helpers.js'
import { signInWithCredentials, startPageFlowsApp, type PageFlowsApp } from './page-flows-app.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

/** Users of the credentials form; `tess` has not accepted the terms yet. */
const PASSWORDS: Record<string, string> = { alice: 'wonderland', tess: 'terms-first', sam: 'two-browsers', bob: 'backup-plan' }
const TERMS_VERSION = '2026-11'

let app: PageFlowsApp
let op: RunningOidcProvider
let smtp: RunningSmtpServer
let browser: Browser
const store = createMemoryStore()
const acceptedTerms = new Map<string, string>()
const logger = spyLogger()


beforeAll(async () => {
  smtp = await startSmtpServer()
  app = await startPageFlowsApp(async (origin) => {
    op = await startOidcProvider({
      loginForm: true,
      consentForm: true,
      clients: [await opClient('client_secret_basic', 'op', { redirect_uris: [`${origin}/auth/callback/op`], post_logout_redirect_uris: [`${origin}/`] })],
    })
    return {
      secret: SECRET,
      secondFactor: totp(),
      stepUp: stepUp(),
      trustHost: true,
      logger,
      adapter: MemoryAdapter(store),
      session: { strategy: 'database' },
      experimental: { enableWebAuthn: true },
      extensions: [
        termsExtension({
          version: TERMS_VERSION,
          html: '<p>Be excellent to each other.</p>',
          // Everyone but tess accepted long ago: the other flows are not about the terms.
          acceptedVersion: (userId) => acceptedTerms.get(userId) ?? (store.users.get(userId)?.email?.startsWith('tess@') ? null : TERMS_VERSION),
          recordAcceptance: (userId, version) => void acceptedTerms.set(userId, version),
        }),
      ],
      providers: [
        Credentials({
          credentials: {
            username: { label: 'Username', autocomplete: 'username' },
            password: { label: 'Password', type: 'password', autocomplete: 'current-password' },
          },
          authorize: ({ username, password }) =>
            typeof username === 'string' && PASSWORDS[username] !== undefined && PASSWORDS[username] === password
              ? { id: `user-${username}`, name: username, email: `${username}@credentials.test` }
              : null,
        }),
        {
          id: 'op',
          name: 'Test OP',
          type: 'oidc',
          issuer: op.issuer,
          clientId: 'op',
          clientSecret: CLIENT_SECRET,
          checks: ['pkce', 'state', 'nonce'],
        },
        Nodemailer({ id: 'email', name: 'Email', server: smtp.url, from: 'authchart <no-reply@authchart.test>', code: true }),
        Passkey(),
      ],
    } as AuthConfig
  })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await op?.close()
  await smtp?.close()
})

/** The pages of our origin a browser profile loaded (path without query), with their repeated ids and their markup as loaded. */
type LoadedPages = Map<string, string[]> & { snapshots?: Map<string, string[]> }


/**
 * A fresh browser profile. Every document of our origin reports its ids as it loads (an init
 * script, before the page's own), so {@link expectUniqueIds} can check every page a flow went
 * through, not only the ones it looked at.
 */
async function newContext(options: { width?: number } = {}): Promise<{ context: BrowserContext; page: Page; loaded: LoadedPages }> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 } })
  // A flow that does not come back fails here, with the URL it stopped at, before the test times out.
  context.setDefaultTimeout(10_000)
  const loaded: LoadedPages = new Map()
  loaded.snapshots = new Map()
  await context.exposeBinding('__reportIds', ({ frame }, ids: string[], markup: string) => {
    const url = new URL(frame.url())
    if (url.origin !== app.origin) return
    const repeated = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))]
    loaded.set(url.pathname, [...(loaded.get(url.pathname) ?? []), ...repeated])
    loaded.snapshots!.set(url.pathname, [...(loaded.snapshots!.get(url.pathname) ?? []), markup])
  })
  await context.addInitScript(() => {
    document.addEventListener('DOMContentLoaded', () => {
      const ids = [...document.querySelectorAll('[id]')].map((element) => element.id)
      const report = (window as unknown as { __reportIds: (ids: string[], markup: string) => Promise<void> }).__reportIds
      void report(ids, document.documentElement.outerHTML)
    })
  })
  return { context, page: await context.newPage(), loaded }
}

/**
 * Each of `pages` was loaded in this profile, no page it loaded had an id twice, and axe finds no
 * serious or critical violation in any state of `pages` it loaded: each state's markup, as the
 * browser had it when loaded (its scripts had run), is audited in a page of its own (so a flow that
 * moved on at once is audited too), and its screenshot kept under test/browser/output/.
 */
async function expectUniqueIds(loaded: LoadedPages, pages: string[]): Promise<void> {
  expect([...loaded.keys()]).toEqual(expect.arrayContaining(pages))
  expect(Object.fromEntries([...loaded].filter(([, repeated]) => repeated.length > 0))).toEqual({})
  const states = pages.flatMap((path) => [...new Set(loaded.snapshots?.get(path) ?? [])].map((markup) => ({ name: path, markup })))
  expect(await seriousViolations(browser, states)).toEqual([])
}

/** What the app's home page says, freshly loaded: "Signed in as …" or "Not signed in". */
async function home(page: Page): Promise<string> {
  await page.goto(`${app.origin}/`)
  return (await page.locator('#who').textContent())!.trim()
}

/** From the home page: the sign-in link. */
async function openSignIn(page: Page): Promise<void> {
  await page.goto(`${app.origin}/`)
  await Promise.all([page.waitForURL(`${app.origin}/auth/signin`), page.getByRole('link', { name: 'Sign in' }).click()])
}

async function signInWithPassword(page: Page, username: string, password = PASSWORDS[username]!): Promise<void> {
  await openSignIn(page)
  await signInWithCredentials(page, app, {
    username,
    password,
    landing: (url) => url.pathname !== '/auth/signin' || url.search.includes('error'),
    open: false,
  })
}

/** From the home page: the sign-out link, then the sign-out page's button. */
async function signOut(page: Page): Promise<void> {
  await page.goto(`${app.origin}/`)
  await Promise.all([page.waitForURL(`${app.origin}/auth/signout`), page.getByRole('link', { name: 'Sign out' }).click()])
  await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Sign out' }).click()])
  expect(await home(page)).toBe('Not signed in')
}

/** The next message the SMTP server received for `address`. */
async function mailTo(address: string): Promise<{ text: string }> {
  await expect.poll(() => smtp.messages.some((m) => m.to && 'text' in m.to && m.to.text === address), { timeout: 10_000 }).toBe(true)
  const mail = smtp.messages.filter((m) => m.to && 'text' in m.to && m.to.text === address).at(-1)!
  return { text: mail.text ?? '' }
}

async function requestEmail(page: Page, address: string): Promise<void> {
  await openSignIn(page)
  await page.getByLabel('Email', { exact: true }).fill(address)
  await Promise.all([page.waitForURL(/\/auth\/verify-request/), page.getByRole('button', { name: 'Sign in with Email' }).click()])
}

/** The computed look of an element, for comparing two pages' error boxes and buttons. */
function look(page: Page, selector: string) {
  return page.locator(selector).first().evaluate((element) => {
    const style = getComputedStyle(element)
    return { background: style.backgroundColor, color: style.color, borderRadius: style.borderRadius, padding: style.padding }
  })
}

/** The sign-in page's error box look, the reference every other error box must match. */
async function signInErrorLook(page: Page) {
  await page.goto(`${app.origin}/auth/signin?error=CredentialsSignin`)
  return look(page, '.error')
}

describe('every built-in page flow in Chromium', () => {
  it('credentials: a wrong password keeps the username and focuses the password, the right one signs in, sign-out signs out', async () => {
    const { context, page, loaded } = await newContext()
    await openSignIn(page)
    // The page opens on its first field.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('username')
    await signInWithPassword(page, 'alice', 'not-the-password')
    expect(page.url()).toMatch(/\/auth\/signin\?error=CredentialsSignin/)
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Sign in failed. Check the details you provided are correct.')
    expect(await page.getByLabel('Username').inputValue()).toBe('alice')
    expect(await page.getByLabel('Password').inputValue()).toBe('')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('password')

    await page.getByLabel('Password').fill(PASSWORDS.alice!)
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Sign in with Credentials' }).click()])
    expect(await home(page)).toBe('Signed in as alice@credentials.test')
    await signOut(page)
    // Nothing typed outlives the sign-in: a fresh sign-in page starts empty.
    await openSignIn(page)
    expect(await page.getByLabel('Username').inputValue()).toBe('')
    await expectUniqueIds(loaded, ['/auth/signin', '/auth/signout'])
    await context.close()
  })

  it('e-mail link: the verify-request page, the link from the mail, the confirmation page (its address wraps only at its dots and @), signed in', async () => {
    const { context, page, loaded } = await newContext({ width: 375 })
    const address = 'maximilian.mustermann-schmidt@analytical-engines.example'
    await requestEmail(page, address)
    expect(await page.locator('h1').textContent()).toBe('Check your email')
    const link = /^(http:\/\/\S+)$/m.exec((await mailTo(address)).text)![1]!
    // The mail client opens the link.
    await page.goto(link)
    expect(await page.locator('h1').textContent()).toBe('Sign in')
    // Where the address wraps, it wraps before a dot or the @, never inside a word.
    const breaks = await page.locator('p strong.address').evaluate((strong) => {
      const range = document.createRange()
      const text = strong.textContent!
      const walker = document.createTreeWalker(strong, NodeFilter.SHOW_TEXT)
      const tops: { char: string; top: number }[] = []
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < node.textContent!.length; i++) {
          range.setStart(node, i)
          range.setEnd(node, i + 1)
          tops.push({ char: node.textContent![i]!, top: Math.round(range.getBoundingClientRect().top) })
        }
      }
      return { text, lineStarts: tops.filter((t, i) => i > 0 && t.top > tops[i - 1]!.top).map((t) => t.char) }
    })
    expect(breaks.text).toBe(address)
    expect(breaks.lineStarts.length, 'the address is long enough to wrap at 375 px').toBeGreaterThan(0)
    for (const char of breaks.lineStarts) expect(['.', '@']).toContain(char)
    expect(await page.$eval('.card', (card) => card.scrollWidth - card.clientWidth)).toBe(0)

    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: `Sign in as ${address}` }).click()])
    expect(await home(page)).toBe(`Signed in as ${address}`)
    await expectUniqueIds(loaded, ['/auth/signin', '/auth/verify-request', '/auth/callback/email'])
    await context.close()
  })

  it('e-mail code: a wrong code shows the sign-in page\'s error box, the code from the mail signs in', async () => {
    const { context, page, loaded } = await newContext()
    const reference = await signInErrorLook(page)
    const address = 'coder@example.com'
    await requestEmail(page, address)
    const code = /enter this code on the sign-in page: (\S+)/.exec((await mailTo(address)).text)![1]!
    await page.getByLabel('Or enter the code from the e-mail').fill(code === 'AAAAAAAA' ? 'BBBBBBBB' : 'AAAAAAAA')
    await Promise.all([page.waitForURL(/error=InvalidCode/), page.getByRole('button', { name: 'Sign in', exact: true }).click()])
    expect(await page.getByRole('alert').textContent()).toBe('That code is not right. Check it and try again.')
    expect(await look(page, '.error')).toEqual(reference)

    await page.getByLabel('Or enter the code from the e-mail').fill(code)
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Sign in', exact: true }).click()])
    expect(await home(page)).toBe(`Signed in as ${address}`)
    await expectUniqueIds(loaded, ['/auth/signin', '/auth/verify-request'])
    await context.close()
  })

  it('OpenID Connect: the provider\'s login and consent pages, back signed in; Cancel there comes back with an honest message', async () => {
    const { context, page, loaded } = await newContext()
    await openSignIn(page)
    await Promise.all([page.waitForURL(`${op.issuer}/interaction/**`), page.getByRole('button', { name: 'Sign in with Test OP' }).click()])
    await page.getByLabel('Login').fill(OP_LOGIN.login)
    await page.getByLabel('Password').fill(OP_LOGIN.password)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Allow op to know who you are?' }).waitFor()
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Allow' }).click()])
    expect(await home(page)).toBe(`Signed in as ${OP_ACCOUNT.email.toLowerCase()}`)
    await context.close()

    const second = await newContext()
    await openSignIn(second.page)
    await Promise.all([second.page.waitForURL(`${op.issuer}/interaction/**`), second.page.getByRole('button', { name: 'Sign in with Test OP' }).click()])
    await Promise.all([second.page.waitForURL(`${app.origin}/auth/signin?error=OAuthCallbackError`), second.page.getByRole('button', { name: 'Cancel' }).click()])
    const message = await second.page.getByRole('alert').textContent()
    expect(message).toBe('The sign-in was cancelled or refused at the provider. Try again, or choose another way to sign in.')
    expect(message).not.toContain('different account')
    expect(await home(second.page)).toBe('Not signed in')
    await expectUniqueIds(loaded, ['/auth/signin'])
    await expectUniqueIds(second.loaded, ['/auth/signin'])
    await second.context.close()
  })

  it('terms: Decline is the secondary button and says what happened; accepting signs in', async () => {
    const { context, page, loaded } = await newContext()
    await signInWithPassword(page, 'tess')
    expect(page.url()).toBe(`${app.origin}/auth/step/signin-completion`)
    expect(await page.locator('h1').textContent()).toBe('Terms of service')
    const accept = await look(page, 'button:text-is("Accept")')
    const decline = await look(page, 'button:text-is("Decline")')
    expect(decline.background, 'Decline does not look like the way on').not.toBe(accept.background)
    expect(decline.background).toBe('rgba(0, 0, 0, 0)')
    await Promise.all([page.waitForURL(/\/auth\/error\?error=AccessDenied/), page.getByRole('button', { name: 'Decline' }).click()])
    expect(await page.locator('h1').textContent()).toBe('Not signed in')
    expect(await page.locator('.message').textContent()).toContain('You declined the terms of service')
    expect(await page.locator('.message').textContent()).not.toContain('permission')
    expect(await home(page)).toBe('Not signed in')

    await signInWithPassword(page, 'tess')
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Accept' }).click()])
    expect(await home(page)).toBe('Signed in as tess@credentials.test')
    await expectUniqueIds(loaded, ['/auth/signin', '/auth/step/signin-completion', '/auth/error'])
    await context.close()
  })

  it('passkeys: sign up with the e-mailed code, sign out, sign in with the passkey, add a second one (confirmed on the page); a refused ceremony reads as a sentence', async () => {
    const { context, page, loaded } = await newContext()
    // A browser without passkey autofill, where the button signs in (with it, the virtual
    // authenticator would answer the page's autofill request at once).
    await context.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = async () => false
    })
    const cdp: CDPSession = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable', { enableUI: false })
    const authenticator = (options: Record<string, unknown> = {}) =>
      cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true, ...options },
      } as never)
    const first = await authenticator()
    const address = 'ada@example.com'

    await openSignIn(page)
    // The e-mail provider's field and the passkey form's read apart.
    await page.getByLabel('Email (Passkey)').fill(address)
    await page.getByRole('button', { name: 'Sign in with Passkey' }).click()
    // A sign-up proves the address first: the code the e-mail brought.
    await expect.poll(() => page.getByRole('status').textContent()).toBe('We sent a code to your e-mail address. Enter it to continue.')
    const code = /enter this code on the sign-in page: (\S+)/.exec((await mailTo(address)).text)![1]!
    await page.getByLabel('Code from the e-mail').fill(code === 'AAAAAAAA' ? 'BBBBBBBB' : 'AAAAAAAA')
    await page.getByRole('button', { name: 'Sign in with Passkey' }).click()
    await expect.poll(() => page.getByRole('status').textContent()).toBe('That code is not right. Check it and try again.')
    await page.getByLabel('Code from the e-mail').fill(code)
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Sign in with Passkey' }).click()])
    expect(await home(page)).toBe(`Signed in as ${address}`)
    await signOut(page)

    await openSignIn(page)
    await page.getByLabel('Email (Passkey)').fill(address)
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Sign in with Passkey' }).click()])
    expect(await home(page)).toBe(`Signed in as ${address}`)

    // This device already holds the account's passkey: the browser refuses, the page says why.
    await openSignIn(page)
    await page.getByRole('button', { name: 'Add a passkey to your account' }).click()
    await expect.poll(() => page.getByRole('status').textContent()).toBe('This device already has a passkey for your account.')

    // A second device (a security key) adds a second passkey; the page confirms it.
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId: first.authenticatorId, enabled: false })
    const second = await authenticator({ transport: 'usb' })
    await openSignIn(page)
    await page.getByRole('button', { name: 'Add a passkey to your account' }).click()
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Passkey added. You can sign in with it from now on.')
    expect(new URL(page.url()).pathname).toBe('/auth/signin')
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId: second.authenticatorId })).credentials).toHaveLength(1)
    const user = [...store.users.values()].find((u) => u.email === address)!
    expect([...store.authenticators.values()].filter((a) => a.userId === user.id)).toHaveLength(2)
    expect(await home(page)).toBe(`Signed in as ${address}`)

    // A ceremony the authenticator cannot complete (no user verification where it is required).
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId: second.authenticatorId, enabled: false })
    const unverified = await authenticator({ transport: 'usb', isUserVerified: false, hasUserVerification: false })
    await openSignIn(page)
    await page.getByRole('button', { name: 'Add a passkey to your account' }).click()
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 15_000 }).not.toBe('')
    // Chromium's own text: "The operation either timed out or was not allowed. See: https://www.w3.org/TR/webauthn-2/…"
    const status = (await page.getByRole('status').textContent())!
    expect(status).toBe('The passkey request was cancelled or timed out. Try again when you are ready.')
    expect(status).not.toMatch(/https?:|w3\.org|See:/)
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: unverified.authenticatorId })
    await expectUniqueIds(loaded, ['/auth/signin', '/auth/signout'])
    await context.close()
  })

  it('two-step verification: turned on from the settings page, then a sign-in answered with the app\'s code, and one with a backup code; turned off from the same page', async () => {
    const { context, page, loaded } = await newContext()
    const reference = await signInErrorLook(page)
    await signInWithPassword(page, 'bob')
    expect(await home(page)).toBe('Signed in as bob@credentials.test')
    await Promise.all([page.waitForURL(`${app.origin}/auth/two-factor`), page.getByRole('link', { name: 'Two-step verification' }).click()])
    await Promise.all([page.waitForURL(`${app.origin}/auth/step/totp-enrolment`), page.getByRole('button', { name: 'Turn on two-step verification' }).click()])
    // The authenticator app scans the code; this one reads the key printed beside it.
    expect(await page.getByRole('img', { name: 'QR code for your authenticator app' }).locator('svg').count()).toBe(1)
    const secret = (await page.locator('code.secret').textContent())!.trim()
    const app2fa = new TOTP({ secret, digits: 6, period: 30, algorithm: 'SHA1' })
    const now = () => Date.now()
    await page.getByLabel('Code from the app').fill(app2fa.generate({ timestamp: now() }))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByRole('heading', { name: 'Two-step verification is on' }).waitFor()
    const backupCodes = await page.locator('ul.codes code').allTextContents()
    expect(backupCodes).toHaveLength(10)
    await page.getByRole('link', { name: 'Done' }).click()
    await signOut(page)

    // Signing in asks for the code; a wrong one shows the sign-in page's error box.
    await signInWithPassword(page, 'bob')
    expect(page.url()).toBe(`${app.origin}/auth/step/signin-completion`)
    expect(await page.locator('h1').textContent()).toBe('Two-step verification')
    await page.getByLabel('Code').fill('000000')
    await page.getByRole('button', { name: 'Verify' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('That code is not right. Check it and try again.')
    expect(await look(page, '.error')).toEqual(reference)
    // The code enrolment spent is spent: the app's next one (one step of drift is accepted).
    await page.getByLabel('Code').fill(app2fa.generate({ timestamp: now() + 30_000 }))
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Verify' }).click()])
    expect(await home(page)).toBe('Signed in as bob@credentials.test')
    await signOut(page)

    // The app is lost: a backup code from the page shown at enrolment.
    await signInWithPassword(page, 'bob')
    await page.getByLabel('Code').fill(backupCodes[0]!)
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Verify' }).click()])
    expect(await home(page)).toBe('Signed in as bob@credentials.test')
    await Promise.all([page.waitForURL(`${app.origin}/auth/two-factor`), page.getByRole('link', { name: 'Two-step verification' }).click()])
    expect(await page.locator('.card').textContent()).toContain('9 backup codes left')
    // New backup codes replace the rest, shown once, copied to the clipboard by their button.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.origin })
    await page.getByRole('button', { name: 'Get new backup codes' }).click()
    await page.getByRole('heading', { name: 'New backup codes' }).waitFor()
    const newCodes = await page.locator('ul.codes code').allTextContents()
    expect(newCodes).toHaveLength(10)
    expect(newCodes.filter((code) => backupCodes.includes(code))).toEqual([])
    await page.getByRole('button', { name: 'Copy the codes' }).click()
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1)
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(newCodes.join('\n'))
    expect(await page.getByRole('link', { name: 'Download the codes' }).getAttribute('download')).toBe('backup-codes.txt')
    await Promise.all([page.waitForURL(`${app.origin}/auth/two-factor`), page.getByRole('link', { name: 'Done' }).click()])
    expect(await page.locator('.card').textContent()).toContain('10 backup codes left')
    // Turned off from the same page, after a page that asks: the next sign-in asks for no code.
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/two-factor?confirm=disable`),
      page.getByRole('link', { name: 'Turn off two-step verification…' }).click(),
    ])
    await page.getByRole('heading', { name: 'Turn off two-step verification?' }).waitFor()
    await page.getByRole('button', { name: 'Turn off two-step verification' }).click()
    await expect.poll(() => page.locator('.card').textContent()).toContain('Two-step verification is off')
    expect(page.url()).toBe(`${app.origin}/auth/two-factor`)
    await page.goto(`${app.origin}/`)
    await signOut(page)
    await signInWithPassword(page, 'bob')
    expect(await home(page)).toBe('Signed in as bob@credentials.test')
    // The backup codes page is the answer to the enrolment's POST: it loads at that step's URL.
    await expectUniqueIds(loaded, ['/auth/two-factor', '/auth/step/totp-enrolment', '/auth/step/signin-completion'])
    await context.close()
  })

  it('sessions: two browsers signed in, one signs the other out from the sessions page', async () => {
    const laptop = await newContext()
    const phone = await newContext()
    await signInWithPassword(laptop.page, 'sam')
    await signInWithPassword(phone.page, 'sam')
    expect(await home(phone.page)).toBe('Signed in as sam@credentials.test')

    await Promise.all([laptop.page.waitForURL(`${app.origin}/auth/sessions`), laptop.page.getByRole('link', { name: 'Your sessions' }).click()])
    await expect.poll(() => laptop.page.locator('li.session').count()).toBe(2)
    expect(await laptop.page.locator('li.session', { hasText: 'This browser' }).count()).toBe(1)
    const other = laptop.page.locator('li.session', { hasNotText: 'This browser' })
    expect(await other.locator('strong').textContent()).toBe('Chrome on Linux')
    await Promise.all([laptop.page.waitForURL(/\/auth\/sessions$/), other.getByRole('button', { name: /^Sign out Chrome on Linux/ }).click()])
    expect(await laptop.page.getByRole('status').textContent()).toBe('Signed out of 1 session.')
    expect(await laptop.page.locator('li.session').count()).toBe(1)

    expect(await home(phone.page)).toBe('Not signed in')
    expect(await home(laptop.page)).toBe('Signed in as sam@credentials.test')

    // A page of another origin on the same site (its SameSite=Lax cookie goes along) frames the
    // sessions page to have its buttons clicked through a decoy: Chromium refuses to show it.
    const framing = await laptop.context.newPage()
    await framing.goto(`http://localhost:${new URL(op.issuer).port}/.well-known/openid-configuration`)
    await framing.setContent(`<iframe src="${app.origin}/auth/sessions" width="600" height="600"></iframe>`)
    const framed = framing.frames().find((frame) => frame !== framing.mainFrame())!
    await framed.waitForLoadState('domcontentloaded').catch(() => {})
    expect(await framed.locator('li.session').count(), 'the framed page shows no session').toBe(0)
    await framing.close()
    await expectUniqueIds(laptop.loaded, ['/auth/signin', '/auth/sessions'])
    await laptop.context.close()
    await phone.context.close()
  })
})
