/**
 * The Logout Token of OpenID Connect Back-Channel Logout 1.0 (§2.4, §2.6): a JWT the provider posts
 * to our back-channel logout URI when a user's session there ends. Verified with jose against the
 * provider's key set, the one the ID tokens are checked against (oauth4webapi's cache, refetched
 * once per interval on an unknown `kid`, as for ID tokens), then every claim check of §2.6.
 *
 * @module
 * @see https://openid.net/specs/openid-connect-backchannel-1_0.html#Validation
 */
import * as errors from 'jose/errors'
import { compactVerify } from 'jose/jws/compact/verify'
import { createLocalJWKSet } from 'jose/jwks/local'
import { decodeProtectedHeader } from 'jose/decode/protected_header'
import type { JSONWebKeySet } from 'jose'
import type * as oauth from 'oauth4webapi'
import type { ResolvedOAuthProvider } from './provider.js'
import { authorizationServer, jwksCacheOf, refetchJwksOnce } from './server.js'

/** The member of `events` that makes a JWT a Logout Token (§2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

/**
 * How far back a Logout Token's `iat` may lie (seconds). The provider sends it as the session ends;
 * a token older than this is refused, so its `jti` needs remembering only this long (plus the skew).
 */
export const LOGOUT_TOKEN_MAX_AGE = 300
/** How far ahead of our clock a Logout Token's `iat` may lie (seconds): clocks drift. */
export const CLOCK_SKEW = 60
/** How long a spent `jti` is remembered: as long as a token carrying it could be accepted. */
export const JTI_TTL = LOGOUT_TOKEN_MAX_AGE + 2 * CLOCK_SKEW

/** The longest Logout Token read (a signed JWT with a few claims is well under 2 KiB). */
const MAX_TOKEN_LENGTH = 16 * 1024
/** oauth4webapi refetches a cached key set older than this (seconds); so do we. */
const JWKS_MAX_AGE = 300
/** A JWS `alg` that names no key (`none`) or a MAC keyed by the client secret. */
const SYMMETRIC = /^HS(256|384|512)$/

/** A verified Logout Token: who and which provider session it ends. */
export interface LogoutClaims {
  /** The provider's session (`sid`), when the token names one. */
  sid?: string
  /** The provider's subject (`sub`), when the token names one. */
  sub?: string
  jti: string
  iat: number
}

/** A Logout Token that fails a check of §2.6; `reason` says which (never the token itself). */
export class LogoutTokenInvalid extends Error {
  override name = 'LogoutTokenInvalid'
}

const invalid = (reason: string) => new LogoutTokenInvalid(reason)

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The signing algorithms accepted from `provider`: the client's registered
 * `id_token_signed_response_alg` (Logout Tokens are signed as ID tokens are, §2.4), else the
 * provider's advertised ID token algorithms, else RS256 (OIDC Core's default). A registered `none`
 * is refused by {@link verifyLogoutToken}, which accepts no unsigned token.
 */
function acceptedAlgorithms(provider: ResolvedOAuthProvider, as: oauth.AuthorizationServer): string[] {
  const registered = provider.client.id_token_signed_response_alg
  if (typeof registered === 'string') return [registered]
  const advertised = (as.id_token_signing_alg_values_supported ?? []).filter((alg) => alg !== 'none')
  return advertised.length > 0 ? advertised : ['RS256']
}

/** `typ` when present must say `logout+jwt` (§2.4, explicit typing as RFC 8725 §3.11 compares it). */
function hasLogoutType(typ: unknown): boolean {
  if (typ === undefined) return true
  if (typeof typ !== 'string') return false
  const type = typ.toLowerCase()
  return type === 'logout+jwt' || type === 'application/logout+jwt'
}

async function downloadKeySet(provider: ResolvedOAuthProvider, jwksUri: string): Promise<JSONWebKeySet> {
  const response = await (provider.fetch ?? fetch)(jwksUri, {
    headers: { accept: 'application/json, application/jwk-set+json' },
    redirect: 'manual',
    signal: AbortSignal.timeout(5_000),
  })
  if (response.status !== 200) throw new TypeError(`the key set of "${provider.id}" answered ${response.status}`)
  const body: unknown = await response.json()
  if (!isObject(body) || !Array.isArray(body.keys)) throw new TypeError(`the key set of "${provider.id}" is not a JWKS`)
  return body as unknown as JSONWebKeySet
}

/**
 * The provider's key set: the one oauth4webapi cached for ID tokens while it is fresh, else
 * downloaded (and cached there, so the next ID token uses it too).
 */
async function keySet(provider: ResolvedOAuthProvider, jwksUri: string, now: number): Promise<JSONWebKeySet> {
  const cache = jwksCacheOf(provider) as Partial<oauth.ExportedJWKSCache>
  if (cache.jwks && typeof cache.uat === 'number' && now - cache.uat < JWKS_MAX_AGE) return cache.jwks as JSONWebKeySet
  const jwks = await downloadKeySet(provider, jwksUri)
  Object.assign(cache, { jwks: structuredClone(jwks), uat: now })
  return jwks
}

const isUnknownKey = (error: unknown) => error instanceof errors.JWKSNoMatchingKey

/**
 * Verifies the signature: with the provider's published keys (downloaded again, once per interval,
 * when no key matches the token's `kid`: the provider may have rotated), or for an HMAC algorithm
 * with the client secret (OIDC Core §10.1).
 *
 * @throws {LogoutTokenInvalid} when the signature does not verify or no published key fits.
 */
