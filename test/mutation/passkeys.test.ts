/**
 * What a passkey sign-up tells the application's events, down to what the mutation group of the
 * passkey users (`storeWebAuthnUser`) changes: `linkAccount` with the new user, the passkey's
 * account and the user as the profile, as Auth.js calls it.
 */
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore } from '../../adapters/memory.js'
import { ORIGIN } from '../fixtures/http.js'
import { PasskeyBrowser, passkeyConfig } from '../webauthn/helpers.js'

describe('the events of a passkey sign-up', () => {
  it('tell linkAccount the new user, the passkey account and the user as the profile', async () => {
    const store = createMemoryStore()
    const events = { createUser: vi.fn(), linkAccount: vi.fn() }
    const browser = new PasskeyBrowser(passkeyConfig(store, { events }))
    const response = await browser.register({ email: 'eve@example.com' })
    expect(response.headers.get('location')).toBe(ORIGIN)
    const [user] = [...store.users.values()]
    const [passkey] = [...store.authenticators.values()]
    expect(events.createUser).toHaveBeenCalledOnce()
    expect(events.linkAccount).toHaveBeenCalledOnce()
    const [message] = events.linkAccount.mock.calls[0] as [{ user: { id: string; email: string }; account: Record<string, unknown>; profile: unknown }]
    expect(message.user).toMatchObject({ id: user!.id, email: 'eve@example.com' })
    expect(message.account).toMatchObject({ provider: 'passkey', type: 'webauthn', providerAccountId: passkey!.credentialID })
    expect(message.profile).toEqual(message.user)
  })
})
