/**
 * Issue 48, item 1, as a property: whatever a `jwt` callback merges from `update()` (an `email`,
 * a `sub`, an `id`, a `name`, nested objects, in any mix), the holder of Alice's stale cookie who
 * then proves Mallory's factors (her password, a code from her mailbox) never gets a session that
 * acts for Alice and is fresh, and no code is ever mailed to an address the adapter does not store
 * for the session's user.
 */
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ALICE, Client } from '../fixtures/http.js'
import { isFresh, later, mergingApp, post, tokenOf, update } from './fixture.js'

const MALLORY = { id: 'u-3', email: 'mallory@evil.example' }

const claimValue = fc.oneof(
  fc.constantFrom(MALLORY.email, MALLORY.id, ALICE.id, ALICE.email, 'MALLORY@EVIL.EXAMPLE', 'mallory+x@evil.example', ''),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.constant(null),
)
const claims = fc.dictionary(fc.constantFrom('email', 'sub', 'id', 'name', 'picture', 'user'), claimValue, { maxKeys: 4 })
/** What a client may send through update(): flat claims, or claims nested one or two levels. */
const updateData = fc.oneof(claims, fc.record({ user: claims }), fc.record({ user: fc.record({ email: claimValue }), email: claimValue }))

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('update() data merged into the token', () => {
  it("never lets Mallory's proof make a session acting for Alice fresh", async () => {
    await fc.assert(
      fc.asyncProperty(updateData, async (data) => {
        const { config, store, sent } = mergingApp()
        const thief = new Client(config)
        await thief.signIn({ username: 'alice', password: 'wonderland' })
        later(11)
        await update(thief, data)
        await post(thief, '/two-factor', {})
        await post(thief, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
        // The attacker types every code that reached Mallory's mailbox, then Mallory's password.
        for (const mail of sent.filter((m) => m.to !== ALICE.email)) {
          await post(thief, '/step/reauthenticate', { event: 'reauth.emailCode', code: mail.code })
        }
        await post(thief, '/step/reauthenticate', { event: 'reauth.password', username: 'mallory', password: 'mallory-pw' })

        const token = await tokenOf(thief)
        // Every code went to an address the adapter stores for the session's user at the time.
        for (const mail of sent) {
          expect([...store.users.values()].some((user) => user.email === mail.to)).toBe(true)
        }
        if (token?.sub === ALICE.id) {
          expect(sent.every((mail) => mail.to === ALICE.email)).toBe(true)
          expect(await isFresh(thief)).toBe(false)
        }
      }),
      { numRuns: 40, seed: 48_1 },
    )
  }, 60_000)
})
