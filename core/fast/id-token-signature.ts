/**
 * The ID token's signature checked synchronously with `node:crypto`, against the provider's key set
 * as oauth4webapi cached it. Web Crypto verifies on Node's thread pool: for one RSA signature the
 * hop costs more than the arithmetic. This is only a fast path: it answers `true` when the
 * signature verifies under the one key oauth4webapi would select from a fresh cached key set, and
 * `false` for anything else (no cache, an old one, no key or several, a key oauth4webapi would not
 * import or use, an algorithm it does not handle, a bad signature), which sends the token through
 * oauth4webapi's own check, key refetch and error. It must never be more lenient than that check:
 * a `true` here is the whole signature check of the ID token.
 *
 * Contract (every module of `core/fast/`): the same verdict as oauth4webapi, or none: `true` only
 * where oauth4webapi's check would accept, anything unrecognised falls back to it (it may refuse
 * more than oauth4webapi, never less). `test/core/fast/id-token-signature.test.ts` holds it.
 *
 * @module
 */
import type * as oauth from 'oauth4webapi'
import { base64urlDecode, syncCrypto } from './sync-crypto.js'

/** oauth4webapi refetches a key set older than this (seconds). */
const JWKS_MAX_AGE = 300

const RSA_PKCS1_PSS_PADDING = 6

interface JwsVerification {
  kty: 'RSA' | 'EC' | 'OKP'
  hash: string | null
  crv?: string
  pss?: boolean
}

/** The JWS algorithms this path verifies (RFC 7518 §3, RFC 8037), as node:crypto calls them. */
const ALGORITHMS: Readonly<Record<string, JwsVerification>> = {
  RS256: { kty: 'RSA', hash: 'sha256' },
  RS384: { kty: 'RSA', hash: 'sha384' },
  RS512: { kty: 'RSA', hash: 'sha512' },
  PS256: { kty: 'RSA', hash: 'sha256', pss: true },
  PS384: { kty: 'RSA', hash: 'sha384', pss: true },
  PS512: { kty: 'RSA', hash: 'sha512', pss: true },
  ES256: { kty: 'EC', hash: 'sha256', crv: 'P-256' },
  ES384: { kty: 'EC', hash: 'sha384', crv: 'P-384' },
  ES512: { kty: 'EC', hash: 'sha512', crv: 'P-521' },
  EdDSA: { kty: 'OKP', hash: null, crv: 'Ed25519' },
  Ed25519: { kty: 'OKP', hash: null, crv: 'Ed25519' },
}

type Jwk = Record<string, unknown>

/** Public keys imported once per JWK object (the cached key set keeps its objects until refreshed). */
const keyObjects = new WeakMap<Jwk, object | null>()

/** RSA keys shorter than this are refused (as oauth4webapi refuses them). */
const MIN_RSA_BITS = 2048

function keyObjectOf(jwk: Jwk): object | null {
  let key = keyObjects.get(jwk)
  if (key === undefined) {
    key = publicKeyOf(jwk)
    keyObjects.set(jwk, key)
  }
  return key
}

