/**
 * The authorization server as oauth4webapi sees it: metadata from discovery (memoised per issuer)
 * or from the provider's configured endpoints, the client, its authentication, and the options of
 * every request to the provider.
 *
 * @module
 */
import * as oauth from 'oauth4webapi'
import type { ResolvedOAuthProvider } from './provider.js'

/** Discovery documents are reused this long, then fetched again. */
export const DISCOVERY_TTL_MS = 60 * 60 * 1000

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Plain HTTP is allowed only to loopback hosts (a provider running on this machine, as in tests
 * and the demo); anywhere else tokens would cross the network in clear text.
 */
export function isLoopback(url: string | URL): boolean {
  const { protocol, hostname } = new URL(url)
  return protocol === 'http:' && LOOPBACK.has(hostname)
}

/** Options for every oauth4webapi request to `provider`. */
export function requestOptions(
  provider: ResolvedOAuthProvider,
  target: string | URL | undefined,
): { [oauth.customFetch]?: typeof fetch; [oauth.allowInsecureRequests]?: boolean } {
  return {
    ...(provider.fetch ? { [oauth.customFetch]: provider.fetch } : {}),
    ...(target !== undefined && isLoopback(target) ? { [oauth.allowInsecureRequests]: true } : {}),
  }
}

interface CachedServer {
  server: Promise<oauth.AuthorizationServer>
  expires: number
}

/** Discovery results per fetch implementation (a provider's `customFetch` sees its own). */
const discovered = new WeakMap<object, Map<string, CachedServer>>()
const GLOBAL_FETCH = {}

/** Options of a token request (code or refresh grant) to `provider`. */
export function tokenRequestOptions(
  provider: ResolvedOAuthProvider,
  as: oauth.AuthorizationServer,
): oauth.TokenEndpointRequestOptions {
  return {
    ...requestOptions(provider, as.token_endpoint),
    ...(provider.tokenParameters ? { additionalParameters: { ...provider.tokenParameters } } : {}),
  }
}

async function discover(provider: ResolvedOAuthProvider): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(provider.issuer!)
  let response: Response
  try {
    response = await oauth.discoveryRequest(issuer, requestOptions(provider, issuer))
  } catch (error) {
    // fetch's own message ("fetch failed") names no URL; the operator needs to know which issuer.
    const code = (error as { cause?: { code?: unknown } }).cause?.code
    const reason = `${(error as Error).message}${typeof code === 'string' ? ` (${code})` : ''}`
    throw new TypeError(`The issuer ${issuer.href} of provider "${provider.id}" could not be reached for its discovery document: ${reason}`, {
      cause: error,
    })
  }
  if (provider.conformDiscovery && response.ok) {
    const metadata = provider.conformDiscovery((await response.json()) as Record<string, unknown>)
    response = Response.json(metadata, { status: response.status })
  }
  return oauth.processDiscoveryResponse(issuer, response)
}

/**
 * Whether the provider's metadata must come from discovery: OIDC always does (the ID token's keys
 * live there); OAuth 2 only for the endpoints it does not configure (Mastodon names an `issuer`
 * but has no discovery document, as in Auth.js).
 */
function needsDiscovery(provider: ResolvedOAuthProvider): boolean {
  if (!provider.issuer) return false
  if (provider.type === 'oidc') return true
  return !provider.authorization || !provider.token || (!provider.userinfo && !provider.userinfoRequest)
}

/**
 * The authorization server metadata: discovered from the issuer (cached for an hour, shared by
 * concurrent requests) and overlaid with the endpoints the provider configures explicitly.
 */
export async function authorizationServer(
  provider: ResolvedOAuthProvider,
): Promise<oauth.AuthorizationServer> {
  let metadata: { -readonly [K in keyof oauth.AuthorizationServer]: oauth.AuthorizationServer[K] }
  if (needsDiscovery(provider)) {
    const scope = provider.fetch ?? GLOBAL_FETCH
    let servers = discovered.get(scope)
    if (!servers) discovered.set(scope, (servers = new Map()))
    // A document rewritten by a provider's conformDiscovery is that provider's alone.
    const key = provider.conformDiscovery ? `${provider.issuer!}\u0000${provider.id}` : provider.issuer!
    let cached = servers.get(key)
    if (!cached || cached.expires < Date.now()) {
      cached = { server: discover(provider), expires: Date.now() + DISCOVERY_TTL_MS }
      // A failed discovery is retried by the next request, not cached.
      cached.server.catch(() => servers.delete(key))
      servers.set(key, cached)
    }
    metadata = { ...(await cached.server) }
  } else {
    // Without discovery the issuer value is only an identifier (RFC 9207 `iss` is compared to it).
    metadata = { issuer: provider.issuer ?? new URL(provider.authorization ?? provider.token!).origin }
  }
  if (provider.authorization) metadata.authorization_endpoint = provider.authorization.href
  if (provider.token) metadata.token_endpoint = provider.token
  if (provider.userinfo) metadata.userinfo_endpoint = provider.userinfo
  return metadata
}

const jwksCaches = new WeakMap<ResolvedOAuthProvider, oauth.JWKSCacheInput>()

