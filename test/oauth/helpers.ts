/**
 * Helpers for OAuth tests: the app's side of a sign-in against the real provider of
 * `test/fixtures/oidc-provider.ts`.
 *
 * @module
 */
import { expect } from 'vitest'
import type { ClientMetadata } from 'oidc-provider'
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, importJWK } from 'jose'
import { ORIGIN, type Client } from '../fixtures/http.js'
import { visitProvider, type ProviderReturn, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import type { ClientAuthMethod } from '../../core/oauth/provider.js'
import { JWKS_REFETCH_INTERVAL_MS, refetchJwksOnce } from '../../core/oauth/server.js'

/** A client secret long enough for HS256 client assertions. */
export const CLIENT_SECRET = 'client-secret-0123456789-abcdefghijklmnopqrstuvwxyz-0123456789'

/** Where the app's callbacks live. */
export const CALLBACK_BASE = `${ORIGIN}/auth/callback/`

/** Every client authentication method, with the provider and OP client configured for it. */
export const AUTH_METHODS: readonly ClientAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
  'private_key_jwt',
  'none',
]

/** The client's own key for private_key_jwt. */
export const clientKeys = await generateKeyPair('RS256', { extractable: true })

/** The OP's registration of a client using `method`, with the callback of provider `providerId`. */
export async function opClient(
  method: ClientAuthMethod,
  providerId: string,
  extra: Partial<ClientMetadata> = {},
): Promise<ClientMetadata> {
  return {
    client_id: providerId,
    ...(method.startsWith('client_secret') ? { client_secret: CLIENT_SECRET } : {}),
    token_endpoint_auth_method: method,
    ...(method === 'private_key_jwt'
      ? { jwks: { keys: [{ ...(await exportJWK(clientKeys.publicKey)), alg: 'RS256', use: 'sig' }] } }
      : {}),
    redirect_uris: [`${CALLBACK_BASE}${providerId}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    post_logout_redirect_uris: [`${ORIGIN}/`],
    ...extra,
  }
}

/** The app's provider config for the OP client of {@link opClient}. */
export function appProvider(
  issuer: string,
  method: ClientAuthMethod,
  providerId: string,
  extra: Record<string, unknown> = {},
) {
  return {
    id: providerId,
    name: `OP (${method})`,
    type: 'oidc' as const,
    issuer,
    clientId: providerId,
    ...(method.startsWith('client_secret') ? { clientSecret: CLIENT_SECRET } : {}),
    ...(method === 'private_key_jwt' ? { clientPrivateKey: clientKeys.privateKey } : {}),
    client: { token_endpoint_auth_method: method },
    ...extra,
  }
}

/** Posts the sign-in form for `providerId`; returns the authorization URL it redirects to. */
export async function startSignIn(
  client: Client,
  providerId: string,
  options: { callbackUrl?: string; query?: Record<string, string> } = {},
): Promise<string> {
  const csrfToken = await client.csrfToken()
  const response = await client.send({
    path: `/signin/${providerId}`,
    body: { csrfToken, ...(options.callbackUrl ? { callbackUrl: options.callbackUrl } : {}) },
    ...(options.query ? { query: options.query } : {}),
  })
  expect(response.status, await describeFailure(response)).toBe(302)
  return response.headers.get('location')!
}

async function describeFailure(response: Response): Promise<string> {
  return `answered ${response.status} ${response.headers.get('location') ?? ''}`
}

/** Delivers the provider's answer to the app, as the browser would (GET, or the form_post). */
export function deliverCallback(client: Client, answer: ProviderReturn): Promise<Response> {
  const path = answer.url.pathname.slice('/auth'.length)
  if (answer.method === 'POST') return client.send({ path, body: answer.form ?? {} })
  return client.send({ path, query: Object.fromEntries(answer.url.searchParams) })
}

/**
 * A whole sign-in: start, visit the provider, deliver the callback. `opCookies` keeps the
 * browser's session at the provider (to end it there later).
 */
export async function signInThroughProvider(
  client: Client,
  providerId: string,
  options: { callbackUrl?: string; query?: Record<string, string>; opCookies?: Map<string, string> } = {},
): Promise<{ authorizationUrl: URL; callback: Response }> {
  const authorizationUrl = await startSignIn(client, providerId, options)
  const answer = await visitProvider(authorizationUrl, CALLBACK_BASE, options.opCookies)
  return { authorizationUrl: new URL(authorizationUrl), callback: await deliverCallback(client, answer) }
}

/** Rewrites the claims of an ID token the provider issued into another signed token. */
export type IdTokenForgery = (claims: Record<string, unknown>) => Promise<string>

/**
 * A network attacker (or a broken provider) between the app and the provider's token endpoint:
 * `fetch` passes every answer through, except that while `forge` is set, a token response's ID
 * token is replaced by `forge(its claims)`. `signedByProvider` signs claims with the provider's own
 * key, so only the claims are wrong.
 */
export function idTokenForger(provider: () => RunningOidcProvider) {
  const forger = {
    forge: undefined as IdTokenForgery | undefined,
    fetch: (async (input, init) => {
      const response = await fetch(input, init)
      const url = input instanceof Request ? input.url : String(input)
      if (!forger.forge || !url.endsWith('/token') || !response.ok) return response
      const body = (await response.json()) as Record<string, unknown>
      body.id_token = await forger.forge(decodeJwt(String(body.id_token)))
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers })
    }) as typeof fetch,
    async signedByProvider(claims: Record<string, unknown>): Promise<string> {
      const { signingKey } = provider()
      const key = await importJWK(signingKey, 'RS256')
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: signingKey.kid }).sign(key)
    },
  }
  return forger
}

/**
 * Asserts the key-set refetch budget of two providers, starting at `t0`: one refetch per provider
 * per interval, the interval counted from the refetch, each provider with its own budget.
 */
export function expectOneKeySetRefetchPerInterval(
  a: Parameters<typeof refetchJwksOnce>[0],
  b: Parameters<typeof refetchJwksOnce>[0],
  t0: number,
): void {
  expect(refetchJwksOnce(a, t0)).toBe(true)
  expect(refetchJwksOnce(a, t0 + 1)).toBe(false)
  expect(refetchJwksOnce(b, t0 + 1), 'another provider has its own budget').toBe(true)
  expect(refetchJwksOnce(a, t0 + JWKS_REFETCH_INTERVAL_MS - 1)).toBe(false)
  expect(refetchJwksOnce(a, t0 + JWKS_REFETCH_INTERVAL_MS)).toBe(true)
  expect(refetchJwksOnce(a, t0 + JWKS_REFETCH_INTERVAL_MS + 1)).toBe(false)
}
