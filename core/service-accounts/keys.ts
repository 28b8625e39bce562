/**
 * Our token signing keys: configured (`serviceAccounts({ signingKeys })`, newest first) or, by
 * default, an Ed25519 key derived from each configured secret with HKDF, so rotating the secret
 * (the new one first) rotates the key and the old key stays published while tokens signed with
 * it are in flight. Every key is named by its RFC 7638 thumbprint.
 *
 * @module
 */
import { calculateJwkThumbprint } from 'jose/jwk/thumbprint'
import { importJWK } from 'jose/key/import'
import type { CryptoKey as JoseKey, JWK } from 'jose'
import type { ResolvedConfig } from '../config/types.js'
import type { SigningJwk } from './types.js'

/** One of our keys: its id, algorithm, public JWK, and (while it signs) the private key. */
export interface OurKey {
  readonly kid: string
  readonly alg: 'EdDSA' | 'ES256'
  readonly publicJwk: Readonly<JWK>
  readonly verifyKey: JoseKey | Uint8Array
  readonly signKey: JoseKey | Uint8Array | undefined
}

/** Our key set: the first key signs; all are published and verify. */
export interface OurKeys {
  readonly signing: OurKey
  readonly byKid: ReadonlyMap<string, OurKey>
  /** `{ keys: [...] }` as `GET {basePath}/jwks` answers it: public parts only. */
  readonly jwks: { readonly keys: readonly Readonly<JWK>[] }
}

const encoder = new TextEncoder()
/** The fixed DER header of an Ed25519 private key in PKCS #8 (RFC 8410), before its 32-byte seed. */
const ED25519_PKCS8_HEADER = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20])

/** The Ed25519 private JWK derived from `secret` (never the secret itself). */
export async function derivedSigningJwk(secret: string): Promise<SigningJwk> {
  const material = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveBits'])
  const seed = new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encoder.encode('authchart service-token signing key v1') },
      material,
      256,
    ),
  )
  const pkcs8 = new Uint8Array(ED25519_PKCS8_HEADER.length + seed.length)
  pkcs8.set(ED25519_PKCS8_HEADER)
  pkcs8.set(seed, ED25519_PKCS8_HEADER.length)
  const key = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, true, ['sign'])
  const jwk = (await crypto.subtle.exportKey('jwk', key)) as { x: string; d: string }
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d }
}

/** The algorithm of a signing JWK. @throws {TypeError} for a key that is neither Ed25519 nor P-256. */
export function algorithmOf(jwk: SigningJwk): 'EdDSA' | 'ES256' {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string') return 'EdDSA'
  if (jwk.kty === 'EC' && jwk.crv === 'P-256' && typeof jwk.x === 'string' && typeof jwk.y === 'string') return 'ES256'
  throw new TypeError('a service-account signing key is an Ed25519 (OKP) or P-256 (EC) JWK')
}

async function ourKey(jwk: SigningJwk): Promise<OurKey> {
  const alg = algorithmOf(jwk)
  const publicPart: JWK = jwk.kty === 'EC' ? { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y } : { kty: 'OKP', crv: jwk.crv, x: jwk.x }
  const kid = jwk.kid ?? (await calculateJwkThumbprint(publicPart, 'sha256'))
  const publicJwk = Object.freeze({ ...publicPart, kid, alg, use: 'sig' })
  return Object.freeze({
    kid,
    alg,
    publicJwk,
    verifyKey: await importJWK(publicPart, alg),
    signKey: jwk.d === undefined ? undefined : await importJWK({ ...publicPart, d: jwk.d }, alg),
  })
}

const keysOfConfig = new WeakMap<ResolvedConfig, Promise<OurKeys>>()

async function buildKeys(resolved: ResolvedConfig): Promise<OurKeys> {
  const configured = resolved.serviceAccounts!.options.signingKeys
  const jwks = configured ?? (await Promise.all(resolved.secrets.map(derivedSigningJwk)))
  const keys = await Promise.all(jwks.map(ourKey))
  const signing = keys[0]!
  if (signing.signKey === undefined) throw new TypeError('the first service-account signing key signs: it needs its private part `d`')
  const byKid = new Map<string, OurKey>()
  for (const key of keys) if (!byKid.has(key.kid)) byKid.set(key.kid, key)
  return Object.freeze({ signing, byKid, jwks: Object.freeze({ keys: Object.freeze([...byKid.values()].map((key) => key.publicJwk)) }) })
}

/** Our keys under `resolved` (built once per configuration). */
export function ourKeys(resolved: ResolvedConfig): Promise<OurKeys> {
  let keys = keysOfConfig.get(resolved)
  if (!keys) {
    keys = buildKeys(resolved)
    keysOfConfig.set(resolved, keys)
    // A configuration whose keys cannot be built is retried on the next call, not stuck.
    keys.catch(() => keysOfConfig.delete(resolved))
  }
  return keys
}
