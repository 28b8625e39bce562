/**
 * Stronger clients per provider option, end to end against the real OpenID Provider: DPoP-bound
 * tokens (`dpop: true`, RFC 9449) through sign-in, userinfo and refresh (the provider requiring its
 * nonce in every proof, so each of them is refused once and sent again with it), refused by the
 * provider without a proof from the session's key; pushed authorization requests (`par: true`, RFC 9126),
 * alone and with `private_key_jwt` client authentication at both the PAR and the token endpoint
 * (the provider requires PAR of these clients, so a sign-in that sent its parameters through the
 * browser is refused there); and `private_key_jwt` on its own.
 */
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decode } from '../../core/jwt.js'
import { DPOP_KEY_FIELD, openDPoPKeyPair } from '../../core/oauth/dpop.js'
import { Client, SECRET, testConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CALLBACK_BASE, opClient, signInThroughProvider, startSignIn } from './helpers.js'

let op: RunningOidcProvider

const SESSION_COOKIE = '__Secure-authjs.session-token'

beforeAll(async () => {
  op = await startOidcProvider({
    // Access tokens live 10 s: inside the 30 s leeway, so every session read refreshes them.
    refreshTokens: true,
    // Every DPoP proof must carry the provider's nonce: each first request is refused and sent again.
    requireDpopNonce: true,
    accessTokenTtl: 10,
    clients: [
      // The provider issues this client only DPoP-bound access tokens.
      await opClient('client_secret_basic', 'op-dpop', {
        dpop_bound_access_tokens: true,
        redirect_uris: [`${CALLBACK_BASE}op-dpop`, `${CALLBACK_BASE}op-dpop-off`],
      } as never),
      await opClient('client_secret_basic', 'op-par', {
        require_pushed_authorization_requests: true,
        redirect_uris: [`${CALLBACK_BASE}op-par`, `${CALLBACK_BASE}op-par-off`],
      } as never),
      await opClient('private_key_jwt', 'op-par-jwt', { require_pushed_authorization_requests: true } as never),
      await opClient('private_key_jwt', 'op-jwt'),
    ],
  })
})
afterAll(() => op?.close())

const config = () =>
  testConfig({
    providers: [
      appProvider(op.issuer, 'client_secret_basic', 'op-par', { par: true, checks: ['pkce', 'state', 'nonce'] }),
      appProvider(op.issuer, 'private_key_jwt', 'op-par-jwt', { par: true }),
      // The same client without the option: its parameters go through the browser.
      appProvider(op.issuer, 'client_secret_basic', 'op-par-off', { clientId: 'op-par' }),
      appProvider(op.issuer, 'private_key_jwt', 'op-jwt'),
      // The profile from userinfo, so that the sign-in calls it with the bound access token.
      appProvider(op.issuer, 'client_secret_basic', 'op-dpop', { dpop: true, refreshTokens: true, idToken: false }),
      appProvider(op.issuer, 'client_secret_basic', 'op-dpop-off', { clientId: 'op-dpop', idToken: false }),
    ] as never,
  })

/** The tokens a JWT session keeps of the provider (with `refreshTokens`). */
async function sessionTokens(client: Client): Promise<{ access_token: string; refresh_token: string; dpop_key?: string }> {
  const token = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
  return token!.oauth as { access_token: string; refresh_token: string; dpop_key?: string }
}

/** The provider's userinfo answer to `accessToken`, with a DPoP proof from `keyPair`, or with none. */
async function userinfo(accessToken: string, keyPair?: CryptoKeyPair): Promise<number> {
  const url = new URL(`${op.issuer}/me`)
  const options = { [oauth.allowInsecureRequests]: true, ...(keyPair ? { DPoP: oauth.DPoP({}, keyPair) } : {}) }
  if (keyPair) {
    const request = () => oauth.protectedResourceRequest(accessToken, 'GET', url, new Headers(), null, options)
    try {
      return (await request().catch((error: unknown) => (oauth.isDPoPNonceError(error) ? request() : Promise.reject(error)))).status
    } catch (error) {
      // oauth4webapi throws the provider's challenge (WWW-Authenticate) instead of answering it.
      if (error instanceof oauth.WWWAuthenticateChallengeError) return error.status
      throw error
    }
  }
  const bearer = await fetch(url, { headers: { authorization: `Bearer ${accessToken}` } })
  const dpopScheme = await fetch(url, { headers: { authorization: `DPoP ${accessToken}` } })
  // The DPoP scheme without its proof header is a malformed request (400); as a bearer token, it is not valid (401).
  expect(dpopScheme.status, 'the DPoP scheme without a proof').toBe(400)
  return bearer.status
}

