/**
 * The per-provider-session not-before time at the unit level: a logout by the provider ends the
 * JWT sessions signed in through that provider session up to that second, and no others; a session
 * read without a store asks no one, and answers at once (no promise), whatever the token names.
 */
import { describe, expect, it } from 'vitest'
import { assertConfig } from '../../core/config/resolve-config.js'
import { endJwtSessionsOfProviderSession, isJwtSessionEnded } from '../../core/session/lifecycle.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { ALICE, testConfig } from '../fixtures/http.js'

const T0 = 1_900_000_000
const signedInThrough = (sid: string, at: number, idp = 'op') => ({ sub: ALICE.id, auth_time: at, sid, idp })

function countingGets(store: { get: (key: string) => Promise<string | null> }): () => number {
  let gets = 0
  const get = store.get.bind(store)
  store.get = (key) => (gets++, get(key))
  return () => gets
}

describe('the not-before time of a provider session', () => {
  it('ends the sessions signed in through that provider session up to the logout, and no others', async () => {
    const config = assertConfig(testConfig({ store: memoryAuthStore() }))
    await endJwtSessionsOfProviderSession(config, 'op', 'sid-1', T0)
    expect(await isJwtSessionEnded(config, signedInThrough('sid-1', T0 - 60), T0 + 10)).toBe('provider-logout')
    expect(await isJwtSessionEnded(config, signedInThrough('sid-1', T0), T0 + 10), 'in the very second of the logout').toBe('provider-logout')
    expect(await isJwtSessionEnded(config, signedInThrough('sid-1', T0 + 1), T0 + 10), 'signed in again after it').toBe(false)
    expect(await isJwtSessionEnded(config, signedInThrough('sid-2', T0 - 60), T0 + 10), 'another provider session').toBe(false)
    expect(await isJwtSessionEnded(config, signedInThrough('sid-1', T0 - 60, 'other-op'), T0 + 10), 'the same sid at another provider').toBe(false)
  })

  it('is asked of the store only when one is configured: the default read answers at once, with no I/O', async () => {
    const plain = assertConfig(testConfig())
    const plainGets = countingGets(plain.store)
    const answer = isJwtSessionEnded(plain, signedInThrough('sid-1', T0 - 60), T0)
    expect(answer).toBe(false)
    expect(plainGets()).toBe(0)

    const shared = assertConfig(testConfig({ store: memoryAuthStore() }))
    const sharedGets = countingGets(shared.store)
    expect(await isJwtSessionEnded(shared, signedInThrough('sid-1', T0 - 60), T0)).toBe(false)
    expect(sharedGets(), 'the user not-before and the provider session not-before').toBe(2)
  })

  it('cannot be recorded without a store: the caller is told why', async () => {
    const plain = assertConfig(testConfig())
    await expect(endJwtSessionsOfProviderSession(plain, 'op', 'sid-1', T0)).rejects.toThrow(/needs a `store`/)
  })
})
