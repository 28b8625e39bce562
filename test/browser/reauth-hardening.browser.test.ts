/**
 * Issue 48 item 2 and issue 43 item 7 as a person meets them, in headless Chromium. A stale
 * session opened on a crafted link (`callbackUrl=//evil.example/phish` and its spellings) confirms
 * with the right password, and the browser ends on this site, never on the other host. After
 * "Sign out everywhere, this browser too" the page asks to confirm exactly that, and a user with
 * no password is offered no password form.
 */
import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import Credentials from '../../providers/credentials.js'
import Email from '../../providers/email.js'
import { launchChromium } from '../fixtures/chromium.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { signInWithCredentials, startPageFlowsApp, type PageFlowsApp } from './page-flows-app.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

let app: PageFlowsApp
let browser: Browser
const store = createMemoryStore()

beforeAll(async () => {
  app = await startPageFlowsApp(() => ({
    secret: SECRET,
    secondFactor: totp(),
    stepUp: stepUp(),
    trustHost: true,
    logger: spyLogger(),
    adapter: MemoryAdapter(store),
    session: { strategy: 'database' },
    providers: [
      Credentials({
        credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
        authorize: ({ username, password }) =>
          username === 'alice' && password === 'wonderland' ? { id: 'user-alice', name: 'alice', email: 'alice@credentials.test' } : null,
      }),
      Email({ sendVerificationRequest: async () => {} }),
    ],
  }))
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
})

afterEach(() => {
  vi.useRealTimers()
})

/** A browser whose every request to the attacker's host is answered by a page that says so. */
async function guardedContext(): Promise<{ context: BrowserContext; phished: string[] }> {
  const context = await browser.newContext()
  context.setDefaultTimeout(10_000)
  const phished: string[] = []
  await context.route((url) => url.hostname.endsWith('evil.example'), async (route) => {
    phished.push(route.request().url())
    await route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>phished</h1>' })
  })
  return { context, phished }
}

const stale = () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(Date.now() + 11 * 60_000)
}

describe('re-authentication hardening in a browser', () => {
  for (const target of ['//evil.example/phish', '/\\evil.example/phish', 'SITE//evil.example/phish']) {
    it(`ends on this site after a crafted callbackUrl ${JSON.stringify(target)}`, async () => {
      const { context, phished } = await guardedContext()
      const page = await context.newPage()
      await signInWithCredentials(page, app)
      stale()
      const callbackUrl = target.replace('SITE', app.origin)
      await page.goto(`${app.origin}/auth/reauthenticate?${new URLSearchParams({ callbackUrl })}`)
      await page.getByRole('heading', { name: "Confirm it's you to continue" }).waitFor()
      await page.getByLabel('Username').fill('alice')
      await page.getByLabel('Password').fill('wonderland')
      // Where the browser went after the proof (an on-site page the app does not have shows
      // Chromium's own error page, so the navigations are read, not the final URL).
      const navigations: string[] = []
      page.on('request', (request) => {
        if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigations.push(request.url())
      })
      await Promise.all([
        page.waitForEvent('response', { predicate: (response) => response.request().isNavigationRequest() && !response.url().includes('/auth/') }),
        page.getByRole('button', { name: 'Confirm with your password' }).click(),
      ])
      await page.waitForLoadState('load')
      expect(navigations.length).toBeGreaterThan(0)
      expect(navigations.map((url) => new URL(url).origin)).toEqual(navigations.map(() => app.origin))
      expect(phished).toEqual([])
      await context.close()
    })
  }

  it('asks to confirm "sign out everywhere, this browser too" after that button, and offers no password to a user without one', async () => {
    const { context } = await guardedContext()
    const page = await context.newPage()
    await signInWithCredentials(page, app)
    stale()
    await page.goto(`${app.origin}/auth/sessions`)
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/step/reauthenticate`),
      page.getByRole('button', { name: 'Sign out everywhere, this browser too' }).click(),
    ])
    await page.getByRole('heading', { name: "Confirm it's you to sign out everywhere, this browser too" }).waitFor()
    expect(await page.getByLabel('Password').count()).toBe(1)

    // The same user without a credentials account (an e-mail-only one now): the code, no password.
    for (const [key, account] of store.accounts) if ((account.type as string) === 'credentials') store.accounts.delete(key)
    await page.goto(`${app.origin}/auth/sessions`)
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/step/reauthenticate`),
      page.getByRole('button', { name: 'Sign out everywhere, this browser too' }).click(),
    ])
    await page.getByRole('button', { name: /Send a code to a\*\*\*@credentials\.test/ }).waitFor()
    expect(await page.getByLabel('Password').count()).toBe(0)
    expect(store.sessions.size).toBeGreaterThan(0)
    await context.close()
  })
})
