/**
 * The Logout Token checks at the unit level (core/oauth/logout-token.ts), against the real OpenID
 * Provider's key set: each bad token of the list is refused with a LogoutTokenInvalid naming
 * the check, and a right one yields its claims. test/oauth/backchannel-logout.test.ts sends the same
 * tokens through `Auth` (400 JSON, no session touched).
 */
import { generateKeyPair } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BACKCHANNEL_LOGOUT_EVENT, LogoutTokenInvalid, verifyLogoutToken } from '../../core/oauth/logout-token.js'
import { resolveOAuthProvider, type OAuthConfig, type ResolvedOAuthProvider } from '../../core/oauth/provider.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CLIENT_SECRET, opClient } from './helpers.js'
import { logoutToken, unsignedLogoutToken, type Forgery } from './logout-tokens.js'

let op: RunningOidcProvider
let provider: ResolvedOAuthProvider
const SID = 'provider-session-1'
const now = () => Math.floor(Date.now() / 1000)

beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
  provider = resolveOAuthProvider(appProvider(op.issuer, 'client_secret_basic', 'op') as OAuthConfig<Record<string, unknown>>, undefined)
})
afterAll(() => op?.close())

const token = (forgery: Forgery = {}) => logoutToken(op, 'op', SID, forgery)

describe('verifyLogoutToken', () => {
  it('accepts a right token and returns its sid, sub and jti', async () => {
    const claims = await verifyLogoutToken(provider, await token(), now())
    expect(claims).toEqual({ sid: SID, sub: expect.any(String), jti: expect.any(String), iat: expect.any(Number) })
  })

  const stranger = generateKeyPair('RS256')
  const cases: [string, () => Promise<string>, RegExp][] = [
    ['a wrong signature', async () => token({ key: (await stranger).privateKey }), /signature does not verify/],
    ['an unknown kid the provider does not publish', async () => token({ key: (await stranger).privateKey, header: { kid: 'not-published' } }), /no key of the provider/],
    ['a wrong iss', () => token({ claims: { iss: 'https://op.evil.example' } }), /iss is not the provider/],
    ['a wrong aud', () => token({ claims: { aud: 'another-client' } }), /aud does not name our client/],
    ['an aud array that does not name our client', () => token({ claims: { aud: ['another-client', 'a-third'] } }), /aud does not name our client/],
    ['an exp in the past (a recent iat)', () => token({ claims: { exp: now() - 120 } }), /expired/],
    ['an expired iat', () => token({ claims: { iat: now() - 600 } }), /iat is too old/],
    ['a future iat', () => token({ claims: { iat: now() + 600 } }), /iat is in the future/],
    ['missing events', () => token({ claims: { events: undefined } }), /^events is missing$/],
    ['an events member that is a string', () => token({ claims: { events: BACKCHANNEL_LOGOUT_EVENT } }), /^events must be a JSON object$/],
    ['an events member that is an array', () => token({ claims: { events: [BACKCHANNEL_LOGOUT_EVENT] } }), /^events must be a JSON object$/],
    ['events without the back-channel logout member', () => token({ claims: { events: {} } }), /^events has no back-channel logout member$/],
    [
      'a back-channel logout member that is not an object',
      () => token({ claims: { events: { [BACKCHANNEL_LOGOUT_EVENT]: 'yes' } } }),
      /^the back-channel logout member of events must be a JSON object$/,
    ],
    ['a nonce present', () => token({ claims: { nonce: 'n' } }), /nonce/],
    ['neither sid nor sub', () => token({ claims: { sid: undefined, sub: undefined } }), /neither sid nor sub/],
    ['alg none', async () => unsignedLogoutToken(op, 'op', SID), /alg none is not accepted/],
    ['HS256 keyed with the client secret', () => token({ header: { alg: 'HS256' }, key: new TextEncoder().encode(CLIENT_SECRET) }), /alg HS256/],
    ['a typ other than logout+jwt', () => token({ header: { typ: 'JWT' } }), /typ/],
    ['an oversized token', async () => `${await token()}${'a'.repeat(17_000)}`, /too long/],
    ['no JWS', async () => 'a.b', /not a signed JWT/],
  ]

  it('accepts an aud array that names our client among others', async () => {
    const claims = await verifyLogoutToken(provider, await token({ claims: { aud: ['another-client', 'op'] } }), now())
    expect(claims.sid).toBe(SID)
  })

  it.each(cases)('refuses %s', async (_name, make, reason) => {
    const refused = verifyLogoutToken(provider, await make(), now())
    await expect(refused).rejects.toBeInstanceOf(LogoutTokenInvalid)
    await expect(refused).rejects.toThrow(reason)
  })
})
