/**
 * The token endpoint and key set of service accounts:
 *
 * - `POST {basePath}/oauth/token`: the OAuth 2.0 client credentials grant (RFC 6749 §4.4), the
 *   client authenticated by `private_key_jwt` (RFC 7523, the account's registered public key),
 *   `client_secret_basic` or `client_secret_post`; answered as RFC 6749 §5.1 / §5.2 JSON, with an
 *   access token in the JWT profile of RFC 9068;
 * - `GET {basePath}/jwks`: our public keys, the retired ones too while tokens they signed live.
 *
 * Token requests are counted per client id in the shared store, so guessing a client's secret is
 * limited across every instance.
 *
 * @module
 */
import { decodeJwt } from 'jose/jwt/decode'
import { decodeProtectedHeader } from 'jose/decode/protected_header'
import { importJWK } from 'jose/key/import'
import { jwtVerify } from 'jose/jwt/verify'
import { SignJWT } from 'jose/jwt/sign'
import type { ResolvedConfig } from '../config/types.js'
import { ServiceUnavailable } from '../errors.js'
import { keySecretMatches } from '../api-keys/secret.js'
import { oauthFormOf } from '../oauth/form.js'
import { admitAttempt } from '../store/limits.js'
import type { AuthConfig } from '../types.js'
import { ourKeys } from './keys.js'
import type { AdapterServiceAccount, ServiceAccountPublicJwk } from './types.js'
import { CLOCK_TOLERANCE, serviceAccountsConfig, type ServiceAccountAdapter } from './verify.js'

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' } as const

/** The largest token request body read (a client assertion fits many times over). */
const MAX_BODY = 16 * 1024
/** The longest a client assertion may live: RFC 7523 asks for a short one. */
const MAX_ASSERTION_LIFETIME = 300
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/
/** RFC 6749 §3.3 scope-token, space-delimited. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/

type TokenError = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'invalid_scope'

function json(body: unknown, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...extra } })
}

function tokenError(error: TokenError, description?: string): Response {
  const body = description === undefined ? { error } : { error, error_description: description }
  // RFC 6749 §5.2: a failed client authentication is a 401 with the challenge.
  if (error === 'invalid_client') return json(body, 401, { 'www-authenticate': 'Basic realm="token", charset="UTF-8"' })
  return json(body, 400)
}

const unavailable = (resolved: ResolvedConfig, retryAfter = resolved.availability.retryAfter) =>
  json({ error: 'temporarily_unavailable' }, 503, { 'retry-after': String(retryAfter) })

/** How the client tried to authenticate. */
type ClientCredentials =
  | { method: 'secret'; clientId: string; secret: string }
  | { method: 'assertion'; clientId: string; assertion: string }

/** The client's credentials, or the error: exactly one method (RFC 6749 §2.3). */
function credentialsOf(request: Request, form: Map<string, string>): ClientCredentials | TokenError {
  const authorization = request.headers.get('authorization')
  const basic = authorization ? /^Basic +([A-Za-z0-9+/]+=*)$/i.exec(authorization.trim()) : null
  const methods = [authorization !== null, form.has('client_secret'), form.has('client_assertion')].filter(Boolean).length
  if (methods !== 1) return methods === 0 ? 'invalid_client' : 'invalid_request'
  if (authorization !== null) {
    if (!basic) return 'invalid_client'
    let decoded: string
    try {
      decoded = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(basic[1]!), (c) => c.charCodeAt(0)))
    } catch {
      return 'invalid_client'
    }
    const colon = decoded.indexOf(':')
    if (colon < 0) return 'invalid_client'
    let clientId: string
    let secret: string
    try {
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '))
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '))
    } catch {
      return 'invalid_client'
    }
    if (form.has('client_id') && form.get('client_id') !== clientId) return 'invalid_request'
    return { method: 'secret', clientId, secret }
  }
  if (form.has('client_secret')) {
    const clientId = form.get('client_id')
    if (clientId === undefined) return 'invalid_request'
    return { method: 'secret', clientId, secret: form.get('client_secret')! }
  }
  if (form.get('client_assertion_type') !== CLIENT_ASSERTION_TYPE) return 'invalid_request'
  const assertion = form.get('client_assertion')!
  let clientId: string | undefined
  try {
    // Unverified here: only to find whose key verifies it, below.
    clientId = decodeJwt(assertion).sub
  } catch {
    return 'invalid_client'
  }
  if (typeof clientId !== 'string') return 'invalid_client'
  if (form.has('client_id') && form.get('client_id') !== clientId) return 'invalid_request'
  return { method: 'assertion', clientId, assertion }
}

