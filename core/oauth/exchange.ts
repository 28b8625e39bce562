/**
 * The authorization code exchange and the upstream profile: the protocol steps of an OAuth
 * callback after its `state` checked out, with the hooks provider presets need (token `conform`,
 * extra token parameters, tenant issuers, symmetric ID token signatures, profile fields sent in the
 * callback, a userinfo request of their own).
 *
 * @module
 */
import { compactVerify } from 'jose/jws/compact/verify'
import { decodeJwt } from 'jose/jwt/decode'
import { decodeProtectedHeader } from 'jose/decode/protected_header'
import * as oauth from 'oauth4webapi'
import { idTokenSignatureVerifiedNow } from '../fast/id-token-signature.js'
import { withDPoPNonceRetry } from './dpop.js'
import type { ResolvedOAuthProvider, TokenSet, UserinfoContext } from './provider.js'
import {
  authorizationServer,
  clientAuthentication,
  clientOf,
  jwksCacheOf,
  requestOptions,
  tokenRequestOptions,
  verifyIdTokenSignature,
} from './server.js'

/** What the sign-in flow kept for the exchange: where the code was sent, and the PKCE and nonce secrets. */
export interface CodeExchange {
  redirectUri: string
  codeVerifier: string | null
  nonce: string | null
}

/**
 * The metadata the ID token is checked against: the discovered one, with the issuer the provider's
 * `idTokenIssuer` derives from the (not yet trusted) token, for multi-tenant issuers.
 */
async function idTokenServer(
  provider: ResolvedOAuthProvider,
  as: oauth.AuthorizationServer,
  response: Response,
): Promise<oauth.AuthorizationServer> {
  if (!provider.idTokenIssuer || !response.ok) return as
  let idToken: unknown
  try {
    idToken = ((await response.clone().json()) as Record<string, unknown>).id_token
  } catch {
    return as // not JSON: oauth4webapi refuses the response with the reason
  }
  if (typeof idToken !== 'string') return as
  const issuer = provider.idTokenIssuer(decodeJwt(idToken), as.issuer)
  return issuer === as.issuer ? as : { ...as, issuer }
}

/**
 * Verifies the ID token's signature: with the provider's published keys (refetched once on an
 * unknown `kid`), or for an HMAC algorithm (LINE's HS256, `client.id_token_signed_response_alg`)
 * with the client secret as OIDC Core §10.1 prescribes. oauth4webapi checks the claims and the
 * algorithm only. A provider that publishes no key set (`jwks_uri`) leaves an asymmetric token
 * trusted on the TLS connection to its token endpoint alone, as OIDC Core §3.1.3.7 item 6 allows.
 *
 * @throws when the signature does not verify or no key can be found.
 * @see https://openid.net/specs/openid-connect-core-1_0.html#Symmetric
 */
async function verifyIdToken(
  provider: ResolvedOAuthProvider,
  as: oauth.AuthorizationServer,
  response: Response,
  idToken: string,
): Promise<void> {
  const { alg } = decodeProtectedHeader(idToken)
  // Stryker disable next-line ConditionalExpression: eq#oauth-exchange-1
  if (typeof alg === 'string' && alg.startsWith('HS')) {
    if (!provider.clientSecret) throw new TypeError(`provider "${provider.id}" has no clientSecret to verify a ${alg} ID token`)
    // Stryker disable next-line ObjectLiteral: eq#oauth-exchange-2
    await compactVerify(idToken, new TextEncoder().encode(provider.clientSecret), { algorithms: [alg] })
    return
  }
  if (!as.jwks_uri) return
  // Synchronously, when the cached key set settles it; otherwise oauth4webapi's full check.
  // Stryker disable next-line ConditionalExpression: eq#oauth-exchange-3
  if (idTokenSignatureVerifiedNow(jwksCacheOf(provider), idToken)) return
  await verifyIdTokenSignature(provider, as, response)
}

/**
 * Exchanges the authorization code at the token endpoint and checks the answer (and its ID token).
 * `expires_at` is set from `expires_in` relative to `at`.
 *
 * @throws oauth4webapi's errors for a refused or malformed answer; jose's for a bad ID token signature.
 */
