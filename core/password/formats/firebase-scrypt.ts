/**
 * Firebase Authentication's modified scrypt: the scrypt key of the password (salt ‖ separator,
 * N = 2^mem_cost, r = rounds, p = 1, 32 bytes) is an AES-256-CTR key, IV zero, that encrypts the
 * project's signer key; the ciphertext is the stored hash (github.com/firebase/scrypt).
 *
 * Stored form here: `$firebase-scrypt$<salt>$<hash>`, both base64 exactly as `firebase
 * auth:export` prints them (`salt` and `passwordHash`); the project parameters come from options.
 *
 * @module
 */
import { bytesEqual, decodeBase64, utf8 } from '../encoding.js'
import { scryptDigest } from '../kdf.js'
import type { FirebaseScryptParameters, StoredHashFormat } from './types.js'

const PREFIX = '$firebase-scrypt$'

/** The stored form of one exported Firebase user's hash. */
export function firebaseStoredHash(salt: string, passwordHash: string): string {
  return `${PREFIX}${salt}$${passwordHash}`
}

/** Computes Firebase's hash of `password` with a user's salt (raw bytes) and the project parameters. */
export async function firebaseScryptHash(
  password: string,
  salt: Uint8Array,
  parameters: FirebaseScryptParameters,
): Promise<Uint8Array | undefined> {
  const signerKey = decodeBase64(parameters.signerKey)
  const separator = decodeBase64(parameters.saltSeparator)
  const { rounds, memoryCost } = parameters
  if (!signerKey || !separator || signerKey.length === 0) return undefined
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 32) return undefined
  if (!Number.isInteger(memoryCost) || memoryCost < 1 || memoryCost > 20) return undefined
  const saltAndSeparator = new Uint8Array(salt.length + separator.length)
  saltAndSeparator.set(salt)
  saltAndSeparator.set(separator, salt.length)
  const derived = await scryptDigest({ N: 2 ** memoryCost, r: rounds, p: 1, outputLength: 32 }, utf8(password), saltAndSeparator)
  const key = await crypto.subtle.importKey('raw', new Uint8Array(derived), 'AES-CTR', false, ['encrypt'])
  const encrypted = await crypto.subtle.encrypt({ name: 'AES-CTR', counter: new Uint8Array(16), length: 128 }, key, signerKey)
  return new Uint8Array(encrypted)
}

/** Firebase's modified scrypt; never verifies without the project's parameters. */
export const firebaseScryptFormat: StoredHashFormat = {
  id: 'firebase-scrypt',
  recognises: (stored) => stored.startsWith(PREFIX),
  async verify(stored, password, context) {
    const parameters = context.imported.firebase
    if (!parameters) return false
    const fields = stored.slice(PREFIX.length).split('$')
    if (fields.length !== 2) return false
    const salt = decodeBase64(fields[0]!)
    const expected = decodeBase64(fields[1]!)
    if (!salt || !expected || expected.length === 0) return false
    const computed = await firebaseScryptHash(password, salt, parameters)
    return computed !== undefined && bytesEqual(computed, expected)
  },
}
