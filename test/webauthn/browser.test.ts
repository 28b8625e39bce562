/**
 * Passkeys in a real browser: headless Chromium with the DevTools virtual authenticator (CTAP2,
 * internal, resident keys, user verification) against the built-in sign-in page, served over real
 * HTTP by a Fastify app on 127.0.0.1 and opened as `http://localhost:<port>` (a secure context,
 * and a valid RP id, which an IP address is not). Nothing is scripted past the page: the browser
 * runs our served script and `@simplewebauthn/browser`, the authenticator answers, the forms post.
 * With an e-mail provider, a sign-up's code is read from the message a real SMTP server received.
 */
import type { CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import Nodemailer from '../../providers/nodemailer.js'
import Passkey from '../../providers/passkey.js'
import { startBrowserApp, type BrowserApp } from '../fixtures/browser-app.js'
import { startSmtpServer, type RunningSmtpServer } from '../fixtures/smtp.js'
import { passkeyConfig } from './helpers.js'

let server: BrowserApp
let origin: string
let store: MemoryStore

beforeAll(async () => {
  store = createMemoryStore()
  // JWT sessions here; the Node tests cover database sessions.
  server = await startBrowserApp(passkeyConfig(store, { session: { strategy: 'jwt' } }))
  origin = `http://localhost:${new URL(server.origin).port}`
})

afterAll(() => server?.close())

/**
 * A page with a fresh virtual authenticator, as a phone or laptop with a platform passkey store.
 * `autofill: false` is a browser without conditional mediation, where only the button signs in
 * (with it, the virtual authenticator answers the page's autofill request at once).
 */
async function pageWithAuthenticator(
  { autofill = true } = {},
  app: BrowserApp = server,
): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const context = await app.browser.newContext()
  if (!autofill) {
    await context.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = async () => false
    })
  }
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable', { enableUI: false })
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  return { page, cdp, authenticatorId }
}

/** Waits for the sign-in to land on the callback URL (the app's root), then reads the session. */
async function signedInAs(page: Page, at = origin): Promise<string | undefined> {
  await page.waitForURL(`${at}/`)
  return sessionEmail(page, at)
}

async function sessionEmail(page: Page, at = origin): Promise<string | undefined> {
  const session = (await (await page.request.get(`${at}/auth/session`)).json()) as { user?: { email?: string } } | null
  return session?.user?.email
}

async function signOut(page: Page, at = origin): Promise<void> {
  await page.goto(`${at}/auth/signout`)
  await Promise.all([page.waitForURL(`${at}/`), page.click('button[type="submit"]')])
  expect(await sessionEmail(page, at)).toBeUndefined()
}

