/**
 * better-auth's default password hash (`@better-auth/utils/password`): `<salt>:<key>` in hex,
 * where the salt is 16 random bytes written as 32 hex characters and used *as that text* (not
 * decoded), and key = scrypt(NFKC(password), salt, N = 16384, r = 16, p = 1, 64 bytes).
 *
 * @module
 */
import { bytesEqual, decodeHex, utf8 } from '../encoding.js'
import { scryptDigest } from '../kdf.js'
import type { StoredHashFormat } from './types.js'

const BETTER_AUTH = /^([0-9a-f]{32}):([0-9a-f]{128})$/

/** The scrypt cost better-auth hashes with. */
export const BETTER_AUTH_SCRYPT = { N: 16384, r: 16, p: 1, outputLength: 64 } as const

/** better-auth's `salt:key` hex string. */
export const betterAuthScryptFormat: StoredHashFormat = {
  id: 'better-auth-scrypt',
  recognises: (stored) => BETTER_AUTH.test(stored),
  async verify(stored, password) {
    const match = BETTER_AUTH.exec(stored)
    const expected = match && decodeHex(match[2]!)
    if (!match || !expected) return false
    const computed = await scryptDigest(BETTER_AUTH_SCRYPT, utf8(password.normalize('NFKC')), utf8(match[1]!))
    return bytesEqual(computed, expected)
  },
}
