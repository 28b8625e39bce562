/**
 * What an audit event may say about the client: its address as a keyed hash, its browser family.
 *
 * @module
 */
import * as base64url from 'jose/base64url'
import { DerivationCache, hkdfSha256 } from '../crypto.js'

const addressKeys = new DerivationCache<CryptoKey>()

function addressKey(secret: string): Promise<CryptoKey> {
  return addressKeys.get(secret, async () => {
    const raw = await hkdfSha256(secret, 'authchart audit', 'authchart audit client address', 32)
    return crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  })
}

/**
 * The client address as an audit event keeps it: `hmac:` and 128 bits of HMAC-SHA-256 under a key
 * derived from the secret. Events of one address match; the address cannot be read back (an
 * unkeyed hash of the 2^32 IPv4 addresses is reversed in seconds).
 */
export async function hashedAddress(address: string, secret: string): Promise<string> {
  const key = await addressKey(secret)
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(address))
  return `hmac:${base64url.encode(new Uint8Array(mac, 0, 16))}`
}

/** Families in the order they must be tested: Edge and Opera also say Chrome, Chrome says Safari. */
const FAMILIES: readonly (readonly [RegExp, string])[] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\//, 'Opera'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bChrom(?:e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bSafari\//, 'Safari'],
  [/^curl\//, 'curl'],
  [/^node|undici/i, 'node'],
]

/** The browser or tool family of a `User-Agent` header; never its version or platform. */
export function userAgentFamily(userAgent: string | null): string | undefined {
  if (!userAgent) return undefined
  for (const [pattern, family] of FAMILIES) if (pattern.test(userAgent)) return family
  return 'other'
}
