/**
 * Password hashing: argon2id by default (RFC 9106 §4, second recommended option), scrypt where
 * neither argon2 implementation suits, and verification of hashes imported from other systems.
 * Hashes are PHC strings; both argon2 implementations write and read the same bytes.
 *
 * @module
 */
import { bytesEqual, utf8 } from './encoding.js'
import { findFormat, type FormatContext, type ImportedFormatOptions } from './formats/index.js'
import { parseArgon2Hash } from './formats/argon2.js'
import { parseScryptHash } from './formats/scrypt.js'
import { argon2Digest, scryptDigest, type Argon2Implementation } from './kdf.js'
import { formatPhc } from './phc.js'

export type { FirebaseScryptParameters, ImportedFormatOptions, StoredHashFormat } from './formats/index.js'
export type { Argon2Implementation } from './kdf.js'

/** A password hash in PHC string form (or an imported legacy format) and how to check one. */
export interface PasswordHasher {
  hash(password: string): Promise<string>
  /** `needsRehash`: valid, but the algorithm or parameters are not the current ones (re-hash and store). */
  verify(stored: string, password: string): Promise<{ valid: boolean; needsRehash: boolean }>
  /** Runs a full-cost hash of nothing, so a sign-in for an unknown user takes as long as a known one. */
  dummyVerify(password: string): Promise<void>
}

/** argon2 cost: memory in KiB, iterations, lanes. */
export interface Argon2Parameters {
  memoryCost: number
  timeCost: number
  parallelism: number
}

/** scrypt cost: log2 N, block size, parallelism. */
export interface ScryptParameters {
  ln: number
  r: number
  p: number
}

/** Options of {@link passwordHasher}. */
export interface PasswordHasherOptions {
  /** argon2id cost; unset fields keep {@link DEFAULT_ARGON2_PARAMETERS}. */
  argon2?: Partial<Argon2Parameters>
  /** `'argon2id'` (default) or `'scrypt'` for new hashes. */
  algorithm?: 'argon2id' | 'scrypt'
  /** What imported formats need (Firebase's project key). */
  imported?: ImportedFormatOptions
  /** scrypt cost for `algorithm: 'scrypt'`; unset fields keep {@link DEFAULT_SCRYPT_PARAMETERS}. */
  scrypt?: Partial<ScryptParameters>
  /** Which argon2 implementation runs: `'auto'` (default) prefers the native module. */
  argon2Implementation?: Argon2Implementation
}

/** RFC 9106 §4, the second recommended option: 64 MiB, 3 passes, 4 lanes. */
export const DEFAULT_ARGON2_PARAMETERS: Readonly<Argon2Parameters> = Object.freeze({
  memoryCost: 65536,
  timeCost: 3,
  parallelism: 4,
})

/** scrypt's interactive-login parameters (N = 2^17, r = 8, p = 1: 128 MiB), as OWASP lists them. */
export const DEFAULT_SCRYPT_PARAMETERS: Readonly<ScryptParameters> = Object.freeze({ ln: 17, r: 8, p: 1 })

const SALT_BYTES = 16
const DIGEST_BYTES = 32

function checkedInteger(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`password hashing: ${name} must be an integer in [${min}, ${max}], got ${value}`)
  return value
}

/**
 * Creates the app's password hasher. New hashes use `algorithm` with the configured cost; any
 * recognised stored hash verifies, and `needsRehash` tells the caller to store a fresh hash.
 * Verification never throws: a malformed or unknown stored hash is `valid: false`.
 */
export function passwordHasher(options: PasswordHasherOptions = {}): PasswordHasher {
  const algorithm = options.algorithm ?? 'argon2id'
  const argon2 = { ...DEFAULT_ARGON2_PARAMETERS, ...options.argon2 }
  checkedInteger('argon2.parallelism', argon2.parallelism, 1, 255)
  checkedInteger('argon2.memoryCost', argon2.memoryCost, 8 * argon2.parallelism, 4 * 1024 * 1024 - 1)
  checkedInteger('argon2.timeCost', argon2.timeCost, 1, 64)
  const scrypt = { ...DEFAULT_SCRYPT_PARAMETERS, ...options.scrypt }
  checkedInteger('scrypt.ln', scrypt.ln, 1, 20)
  checkedInteger('scrypt.r', scrypt.r, 1, 32)
  checkedInteger('scrypt.p', scrypt.p, 1, 16)
  const implementation = options.argon2Implementation ?? 'auto'
  const context: FormatContext = { imported: options.imported ?? {}, argon2Implementation: implementation }

  async function hashWith(password: string, salt: Uint8Array): Promise<string> {
    if (algorithm === 'scrypt') {
      const computation = { N: 2 ** scrypt.ln, r: scrypt.r, p: scrypt.p, outputLength: DIGEST_BYTES }
      const digest = await scryptDigest(computation, utf8(password), salt)
      const parameters = { ln: String(scrypt.ln), r: String(scrypt.r), p: String(scrypt.p) }
      return formatPhc({ id: 'scrypt', parameters, salt, digest })
    }
    const computation = { variant: 'argon2id', version: 0x13, outputLength: DIGEST_BYTES, ...argon2 } as const
    const digest = await argon2Digest(computation, password, salt, implementation)
    const parameters = { m: String(argon2.memoryCost), t: String(argon2.timeCost), p: String(argon2.parallelism) }
    return formatPhc({ id: 'argon2id', version: 0x13, parameters, salt, digest })
  }

  /** Whether a stored hash is ours with today's cost; anything else is re-hashed after a success. */
  function isCurrent(stored: string): boolean {
    if (algorithm === 'argon2id') {
      const parsed = parseArgon2Hash(stored)?.computation
      return (
        parsed?.variant === 'argon2id' &&
        parsed.version === 0x13 &&
        parsed.memoryCost === argon2.memoryCost &&
        parsed.timeCost === argon2.timeCost &&
        parsed.parallelism === argon2.parallelism &&
        parsed.outputLength === DIGEST_BYTES
      )
    }
    const parsed = parseScryptHash(stored)
    return (
      parsed?.ln === scrypt.ln &&
      parsed.computation.r === scrypt.r &&
      parsed.computation.p === scrypt.p &&
      parsed.computation.outputLength === DIGEST_BYTES
    )
  }

  return {
    hash: (password) => hashWith(password, crypto.getRandomValues(new Uint8Array(SALT_BYTES))),

    async verify(stored, password) {
      if (typeof stored !== 'string' || typeof password !== 'string') return { valid: false, needsRehash: false }
      const format = findFormat(stored, context.imported.formats)
      if (!format) return { valid: false, needsRehash: false }
      let valid: boolean
      try {
        valid = (await format.verify(stored, password, context)) === true
      } catch {
        valid = false
      }
      return { valid, needsRehash: valid && !isCurrent(stored) }
    },

    async dummyVerify(password) {
      const digest = await hashWith(typeof password === 'string' ? password : '', new Uint8Array(SALT_BYTES))
      // Compared like a real check so the work cannot be optimised away or skip the compare's cost.
      bytesEqual(utf8(digest), utf8(digest))
    },
  }
}
