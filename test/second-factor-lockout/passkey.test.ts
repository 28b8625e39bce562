/**
 * Issue #48 item 3, the owner's passkey: once someone who knows the password has spent the user's
 * codes and this minute's late check (from the client the test requests come from), a sign-in
 * with the user's passkey still has its TOTP code checked, counted on its own. Before the fix the
 * code was refused unchecked, as every other client's.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { checkCode, CLEAN_CLIENT_CODES, MAX_USER_ATTEMPTS, sealFactorSecret } from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { ORIGIN, SECRET } from '../fixtures/http.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { PasskeyBrowser, passkeyConfig, seedPasskeyUser, SESSION_COOKIE } from '../webauthn/helpers.js'
import { wrongCode } from './codes.js'

const STEP = '/step/signin-completion'
const now = () => Math.floor(Date.now() / 1000)
// Within one minute: the late check is one per minute.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime((Math.ceil(Date.now() / 60_000) * 60 + 5) * 1000)
})
afterEach(() => vi.useRealTimers())

describe('a passkey sign-in while the user’s codes are spent', () => {
  it('has its right code checked and signs in', async () => {
    const memory = createMemoryStore()
    const store = memoryAuthStore()
    const config = passkeyConfig(memory, { store })
    const authenticator = new SoftwareAuthenticator(ORIGIN)
    await seedPasskeyUser(memory, authenticator, { id: 'u-p', email: 'pat@example.com' })
    const secret = createTotpSecret()
    const adapter = MemoryAdapter(memory)
    await adapter.createSecondFactor!({ id: 'totp:u-p', userId: 'u-p', type: 'totp', secret: await sealFactorSecret(secret, [SECRET]), createdAt: new Date() })
    // The password holder's wrong codes, from the unknown client the test's requests are, and
    // this minute's late check.
    for (let i = 0; i <= MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES; i++) {
      await checkCode({ adapter, store, secrets: [SECRET], userId: 'u-p', challenge: `attacker-${i}`, code: wrongCode(secret, now()), at: now() })
    }
    const locked = await checkCode({ adapter, store, secrets: [SECRET], userId: 'u-p', challenge: 'password-holder', code: totpCode(secret, now()), at: now() })
    expect(locked).toMatchObject({ ok: false, reason: 'locked' })

    const owner = new PasskeyBrowser(config, authenticator)
    const atStep = await owner.signIn()
    expect(atStep.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    const signedIn = await owner.client.send({ path: STEP, body: { csrfToken: await owner.client.csrfToken(), code: totpCode(secret, now() + 30) } })
    expect(signedIn.headers.get('location')).not.toContain(STEP)
    expect(owner.jar.get(SESSION_COOKIE)).toBeDefined()
  })
})
