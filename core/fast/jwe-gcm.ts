/**
 * Compact JWE with `alg: "dir"` and `enc: "A256GCM"` done synchronously with `node:crypto`: the
 * format of sealed flows (the OAuth state cookie).
 *
 * Contract (every module of `core/fast/`): the same bytes as jose, the same verdict. What this
 * path seals jose opens, and what jose sealed this path opens to the same plaintext or leaves to
 * jose; headers it does not recognise exactly, and runtimes without `node:crypto`, go through
 * jose. `test/core/fast/jwe-gcm.test.ts` holds the comparison.
 *
 * @module
 */
import { base64urlDecode, base64urlEncode, concatBytes, randomBytes, syncCrypto } from './sync-crypto.js'

const encoder = new TextEncoder()
// Stryker disable next-line StringLiteral: killed in fact, an unknown label throws at load, which the vitest runner counts as no test run
const decoder = new TextDecoder('utf-8', { fatal: true })

/** Whether the fast path is available in this runtime. */
// Stryker disable next-line ConditionalExpression,EqualityOperator: false is equivalent (jose, same bytes); true is refused by test/mutation/webcrypto.test.ts
export const fastGcm = syncCrypto !== undefined

/** Encrypts `plaintext` under the 32-byte `key` with the protected header `{alg, enc, kid}`. */
export function encryptGcm(plaintext: string, key: Uint8Array, kid: string): string {
  const protectedHeader = base64urlEncode(encoder.encode(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid })))
  const iv = randomBytes(12)
  const cipher = syncCrypto!.createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD!(encoder.encode(protectedHeader))
  const ciphertext = concatBytes(cipher.update(encoder.encode(plaintext)), cipher.final())
  return `${protectedHeader}..${base64urlEncode(iv)}.${base64urlEncode(ciphertext)}.${base64urlEncode(cipher.getAuthTag!())}`
}

/** A token the fast path can open: its key id and a function that authenticates and decrypts it. */
export type GcmToken = { kid: string | undefined; decrypt: (key: Uint8Array) => string }

/** Parses a compact JWE; `undefined` when the fast path does not apply (then use jose). */
export function parseGcm(jwe: string): GcmToken | undefined {
  if (!fastGcm) return undefined
  const parts = jwe.split('.')
  if (parts.length !== 5 || parts[1] !== '') return undefined
  let header: Record<string, unknown>
  // Stryker disable BlockStatement: equivalent, an undefined header is not exact either (jose decides)
  try {
    header = JSON.parse(decoder.decode(base64urlDecode(parts[0]!))) as Record<string, unknown>
  } catch {
    return undefined
  }
  // Stryker restore BlockStatement
  const exact =
    header !== null &&
    // Stryker disable next-line ConditionalExpression: equivalent, a primitive header has no alg
    typeof header === 'object' &&
    header.alg === 'dir' &&
    header.enc === 'A256GCM' &&
    (header.kid === undefined || typeof header.kid === 'string') &&
    Object.keys(header).every((k) => k === 'alg' || k === 'enc' || k === 'kid')
  if (!exact) return undefined
  return {
    kid: header.kid as string | undefined,
    decrypt(key) {
      try {
        const iv = base64urlDecode(parts[2]!)
        const ciphertext = base64urlDecode(parts[3]!)
        const tag = base64urlDecode(parts[4]!)
        // Stryker disable next-line ConditionalExpression: `key.length !== 32` as false is equivalent, node:crypto refuses an AES-256 key of any other length and the catch below throws the same TypeError (the directive also hides the killed IV and tag variants)
        if (key.length !== 32 || iv.length !== 12 || tag.length !== 16) throw new Error('lengths')
        const decipher = syncCrypto!.createDecipheriv('aes-256-gcm', key, iv)
        decipher.setAAD!(encoder.encode(parts[0]!))
        decipher.setAuthTag!(tag)
        const plaintext = concatBytes(decipher.update(ciphertext), decipher.final())
        return decoder.decode(plaintext)
      } catch (cause) {
        throw new TypeError('JWE decryption failed', { cause })
      }
    },
  }
}
