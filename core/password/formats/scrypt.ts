/**
 * scrypt in PHC form, `$scrypt$ln=17,r=8,p=1$salt$hash` (passlib's and the PHC reference's
 * field names: `ln` is log2 N).
 *
 * @module
 */
import { bytesEqual, utf8 } from '../encoding.js'
import { scryptDigest, type ScryptComputation } from '../kdf.js'
import { integerParameter, parsePhc } from '../phc.js'
import type { StoredHashFormat } from './types.js'

/** Ceilings for parameters read from a stored hash (ln 20 with r 8 is 1 GiB of memory). */
export const SCRYPT_LIMITS = { ln: 20, r: 32, p: 16, memoryBytes: 1024 ** 3 } as const

/** A parsed scrypt PHC hash. */
export interface StoredScryptHash {
  ln: number
  computation: ScryptComputation
  salt: Uint8Array
  digest: Uint8Array
}

/** Parses `$scrypt$ln=…,r=…,p=…$salt$hash`; `undefined` when malformed or over the limits. */
export function parseScryptHash(stored: string): StoredScryptHash | undefined {
  const phc = parsePhc(stored)
  if (!phc || phc.id !== 'scrypt' || phc.version !== undefined) return undefined
  if (Object.keys(phc.parameters).some((name) => name !== 'ln' && name !== 'r' && name !== 'p')) return undefined
  const ln = integerParameter(phc, 'ln', 1, SCRYPT_LIMITS.ln)
  const r = integerParameter(phc, 'r', 1, SCRYPT_LIMITS.r)
  const p = integerParameter(phc, 'p', 1, SCRYPT_LIMITS.p)
  if (ln === undefined || r === undefined || p === undefined) return undefined
  if (128 * 2 ** ln * r > SCRYPT_LIMITS.memoryBytes) return undefined
  return { ln, computation: { N: 2 ** ln, r, p, outputLength: phc.digest.length }, salt: phc.salt, digest: phc.digest }
}

/** scrypt in PHC form. */
export const scryptFormat: StoredHashFormat = {
  id: 'scrypt',
  recognises: (stored) => stored.startsWith('$scrypt$'),
  async verify(stored, password) {
    const parsed = parseScryptHash(stored)
    if (!parsed) return false
    const digest = await scryptDigest(parsed.computation, utf8(password), parsed.salt)
    return bytesEqual(digest, parsed.digest)
  },
}
