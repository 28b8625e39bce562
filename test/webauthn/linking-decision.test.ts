/**
 * The linking decision that keeps a passkey sign-up from being adopted by its address: which
 * stored users the e-mail flow, OAuth and credentials linking may never take over by address.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { AdapterUser } from '../../core/adapters.js'
import { isUnverifiedPasskeyUser } from '../../core/flows/webauthn/flow.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { ORIGIN } from '../fixtures/http.js'
import { seedPasskeyUser } from './helpers.js'

const SQUAT = { id: 'u-squat', email: 'newvictim@example.com' }

async function world() {
  const store = createMemoryStore()
  const adapter = MemoryAdapter(store)
  await seedPasskeyUser(store, new SoftwareAuthenticator(ORIGIN), SQUAT)
  const user = (await adapter.getUser(SQUAT.id))!
  return { store, adapter, user }
}

describe('a user signed up with a passkey for an address nobody verified', () => {
  it('is one when its address is unverified and a passkey opens it', async () => {
    const { adapter, user } = await world()
    expect(user.emailVerified).toBeNull()
    expect(await isUnverifiedPasskeyUser(adapter, user)).toBe(true)
  })

  it('is not one once the address was verified (a Date, or the ISO text a JSON adapter keeps)', async () => {
    const { adapter, user } = await world()
    expect(await isUnverifiedPasskeyUser(adapter, { ...user, emailVerified: new Date() })).toBe(false)
    const text = { ...user, emailVerified: new Date().toISOString() } as unknown as AdapterUser
    expect(await isUnverifiedPasskeyUser(adapter, text)).toBe(false)
  })

  it('is not one without a passkey: an unverified OAuth or credentials user is linked as Auth.js links it', async () => {
    const { adapter } = await world()
    const oauthUser = await adapter.createUser({ id: 'u-oauth', email: 'oauth@example.com', emailVerified: null })
    await adapter.linkAccount({ userId: oauthUser.id, provider: 'github', providerAccountId: '42', type: 'oauth' })
    expect(await isUnverifiedPasskeyUser(adapter, oauthUser)).toBe(false)
  })

  it('is one whatever else it links: its holder may add accounts of their own to look like anyone', async () => {
    const { adapter, user } = await world()
    await adapter.linkAccount({ userId: user.id, provider: 'github', providerAccountId: 'mallory', type: 'oauth' })
    expect(await isUnverifiedPasskeyUser(adapter, user)).toBe(true)
  })

  it('is never one for an adapter that stores no passkeys', async () => {
    const { adapter, user } = await world()
    const { listAuthenticatorsByUserId: _, ...withoutPasskeys } = adapter
    expect(await isUnverifiedPasskeyUser(withoutPasskeys, user)).toBe(false)
  })
})