describe('passkeys in Chromium with the virtual authenticator', () => {
  beforeEach(() => {
    store.users.clear()
    store.accounts.clear()
    store.authenticators.clear()
  })

  it('registers a passkey on the built-in page, signs out, and signs back in with it', async () => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator({ autofill: false })
    const requested: string[] = []
    page.on('request', (request) => requested.push(request.url()))
    await page.goto(`${origin}/auth/signin`)
    await page.fill('#input-email-for-passkey-provider', 'ada@example.com')
    await page.click('#submitButton-passkey')
    expect(await signedInAs(page)).toBe('ada@example.com')

    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]!.isResidentCredential).toBe(true)
    expect(store.authenticators.size).toBe(1)

    await signOut(page)
    await page.goto(`${origin}/auth/signin`)
    await page.fill('#input-email-for-passkey-provider', 'ada@example.com')
    await page.click('#submitButton-passkey')
    expect(await signedInAs(page)).toBe('ada@example.com')
    expect(store.authenticators.size, 'signed in with the passkey, not a second one').toBe(1)
    const [stored] = store.authenticators.values()
    expect(stored!.counter).toBe((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0]!.signCount)
    // The page, its script and @simplewebauthn/browser all come from our origin: no CDN.
    expect(requested.filter((url) => !url.startsWith(`${origin}/`))).toEqual([])
    await page.context().close()
  })

  it('signs in through conditional UI: the passkey offered in autofill, no button pressed', async () => {
    const { page } = await pageWithAuthenticator()
    await page.goto(`${origin}/auth/signin`)
    await page.fill('#input-email-for-passkey-provider', 'grace@example.com')
    await page.click('#submitButton-passkey')
    expect(await signedInAs(page)).toBe('grace@example.com')
    const [registered] = [...store.authenticators.values()].map((a) => a.counter)
    await signOut(page)

    await page.goto(`${origin}/auth/signin`)
    // The page's script starts a conditional (autofill) assertion on load; the authenticator
    // answers it with its discoverable credential and the form posts itself.
    expect(await signedInAs(page)).toBe('grace@example.com')
    // An assertion, not a second registration: the one passkey's counter grew.
    expect([...store.authenticators.values()].map((a) => a.counter)).toEqual([registered! + 1])
    await page.context().close()
  })

  it('lets a signed-in user add a second passkey to their account', async () => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator()
    await page.goto(`${origin}/auth/signin`)
    await page.fill('#input-email-for-passkey-provider', 'linus@example.com')
    await page.click('#submitButton-passkey')
    expect(await signedInAs(page)).toBe('linus@example.com')

    // A second device: another authenticator on the same browser.
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false })
    const second = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    })
    await page.goto(`${origin}/auth/signin`)
    await page.waitForSelector('#passkey-add:not([hidden])')
    await page.click('#passkey-add')
    // The page stays and confirms it; the user is still signed in.
    await expect.poll(() => page.textContent('#passkey-status')).toBe('Passkey added. You can sign in with it from now on.')
    expect(await sessionEmail(page)).toBe('linus@example.com')
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId: second.authenticatorId })
    expect(credentials).toHaveLength(1)
    const user = [...store.users.values()].find((u) => u.email === 'linus@example.com')!
    expect([...store.authenticators.values()].filter((a) => a.userId === user.id)).toHaveLength(2)
    await page.context().close()
  })
})

describe('a passkey sign-up that verifies its address by e-mail, in Chromium', () => {
  let smtp: RunningSmtpServer
  let verifying: BrowserApp
  let at: string
  const mailStore = createMemoryStore()

  beforeAll(async () => {
    smtp = await startSmtpServer()
    const providers = [Passkey(), Nodemailer({ server: smtp.url, from: 'authchart <no-reply@authchart.test>' })]
    verifying = await startBrowserApp(passkeyConfig(mailStore, { session: { strategy: 'jwt' }, providers }))
    at = `http://localhost:${new URL(verifying.origin).port}`
  })

  afterAll(async () => {
    await verifying?.close()
    await smtp?.close()
  })

  it('asks for the code the e-mail brought, registers the passkey, and signs in with it later', async () => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator({ autofill: false }, verifying)
    await page.goto(`${at}/auth/signin`)
    expect(await page.isHidden('#passkey-verify')).toBe(true)
    await page.fill('#input-email-for-passkey-provider', 'Margaret@Example.com')
    await page.click('#submitButton-passkey')
    await page.waitForSelector('#passkey-code:not([disabled])')
    expect(await page.textContent('#passkey-status')).toMatch(/sent a code/)

    const mail = await smtp.next()
    expect(mail.to && 'text' in mail.to ? mail.to.text : '').toBe('margaret@example.com')
    const code = /Or enter this code on the sign-in page: (\S+)/.exec(mail.text ?? '')![1]!
    // Nothing is registered before the code: the authenticator holds no credential yet.
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toEqual([])

    await page.fill('#passkey-code', code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ')
    await page.click('#submitButton-passkey')
    await page.waitForFunction(() => /That code is not right/.test(document.getElementById('passkey-status')?.textContent ?? ''))
    await page.fill('#passkey-code', code)
    await page.click('#submitButton-passkey')
    expect(await signedInAs(page, at)).toBe('margaret@example.com')
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1)
    const user = (await MemoryAdapter(mailStore).getUserByEmail('margaret@example.com'))!
    expect(user.emailVerified).toBeInstanceOf(Date)

    await signOut(page, at)
    await page.goto(`${at}/auth/signin`)
    await page.fill('#input-email-for-passkey-provider', 'margaret@example.com')
    await page.click('#submitButton-passkey')
    expect(await signedInAs(page, at)).toBe('margaret@example.com')
    expect(smtp.messages, 'signing in with the passkey sends nothing').toHaveLength(1)
    expect(mailStore.authenticators.size).toBe(1)
    await page.context().close()
  })
})