export async function exchangeAuthorizationCode(
  provider: ResolvedOAuthProvider,
  callbackParameters: URLSearchParams,
  exchange: CodeExchange,
  at: number,
  dpop?: oauth.DPoPHandle,
): Promise<TokenSet> {
  const as = await authorizationServer(provider)
  const client = clientOf(provider)
  const options = { ...tokenRequestOptions(provider, as), ...(dpop ? { DPoP: dpop } : {}) }
  const tokens = await withDPoPNonceRetry(
    dpop,
    () =>
      oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuthentication(provider, as),
        callbackParameters,
        exchange.redirectUri,
        exchange.codeVerifier ?? oauth.nopkce,
        options,
      ),
    async (answer) => {
      const response = provider.conformToken ? ((await provider.conformToken(answer.clone())) ?? answer) : answer
      const server = await idTokenServer(provider, as, response)
      const processed = await oauth.processAuthorizationCodeResponse(server, client, response, {
        expectedNonce: exchange.nonce ?? oauth.expectNoNonce,
        requireIdToken: provider.type === 'oidc',
      })
      if (processed.id_token) await verifyIdToken(provider, server, response, processed.id_token)
      return processed
    },
  )
  const set: TokenSet = { ...tokens }
  if (typeof tokens.expires_in === 'number') set.expires_at = at + tokens.expires_in
  return set
}

/**
 * The profile as the provider gives it: the ID token's claims (OIDC, unless `idToken: false`), the
 * userinfo response, or what the provider's own `userinfo.request` returns; plus what the provider
 * sent in the callback itself (`callbackProfile`).
 *
 * With `dpop`, the userinfo request carries a DPoP proof (the access token is bound to its key).
 *
 * @throws when the userinfo request fails or answers with another subject than the ID token.
 */
export async function fetchUpstreamProfile(
  provider: ResolvedOAuthProvider,
  tokens: TokenSet,
  callbackParams: Readonly<Record<string, string>>,
  dpop?: oauth.DPoPHandle,
): Promise<unknown> {
  const as = await authorizationServer(provider)
  const client = clientOf(provider)
  const userinfo = () =>
    oauth.userInfoRequest(as, client, tokens.access_token!, {
      ...requestOptions(provider, as.userinfo_endpoint),
      ...(dpop ? { DPoP: dpop } : {}),
    })
  let profile: unknown
  if (provider.type === 'oidc') {
    const claims = decodeJwt(tokens.id_token!)
    if (provider.idToken) {
      profile = { ...claims, ...provider.callbackProfile?.(callbackParams) }
    } else {
      profile = await withDPoPNonceRetry(dpop, userinfo, (response) => oauth.processUserInfoResponse(as, client, claims.sub!, response))
    }
  } else if (provider.userinfoRequest) {
    profile = await provider.userinfoRequest({ tokens, provider })
  } else {
    profile = await withDPoPNonceRetry(dpop, userinfo, async (response) => {
      // A DPoP nonce challenge is an error oauth4webapi recognises: let it through for the retry.
      if (dpop && response.status === 401) await oauth.processUserInfoResponse(as, client, oauth.skipSubjectCheck, response)
      if (!response.ok) throw new TypeError(`userinfo endpoint answered ${response.status}`)
      return response.json()
    })
  }
  return profile
}

/** Options of {@link requestUserinfo}. */
export interface UserinfoRequestInit {
  /** The URL to ask; the provider's `userinfo` by default. */
  url?: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  /** Send the access token as `Authorization: Bearer` (default `true`). */
  bearer?: boolean
}

/**
 * A JSON request to the provider's API with the access token, through the provider's `fetch`: the
 * building block of presets whose profile is not a plain userinfo GET (Dropbox's POST, Notion's
 * version header, HubSpot's token in the path).
 *
 * @throws {TypeError} when the provider answers with an error status.
 */
export async function requestUserinfo(
  { tokens, provider }: UserinfoContext,
  init: UserinfoRequestInit = {},
): Promise<unknown> {
  const url = init.url ?? provider.userinfo
  if (!url) throw new TypeError(`provider "${provider.id}" has no userinfo URL`)
  const headers = new Headers(init.headers)
  if (init.bearer !== false) headers.set('authorization', `Bearer ${tokens.access_token}`)
  const response = await (provider.fetch ?? fetch)(url, { method: init.method ?? 'GET', headers })
  // The URL stays out of the message: HubSpot's carries the access token.
  if (!response.ok) throw new TypeError(`the profile request of provider "${provider.id}" answered ${response.status}`)
  return response.json()
}

/**
 * A token `conform` for providers whose token response has no `token_type` (VK, Instagram): their
 * tokens are bearer tokens, and oauth4webapi requires the field.
 */
export async function conformBearerToken(response: Response): Promise<Response> {
  const body = (await response.json()) as Record<string, unknown>
  return Response.json({ token_type: 'bearer', ...body }, { status: response.status })
}
