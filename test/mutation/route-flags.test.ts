/**
 * Two flags of the routing table that test/mutation/gate.test.ts reaches only in passing: the
 * passkey answer takes its callback URL from the request (a passkey sign-in lands where the
 * request asked), and the verify-request page of a provider that sends codes hands out a CSRF
 * token only when it is the built-in page (its form is the code's).
 */
import { describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import { authRequest, ORIGIN, setCookie } from '../fixtures/http.js'
import { emailConfig } from '../email/helpers.js'
import { PasskeyBrowser, passkeyConfig, seedPasskeyUser } from '../webauthn/helpers.js'
import { createMemoryStore } from '../../adapters/memory.js'

const CSRF_COOKIE = '__Host-authjs.csrf-token'
const CALLBACK_COOKIE = '__Secure-authjs.callback-url'

describe('the passkey answer (POST callback webauthn)', () => {
  it('lands on the callback URL the request names', async () => {
    const store = createMemoryStore()
    const browser = new PasskeyBrowser(passkeyConfig(store))
    await seedPasskeyUser(store, browser.authenticator, { id: 'u-ada', email: 'ada@example.com', name: 'Ada' })
    browser.jar.cookies.set(CALLBACK_COOKIE, `${ORIGIN}/after-passkey`)
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/after-passkey`)
  })
})

describe('the verify-request page (GET verify-request none)', () => {
  const page = (config: ReturnType<typeof emailConfig>['config']) =>
    Auth(authRequest({ path: '/auth/verify-request', query: { provider: 'email', type: 'email' } }), config)

  it("hands out a CSRF token when it is the built-in page of a provider that sends codes", async () => {
    const { config } = emailConfig({ provider: { code: true } })
    expect(setCookie(await page(config), CSRF_COOKIE)?.value).toBeTruthy()
  })

  it('hands out none when the application has a verify-request page of its own', async () => {
    const own = emailConfig({ provider: { code: true }, overrides: { pages: { verifyRequest: '/check-your-mail' } } })
    expect(setCookie(await page(own.config), CSRF_COOKIE)).toBeUndefined()
  })
})
