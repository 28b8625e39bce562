/**
 * The secrets of an e-mail sign-in: the link's token (stored only as its hash, the hash Auth.js
 * stores, so links an Auth.js deployment sent keep working), and the optional one-time code
 * (kept only as a hash, inside the sealed flow of the browser that asked for it).
 *
 * @module
 */
import { randomHex, sha256Hex } from '../crypto.js'
import type { CodeAlphabet } from './types.js'

export type { CodeAlphabet }

/** A fresh link token: 32 random bytes as 64 hex characters (Auth.js `randomString(32)`). */
export function generateToken(): string {
  return randomHex(32)
}

/**
 * The stored form of a token: `sha256(token + secret)` in hex, exactly as Auth.js computes it.
 *
 * @see reference §5.2 step 6
 */
export function hashToken(token: string, secret: string): Promise<string> {
  return sha256Hex(`${token}${secret}`)
}

/**
 * Every hash a link token may be stored under: one per configured secret (newest first), then,
 * with several secrets, Auth.js's form for an array secret (its elements joined by commas).
 */
export async function tokenHashCandidates(token: string, secrets: readonly string[]): Promise<string[]> {
  const candidates = secrets.length > 1 ? [...secrets, secrets.join(',')] : [...secrets]
  return Promise.all(candidates.map((secret) => hashToken(token, secret)))
}

/** Crockford's base32: no I, L, O or U, so a code read aloud or retyped is not misread. */
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const DIGITS = '0123456789'


/** Bits of entropy of a code of `length` characters from `alphabet`. */
export function codeEntropyBits(length: number, alphabet: CodeAlphabet): number {
  return length * Math.log2(alphabet === 'digits' ? DIGITS.length : BASE32.length)
}

/**
 * A uniformly random code. Bytes are drawn with rejection sampling, so every character is equally
 * likely (a plain `% 10` would favour the digits 0–5).
 */
export function generateCode(length: number, alphabet: CodeAlphabet): string {
  const chars = alphabet === 'digits' ? DIGITS : BASE32
  const limit = 256 - (256 % chars.length)
  let code = ''
  while (code.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < limit && code.length < length) code += chars[byte % chars.length]
    }
  }
  return code
}

/**
 * A typed code in its canonical form: case and separators ignored, and Crockford's look-alikes
 * (O for 0, I and L for 1) read as the digit.
 */
export function canonicalCode(typed: string): string {
  return typed
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1')
}

/**
 * The stored form of a code: bound to its token's hash, so a code is only ever checked against
 * the sign-in it was sent for, and the hash is useless without the server's secret.
 */
export function hashCode(code: string, tokenHash: string): Promise<string> {
  return sha256Hex(`authchart email code\u0000${tokenHash}\u0000${canonicalCode(code)}`)
}
