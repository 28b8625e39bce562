/**
 * The demo's password accounts in headless Chromium, as a visitor finds them: the home page's
 * "Sign in", "Create an account", the confirmation link read off the demo's development mailbox
 * page, the terms a new user accepts, the protected page and its password form (the old password
 * refused after a change); then "Forgot your password?", the reset
 * link from the mailbox, and signing in with the new password. Only the pages the demo serves.
 */
// First, so oidc-provider (which the demo's Local OP imports) loads without its Node-20 notice.
import '../fixtures/oidc-provider.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// @ts-expect-error the demo is plain JavaScript
import { createDemoApp } from '../../demo/app.js'
import { launchChromium } from '../fixtures/chromium.js'

let app: FastifyInstance
let origin: string
let dataDir: string
let browser: Browser

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'authchart-demo-password-'))
  const port = await freePort()
  app = (await createDemoApp({ dataDir, port, host: '127.0.0.1' })) as FastifyInstance
  origin = await app.listen({ port, host: '127.0.0.1' })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

async function newPage(): Promise<Page> {
  const context = await browser.newContext()
  context.setDefaultTimeout(10_000)
  return context.newPage()
}

async function openSignIn(page: Page): Promise<void> {
  await page.goto(`${origin}/`)
  await Promise.all([page.waitForURL(/\/auth\/signin/), page.locator('#sign-in').click()])
}

/** Opens the newest link the development mailbox shows for `address`. */
async function openMailedLink(page: Page, address: string, expectedMessages: number): Promise<void> {
  await page.goto(`${origin}/dev/mailbox`)
  const messages = page.locator('li.message', { has: page.locator('.to', { hasText: address }) })
  await expect.poll(async () => (await page.reload(), messages.count()), { timeout: 10_000 }).toBe(expectedMessages)
  await messages.first().getByRole('link', { name: 'Open the link' }).click()
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await openSignIn(page)
  // The demo account's form has a "Password" field too: this is the password provider's.
  await page.locator('#input-email-for-password-provider').fill(email)
  await page.locator('#input-password-for-password-provider').fill(password)
  await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/auth/signin') || url.search.includes('error')), page.getByRole('button', { name: 'Sign in with Password' }).click()])
}

describe('the demo, password accounts in Chromium', () => {
  const email = 'new.person@demo.test'

  it('creates an account, confirms it from the mailbox, accepts the terms, reaches the protected page and changes the password there; then resets it', async () => {
    const page = await newPage()
    await openSignIn(page)
    await Promise.all([page.waitForURL(/intent=signup/), page.getByRole('link', { name: 'Create an account' }).click()])
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill('demo-password-one-1')
    await Promise.all([page.waitForURL(/\/auth\/verify-request/), page.getByRole('button', { name: 'Sign up' }).click()])

    await openMailedLink(page, email, 1)
    await expect.poll(() => page.getByRole('heading', { name: 'Confirm your address' }).count()).toBe(1)
    await page.getByLabel('Password').fill('demo-password-one-1')
    await Promise.all([page.waitForURL((url) => !url.search.includes('intent=verify')), page.getByRole('button', { name: 'Confirm' }).click()])

    await signIn(page, email, 'demo-password-one-1')
    // A new user accepts the demo's terms before the first session.
    await expect.poll(() => page.getByText('Terms of service').count()).toBeGreaterThan(0)
    // The home page's "Sign in" asked for the protected page, where the accepted terms lead.
    await Promise.all([page.waitForURL(`${origin}/protected`), page.getByRole('button', { name: /accept/i }).click()])
    await expect.poll(() => page.getByText(email).count()).toBeGreaterThan(0)

    // Change it from the protected page, staying signed in here (a fresh sign-in needs no step-up).
    await page.getByLabel('New password').fill('demo-password-changed-3')
    await Promise.all([page.waitForURL(/\/protected\?password=saved/), page.getByRole('button', { name: 'Change password' }).click()])
    await expect.poll(() => page.locator('#password-saved').count()).toBe(1)
    const elsewhere = await newPage()
    await signIn(elsewhere, email, 'demo-password-one-1')
    expect(new URL(elsewhere.url()).searchParams.get('error')).toBe('CredentialsSignin')
    await signIn(elsewhere, email, 'demo-password-changed-3')
    await elsewhere.goto(`${origin}/protected`)
    expect(new URL(elsewhere.url()).pathname).toBe('/protected')

    const other = await newPage()
    await openSignIn(other)
    await Promise.all([other.waitForURL(/intent=forgot/), other.getByRole('link', { name: 'Forgot your password?' }).click()])
    await other.getByLabel('Email').fill(email)
    await Promise.all([other.waitForURL(/\/auth\/verify-request/), other.getByRole('button', { name: 'Send the link' }).click()])
    await openMailedLink(other, email, 2)
    await expect.poll(() => other.getByRole('heading', { name: 'Choose a new password' }).count()).toBe(1)
    await other.getByLabel('New password').fill('demo-password-two-2')
    await Promise.all([other.waitForURL((url) => !url.search.includes('intent=reset')), other.getByRole('button', { name: 'Set the password' }).click()])

    // The reset ended every session: the first browser's and the one signed in after the change.
    for (const signedOut of [page, elsewhere]) {
      await signedOut.goto(`${origin}/protected`)
      expect(new URL(signedOut.url()).pathname).toBe('/auth/signin')
    }
    await signIn(other, email, 'demo-password-two-2')
    await other.goto(`${origin}/protected`)
    expect(new URL(other.url()).pathname).toBe('/protected')
  })
})
