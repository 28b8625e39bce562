/**
 * Opening and resealing a flow envelope the way a forger holding the secret could, so a test can
 * change one claim of a real envelope (its audience, flow id, binding) and see the engine refuse it.
 *
 * @module
 */
import { base64url, calculateJwkThumbprint } from 'jose'
import { hkdfSha256 } from '../../core/crypto.js'
import { encryptGcm, parseGcm } from '../../core/fast/jwe-gcm.js'

/** The claims of a sealed flow, as `sealEnvelope` writes them. */
export interface EnvelopeClaims {
  env: { id: string; v: string; value: unknown; context: Record<string, unknown> }
  jti: string
  aud?: string
  iat: number
  exp: number
  sub?: string
  [claim: string]: unknown
}

async function keyFor(secret: string, cookieName: string) {
  const key = await hkdfSha256(secret, cookieName, `authchart flow envelope (${cookieName})`, 32)
  const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
  return { key, kid }
}

/** The claims of an envelope sealed under `cookieName`. */
export async function openClaims(sealed: string, secret: string, cookieName: string): Promise<EnvelopeClaims> {
  const { key } = await keyFor(secret, cookieName)
  const token = parseGcm(sealed)
  if (!token) throw new Error('not an envelope of the fast path')
  return JSON.parse(token.decrypt(key)) as EnvelopeClaims
}

/** Seals `claims` as an envelope under `cookieName`, exactly as the engine would. */
export async function sealClaims(claims: EnvelopeClaims, secret: string, cookieName: string): Promise<string> {
  const { key, kid } = await keyFor(secret, cookieName)
  return encryptGcm(JSON.stringify(claims), key, kid)
}

/** `sealed` with its claims changed by `change` (and a fresh id, so it is not already spent). */
export async function reseal(
  sealed: string,
  secret: string,
  cookieName: string,
  change: (claims: EnvelopeClaims) => EnvelopeClaims,
): Promise<string> {
  const claims = await openClaims(sealed, secret, cookieName)
  return sealClaims(change({ ...claims, jti: crypto.randomUUID() }), secret, cookieName)
}
