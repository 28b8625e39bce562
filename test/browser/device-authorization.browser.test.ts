/**
 * The device authorization grant as people meet it, in headless Chromium: a script plays the
 * device (it asks for codes over HTTP and polls), and Alice, in the browser, opens the link the
 * device shows, is sent to sign in and back, and clicks Approve; the device's next poll gets its
 * token, and `deviceSession` with it answers Alice. A second device's code is typed into the form
 * by hand and denied; that device is told `access_denied`. Only clicks, typing and page loads on
 * the browser's side.
 */
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { DEVICE_CODE_GRANT, deviceAuthorization, deviceSession } from '../../core/device-authorization.js'
import type { AuthConfig } from '../../core/types.js'
import Credentials from '../../providers/credentials.js'
import { launchChromium } from '../fixtures/chromium.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { signInWithCredentials, startPageFlowsApp, type PageFlowsApp } from './page-flows-app.js'

const ALICE = { id: 'u-alice', name: 'alice', email: 'alice@example.test' }

let app: PageFlowsApp
let browser: Browser
let config: AuthConfig

beforeAll(async () => {
  const adapter = MemoryAdapter(createMemoryStore())
  await adapter.createUser({ ...ALICE, emailVerified: null })
  app = await startPageFlowsApp(() => {
    config = {
      secret: SECRET,
      trustHost: true,
      logger: spyLogger(),
      adapter,
      session: { strategy: 'jwt' },
      providers: [
        Credentials({
          credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
          authorize: ({ username, password }) => (username === 'alice' && password === 'wonderland' ? { ...ALICE } : null),
        }),
      ],
      deviceAuthorization: deviceAuthorization({ clients: [{ clientId: 'acme-cli', name: 'Acme CLI' }], interval: 1 }),
    }
    return config
  })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
})

/** The device: a script posting forms to the application, as a CLI would. */
const device = {
  async post(path: string, form: Record<string, string>) {
    const response = await fetch(`${app.origin}/auth${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'AcmeCLI/2.1' }, body: new URLSearchParams(form) })
    return { status: response.status, body: (await response.json()) as Record<string, string | number> }
  },
  codes() {
    return this.post('/device_authorization', { client_id: 'acme-cli', scope: 'projects:read' })
  },
  poll(deviceCode: string) {
    return this.post('/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, client_id: 'acme-cli' })
  },
  /** Polls as RFC 8628 asks, once per interval, until the answer is no longer pending. */
  async pollUntilAnswered(deviceCode: string, interval: number) {
    for (let attempt = 0; attempt < 20; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, interval * 1000 + 100))
      const answered = await this.poll(deviceCode)
      if (answered.body.error !== 'authorization_pending') return answered
    }
    throw new Error('the device was never answered')
  },
}

describe('a device signed in from the browser', () => {
  it('is approved by the signed-in user at the link it shows, and polls its way to a session of theirs', async () => {
    const { status, body: issued } = await device.codes()
    expect(status).toBe(200)
    expect((await device.poll(String(issued.device_code))).body).toEqual({ error: 'authorization_pending' })

    const context = await browser.newContext()
    context.setDefaultTimeout(10_000)
    const page = await context.newPage()
    const link = String(issued.verification_uri_complete)
    expect(link).toBe(`${app.origin}/auth/device?user_code=${issued.user_code}`)
    // Signed out, the link sends her to sign in, and back to it.
    await page.goto(link)
    await page.waitForURL(/\/auth\/signin\?/)
    await signInWithCredentials(page, app, { open: false, landing: link })
    await page.getByRole('heading', { name: 'Sign in Acme CLI?' }).waitFor()
    expect(await page.locator('.scopes').textContent()).toContain('projects:read')
    expect(await page.locator('.asked-by').textContent()).toBe('AcmeCLI/2.1')
    expect(await page.locator('.user-code').textContent()).toBe(issued.user_code)
    // Loading the page again approves nothing.
    await page.reload()
    expect((await device.poll(String(issued.device_code))).body.error).toMatch(/^(authorization_pending|slow_down)$/)
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.getByRole('heading', { name: 'Device signed in' }).waitFor()

    const redeemed = await device.pollUntilAnswered(String(issued.device_code), Number(issued.interval) + 5)
    expect(redeemed.status).toBe(200)
    expect(redeemed.body.token_type).toBe('Bearer')
    const session = await deviceSession(new Request(`${app.origin}/api/me`, { headers: { authorization: `Bearer ${redeemed.body.access_token}` } }), config)
    expect(session?.user).toMatchObject({ email: ALICE.email, name: ALICE.name })
    // The code is spent.
    expect((await device.poll(String(issued.device_code))).body).toEqual({ error: 'invalid_grant' })
    await context.close()
  })

  it('is denied when the signed-in user types its code and clicks Deny', async () => {
    const { body: issued } = await device.codes()
    const context = await browser.newContext()
    context.setDefaultTimeout(10_000)
    const page = await context.newPage()
    await signInWithCredentials(page, app)
    await page.goto(`${app.origin}/auth/device`)
    // Typed as people type it: lower case, without the dash.
    await page.getByLabel('Enter the code shown on your device').fill(String(issued.user_code).replace('-', '').toLowerCase())
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Sign in Acme CLI?' }).waitFor()
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.getByRole('heading', { name: 'Request denied' }).waitFor()
    expect((await device.pollUntilAnswered(String(issued.device_code), Number(issued.interval))).body).toEqual({ error: 'access_denied' })
    await context.close()
  })
})
