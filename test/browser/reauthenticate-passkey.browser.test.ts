/**
 * Step-up with a passkey as a person meets it, in headless Chromium with the CDP virtual
 * authenticator: signed in with the password, the user adds a passkey; more than ten minutes later
 * "Sign out of every other session" asks "Confirm it's you", the user confirms with the passkey,
 * and the revocation resumes by itself, once (database sessions); with JWT sessions, "Turn on
 * two-step verification" asks, and the enrolment starts once confirmed. Only clicks; the server's
 * clock is moved forward.
 */
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import Credentials from '../../providers/credentials.js'
import Passkey from '../../providers/passkey.js'
import { launchChromium } from '../fixtures/chromium.js'
import { decode } from '../../core/jwt.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { signInWithCredentials, startPageFlowsApp, type PageFlowsApp } from './page-flows-app.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

let app: PageFlowsApp
let jwtApp: PageFlowsApp
let browser: Browser
const store = createMemoryStore()
const jwtStore = createMemoryStore()
const USER_ID = 'user-alice'

const appConfig = (memory: typeof store, strategy: 'jwt' | 'database') => ({
  secret: SECRET,
  secondFactor: totp(),
  stepUp: stepUp(),
  trustHost: true,
  logger: spyLogger(),
  adapter: MemoryAdapter(memory),
  session: { strategy },
  experimental: { enableWebAuthn: true },
  providers: [
    Credentials({
      credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
      authorize: ({ username, password }) =>
        username === 'alice' && password === 'wonderland' ? { id: USER_ID, name: 'alice', email: 'alice@credentials.test' } : null,
    }),
    Passkey(),
  ],
})

beforeAll(async () => {
  // A JWT session's credentials user is in the adapter only when the application put it there.
  jwtStore.users.set(USER_ID, { id: USER_ID, name: 'alice', email: 'alice@credentials.test', emailVerified: null })
  ;[app, jwtApp, browser] = await Promise.all([
    startPageFlowsApp(() => appConfig(store, 'database')),
    startPageFlowsApp(() => appConfig(jwtStore, 'jwt')),
    launchChromium(),
  ])
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await Promise.all([app?.close(), jwtApp?.close()])
})

/** A browser context with the CDP virtual authenticator (a platform passkey, user verified). */
async function withAuthenticator(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext()
  context.setDefaultTimeout(10_000)
  // The button asks; passkey autofill would answer the sign-in page's own request at once.
  await context.addInitScript(() => {
    PublicKeyCredential.isConditionalMediationAvailable = async () => false
  })
  const page = await context.newPage()
  const cdp: CDPSession = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable', { enableUI: false })
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  } as never)
  return { context, page }
}

afterEach(() => {
  vi.useRealTimers()
})

/** Two more sessions of Alice's, on other devices. */
async function otherDevices(): Promise<void> {
  const userId = [...store.users.values()].find((u) => u.email === 'alice@credentials.test')!.id
  for (const token of ['device-1', 'device-2']) {
    await MemoryAdapter(store).createSession({ sessionToken: token, userId, expires: new Date(Date.now() + 86_400_000) })
  }
}

describe('re-authentication with a passkey in a browser', () => {
  it('asks a stale session, confirms with the passkey, and signs the other sessions out once', async () => {
    const { context, page } = await withAuthenticator()
    await signInWithCredentials(page, app)
    // Fresh: the passkey is added without asking.
    await page.goto(`${app.origin}/auth/signin`)
    await page.getByRole('button', { name: 'Add a passkey to your account' }).click()
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe('Passkey added. You can sign in with it from now on.')
    const [passkey] = [...store.authenticators.values()]
    const counterBefore = Number(passkey!.counter)
    await otherDevices()
    const sessions = store.sessions.size
    expect(sessions).toBeGreaterThanOrEqual(3)

    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 11 * 60_000)
    await page.goto(`${app.origin}/auth/sessions`)
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/step/reauthenticate`),
      page.getByRole('button', { name: 'Sign out of every other session' }).click(),
    ])
    await page.getByRole('heading', { name: "Confirm it's you to sign out of every other session" }).waitFor()
    expect(store.sessions.size).toBe(sessions)

    // The confirmation page posts the original form again by itself.
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/sessions`),
      page.getByRole('button', { name: 'Confirm with a passkey' }).click(),
    ])
    await page.getByText(`Signed out of ${sessions - 1} sessions.`).waitFor()
    expect(store.sessions.size).toBe(1)
    const [row] = [...store.sessions.values()]
    expect(row!.fva).toMatchObject({ hwk: Math.floor(Date.now() / 1000) })
    // The assertion's counter is stored (the virtual authenticator's grows with each use).
    expect(Number([...store.authenticators.values()][0]!.counter)).toBeGreaterThan(counterBefore)
    await context.close()
  })

  it('asks a stale JWT session before turning on two-step verification, confirms with the passkey, and starts the enrolment once', async () => {
    const { context, page } = await withAuthenticator()
    await signInWithCredentials(page, jwtApp)
    await page.goto(`${jwtApp.origin}/auth/signin`)
    await page.getByRole('button', { name: 'Add a passkey to your account' }).click()
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe('Passkey added. You can sign in with it from now on.')

    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 11 * 60_000)
    await page.goto(`${jwtApp.origin}/auth/two-factor`)
    await Promise.all([
      page.waitForURL(`${jwtApp.origin}/auth/step/reauthenticate`),
      page.getByRole('button', { name: 'Turn on two-step verification' }).click(),
    ])
    await page.getByRole('heading', { name: "Confirm it's you to turn on two-step verification" }).waitFor()
    expect((await context.cookies()).some((c) => c.name.endsWith('flow.totp-enrolment'))).toBe(false)

    // The confirmation page posts the original form again by itself: the enrolment starts.
    await Promise.all([
      page.waitForURL(`${jwtApp.origin}/auth/step/totp-enrolment`),
      page.getByRole('button', { name: 'Confirm with a passkey' }).click(),
    ])
    const cookie = (await context.cookies()).find((c) => c.name === 'authjs.session-token')!
    const token = (await decode({ token: cookie.value, secret: SECRET, salt: cookie.name })) as { fva?: Record<string, number> }
    expect(token.fva).toMatchObject({ hwk: Math.floor(Date.now() / 1000) })
    await context.close()
  })
})
