/**
 * argon2id and argon2i hashes in PHC form, as written by the reference implementation,
 * `@node-rs/argon2`, `argon2` (node), passlib and libsodium.
 *
 * @module
 */
import { bytesEqual } from '../encoding.js'
import { argon2Digest, type Argon2Computation } from '../kdf.js'
import { integerParameter, parsePhc } from '../phc.js'
import type { StoredHashFormat } from './types.js'

/** Ceilings for parameters read from a stored hash, so one record cannot exhaust memory or time. */
export const ARGON2_LIMITS = { memoryCost: 4 * 1024 * 1024 - 1, timeCost: 64, parallelism: 255 } as const

/** A parsed argon2 PHC hash: its cost parameters, salt and digest. */
export interface StoredArgon2Hash {
  computation: Argon2Computation
  salt: Uint8Array
  digest: Uint8Array
}

/** Parses `$argon2id$v=19$m=…,t=…,p=…$salt$hash` (or argon2i); `undefined` when malformed. */
export function parseArgon2Hash(stored: string): StoredArgon2Hash | undefined {
  const phc = parsePhc(stored)
  if (!phc || (phc.id !== 'argon2id' && phc.id !== 'argon2i')) return undefined
  const version = phc.version ?? 0x10
  if (version !== 0x13 && version !== 0x10) return undefined
  if (Object.keys(phc.parameters).some((name) => name !== 'm' && name !== 't' && name !== 'p')) return undefined
  const parallelism = integerParameter(phc, 'p', 1, ARGON2_LIMITS.parallelism)
  const memoryCost = integerParameter(phc, 'm', 8 * (parallelism ?? 1), ARGON2_LIMITS.memoryCost)
  const timeCost = integerParameter(phc, 't', 1, ARGON2_LIMITS.timeCost)
  if (parallelism === undefined || memoryCost === undefined || timeCost === undefined) return undefined
  if (phc.salt.length < 8 || phc.digest.length < 4) return undefined
  return {
    computation: { variant: phc.id, version, memoryCost, timeCost, parallelism, outputLength: phc.digest.length },
    salt: phc.salt,
    digest: phc.digest,
  }
}

/** argon2id / argon2i in PHC form. */
export const argon2Format: StoredHashFormat = {
  id: 'argon2',
  recognises: (stored) => stored.startsWith('$argon2id$') || stored.startsWith('$argon2i$'),
  async verify(stored, password, context) {
    const parsed = parseArgon2Hash(stored)
    if (!parsed) return false
    const digest = await argon2Digest(parsed.computation, password, parsed.salt, context.argon2Implementation)
    return bytesEqual(digest, parsed.digest)
  },
}