/** The algorithms a registered public key may sign client assertions with (never HS, never `none`). */
function assertionAlgorithms(jwk: ServiceAccountPublicJwk): string[] {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return ['EdDSA']
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return ['ES256']
  if (jwk.kty === 'RSA') return ['RS256', 'PS256']
  return []
}

const UNKNOWN_HASH = ''

/** Whether the secret is the live account's current one. An unknown account is hashed too. */
async function secretAuthenticates(resolved: ResolvedConfig, account: AdapterServiceAccount | null, clientId: string, secret: string): Promise<boolean> {
  if (secret.length === 0 || secret.length > 256) return false
  const matches = await keySecretMatches(resolved.secrets, clientId, secret, account?.secretHash ?? UNKNOWN_HASH)
  return matches && account !== null && account.secretHash !== null
}

/** The audiences a client assertion may name: the issuer, and the token endpoint under it. */
function tokenEndpointAudiences(issuer: string): string[] {
  return [issuer, `${issuer.replace(/\/+$/, '')}/oauth/token`]
}

/** Whether the assertion is signed by the account's key, for our endpoint, short-lived, and its first use. */
async function assertionAuthenticates(
  resolved: ResolvedConfig,
  account: AdapterServiceAccount | null,
  clientId: string,
  assertion: string,
): Promise<boolean> {
  const jwk = account?.publicJwk
  if (!account || !jwk) return false
  const algorithms = assertionAlgorithms(jwk)
  let header
  try {
    header = decodeProtectedHeader(assertion)
  } catch {
    return false
  }
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) return false
  let payload
  try {
    const key = await importJWK({ ...jwk, alg: header.alg }, header.alg)
    ;({ payload } = await jwtVerify(assertion, key, {
      algorithms,
      issuer: clientId,
      subject: clientId,
      // The audiences come from the configured issuer, never the request's Host: an assertion made
      // for another server, replayed here under that server's name, is not for us.
      audience: tokenEndpointAudiences(resolved.serviceAccounts!.options.issuer!),
      requiredClaims: ['exp', 'jti'],
      clockTolerance: CLOCK_TOLERANCE,
    }))
  } catch {
    return false
  }
  const now = Math.floor(Date.now() / 1000)
  if (typeof payload.jti !== 'string' || payload.jti.length > 256 || payload.exp! - now > MAX_ASSERTION_LIFETIME) return false
  // A client assertion is single-use (RFC 7523 §3): a replay is refused on every instance.
  return resolved.store.claim(`service-assertion:${clientId}:${payload.jti}`, MAX_ASSERTION_LIFETIME + CLOCK_TOLERANCE)
}

/** The scopes granted: those asked (all within the account's), or all of the account's. */
function grantedScopes(account: AdapterServiceAccount, asked: string | undefined): string[] | undefined {
  if (asked === undefined) return [...account.scopes]
  if (!SCOPE.test(asked)) return undefined
  const scopes = [...new Set(asked.split(' '))]
  return scopes.every((scope) => account.scopes.includes(scope)) ? scopes : undefined
}

/** A signed access token for `account` with `scopes` (RFC 9068). */
async function accessToken(resolved: ResolvedConfig, account: AdapterServiceAccount, scopes: readonly string[]): Promise<{ token: string; ttl: number }> {
  const { issuer, audience, tokenTtl } = resolved.serviceAccounts!.options
  const { signing } = await ourKeys(resolved)
  const now = Math.floor(Date.now() / 1000)
  const token = await new SignJWT({ client_id: account.id, scope: scopes.join(' '), ...(account.organizationId ? { org_id: account.organizationId } : {}) })
    .setProtectedHeader({ alg: signing.alg, typ: 'at+jwt', kid: signing.kid })
    .setIssuer(issuer!)
    .setSubject(account.id)
    .setAudience(audience ?? issuer!)
    .setIssuedAt(now)
    .setExpirationTime(now + tokenTtl)
    .setJti(crypto.randomUUID())
    .sign(signing.signKey!)
  return { token, ttl: tokenTtl }
}

