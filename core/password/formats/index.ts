/**
 * The one table of stored-hash formats the hasher recognises, in the order they are tried.
 *
 * @module
 */
import { argon2Format } from './argon2.js'
import { bcryptFormat } from './bcrypt.js'
import { betterAuthScryptFormat } from './better-auth-scrypt.js'
import { firebaseScryptFormat } from './firebase-scrypt.js'
import { djangoPbkdf2Format, phcPbkdf2Format } from './pbkdf2.js'
import { scryptFormat } from './scrypt.js'
import type { StoredHashFormat } from './types.js'

export { firebaseStoredHash } from './firebase-scrypt.js'
export type { FirebaseScryptParameters, FormatContext, ImportedFormatOptions, StoredHashFormat } from './types.js'

/** Every built-in format; each recogniser is a prefix or shape test, so at most one matches. */
export const STORED_HASH_FORMATS: readonly StoredHashFormat[] = [
  argon2Format,
  scryptFormat,
  bcryptFormat,
  firebaseScryptFormat,
  djangoPbkdf2Format,
  phcPbkdf2Format,
  betterAuthScryptFormat,
]

/** The first format that recognises `stored`, built-in formats before the app's own. */
export function findFormat(stored: string, extra: readonly StoredHashFormat[] = []): StoredHashFormat | undefined {
  for (const format of STORED_HASH_FORMATS) if (format.recognises(stored)) return format
  for (const format of extra) if (format.recognises(stored)) return format
  return undefined
}
