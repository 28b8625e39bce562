/**
 * The password part of the adapter contract: a hash per user, read and written by user id, never
 * on the user row, gone with its user. Run on every adapter that implements it.
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Adapter, AdapterUser } from '../../core/adapters.js'
import '../../core/flows/password/adapter.js'

/** Runs the password contract against `adapter()`. */
export function passwordAdapterContract(name: string, adapter: () => Required<Adapter>): void {
  const newUser = () =>
    adapter().createUser({ id: randomUUID(), email: `pw-${randomUUID()}@example.test`, emailVerified: null, name: null, image: null } as AdapterUser)

  describe(`password adapter contract: ${name}`, () => {
    it('has no password for a new user, then the one it was given, replaced by the next', async () => {
      const user = await newUser()
      expect(await adapter().getUserPassword(user.id)).toBeNull()
      await adapter().setUserPassword(user.id, '$argon2id$v=19$m=19456,t=2,p=1$first')
      expect(await adapter().getUserPassword(user.id)).toBe('$argon2id$v=19$m=19456,t=2,p=1$first')
      await adapter().setUserPassword(user.id, '$argon2id$v=19$m=19456,t=2,p=1$second')
      expect(await adapter().getUserPassword(user.id)).toBe('$argon2id$v=19$m=19456,t=2,p=1$second')
    })

    it("keeps each user's password apart", async () => {
      const [alice, bob] = [await newUser(), await newUser()]
      await adapter().setUserPassword(alice.id, 'hash-of-alice')
      expect(await adapter().getUserPassword(bob.id)).toBeNull()
      await adapter().setUserPassword(bob.id, 'hash-of-bob')
      expect(await adapter().getUserPassword(alice.id)).toBe('hash-of-alice')
    })

    it('removes a password with null, and a second removal is no error', async () => {
      const user = await newUser()
      await adapter().setUserPassword(user.id, 'hash')
      await adapter().setUserPassword(user.id, null)
      expect(await adapter().getUserPassword(user.id)).toBeNull()
      await adapter().setUserPassword(user.id, null)
      expect(await adapter().getUserPassword(user.id)).toBeNull()
    })

    it('never puts the hash on the user row', async () => {
      const user = await newUser()
      await adapter().setUserPassword(user.id, 'hash-not-on-the-row')
      const read = [await adapter().getUser(user.id), await adapter().getUserByEmail(user.email)]
      for (const row of read) expect(JSON.stringify(row)).not.toContain('hash-not-on-the-row')
    })

    it('deletes the password with its user', async () => {
      const user = await newUser()
      await adapter().setUserPassword(user.id, 'hash')
      await adapter().deleteUser(user.id)
      expect(await adapter().getUserPassword(user.id)).toBeNull()
    })

    it('refuses a password for a user that does not exist', async () => {
      await expect(Promise.resolve().then(() => adapter().setUserPassword(randomUUID(), 'hash'))).rejects.toThrow()
    })
  })
}
