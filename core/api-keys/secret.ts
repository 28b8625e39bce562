/**
 * API key secrets: the format shown once (`<prefix>_<id>_<secret>`), the keyed hash that is stored
 * instead of the secret, and the constant-time check. The id lets a key be found by lookup, never
 * by scanning (and comparing) every stored hash.
 *
 * @module
 */

const encoder = new TextEncoder()

/** Random bytes in a key's secret: 32 (256 bits; the floor is 16, 128 bits). */
export const SECRET_BYTES = 32
/** Random bytes in a key's id (public: it only names the record). */
export const ID_BYTES = 9

const PREFIX = /^[a-z][a-z0-9]{0,15}$/
const BASE64URL = /^[A-Za-z0-9_-]+$/

function base64url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, '')
}

function randomBase64url(length: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(length)))
}

/** A new key as its owner sees it once: the id (stored in clear) and the full key to copy. */
export interface NewKeySecret {
  id: string
  /** `<prefix>_<id>_<secret>`: shown once, never stored. */
  key: string
}

/**
 * A new key id and secret under `prefix` (lower-case letters and digits, starting with a letter).
 *
 * @throws {TypeError} for a prefix outside that alphabet (it would make keys ambiguous to parse).
 */
export function createKeySecret(prefix: string): NewKeySecret {
  if (!PREFIX.test(prefix)) throw new TypeError('an API key prefix is 1 to 16 lower-case letters and digits, starting with a letter')
  const id = randomBase64url(ID_BYTES).replace(/_/g, 'a')
  return { id, key: `${prefix}_${id}_${randomBase64url(SECRET_BYTES)}` }
}

/** A presented key split into its id and secret; `undefined` when it is not a key of `prefix`. */
export function parseApiKey(value: string, prefix: string): { id: string; secret: string } | undefined {
  if (!value.startsWith(`${prefix}_`)) return undefined
  const rest = value.slice(prefix.length + 1)
  const separator = rest.indexOf('_')
  if (separator === -1) return undefined
  const id = rest.slice(0, separator)
  const secret = rest.slice(separator + 1)
  // Shorter than 128 bits of base64url cannot be one of ours.
  if (!BASE64URL.test(id) || !BASE64URL.test(secret) || secret.length < 22) return undefined
  return { id, secret }
}

const hashKeys = new Map<string, Promise<CryptoKey>>()

/** The HMAC key for key hashes, derived from the config secret with HKDF (never the secret itself). */
function hashKeyOf(secret: string): Promise<CryptoKey> {
  let key = hashKeys.get(secret)
  if (!key) {
    key = (async () => {
      const material = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveKey'])
      return crypto.subtle.deriveKey(
        { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encoder.encode('authchart api-key hash v1') },
        material,
        { name: 'HMAC', hash: 'SHA-256', length: 256 },
        false,
        ['sign'],
      )
    })()
    hashKeys.set(secret, key)
  }
  return key
}

/**
 * The stored form of a key: HMAC-SHA-256 over its id and secret under a key derived from the config
 * secret, so a leaked table is no list of working keys, and a hash copied to another id matches nothing.
 */
export async function hashKeySecret(configSecret: string, id: string, secret: string): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', await hashKeyOf(configSecret), encoder.encode(`${id}.${secret}`))
  return base64url(new Uint8Array(mac))
}

/** Compares two hashes in time independent of where they differ. */
export function hashesEqual(a: string, b: string): boolean {
  const left = encoder.encode(a)
  const right = encoder.encode(b)
  let difference = left.length ^ right.length
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    difference |= (left[index] ?? 0) ^ (right[index] ?? 0)
  }
  return difference === 0
}

/**
 * Whether `secret` is the key whose hash under one of `configSecrets` is `stored` (each secret
 * tried, so rotating the config secret keeps existing keys working). Always hashes with every
 * secret, so the answer takes the same time whichever part is wrong.
 */
export async function keySecretMatches(configSecrets: readonly string[], id: string, secret: string, stored: string): Promise<boolean> {
  let matched = false
  for (const configSecret of configSecrets) {
    if (hashesEqual(await hashKeySecret(configSecret, id, secret), stored)) matched = true
  }
  return matched
}
