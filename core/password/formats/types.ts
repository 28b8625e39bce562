/**
 * What a stored-hash format is (one recogniser and one verifier) and the options the imported
 * formats need.
 *
 * @module
 */
import type { Argon2Implementation } from '../kdf.js'

/**
 * Firebase's project-wide "modified scrypt" parameters, base64 as the Firebase console and
 * `firebase auth:export` print them (Authentication → Users → ⋮ → Password hash parameters).
 */
export interface FirebaseScryptParameters {
  /** `base64_signer_key`. */
  signerKey: string
  /** `base64_salt_separator`. */
  saltSeparator: string
  /** `rounds` (scrypt r). */
  rounds: number
  /** `mem_cost` (scrypt N = 2^mem_cost). */
  memoryCost: number
}

/** Options for hashes imported from other systems. */
export interface ImportedFormatOptions {
  /** Needed to verify `$firebase-scrypt$` hashes; without it they never verify. */
  firebase?: FirebaseScryptParameters
  /** The app's own formats, tried after the built-in ones. */
  formats?: readonly StoredHashFormat[]
}

/** What a verifier may read beside the stored hash and the password. */
export interface FormatContext {
  imported: ImportedFormatOptions
  argon2Implementation: Argon2Implementation
}

/** One stored-hash format: does a string look like it, and does a password match it. */
export interface StoredHashFormat {
  /** A stable name (`'bcrypt'`, `'django-pbkdf2-sha256'`), for reports and logs. */
  readonly id: string
  /** Cheap syntactic test; no key derivation. */
  recognises(stored: string): boolean
  /**
   * Whether `password` matches `stored`. May throw on malformed input; the hasher turns a throw
   * into `valid: false`.
   */
  verify(stored: string, password: string, context: FormatContext): Promise<boolean>
}