describe('DPoP-bound tokens (dpop: true)', () => {
  it("signs in and refreshes with tokens bound to the session's key; without a proof the provider refuses them", async () => {
    const client = new Client(config())
    const { callback } = await signInThroughProvider(client, 'op-dpop')
    expect(callback.headers.get('location')).not.toContain('error')
    expect((await client.session()).body, 'the profile came from userinfo, with a proof').toMatchObject({
      user: { email: OP_ACCOUNT.email.toLowerCase() },
    })

    const first = await sessionTokens(client)
    // The sealed key pair rides in the session cookie, which must still fit a browser's 4,096 bytes.
    expect(`${SESSION_COOKIE}=${client.jar.get(SESSION_COOKIE)}; Path=/; Expires=Thu, 01 Jan 2099 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax`.length).toBeLessThan(4096)
    expect(first[DPOP_KEY_FIELD], 'the key pair is kept with the session, sealed').toEqual(expect.any(String))
    expect(JSON.stringify(first), 'no key material in the clear').not.toMatch(/"d"|"kty"/)
    const keyPair = await openDPoPKeyPair(first[DPOP_KEY_FIELD]!, [SECRET])
    expect(await userinfo(first.access_token), 'a stolen access token, without a proof').toBe(401)
    expect(await userinfo(first.access_token, await oauth.generateKeyPair('ES256')), 'with a proof from another key').toBe(401)
    expect(await userinfo(first.access_token, keyPair), "with a proof from the session's key").toBe(200)

    // The session read finds the access token due and refreshes it, with a proof from the same key.
    const refreshes = op.grants.filter((g) => g.grant_type === 'refresh_token').length
    expect((await client.session()).body).toMatchObject({ user: { name: OP_ACCOUNT.name } })
    expect(op.grants.filter((g) => g.grant_type === 'refresh_token').length, 'one refresh grant').toBe(refreshes + 1)
    const refreshed = await sessionTokens(client)
    expect(refreshed.access_token).not.toBe(first.access_token)
    expect(refreshed[DPOP_KEY_FIELD]).toBe(first[DPOP_KEY_FIELD])
    expect(await userinfo(refreshed.access_token), 'the refreshed token, without a proof').toBe(401)
    expect(await userinfo(refreshed.access_token, keyPair)).toBe(200)
  })

  it('is what the provider requires of the client: without the option, the sign-in fails', async () => {
    const client = new Client(config())
    const { callback } = await signInThroughProvider(client, 'op-dpop-off')
    expect(callback.headers.get('location')).toContain('error=')
    expect((await client.session()).body).toBeNull()
  })
})