async function verifySignature(
  provider: ResolvedOAuthProvider,
  as: oauth.AuthorizationServer,
  token: string,
  algorithms: string[],
  alg: string,
): Promise<Uint8Array> {
  try {
    if (SYMMETRIC.test(alg)) {
      if (!provider.clientSecret) throw invalid(`a ${alg} token, but the client has no secret`)
      return (await compactVerify(token, new TextEncoder().encode(provider.clientSecret), { algorithms })).payload
    }
    if (!as.jwks_uri) throw invalid('the provider publishes no key set (jwks_uri)')
    const now = Math.floor(Date.now() / 1000)
    try {
      return (await compactVerify(token, createLocalJWKSet(await keySet(provider, as.jwks_uri, now)), { algorithms })).payload
    } catch (error) {
      // A key the cached set lacks: fetch the set again (at most once per interval), as for ID tokens.
      if (!isUnknownKey(error) || !refetchJwksOnce(provider)) throw error
      return (await compactVerify(token, createLocalJWKSet(await keySet(provider, as.jwks_uri, now)), { algorithms })).payload
    }
  } catch (error) {
    if (error instanceof LogoutTokenInvalid) throw error
    if (isUnknownKey(error)) throw invalid('no key of the provider matches the token')
    if (error instanceof errors.JOSEError) throw invalid(`the signature does not verify (${error.code})`)
    throw error
  }
}

function parseClaims(payload: Uint8Array): Record<string, unknown> {
  let claims: unknown
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload))
  } catch {
    throw invalid('the payload is not JSON')
  }
  if (!isObject(claims)) throw invalid('the payload is not a JSON object')
  return claims
}

const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value.length > 0

/**
 * The claim checks of §2.6 after the signature: `iss`, `aud`, `iat` (within
 * {@link LOGOUT_TOKEN_MAX_AGE} and {@link CLOCK_SKEW}), `exp` when present, `jti`, the `events`
 * member with a JSON object, no `nonce`, and `sid` or `sub`.
 */
function checkClaims(claims: Record<string, unknown>, issuer: string, clientId: string, at: number): LogoutClaims {
  if (claims.iss !== issuer) throw invalid('iss is not the provider')
  const aud = claims.aud
  const audiences = Array.isArray(aud) ? aud : [aud]
  if (!audiences.includes(clientId)) throw invalid('aud does not name our client')
  if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat)) throw invalid('iat is missing')
  if (claims.iat > at + CLOCK_SKEW) throw invalid('iat is in the future')
  if (claims.iat < at - LOGOUT_TOKEN_MAX_AGE) throw invalid('iat is too old')
  if (claims.exp !== undefined && (typeof claims.exp !== 'number' || claims.exp <= at - CLOCK_SKEW)) {
    throw invalid('the token has expired')
  }
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > at + CLOCK_SKEW)) {
    throw invalid('the token is not valid yet')
  }
  if (!nonEmpty(claims.jti)) throw invalid('jti is missing')
  const events = claims.events
  if (events === undefined) throw invalid('events is missing')
  if (!isObject(events)) throw invalid('events must be a JSON object')
  if (!Object.hasOwn(events, BACKCHANNEL_LOGOUT_EVENT)) throw invalid('events has no back-channel logout member')
  if (!isObject(events[BACKCHANNEL_LOGOUT_EVENT])) {
    throw invalid('the back-channel logout member of events must be a JSON object')
  }
  // A nonce would make it an ID token (§2.4: prohibited), which must never log anyone out.
  if ('nonce' in claims) throw invalid('a nonce is present')
  const sid = claims.sid
  const sub = claims.sub
  if (sid !== undefined && !nonEmpty(sid)) throw invalid('sid is not a string')
  if (sub !== undefined && !nonEmpty(sub)) throw invalid('sub is not a string')
  if (sid === undefined && sub === undefined) throw invalid('neither sid nor sub is present')
  return {
    ...(sid !== undefined ? { sid } : {}),
    ...(sub !== undefined ? { sub } : {}),
    jti: claims.jti,
    iat: claims.iat,
  }
}

/**
 * Verifies a Logout Token from `provider` at `at` (epoch seconds): its header (`alg` one the
 * client accepts, never `none`; `typ` `logout+jwt` when present), its signature against the
 * provider's keys, and its claims. Its `jti` is not spent here: that is the caller's, once.
 *
 * @throws {LogoutTokenInvalid} for a token that fails a check; other errors when the provider's
 *   metadata or key set cannot be fetched.
 */
export async function verifyLogoutToken(provider: ResolvedOAuthProvider, token: string, at: number): Promise<LogoutClaims> {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw invalid('no logout_token, or one too long')
  if (token.split('.').length !== 3) throw invalid('not a signed JWT (JWS compact serialisation)')
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(token)
  } catch {
    throw invalid('the header cannot be read')
  }
  if (!hasLogoutType(header.typ)) throw invalid('typ is not logout+jwt')
  const as = await authorizationServer(provider)
  const algorithms = acceptedAlgorithms(provider, as)
  const alg = algorithms.find((accepted) => accepted === header.alg)
  if (alg === undefined || alg === 'none') throw invalid(`alg ${String(header.alg)} is not accepted`)
  if (header.crit !== undefined) throw invalid('crit is not supported')
  const payload = await verifySignature(provider, as, token, algorithms, alg)
  return checkClaims(parseClaims(payload), as.issuer, provider.clientId, at)
}

/** The provider's issuer identifier, as its discovery document states it (front-channel `iss`). */
export async function issuerOf(provider: ResolvedOAuthProvider): Promise<string> {
  return (await authorizationServer(provider)).issuer
}

