/**
 * Step-up as a person meets it, in headless Chromium: signed in more than ten minutes ago, the
 * user clicks "Turn on two-step verification", lands on "Confirm it's you", types a wrong password
 * (the page says so and nothing starts), then the right one, and the action resumes by itself: the
 * enrolment's QR code page. Only clicks and typing; the server's clock is moved forward, the
 * browser's cookies are the ones it kept.
 */
import type { Browser } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import Credentials from '../../providers/credentials.js'
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

describe('re-authentication in a browser', () => {
  it('asks a stale session to confirm with the password, then turns on two-step verification', async () => {
    const context = await browser.newContext()
    context.setDefaultTimeout(10_000)
    const page = await context.newPage()
    await signInWithCredentials(page, app)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 11 * 60_000)

    await page.goto(`${app.origin}/auth/two-factor`)
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/step/reauthenticate`),
      page.getByRole('button', { name: 'Turn on two-step verification' }).click(),
    ])
    await page.getByRole('heading', { name: "Confirm it's you to turn on two-step verification" }).waitFor()

    await page.getByLabel('Username').fill('alice')
    await page.getByLabel('Password').fill('guess')
    await Promise.all([page.waitForURL(`${app.origin}/auth/step/reauthenticate`), page.getByRole('button', { name: 'Confirm with your password' }).click()])
    await page.getByText('That did not work').waitFor()
    expect(store.secondFactors.size).toBe(0)

    await page.getByLabel('Username').fill('alice')
    await page.getByLabel('Password').fill('wonderland')
    // The confirmation page posts the original form again by itself.
    await Promise.all([page.waitForURL(`${app.origin}/auth/step/totp-enrolment`), page.getByRole('button', { name: 'Confirm with your password' }).click()])
    expect(await page.getByRole('img', { name: 'QR code for your authenticator app' }).locator('svg').count()).toBe(1)
    const [row] = [...store.sessions.values()]
    expect(row!.fva).toMatchObject({ pwd: Math.floor(Date.now() / 1000) })
    await context.close()
  })
})
