/**
 * A passkey that fails verification (issue #43 item 8): the user lands on an error page that says
 * so, with a 4xx status and a way back to the sign-in page to try another method, and the log says
 * what failed in words an operator can act on. From two levels: a cloned authenticator's assertion
 * through `Auth`, and the error page rendered on its own.
 */
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { renderErrorPage } from '../../core/pages/index.js'
import { authRequest, ORIGIN } from '../fixtures/http.js'
import { PasskeyBrowser, passkeyConfig, seedPasskeyUser } from '../webauthn/helpers.js'

const ADA = { id: 'u-ada', email: 'ada@example.com', name: 'Ada' }
const THEME = { colorScheme: 'auto', logo: '', brandColor: '', buttonText: '' } as const

describe('a passkey that cannot be verified', () => {
  it('ends on a 4xx page saying the passkey could not be verified, linking back to sign-in', async () => {
    const store = createMemoryStore()
    const config = passkeyConfig(store)
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(store, browser.authenticator, ADA)
    expect((await browser.signIn()).headers.get('location')).toBe(ORIGIN)
    await browser.signOut()
    config.logger.error.mockClear()

    // A clone of the authenticator: its counter stays where the stored one already is.
    const { body } = await browser.options({ action: 'authenticate' })
    const stored = [...store.authenticators.values()][0]!.counter
    const options = body.options as PublicKeyCredentialRequestOptionsJSON
    const refused = await browser.answer('authenticate', browser.authenticator.authenticate(options, { counter: stored }))
    const location = refused.headers.get('location')!
    expect(location).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)

    const page = await Auth(authRequest({ path: new URL(location).pathname + new URL(location).search }), config)
    expect(page.status).toBeGreaterThanOrEqual(400)
    expect(page.status).toBeLessThan(500)
    const html = await page.text()
    expect(html).toContain('This passkey could not be verified')
    expect(html).toMatch(new RegExp(`<a [^>]*href="${ORIGIN}/auth/signin"`))
    expect(html).not.toContain('<h1>Error</h1>')

    // The logged error is Auth.js's shape: the class names the kind, `cause.err` says what failed.
    const logged = config.logger.error.mock.calls
      .map(([error]) => `${(error as Error).message} ${String((error as { cause?: { err?: Error } }).cause?.err?.message ?? '')}`)
      .join('\n')
    expect(logged).toMatch(/signature counter did not increase/)
    expect(logged).toContain(`stored ${stored}`)
    expect(logged).not.toMatch(/was lower than expected/)
  })
})

describe('the error page of a refused passkey', () => {
  it('is a 403 with the message and a button back to the sign-in page', () => {
    const page = renderErrorPage({
      theme: THEME,
      error: 'WebAuthnVerificationError',
      url: new URL(`${ORIGIN}/auth/error`),
      signInUrl: `${ORIGIN}/auth/signin`,
    })
    expect(page.status).toBe(403)
    expect(page.html).toContain('This passkey could not be verified')
    expect(page.html).toContain('another way to sign in')
    expect(page.html).toContain(`<a class="button" href="${ORIGIN}/auth/signin">`)
  })
})