/** Answers one token request under `resolved` (see {@link serviceTokenEndpoint}). */
async function answerTokenRequest(resolved: ResolvedConfig, adapter: ServiceAccountAdapter, request: Request): Promise<Response> {
  if (request.method !== 'POST') return json({ error: 'invalid_request' }, 405, { allow: 'POST' })
  const form = await oauthFormOf(request, MAX_BODY)
  if (!form) return tokenError('invalid_request')
  const grantType = form.get('grant_type')
  if (grantType === undefined) return tokenError('invalid_request')
  if (grantType !== 'client_credentials') return tokenError('unsupported_grant_type')
  const credentials = credentialsOf(request, form)
  if (typeof credentials === 'string') return tokenError(credentials)
  const { clientId } = credentials
  if (!CLIENT_ID.test(clientId)) return tokenError('invalid_client')
  const limit = resolved.serviceAccounts!.options.clientLimit
  const admission = await admitAttempt(resolved.store, 'service-token', resolved.secrets[0], [{ kind: 'client', value: clientId, limit }], resolved.logger)
  if (!admission.allowed) {
    // The code only: the client id is not logged beside a refusal.
    resolved.logger.warn('service-token-rate-limited')
    return json({ error: 'invalid_request', error_description: 'too many token requests' }, 429, { 'retry-after': String(admission.retryAfter) })
  }
  const account = await adapter.getServiceAccount(clientId)
  const stored = account !== null && account.id === clientId ? account : null
  const authenticated =
    credentials.method === 'secret'
      ? await secretAuthenticates(resolved, stored, clientId, credentials.secret)
      : await assertionAuthenticates(resolved, stored, clientId, credentials.assertion)
  if (!authenticated || !stored || stored.revokedAt !== null) return tokenError('invalid_client')
  const scopes = grantedScopes(stored, form.get('scope'))
  if (!scopes) return tokenError('invalid_scope')
  const { token, ttl } = await accessToken(resolved, stored, scopes)
  return json({ access_token: token, token_type: 'Bearer', expires_in: ttl, scope: scopes.join(' ') })
}

/**
 * `POST {basePath}/oauth/token` for service accounts: the client credentials grant, as RFC 6749
 * §4.4 and §5 say. 200 `{ access_token, token_type: 'Bearer', expires_in, scope }`; 400
 * `invalid_request`, `unsupported_grant_type` or `invalid_scope`; 401 `invalid_client` (unknown
 * client, wrong or rotated secret, bad or replayed assertion, revoked account: one answer) with
 * `WWW-Authenticate`; 429 with `Retry-After` past the per-client limit; 503 with `Retry-After`
 * when the adapter or store cannot answer (nothing is issued).
 *
 * @throws {TypeError} when `config` has no `serviceAccounts()`.
 */
export async function serviceTokenEndpoint(request: Request, config: AuthConfig): Promise<Response> {
  const { resolved, adapter } = serviceAccountsConfig(config)
  try {
    return await answerTokenRequest(resolved, adapter, request)
  } catch (error) {
    resolved.logger.error(error instanceof Error ? error : new Error(String(error)))
    return unavailable(resolved, error instanceof ServiceUnavailable ? error.retryAfter : undefined)
  }
}

/**
 * `GET {basePath}/jwks`: our public keys as a JWK set (RFC 7517), for services that verify our
 * tokens themselves. Cacheable for five minutes: a rotated key stays in the set for as long as the
 * previous secret (or configured key) is listed, so tokens in flight keep verifying.
 *
 * @throws {TypeError} when `config` has no `serviceAccounts()`.
 */
export async function serviceJwks(config: AuthConfig): Promise<Response> {
  const { resolved } = serviceAccountsConfig(config)
  const { jwks } = await ourKeys(resolved)
  return new Response(JSON.stringify(jwks), {
    status: 200,
    headers: { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=300' },
  })
}

/**
 * The service-account routes under the configuration's base path: `POST {basePath}/oauth/token`
 * and `GET {basePath}/jwks`; `undefined` for any other path, to be handed to `Auth`.
 *
 * @throws {TypeError} when `config` has no `serviceAccounts()`.
 */
export async function serviceAccountRoutes(request: Request, config: AuthConfig): Promise<Response | undefined> {
  const { resolved } = serviceAccountsConfig(config)
  const base = resolved.basePath === '/' ? '' : resolved.basePath.replace(/\/+$/, '')
  const path = new URL(request.url).pathname.replace(/\/+$/, '')
  if (path === `${base}/oauth/token`) return serviceTokenEndpoint(request, config)
  if (path === `${base}/jwks`) {
    if (request.method !== 'GET' && request.method !== 'HEAD') return json({ error: 'invalid_request' }, 405, { allow: 'GET' })
    return serviceJwks(config)
  }
  return undefined
}
