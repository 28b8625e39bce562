/**
 * A registration binds the new passkey to this relying party: an attestation made for another RP
 * id (a look-alike site relaying the options) stores nothing, on every way a passkey is registered
 * apart from the plain sign-up — a signed-in user adding one, a sign-up after the e-mailed code —
 * and against an RP id the provider configures (where the request's own host is the wrong one).
 * Each case first registers a passkey for the right RP id, so it fails both ways.
 */
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import Email from '../../providers/email.js'
import Passkey from '../../providers/passkey.js'
import type { Outbox } from '../email/helpers.js'
import { ORIGIN, setCookie } from '../fixtures/http.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { PasskeyBrowser, passkeyConfig, SESSION_COOKIE, seedPasskeyUser, signInAs } from './helpers.js'

const ADA = { id: 'u-ada', email: 'ada@example.com', name: 'Ada' }
const LOOK_ALIKE = 'authchart.test.evil.example'
const REFUSED = `${ORIGIN}/auth/error?error=WebAuthnVerificationError`

function expectRefusedForRpId(response: Response, config: ReturnType<typeof passkeyConfig>): void {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(REFUSED)
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  const logged = config.logger.error.mock.calls.map(([e]) => `${(e as Error).message} ${String(((e as Error).cause as { err?: Error })?.err?.message ?? '')}`)
  expect(logged.join('\n')).toMatch(/RP ID/i)
}

const passkeysOf = (store: MemoryStore, userId: string) => [...store.authenticators.values()].filter((a) => a.userId === userId).length

describe('a registration made for another RP id is refused', () => {
  it('when a signed-in user adds a passkey: nothing stored, still signed in as before', async () => {
    const store = createMemoryStore()
    const config = passkeyConfig(store)
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(store, browser.authenticator, ADA)
    await signInAs(store, browser.jar, ADA.id)

    expectRefusedForRpId(await browser.register({ action: 'register' }, { rpId: LOOK_ALIKE }), config)
    expect(passkeysOf(store, ADA.id)).toBe(1)
    expect((await browser.session())?.user?.email).toBe(ADA.email)

    // The same ceremony for this RP id adds the passkey.
    expect((await browser.register({ action: 'register' })).headers.get('location')).toBe(ORIGIN)
    expect(passkeysOf(store, ADA.id)).toBe(2)
  })

  it('when a sign-up answers after the e-mailed code: no user, no passkey, no session', async () => {
    const store = createMemoryStore()
    const outbox: Outbox = []
    const config = passkeyConfig(store, {
      providers: [Passkey(), Email({ sendVerificationRequest: async (params) => void outbox.push(params) })],
    })
    const signUp = async (email: string, rpId?: string) => {
      const browser = new PasskeyBrowser(config)
      expect((await browser.postOptions({ email })).body).toEqual({ action: 'verify-email' })
      const { body } = await browser.submitCode(outbox.at(-1)!.code!)
      expect(body?.action).toBe('register')
      const options = body!.options as PublicKeyCredentialCreationOptionsJSON
      return { browser, response: await browser.answer('register', browser.authenticator.register(options, rpId ? { rpId } : {})) }
    }

    const relayed = await signUp('mallory@example.com', LOOK_ALIKE)
    expectRefusedForRpId(relayed.response, config)
    expect(await relayed.browser.session()).toBeNull()
    expect(store.users.size).toBe(0)
    expect(store.authenticators.size).toBe(0)

    const honest = await signUp('grace@example.com')
    expect(setCookie(honest.response, SESSION_COOKIE)).toBeDefined()
    expect(store.authenticators.size).toBe(1)
  })

  it("against the provider's configured RP id: one made for the request's own host is refused", async () => {
    const rpId = 'authchart.test'
    const store = createMemoryStore()
    const config = passkeyConfig(store, {
      providers: [Passkey({ relayingParty: { id: 'login.authchart.test', name: 'Authchart', origin: ORIGIN } })],
    })
    await MemoryAdapter(store).createUser({ ...ADA, emailVerified: null })
    const browser = new PasskeyBrowser(config, new SoftwareAuthenticator(ORIGIN))
    await signInAs(store, browser.jar, ADA.id)

    const { body } = await browser.options({ action: 'register' })
    const options = body.options as PublicKeyCredentialCreationOptionsJSON
    expect(options.rp.id).toBe('login.authchart.test')
    // An authenticator that takes the page's host for the RP id signs for the wrong one.
    expectRefusedForRpId(await browser.answer('register', browser.authenticator.register(options, { rpId })), config)
    expect(passkeysOf(store, ADA.id)).toBe(0)

    expect((await browser.register({ action: 'register' })).headers.get('location')).toBe(ORIGIN)
    expect(passkeysOf(store, ADA.id)).toBe(1)
  })
})