describe('DPoP-bound tokens with database sessions (dpop: true, an adapter)', () => {
  const adapters = {
    memory: async () => {
      const { MemoryAdapter } = await import('../../adapters/memory.js')
      return MemoryAdapter()
    },
    PGlite: async () => {
      const { PGlite } = await import('@electric-sql/pglite')
      const { PostgresAdapter } = await import('../../adapters/postgres.js')
      const adapter = PostgresAdapter(new PGlite())
      await adapter.migrate()
      return adapter
    },
  }

  it.each(Object.keys(adapters) as (keyof typeof adapters)[])(
    "keeps the key pair with the account, sealed, and refreshes the account's tokens with a proof from it (%s)",
    async (name) => {
      const adapter = await adapters[name]()
      const cfg = testConfig({
        adapter,
        providers: [appProvider(op.issuer, 'client_secret_basic', 'op-dpop', { dpop: true, refreshTokens: true, idToken: false })] as never,
      })
      const client = new Client(cfg)
      const { callback } = await signInThroughProvider(client, 'op-dpop')
      expect(callback.headers.get('location')).not.toContain('error')
      expect((await client.session()).body).toMatchObject({ user: { email: OP_ACCOUNT.email.toLowerCase() } })
      const user = (await adapter.getUserByEmail!(OP_ACCOUNT.email.toLowerCase()))!

      const [account] = await adapter.listAccounts!(user.id)
      expect(account![DPOP_KEY_FIELD], 'the key pair is kept with the account, sealed').toEqual(expect.any(String))
      expect(JSON.stringify(account), 'no key material in the clear').not.toMatch(/"d"|"kty"/)
      const keyPair = await openDPoPKeyPair(account![DPOP_KEY_FIELD] as string, [SECRET])
      expect(await userinfo(account!.access_token!), 'the stored access token, without a proof').toBe(401)
      expect(await userinfo(account!.access_token!, keyPair), "with a proof from the account's key").toBe(200)

      // The access token lives 10 s, inside the leeway: the next read refreshes it, with a proof.
      const refreshes = op.grants.filter((g) => g.grant_type === 'refresh_token').length
      const read = (await client.session()).body as { error?: string }
      expect(read).toMatchObject({ user: { email: OP_ACCOUNT.email.toLowerCase() } })
      expect(read.error, 'the refresh succeeded').toBeUndefined()
      expect(op.grants.filter((g) => g.grant_type === 'refresh_token').length, 'one refresh grant').toBe(refreshes + 1)
      const [refreshed] = await adapter.listAccounts!(user.id)
      expect(refreshed!.access_token).not.toBe(account!.access_token)
      expect(refreshed![DPOP_KEY_FIELD], 'the refreshed tokens stay bound to the same key').toBe(account![DPOP_KEY_FIELD])
      expect(await userinfo(refreshed!.access_token!), 'the refreshed token, without a proof').toBe(401)
      expect(await userinfo(refreshed!.access_token!, keyPair)).toBe(200)
      expect(cfg.logger.error).not.toHaveBeenCalled()
    },
  )
})

describe('pushed authorization requests (par: true)', () => {
  it.each(['op-par', 'op-par-jwt'])('signs in through a pushed request: the browser carries only client_id and request_uri (%s)', async (id) => {
    const client = new Client(config())
    const { authorizationUrl, callback } = await signInThroughProvider(client, id)
    expect([...authorizationUrl.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
    expect(authorizationUrl.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/)
    expect(callback.headers.get('location')).not.toContain('error')
    expect((await client.session()).body).toMatchObject({ user: { email: OP_ACCOUNT.email.toLowerCase() } })
  })

  it('is what the provider requires of the client: without the option, the provider refuses the sign-in', async () => {
    const client = new Client(config())
    const authorizationUrl = new URL(await startSignIn(client, 'op-par-off'))
    expect(authorizationUrl.searchParams.get('code_challenge'), 'the parameters are in the browser').not.toBeNull()
    const atProvider = await fetch(authorizationUrl, { redirect: 'manual' })
    const refusal = new URL(atProvider.headers.get('location')!)
    expect(`${refusal.origin}${refusal.pathname}`).toBe(`${CALLBACK_BASE}op-par-off`)
    expect(refusal.searchParams.get('error')).toBe('invalid_request')
    expect(refusal.searchParams.get('error_description')).toMatch(/pushed authorization request/i)
  })
})

describe('par: true with a provider that advertises no PAR endpoint', () => {
  it("does not start the sign-in (Configuration), and the log says why; the parameters never go to the browser", async () => {
    const config = testConfig({
      providers: [
        {
          id: 'plain',
          name: 'Plain OAuth',
          type: 'oauth',
          authorization: `${op.issuer}/auth`,
          token: `${op.issuer}/token`,
          userinfo: `${op.issuer}/me`,
          clientId: 'op-par',
          clientSecret: 'unused',
          par: true,
        },
      ] as never,
    })
    const client = new Client(config)
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/signin/plain', body: { csrfToken } })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toMatch(/\/auth\/error\?error=Configuration$/)
    expect(String(config.logger.error.mock.calls[0]?.[0]?.message)).toMatch(/advertises no pushed_authorization_request_endpoint/)
  })
})

describe('private_key_jwt (client.token_endpoint_auth_method)', () => {
  it('signs in with a client assertion signed by the configured key', async () => {
    const client = new Client(config())
    const { callback } = await signInThroughProvider(client, 'op-jwt')
    expect(callback.headers.get('location')).not.toContain('error')
    expect((await client.session()).body).toMatchObject({ user: { name: OP_ACCOUNT.name } })
    expect(op.grants.at(-1)?.grant_type).toBe('authorization_code')
  })
})
