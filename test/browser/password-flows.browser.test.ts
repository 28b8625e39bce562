/**
 * The password flows as a person clicks them, in headless Chromium against `Auth` on loopback with
 * a real SMTP server: from the sign-in page's "Create an account", sign up, open the e-mailed link,
 * confirm with the password, sign in; "Forgot your password?", open the reset link, choose a new
 * password (the session signed in before it ends), sign in with the new one while the old one is
 * refused; a reset link opened twice does not set a password twice. Only clicks and typing: a form
 * that cannot be submitted or a cookie the browser drops fails here as it would for a person.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { AuthConfig } from '../../core/types.js'
import Nodemailer from '../../providers/nodemailer.js'
import Password from '../../providers/password.js'
import { launchChromium } from '../fixtures/chromium.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { seriousViolations } from '../fixtures/page-audit.js'
import { startSmtpServer, type RunningSmtpServer } from '../fixtures/smtp.js'
import { startPageFlowsApp, type PageFlowsApp } from './page-flows-app.js'

let app: PageFlowsApp
let smtp: RunningSmtpServer
let browser: Browser
const store = createMemoryStore()
const logger = spyLogger()

beforeAll(async () => {
  smtp = await startSmtpServer()
  app = await startPageFlowsApp(
    () =>
      ({
        secret: SECRET,
        trustHost: true,
        logger,
        adapter: MemoryAdapter(store),
        session: { strategy: 'database' },
        providers: [Password(), Nodemailer({ id: 'email', name: 'Email', server: smtp.url, from: 'authchart <no-reply@authchart.test>' })],
      }) as AuthConfig,
  )
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await smtp?.close()
})

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  // A flow that does not come back fails here, with the URL it stopped at.
  context.setDefaultTimeout(10_000)
  return context.newPage()
}

/** What the home page says: "Signed in as …" or "Not signed in". */
async function home(page: Page): Promise<string> {
  await page.goto(`${app.origin}/`)
  return (await page.locator('#who').textContent())!.trim()
}

/** The link in the newest message to `address` after `count` messages to it. */
async function linkInMail(address: string, count: number): Promise<string> {
  const toAddress = () => smtp.messages.filter((m) => m.to && 'text' in m.to && m.to.text === address)
  await expect.poll(() => toAddress().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(count)
  const text = toAddress()[count - 1]!.text ?? ''
  const link = text.match(/https?:\/\/\S+/)?.[0]
  if (!link) throw new Error(`no link in the message to ${address}`)
  return link
}

async function openSignIn(page: Page): Promise<void> {
  await page.goto(`${app.origin}/`)
  await Promise.all([page.waitForURL(`${app.origin}/auth/signin`), page.getByRole('link', { name: 'Sign in' }).click()])
}

async function signIn(page: Page, email: string, password: string): Promise<URL> {
  await openSignIn(page)
  await page.getByLabel('Email (Password)').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await Promise.all([page.waitForURL((url) => url.pathname !== '/auth/signin' || url.search.includes('error')), page.getByRole('button', { name: 'Sign in with Password' }).click()])
  return new URL(page.url())
}

async function signUp(page: Page, email: string, password: string): Promise<void> {
  await openSignIn(page)
  await Promise.all([page.waitForURL(/intent=signup/), page.getByRole('link', { name: 'Create an account' }).click()])
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Name (optional)').fill('Pat Person')
  await page.getByLabel('Password').fill(password)
  await Promise.all([page.waitForURL(/\/auth\/verify-request/), page.getByRole('button', { name: 'Sign up' }).click()])
}

describe('the password flows in Chromium', () => {
  const email = 'pat@password.test'
  const first = 'first-correct-horse-battery'
  const second = 'second-staple-lighthouse-ink'

  it('signs up, confirms the address from the e-mailed link with the password, and signs in', async () => {
    const page = await newPage()
    await signUp(page, email, first)
    // Before the address is proven the password does not sign in.
    expect((await signIn(page, email, first)).searchParams.get('error')).toBe('CredentialsSignin')
    const link = await linkInMail(email, 1)
    await page.goto(link)
    await expect.poll(() => page.getByRole('heading', { name: 'Confirm your address' }).count()).toBe(1)
    expect(await seriousViolations(browser, [{ name: 'verify', markup: await page.content() }])).toEqual([])
    await page.getByLabel('Password').fill(first)
    await Promise.all([page.waitForURL((url) => !url.search.includes('intent=verify')), page.getByRole('button', { name: 'Confirm' }).click()])
    expect((await signIn(page, email, first)).pathname).toBe('/')
    expect(await home(page)).toBe(`Signed in as ${email}`)
    await page.context().close()
  })

  it('resets a forgotten password from the e-mailed link: the session signed in before it ends, the new password signs in, the old one does not', async () => {
    const before = await newPage()
    expect((await signIn(before, email, first)).pathname).toBe('/')
    expect(await home(before)).toBe(`Signed in as ${email}`)

    const page = await newPage()
    const mailsBefore = smtp.messages.filter((m) => m.to && 'text' in m.to && m.to.text === email).length
    await openSignIn(page)
    await Promise.all([page.waitForURL(/intent=forgot/), page.getByRole('link', { name: 'Forgot your password?' }).click()])
    await page.getByLabel('Email').fill(email)
    await Promise.all([page.waitForURL(/\/auth\/verify-request/), page.getByRole('button', { name: 'Send the link' }).click()])
    const link = await linkInMail(email, mailsBefore + 1)
    await page.goto(link)
    await expect.poll(() => page.getByRole('heading', { name: 'Choose a new password' }).count()).toBe(1)
    expect(await seriousViolations(browser, [{ name: 'reset', markup: await page.content() }])).toEqual([])
    await page.getByLabel('New password').fill(second)
    await Promise.all([page.waitForURL((url) => !url.search.includes('intent=reset')), page.getByRole('button', { name: 'Set the password' }).click()])

    expect(await home(before)).toBe('Not signed in')
    expect((await signIn(page, email, first)).searchParams.get('error')).toBe('CredentialsSignin')
    expect((await signIn(page, email, second)).pathname).toBe('/')
    expect(await home(page)).toBe(`Signed in as ${email}`)

    // The same link opened again (a second tab, the back button) sets nothing.
    const again = await newPage()
    await again.goto(link)
    if ((await again.getByLabel('New password').count()) > 0) {
      await again.getByLabel('New password').fill('third-attempt-from-old-link')
      await Promise.all([again.waitForURL((url) => !url.search.includes('intent=reset')), again.getByRole('button', { name: 'Set the password' }).click()])
    }
    expect((await signIn(again, email, 'third-attempt-from-old-link')).searchParams.get('error')).toBe('CredentialsSignin')
    expect((await signIn(again, email, second)).pathname).toBe('/')
    for (const p of [before, page, again]) await p.context().close()
  })

  it('never wrote a password or a link token to the log', () => {
    const logged = JSON.stringify([logger.error.mock.calls, logger.warn.mock.calls, logger.debug.mock.calls])
    for (const secret of [first, second, 'third-attempt-from-old-link']) expect(logged).not.toContain(secret)
    for (const message of smtp.messages) {
      const token = (message.text ?? '').match(/token=([^&\s]+)/)?.[1]
      if (token) expect(logged).not.toContain(token)
    }
  })
})