/**
 * The provider's key set cache, kept across requests: a sign-in reuses the keys (oauth4webapi
 * fetches them again once they are five minutes old), and a token naming a key the cache does not
 * hold triggers one refetch (see {@link verifyIdTokenSignature}).
 */
export function jwksCacheOf(provider: ResolvedOAuthProvider): oauth.JWKSCacheInput {
  let cache = jwksCaches.get(provider)
  if (!cache) jwksCaches.set(provider, (cache = {}))
  return cache
}

/** Least time between two key-set refetches forced by an unknown `kid`, per provider. */
export const JWKS_REFETCH_INTERVAL_MS = 5_000

const lastForcedRefetch = new WeakMap<ResolvedOAuthProvider, number>()

/**
 * Drops the provider's cached key set so that the next verification downloads it again, at most
 * once per {@link JWKS_REFETCH_INTERVAL_MS}: a rotated key is then found at once, while ID tokens
 * with a forged `kid` cannot turn every callback into a request to the provider.
 *
 * @returns whether the cache was dropped (false: a refetch happened too recently).
 */
export function refetchJwksOnce(provider: ResolvedOAuthProvider, now = Date.now()): boolean {
  const last = lastForcedRefetch.get(provider)
  // Stryker disable next-line ConditionalExpression: eq#oauth-server-1
  if (last !== undefined && now - last < JWKS_REFETCH_INTERVAL_MS) return false
  lastForcedRefetch.set(provider, now)
  const cache = jwksCacheOf(provider) as Partial<oauth.ExportedJWKSCache>
  delete cache.jwks
  delete cache.uat
  return true
}

const isUnknownKey = (error: unknown) =>
  // Stryker disable next-line ConditionalExpression,LogicalOperator: eq#oauth-server-2
  error instanceof oauth.OperationProcessingError &&
  // Stryker disable next-line ConditionalExpression: eq#oauth-server-2
  error.code === oauth.KEY_SELECTION &&
  error.message.includes('no applicable keys')

/**
 * Verifies the signature of the ID token in a processed token response against the provider's
 * key set. When no cached key matches the token's `kid`, the key set is fetched again (once per
 * interval) and the check repeated: OIDC Core 10.1.1 sends the relying party back to `jwks_uri`
 * on an unfamiliar `kid`, which is how a provider's key rotation becomes visible.
 *
 * @throws {oauth.OperationProcessingError} when no key verifies the token.
 * @see OpenID Connect Core 1.0 §10.1.1
 */
export async function verifyIdTokenSignature(
  provider: ResolvedOAuthProvider,
  as: oauth.AuthorizationServer,
  response: Response,
): Promise<void> {
  const options = { ...requestOptions(provider, as.jwks_uri), [oauth.jwksCache]: jwksCacheOf(provider) }
  try {
    await oauth.validateApplicationLevelSignature(as, response, options)
  } catch (error) {
    if (!isUnknownKey(error) || !refetchJwksOnce(provider)) throw error
    // oauth4webapi also remembers keys per metadata object: a copy makes it read ours again.
    await oauth.validateApplicationLevelSignature({ ...as }, response, options)
  }
}

/** The oauth4webapi client for a provider. */
export function clientOf(provider: ResolvedOAuthProvider): oauth.Client {
  return { ...provider.client, client_id: provider.clientId }
}

/** `application/x-www-form-urlencoded` as Auth.js writes it: `encodeURIComponent`, then `+` for spaces. */
function formUrlEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+')
}

/**
 * `client_secret_basic` with exactly `@auth/core`'s Authorization header. oauth4webapi's
 * `ClientSecretBasic` also percent-encodes `-_.!~*'()` (RFC 6749 §2.3.1 to the letter); some
 * providers do not decode them and refuse `client%2Did`, so applications moving from Auth.js would
 * see sign-ins break.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 */
export function authjsClientSecretBasic(clientSecret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const credentials = `${formUrlEncode(client.client_id)}:${formUrlEncode(clientSecret)}`
    headers.set('authorization', `Basic ${btoa(credentials)}`)
  }
}

/**
 * The client authentication of the provider's `token_endpoint_auth_method`.
 *
 * @throws {TypeError} when the method needs a secret or key that is not configured.
 */
export function clientAuthentication(
  provider: ResolvedOAuthProvider,
  as: oauth.AuthorizationServer,
): oauth.ClientAuth {
  const secret = () => {
    if (!provider.clientSecret) throw new TypeError(`provider "${provider.id}" has no clientSecret`)
    return provider.clientSecret
  }
  switch (provider.client.token_endpoint_auth_method) {
    case 'client_secret_basic':
      return authjsClientSecretBasic(secret())
    case 'client_secret_post':
      return oauth.ClientSecretPost(secret())
    case 'client_secret_jwt':
      return oauth.ClientSecretJwt(secret())
    case 'private_key_jwt': {
      if (!provider.clientPrivateKey) {
        throw new TypeError(`provider "${provider.id}" has no clientPrivateKey for private_key_jwt`)
      }
      return oauth.PrivateKeyJwt(provider.clientPrivateKey, {
        [oauth.modifyAssertion](_header, payload) {
          // Some servers expect the issuer, others the token endpoint: offer both.
          payload.aud = [as.issuer, as.token_endpoint!]
        },
      })
    }
    case 'none':
      return oauth.None()
  }
}