/** The key oauth4webapi's import would give for `jwk`, or `null` where that import or its use is refused. */
function publicKeyOf(jwk: Jwk): object | null {
  // Web Crypto refuses a JWK with a private part for `verify` (oauth4webapi then fails the token);
  // node:crypto would quietly derive the public key, and accept tokens signed with a published key.
  if (jwk.d !== undefined) return null
  try {
    const imported = syncCrypto!.createPublicKey!({ key: jwk, format: 'jwk' }) as {
      asymmetricKeyDetails?: { modulusLength?: number }
    }
    // Stryker disable next-line OptionalChaining: equivalent, on Node >= 20 every public KeyObject has asymmetricKeyDetails ({} for Ed25519), so the access never meets undefined
    const bits = imported.asymmetricKeyDetails?.modulusLength
    return jwk.kty === 'RSA' && (bits ?? 0) < MIN_RSA_BITS ? null : imported
  } catch {
    return null
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The keys of `jwks` oauth4webapi would consider for `alg` and `kid`: same type, `kid` (when the
 * token names one), `alg`, `use` and `key_ops` compatible, the curve the algorithm needs.
 */
function candidatesOf(keys: readonly Jwk[], alg: string, kid: unknown, spec: JwsVerification): Jwk[] {
  return keys.filter(
    (jwk) =>
      jwk.kty === spec.kty &&
      (kid === undefined || kid === jwk.kid) &&
      (jwk.alg === undefined || jwk.alg === alg) &&
      (jwk.use === undefined || jwk.use === 'sig') &&
      (jwk.key_ops as unknown[] | undefined)?.includes('verify') !== false &&
      (spec.crv === undefined || jwk.crv === spec.crv),
  )
}

/**
 * Whether `idToken`'s signature verifies under the single applicable key of the fresh key set in
 * `cache`. `false` means "not established here", never "forged": the caller then runs the full check.
 */
export function idTokenSignatureVerifiedNow(cache: oauth.JWKSCacheInput, idToken: string, now = Date.now()): boolean {
  const crypto = syncCrypto
  // Stryker disable next-line ConditionalExpression: false is equivalent, syncCrypto is a module constant: without verify or createPublicKey the calls below throw inside their try blocks and answer false too (the `return false` itself is checked with a stubbed runtime; the operand variants, killed by test/mutation/webcrypto.test.ts, are hidden with it)
  if (!crypto?.verify || !crypto.createPublicKey) return false
  const { jwks, uat } = cache as Partial<oauth.ExportedJWKSCache>
  if (typeof uat !== 'number' || Math.floor(now / 1000) - uat >= JWKS_MAX_AGE) return false
  if (!isRecord(jwks) || !Array.isArray(jwks.keys) || !jwks.keys.every(isRecord)) return false
  const parts = idToken.split('.')
  if (parts.length !== 3) return false
  const [encodedHeader, payload, encodedSignature] = parts as [string, string, string]
  let header: unknown
  let signature: Uint8Array
  // Stryker disable BlockStatement: the empty catch is equivalent, it leaves `header` undefined (refused by isRecord below) or `signature` undefined (crypto.verify then throws ERR_INVALID_ARG_TYPE, caught below as false); the killed empty-try variant is hidden with it
  try {
    header = JSON.parse(new TextDecoder().decode(base64urlDecode(encodedHeader)))
    signature = base64urlDecode(encodedSignature)
  } catch {
    return false
  }
  // Stryker restore BlockStatement
  if (!isRecord(header) || typeof header.alg !== 'string' || header.crit !== undefined) return false
  const spec = Object.hasOwn(ALGORITHMS, header.alg) ? ALGORITHMS[header.alg]! : undefined
  if (!spec) return false
  const candidates = candidatesOf(jwks.keys as Jwk[], header.alg, header.kid, spec)
  if (candidates.length !== 1) return false
  const key = keyObjectOf(candidates[0]!)
  // Stryker disable next-line ConditionalExpression: false is equivalent, crypto.verify refuses a null key with ERR_INVALID_ARG_TYPE, caught below as false (the killed true variant is hidden with it)
  if (key === null) return false
  const data = new TextEncoder().encode(`${encodedHeader}.${payload}`)
  const saltLength = spec.pss ? Number(spec.hash!.slice(3)) >> 3 : undefined
  try {
    return crypto.verify(
      spec.hash,
      data,
      {
        key,
        ...(spec.pss ? { padding: RSA_PKCS1_PSS_PADDING, saltLength: saltLength! } : {}),
        // Stryker disable next-line ConditionalExpression: true is equivalent, node:crypto reads dsaEncoding for (EC)DSA keys only: RSA and Ed25519 verify the same with it (the false variant, killed by the ES* tests, is hidden with it)
        ...(spec.kty === 'EC' ? { dsaEncoding: 'ieee-p1363' as const } : {}),
      },
      signature,
    )
  } catch {
    return false
  }
}
