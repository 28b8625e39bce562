/**
 * `verifyServiceToken`: the check of an access token a service account obtained at our token
 * endpoint. The algorithm is pinned to our key's, the `kid` must name one of our keys (nothing is
 * fetched for an unknown one), `typ` must be `at+jwt` (RFC 9068), and iss, aud and exp are checked;
 * then the account is re-read, so a revocation holds at once on every instance sharing the adapter.
 *
 * @module
 */
import { decodeProtectedHeader } from 'jose/decode/protected_header'
import { jwtVerify } from 'jose/jwt/verify'
import type { JWTPayload } from 'jose'
import { assertConfig, type ResolvedConfig } from '../config/resolve-config.js'
import type { AuthConfig } from '../types.js'
import { ourKeys } from './keys.js'
import type { AdapterServiceAccount, ServiceAccountAdapterMethods } from './types.js'

/** The adapter of a configuration with service accounts (checked at load to have the methods). */
export type ServiceAccountAdapter = Required<ServiceAccountAdapterMethods>

/** The resolved configuration and its adapter, or a `TypeError` without `serviceAccounts()`. */
export function serviceAccountsConfig(config: AuthConfig): { resolved: ResolvedConfig; adapter: ServiceAccountAdapter } {
  const resolved = assertConfig(config)
  if (!resolved.serviceAccounts || !resolved.adapter) {
    throw new TypeError("service accounts are not configured: add `serviceAccounts: serviceAccounts({ issuer })` from 'authchart/service-accounts'")
  }
  return { resolved, adapter: resolved.adapter as unknown as ServiceAccountAdapter }
}

/** The principal a verified token names: the service account, its owner and the token's scopes. */
export interface VerifiedServiceToken {
  /** The service account's id (`sub` and `client_id`). */
  readonly serviceAccountId: string
  readonly userId: string
  readonly organizationId: string | null
  /** The scopes the token carries (a subset of the account's). */
  readonly scopes: readonly string[]
  /** The token's id and expiry (seconds since the epoch). */
  readonly jti: string
  readonly exp: number
}

/** The answer of {@link verifyServiceToken}: the principal, or the response to send instead. */
export type ServiceTokenVerification =
  | { readonly ok: true; readonly token: VerifiedServiceToken }
  | { readonly ok: false; readonly status: 401 | 403 | 503; readonly response: Response }

/** The options of {@link verifyServiceToken}. */
export interface VerifyServiceTokenOptions {
  /** Scopes the token must all carry; none by default. */
  scopes?: readonly string[] | undefined
  /** The audience this service is (default: the configured `audience`, else the issuer). */
  audience?: string | undefined
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const

function refusal(status: 401 | 403 | 503, challenge: string | undefined, error: string, extra: Record<string, string> = {}): ServiceTokenVerification {
  const headers: Record<string, string> = { ...JSON_HEADERS, ...extra }
  if (challenge !== undefined) headers['www-authenticate'] = challenge
  return { ok: false, status, response: new Response(JSON.stringify({ error }), { status, headers }) }
}

// One answer for every bad token: which check failed would guide a forger.
const invalidToken = () => refusal(401, 'Bearer error="invalid_token"', 'invalid_token')

/** Seconds of clock difference tolerated on exp, iat and nbf. */
export const CLOCK_TOLERANCE = 5

/** The bearer token of `request`; `undefined` without one, `''` for a malformed header. */
function bearerOf(request: Request): string | undefined {
  const value = request.headers.get('authorization')?.trim()
  if (!value) return undefined
  const match = /^Bearer +([A-Za-z0-9_.-]+)$/i.exec(value)
  return match ? match[1]! : ''
}

/** The token's claims after the signature and registered claims are checked, or `undefined`. */
export async function checkedClaims(resolved: ResolvedConfig, token: string, audience: string): Promise<JWTPayload | undefined> {
  let header
  try {
    header = decodeProtectedHeader(token)
  } catch {
    return undefined
  }
  const keys = await ourKeys(resolved)
  // Only a kid of ours picks a key; an unknown one is refused without fetching anything.
  const key = typeof header.kid === 'string' ? keys.byKid.get(header.kid) : undefined
  if (!key || header.alg !== key.alg || header.crit !== undefined) return undefined
  try {
    const { payload } = await jwtVerify(token, key.verifyKey, {
      algorithms: [key.alg],
      typ: 'at+jwt',
      issuer: resolved.serviceAccounts!.options.issuer!,
      audience,
      requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
      clockTolerance: CLOCK_TOLERANCE,
    })
    return payload
  } catch {
    return undefined
  }
}

/** Whether `account` is live and the one the token names. */
function isLive(account: AdapterServiceAccount | null, id: string): account is AdapterServiceAccount {
  return account !== null && account.id === id && account.revokedAt === null
}

/**
 * Verifies the service-account access token `request` presents (`Authorization: Bearer <jwt>`)
 * under `config`: the account, its owner and the token's scopes, or the response to send.
 *
 * - 401 `invalid_token` for a token that is wrong in any way (not ours, forged `kid`, `alg: none`
 *   or any algorithm but our key's, another issuer or audience, expired, the account revoked);
 *   `Bearer` alone when none was sent.
 * - 403 `insufficient_scope` for a valid token that lacks one of `options.scopes`.
 * - 503 with `Retry-After` when the adapter cannot answer (the token is not let through).
 *
 * @throws {TypeError} when `config` has no `serviceAccounts()`.
 */
export async function verifyServiceToken(
  request: Request,
  config: AuthConfig,
  options: VerifyServiceTokenOptions = {},
): Promise<ServiceTokenVerification> {
  const { resolved, adapter } = serviceAccountsConfig(config)
  const token = bearerOf(request)
  if (token === undefined) return refusal(401, 'Bearer', 'invalid_request')
  if (token === '') return invalidToken()
  const { issuer, audience } = resolved.serviceAccounts!.options
  const claims = await checkedClaims(resolved, token, options.audience ?? audience ?? issuer!)
  if (!claims || typeof claims.sub !== 'string' || claims.client_id !== claims.sub || typeof claims.jti !== 'string') return invalidToken()
  let account: AdapterServiceAccount | null
  try {
    account = await adapter.getServiceAccount(claims.sub)
  } catch (error) {
    resolved.logger.error(error instanceof Error ? error : new Error(String(error)))
    return refusal(503, undefined, 'temporarily_unavailable', { 'retry-after': String(resolved.availability.retryAfter) })
  }
  if (!isLive(account, claims.sub)) return invalidToken()
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : []
  // A token carries no scope its account no longer has.
  const held = scopes.filter((scope) => account.scopes.includes(scope))
  const missing = (options.scopes ?? []).filter((scope) => !held.includes(scope))
  if (missing.length > 0) {
    return refusal(403, `Bearer error="insufficient_scope", scope="${(options.scopes ?? []).join(' ')}"`, 'insufficient_scope')
  }
  return {
    ok: true,
    token: Object.freeze({
      serviceAccountId: account.id,
      userId: account.userId,
      organizationId: account.organizationId ?? null,
      scopes: Object.freeze(held),
      jti: claims.jti,
      exp: claims.exp!,
    }),
  }
}
