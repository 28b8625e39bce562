/**
 * An OpenID Provider played in-process through the provider's `customFetch`: discovery, key set,
 * token endpoint (which checks the PKCE verifier against the challenge it was shown) and userinfo,
 * every answer changeable by a test, every request counted. Fast enough to run under every mutant.
 *
 * @module
 */
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import { createHash } from 'node:crypto'
import { customFetch } from '../../core/index.js'
import { Client } from '../fixtures/http.js'

/** The stand-in's issuer. */
export const ISSUER = 'https://op.standin.test'
/** The client secret the app and the stand-in share. */
export const STANDIN_SECRET = 'standin-client-secret-0123456789-abcdefghijklmnopqrstuvwxyz'

const signing = await generateKeyPair('RS256')
const other = await generateKeyPair('RS256')
const jwkOf = async (key: CryptoKey, kid: string | undefined) => ({
  ...(await exportJWK(key)),
  ...(kid ? { kid } : {}),
  alg: 'RS256',
  use: 'sig',
})
/** The published key of the stand-in (`kid` "k1"). */
export const PUBLISHED = { keys: [await jwkOf(signing.publicKey, 'k1')] }
/** The key set after a rotation: the old key "k1" and the new "k2" (tokens signed with `key: 'other'`). */
export const ROTATED = { keys: [await jwkOf(signing.publicKey, 'k1'), await jwkOf(other.publicKey, 'k2')] }
/** Two published keys without a `kid`: a token without one matches both. */
export const TWO_WITHOUT_KID = { keys: [await jwkOf(signing.publicKey, undefined), await jwkOf(other.publicKey, undefined)] }

/** How the ID token of a token response is signed. */
export type IdTokenSigning =
  | { alg: 'RS256'; kid?: string; key?: 'signing' | 'other' }
  | { alg: 'HS256'; secret: string }
  | 'none'

/** What the stand-in answers; a test changes any of it before the request it concerns. */
export interface StandInBehaviour {
  discovery: Record<string, unknown>
  jwks: { keys: unknown[] }
  idToken: IdTokenSigning
  claims: Record<string, unknown>
  /** Fields of the token response besides the ID token (null: a refused grant). */
  token: Record<string, unknown> | null
  userinfo: unknown
}

/** A stand-in provider and what it saw. */
export interface StandIn {
  readonly fetch: typeof fetch
  readonly behaviour: StandInBehaviour
  readonly seen: { jwks: number; token: number; tokenBodies: URLSearchParams[]; tokenHeaders: Headers[] }
}

/** A fresh stand-in (its own key-set cache in the app: use one per test). */
export function standIn(): StandIn {
  const behaviour: StandInBehaviour = {
    discovery: {
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/authorize`,
      token_endpoint: `${ISSUER}/token`,
      jwks_uri: `${ISSUER}/jwks`,
      userinfo_endpoint: `${ISSUER}/userinfo`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'HS256'],
    },
    jwks: PUBLISHED,
    idToken: { alg: 'RS256', kid: 'k1' },
    claims: {},
    token: { access_token: 'standin-access-token', token_type: 'Bearer' },
    userinfo: { sub: 'standin-user', email: 'alice@example.com', name: 'Alice' },
  }
  const seen = { jwks: 0, token: 0, tokenBodies: [] as URLSearchParams[], tokenHeaders: [] as Headers[] }
  const fetchImpl: typeof fetch = async (input, init) => {
    const request = new Request(input, init)
    const url = request.url
    if (url === `${ISSUER}/.well-known/openid-configuration`) return Response.json(behaviour.discovery)
    if (url === `${ISSUER}/jwks`) {
      seen.jwks += 1
      return Response.json(behaviour.jwks)
    }
    if (url === `${ISSUER}/token`) {
      seen.token += 1
      const body = new URLSearchParams(await request.text())
      seen.tokenBodies.push(body)
      seen.tokenHeaders.push(request.headers)
      // The code names the PKCE challenge and nonce of its authorization request (see answerTo).
      const [challenge, nonce] = (body.get('code') ?? '').split('~')
      const verifier = body.get('code_verifier')
      const pkceOk =
        challenge === '' || (verifier !== null && createHash('sha256').update(verifier).digest('base64url') === challenge)
      if (behaviour.token === null || !pkceOk) {
        return Response.json({ error: 'invalid_grant', error_description: 'refused by the stand-in' }, { status: 400 })
      }
      const idToken = await signIdToken(behaviour, nonce ?? '')
      return Response.json({ ...behaviour.token, ...(idToken ? { id_token: idToken } : {}) })
    }
    if (url === `${ISSUER}/userinfo`) return Response.json(behaviour.userinfo)
    return new Response(`no stand-in for ${url}`, { status: 599 })
  }
  return { fetch: fetchImpl, behaviour, seen }
}

async function signIdToken(behaviour: StandInBehaviour, nonce: string): Promise<string | undefined> {
  const how = behaviour.idToken
  if (how === 'none') return undefined
  const now = Math.floor(Date.now() / 1000)
  const jwt = new SignJWT({
    sub: 'standin-user',
    email: 'alice@example.com',
    name: 'Alice',
    ...(nonce ? { nonce } : {}),
    ...behaviour.claims,
  })
    .setIssuer(ISSUER)
    .setAudience('standin')
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
  if (how.alg === 'HS256') {
    return jwt.setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(how.secret))
  }
  const key = how.key === 'other' ? other.privateKey : signing.privateKey
  return jwt.setProtectedHeader({ alg: 'RS256', ...(how.kid ? { kid: how.kid } : {}) }).sign(key)
}

/** The app's provider for a stand-in; `extra` overrides any field. */
export function standInProvider(op: StandIn, extra: Record<string, unknown> = {}) {
  return {
    id: 'standin',
    name: 'Stand-in',
    type: 'oidc' as const,
    issuer: ISSUER,
    clientId: 'standin',
    clientSecret: STANDIN_SECRET,
    checks: ['pkce', 'state', 'nonce'],
    [customFetch]: op.fetch,
    ...extra,
  }
}

/** Posts the sign-in form; the response (a redirect to the provider when it started). */
export async function startAt(client: Client, query?: Record<string, string>, body: Record<string, unknown> = {}) {
  const csrfToken = await client.csrfToken()
  return client.send({ path: '/signin/standin', body: { csrfToken, ...body }, ...(query ? { query } : {}) })
}

/**
 * The provider's answer to the authorization request `location` as the browser brings it back:
 * a code that tells the stand-in's token endpoint which PKCE challenge and nonce it was shown.
 */
export function answerTo(location: string, extra: Record<string, string> = {}): Record<string, string> {
  const url = new URL(location)
  const code = `${url.searchParams.get('code_challenge') ?? ''}~${url.searchParams.get('nonce') ?? ''}`
  const state = url.searchParams.get('state')
  return { code, ...(state ? { state } : {}), ...extra }
}

/** A whole sign-in: start, the provider's answer, the callback. */
export async function signInAt(client: Client, providerId = 'standin') {
  const start = await startAt(client)
  const location = start.headers.get('location')!
  const callback = await client.send({ path: `/callback/${providerId}`, query: answerTo(location) })
  return { start, location, callback }
}
