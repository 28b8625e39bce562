/**
 * The codes of the device authorization grant: the device code (256 random bits, the device's
 * secret), the user code (8 characters of RFC 8628's readable alphabet, shown `XXXX-XXXX`), and
 * the keyed hash under which the store knows each. Neither code is stored, logged or stepped by
 * the chart: only its hash is.
 *
 * @module
 */
import { hkdfSha256, toHex } from '../crypto.js'

/** RFC 8628's user code alphabet: consonants only (no vowels, no look-alike digits), 20 characters. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
/** Characters in a user code: 20^8 ≈ 2^34.6 codes, guessed only as fast as the limits allow. */
export const USER_CODE_LENGTH = 8
/** Random bytes in a device code. */
export const DEVICE_CODE_BYTES = 32

function base64url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, '')
}

/** A new device code: 256 random bits, base64url. */
export function newDeviceCode(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(DEVICE_CODE_BYTES)))
}

/** A new user code, `XXXX-XXXX`, each character uniform over the alphabet (rejection sampling, no modulo bias). */
export function newUserCode(): string {
  const characters: string[] = []
  // 240 is the largest multiple of 20 below 256: a byte at or above it would favour the first letters.
  while (characters.length < USER_CODE_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(16))) {
      if (byte < 240 && characters.length < USER_CODE_LENGTH) characters.push(USER_CODE_ALPHABET[byte % 20]!)
    }
  }
  return `${characters.slice(0, 4).join('')}-${characters.slice(4).join('')}`
}

/**
 * A user code as typed, in the form it is hashed in: upper case, without dashes or spaces; `null`
 * when it cannot be one (another length, a character outside the alphabet).
 */
export function normalizeUserCode(typed: string): string | null {
  if (typed.length > 32) return null
  const code = typed.toUpperCase().replace(/[\s-]/g, '')
  if (code.length !== USER_CODE_LENGTH) return null
  for (const character of code) if (!USER_CODE_ALPHABET.includes(character)) return null
  return code
}

/** A device code as presented, if it has the shape of one of ours. */
export function isDeviceCodeShape(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value)
}

const keys = new Map<string, Promise<CryptoKey>>()

function hashKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret)
  if (!key) {
    key = hkdfSha256(secret, 'authchart.device-authorization', 'authchart device authorization code', 32).then((bytes) =>
      crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
    )
    keys.set(secret, key)
  }
  return key
}

/**
 * The keyed hash a code is stored under: HMAC-SHA-256 under a key derived from the configuration's
 * first secret, of the code's kind and value (a device code and a user code never share a key).
 */
export async function codeKey(secret: string, kind: 'device' | 'user', code: string): Promise<string> {
  const signed = await crypto.subtle.sign('HMAC', await hashKey(secret), new TextEncoder().encode(`${kind}:${code}`))
  return toHex(new Uint8Array(signed))
}
