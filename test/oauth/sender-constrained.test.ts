/**
 * Stronger clients per provider option, end to end against the real OpenID Provider: pushed
 * authorization requests (`par: true`, RFC 9126), alone and with `private_key_jwt` client
 * authentication at both the PAR and the token endpoint. The provider requires PAR of these clients,
 * so a sign-in that sent its parameters through the browser would be refused there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, testConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CALLBACK_BASE, opClient, signInThroughProvider, startSignIn } from './helpers.js'

let op: RunningOidcProvider

beforeAll(async () => {
  op = await startOidcProvider({
    clients: [
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
    ] as never,
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

describe('private_key_jwt (client.token_endpoint_auth_method)', () => {
  it('signs in with a client assertion signed by the configured key', async () => {
    const client = new Client(config())
    const { callback } = await signInThroughProvider(client, 'op-jwt')
    expect(callback.headers.get('location')).not.toContain('error')
    expect((await client.session()).body).toMatchObject({ user: { name: OP_ACCOUNT.name } })
    expect(op.grants.at(-1)?.grant_type).toBe('authorization_code')
  })
})
