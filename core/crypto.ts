/**
 * Small crypto helpers over Web Crypto: randomness, SHA-256, constant-time comparison and the
 * HKDF derivation that Auth.js uses for its cookies.
 *
 * @module
 */

import { randomBytes, syncCrypto } from './fast/sync-crypto.js'

const encoder = new TextEncoder()

/** Encodes bytes as lowercase hex. */
export function toHex(bytes: Uint8Array): string {
  let out = ''
  for (const byte of bytes) out += (byte < 16 ? '0' : '') + byte.toString(16)
  return out
}

/** `size` random bytes as `2 * size` lowercase hex characters (Auth.js `randomString`). */
export function randomHex(size: number): string {
  return toHex(randomBytes(size))
}

/** SHA-256 of a UTF-8 string, as lowercase hex (synchronously where `node:crypto` is available). */
export async function sha256Hex(message: string): Promise<string> {
  if (syncCrypto?.hash) return syncCrypto.hash('sha256', message, 'hex')
  if (syncCrypto) {
    const hash = syncCrypto.createHash('sha256')
    hash.update(message)
    return hash.digest('hex')
  }
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(message))))
}

/**
 * Compares two strings in time that depends only on their lengths, so an attacker who can time
 * responses learns nothing about how much of a guessed token was right.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  // Stryker disable next-line EqualityOperator: `i <= a.length` is equivalent (one step past the end adds NaN ^ NaN, which is 0); `i >= a.length` and `i > a.length` are killed by the CSRF tests
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/** HKDF-SHA-256 (RFC 5869) of UTF-8 strings, `length` bytes long. */
export async function hkdfSha256(
  secret: string,
  salt: string,
  info: string,
  length: number,
): Promise<Uint8Array> {
  const ikm = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, [
    'deriveBits',
  ])
  const bits = await crypto.subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: encoder.encode(salt), info: encoder.encode(info) },
    ikm,
    length << 3,
  )
  return new Uint8Array(bits)
}

/**
 * A bounded memo for values derived from a secret. Derivations are deterministic, so caching them
 * changes nothing but speed; the bound keeps callers that pass many distinct salts (e.g. `getToken`
 * with arbitrary cookie names) from growing memory without limit.
 */
export class DerivationCache<V> {
  readonly #entries = new Map<string, Promise<V>>()
  constructor(readonly limit = 256) {}

  readonly #resolved = new Map<string, V>()

  /** The value for `key` if it is already derived (lets hot paths skip a promise). */
  peek(key: string): V | undefined {
    return this.#resolved.get(key)
  }

  get(key: string, derive: () => Promise<V>): Promise<V> {
    let entry = this.#entries.get(key)
    if (entry === undefined) {
      if (this.#entries.size >= this.limit) {
        const oldest = this.#entries.keys().next().value as string
        this.#entries.delete(oldest)
        this.#resolved.delete(oldest)
      }
      entry = derive()
      // A failed derivation must not poison the cache.
      entry.then(
        (value) => {
          if (this.#entries.get(key) === entry) this.#resolved.set(key, value)
        },
        () => this.#entries.delete(key),
      )
      this.#entries.set(key, entry)
    }
    return entry
  }
}
