// OIDC sign-in with the provider's answers canned through each library's `customFetch`: discovery,
// the JWKS and a token response carrying a real RS256-signed ID token (signed once, at start-up).
// No provider process and no browser hops: what is timed is the relying party's own work (state,
// PKCE, the code exchange's request and response handling, the ID token's signature and claims,
// the session cookie).
import { generateKeyPair, exportJWK, SignJWT } from 'jose'

export const CANNED_ISSUER = 'https://op.bench.test'
export const CANNED_CLIENT = { clientId: 'bench', clientSecret: 's'.repeat(48) }

const json = (body) => new Response(body, { headers: { 'content-type': 'application/json' } })

/** The canned provider: its `fetch` stand-in, and how many of each request it answered. */
export async function cannedProvider() {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { modulusLength: 2048 })
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' }] })
  const discovery = JSON.stringify({
    issuer: CANNED_ISSUER,
    authorization_endpoint: `${CANNED_ISSUER}/authorize`,
    token_endpoint: `${CANNED_ISSUER}/token`,
    jwks_uri: `${CANNED_ISSUER}/jwks`,
    // Never called (the ID token carries the profile), but @auth/core refuses a provider without it.
    userinfo_endpoint: `${CANNED_ISSUER}/userinfo`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic'],
  })
  // Valid for an hour: longer than any bench run.
  const idToken = await new SignJWT({ name: 'Alice', email: 'a@x.test' })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
    .setIssuer(CANNED_ISSUER)
    .setAudience(CANNED_CLIENT.clientId)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey)
  const token = JSON.stringify({ access_token: 'canned-access-token', token_type: 'Bearer', expires_in: 3600, id_token: idToken, scope: 'openid profile email' })
  const served = { discovery: 0, jwks: 0, token: 0 }
  /** A `fetch` that answers the provider's three endpoints and refuses anything else. */
  async function fetch(input, init) {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')
    if (url === `${CANNED_ISSUER}/.well-known/openid-configuration`) return served.discovery++, json(discovery)
    if (url === `${CANNED_ISSUER}/jwks`) return served.jwks++, json(jwks)
    if (url === `${CANNED_ISSUER}/token` && method === 'POST') return served.token++, json(token)
    throw new Error(`canned provider: unexpected ${method} ${url}`)
  }
  return { fetch, served }
}
