/**
 * Logout by the provider against the in-process stand-in provider (fast enough for every mutant of
 * the logout-token group): the Logout Token's checks at the module (core/oauth/logout-token.ts) at
 * the edge of each bound, and the same refusals through `Auth`, where no session may end; then which
 * of our sessions a provider session reaches, back-channel and front-channel, under each strategy.
 * Ownership twice: another client's token (`aud` a string or an array), another issuer's, another
 * provider session's `sid` or subject is refused at the module and through `Auth`.
 */
import { randomUUID } from 'node:crypto'
import { CompactSign, exportJWK, generateKeyPair, UnsecuredJWT } from 'jose'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth, customFetch } from '../../core/index.js'
import { providerSessionClaims, providerSessionOf } from '../../core/flows/logout/flow.js'
import type { Account } from '../../core/types.js'
import { issuerOf, LogoutTokenInvalid, verifyLogoutToken } from '../../core/oauth/logout-token.js'
import { resolveOAuthProvider, type OAuthConfig, type ResolvedOAuthProvider } from '../../core/oauth/provider.js'
import { jwksCacheOf } from '../../core/oauth/server.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, Client, credentialsProvider, testConfig } from '../fixtures/http.js'
import { ISSUER, PUBLISHED, signInAt, standIn, STANDIN_SECRET, standInProvider, type StandIn } from './oauth-standin.js'

const encoder = new TextEncoder()
/** The member of `events` that makes a JWT a Logout Token (Back-Channel Logout 1.0, as the provider writes it). */
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
/** How long a spent jti is remembered: the maximum age of 300 seconds and the skew of 60 either way. */
const JTI_TTL = 420
const now = () => Math.floor(Date.now() / 1000)
const SESSION_COOKIE = '__Secure-authjs.session-token'
const ALICE_SID = 'op-session-alice'
const BOB_SID = 'op-session-bob'
const ALICE_SUB = 'standin-user'
const BOB_SUB = 'standin-bob'

/** The stand-in's key for Logout Tokens, published beside its ID token key. */
const logoutKey = await generateKeyPair('RS256')
const LOGOUT_KID = 'logout-key'
const logoutJwk = { ...(await exportJWK(logoutKey.publicKey)), kid: LOGOUT_KID, alg: 'RS256', use: 'sig' }
/** A key the stand-in publishes only after a rotation. */
const rotatedKey = await generateKeyPair('RS256')
const rotatedJwk = { ...(await exportJWK(rotatedKey.publicKey)), kid: 'rotated', alg: 'RS256', use: 'sig' }

afterEach(() => {
  vi.useRealTimers()
})

/** The claims of a right Logout Token for Alice's provider session; a claim set to `undefined` is left out. */
function claimsOf(claims: Record<string, unknown> = {}): Record<string, unknown> {
  const all = {
    iss: ISSUER,
    aud: 'standin',
    iat: now(),
    jti: randomUUID(),
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    sid: ALICE_SID,
    sub: ALICE_SUB,
    ...claims,
  }
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined))
}

interface Signing {
  claims?: Record<string, unknown>
  header?: Record<string, unknown>
  key?: CryptoKey | Uint8Array
  /** The payload's bytes as they are, instead of the claims. */
  payload?: Uint8Array
}

/** A Logout Token signed with the stand-in's logout key (RS256, `typ` logout+jwt) after `signing` changed it. */
function logoutToken({ claims, header = {}, key = logoutKey.privateKey, payload }: Signing = {}): Promise<string> {
  return new CompactSign(payload ?? encoder.encode(JSON.stringify(claimsOf(claims))))
    .setProtectedHeader({ alg: 'RS256', kid: LOGOUT_KID, typ: 'logout+jwt', ...header } as never)
    .sign(key)
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
/** A token whose header is `header` as it is (no signature: the checks before it refuse it). */
const unsigned = (header: Record<string, unknown>, claims = claimsOf()) => `${base64url(header)}.${base64url(claims)}.`

/**
 * A stand-in that publishes the logout key, and the app's resolved provider for it; `keySet`
 * answers the key set's requests in its place when given.
 */
function provider(
  extra: Record<string, unknown> = {},
  keySet?: (init: RequestInit | undefined) => Response | undefined,
): { op: StandIn; provider: ResolvedOAuthProvider } {
  const op = standIn()
  op.behaviour.jwks = { keys: [...PUBLISHED.keys, logoutJwk] }
  const fetching: typeof fetch = async (input, init) =>
    (String(input) === `${ISSUER}/jwks` ? keySet?.(init) : undefined) ?? op.fetch(input, init)
  const config = standInProvider(op, { [customFetch]: fetching, ...extra })
  return { op, provider: resolveOAuthProvider(config as OAuthConfig<Record<string, unknown>>, undefined) }
}

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error, 'refused').toBeInstanceOf(LogoutTokenInvalid)
  expect((error as Error).name).toBe('LogoutTokenInvalid')
  return (error as Error).message
}

describe('a Logout Token at the module', () => {
  it('yields the sid, sub, jti and iat of a right token, and only them', async () => {
    const { provider: standin } = provider()
    const at = now()
    const claims = claimsOf({ iat: at, jti: 'jti-1' })
    const token = await logoutToken({ claims })
    expect(await verifyLogoutToken(standin, token, at)).toStrictEqual({ sid: ALICE_SID, sub: ALICE_SUB, jti: 'jti-1', iat: at })
  })

  it('yields no sub for a token naming only sid, and no sid for one naming only sub', async () => {
    const { provider: standin } = provider()
    const at = now()
    const bySid = await verifyLogoutToken(standin, await logoutToken({ claims: { sub: undefined, iat: at, jti: 'a' } }), at)
    expect(bySid).toStrictEqual({ sid: ALICE_SID, jti: 'a', iat: at })
    const bySub = await verifyLogoutToken(standin, await logoutToken({ claims: { sid: undefined, iat: at, jti: 'b' } }), at)
    expect(bySub).toStrictEqual({ sub: ALICE_SUB, jti: 'b', iat: at })
  })

  describe('ownership: a token for another client or from another issuer', () => {
    it.each([
      ['an aud string naming another client', { aud: 'another-client' }, 'aud does not name our client'],
      ['an aud array naming only other clients', { aud: ['another-client', 'a-third'] }, 'aud does not name our client'],
      ['no aud', { aud: undefined }, 'aud does not name our client'],
      ['another iss', { iss: 'https://op.elsewhere.test' }, 'iss is not the provider'],
      ['no iss', { iss: undefined }, 'iss is not the provider'],
    ])('refuses %s', async (_name, claims, reason) => {
      const { provider: standin } = provider()
      expect(await refusal(verifyLogoutToken(standin, await logoutToken({ claims }), now()))).toBe(reason)
    })

    it('accepts an aud array naming our client among others', async () => {
      const { provider: standin } = provider()
      expect(await verifyLogoutToken(standin, await logoutToken({ claims: { aud: ['another-client', 'standin'] } }), now())).toMatchObject({
        sid: ALICE_SID,
      })
    })

    it('refuses a token signed for another client, with that client secret (HS256)', async () => {
      const { provider: standin } = provider()
      const token = await logoutToken({ header: { alg: 'HS256', kid: undefined }, key: encoder.encode('another-client-secret-0123456789-abcdefghijklmnop') })
      expect(await refusal(verifyLogoutToken(standin, token, now()))).toMatch(/^the signature does not verify/)
    })
  })

  describe('iat, exp and nbf at the edges of the clock skew and the maximum age', () => {
    const at = 2_000_000_000
    it.each([
      ['an iat 60 seconds ahead', { iat: at + 60 }],
      ['an iat 300 seconds back', { iat: at - 300 }],
      ['an exp 59 seconds past (within the skew)', { exp: at - 59 }],
      ['an nbf 60 seconds ahead', { nbf: at + 60 }],
    ])('accepts %s', async (_name, claims) => {
      const { provider: standin } = provider()
      expect(await verifyLogoutToken(standin, await logoutToken({ claims: { iat: at, ...claims } }), at)).toMatchObject({ sid: ALICE_SID })
    })

    it.each([
      ['an iat 61 seconds ahead', { iat: at + 61 }, 'iat is in the future'],
      ['an iat 301 seconds back', { iat: at - 301 }, 'iat is too old'],
      ['an iat that is a string', { iat: String(at) }, 'iat is missing'],
      ['no iat', { iat: undefined }, 'iat is missing'],
      ['an exp 60 seconds past', { iat: at, exp: at - 60 }, 'the token has expired'],
      ['an exp that is a string', { iat: at, exp: String(at + 100) }, 'the token has expired'],
      ['an nbf 61 seconds ahead', { iat: at, nbf: at + 61 }, 'the token is not valid yet'],
      ['an nbf that is a string', { iat: at, nbf: String(at) }, 'the token is not valid yet'],
    ])('refuses %s', async (_name, claims, reason) => {
      const { provider: standin } = provider()
      expect(await refusal(verifyLogoutToken(standin, await logoutToken({ claims: { iat: at, ...(claims as Record<string, unknown>) } }), at))).toBe(reason)
    })
  })

  it.each([
    ['an empty jti', { jti: '' }, 'jti is missing'],
    ['a jti that is a number', { jti: 7 }, 'jti is missing'],
    ['events that are null', { events: null }, 'events must be a JSON object'],
    ['events that are a string', { events: 'logout' }, 'events must be a JSON object'],
    ['no events', { events: undefined }, 'events is missing'],
    ['events without the back-channel logout member', { events: {} }, 'events has no back-channel logout member'],
    ['neither sid nor sub', { sid: undefined, sub: undefined }, 'neither sid nor sub is present'],
    ['a back-channel logout member that is null', { events: { [BACKCHANNEL_LOGOUT_EVENT]: null } }, 'the back-channel logout member of events must be a JSON object'],
    ['a back-channel logout member that is an array', { events: { [BACKCHANNEL_LOGOUT_EVENT]: [] } }, 'the back-channel logout member of events must be a JSON object'],
    ['a nonce, even null', { nonce: null }, 'a nonce is present'],
    ['an empty sid', { sid: '' }, 'sid is not a string'],
    ['a sid that is a number', { sid: 1 }, 'sid is not a string'],
    ['an empty sub', { sub: '' }, 'sub is not a string'],
    ['a sub that is a number', { sid: undefined, sub: 1 }, 'sub is not a string'],
  ])('refuses %s', async (_name, claims, reason) => {
    const { provider: standin } = provider()
    expect(await refusal(verifyLogoutToken(standin, await logoutToken({ claims }), now()))).toBe(reason)
  })

  describe('the payload', () => {
    it('refuses bytes that are not UTF-8, even inside an otherwise right JSON object', async () => {
      const { provider: standin } = provider()
      const right = JSON.stringify(claimsOf())
      const payload = new Uint8Array([...encoder.encode('{"x":"'), 0xff, ...encoder.encode(`",${right.slice(1)}`)])
      expect(await refusal(verifyLogoutToken(standin, await logoutToken({ payload }), now()))).toBe('the payload is not JSON')
    })

    it.each([
      ['text that is not JSON', 'logout', 'the payload is not JSON'],
      ['a JSON array', '[1,2]', 'the payload is not a JSON object'],
      ['JSON null', 'null', 'the payload is not a JSON object'],
    ])('refuses %s', async (_name, text, reason) => {
      const { provider: standin } = provider()
      expect(await refusal(verifyLogoutToken(standin, await logoutToken({ payload: encoder.encode(text) }), now()))).toBe(reason)
    })
  })

  describe('the header', () => {
    it.each([
      ['typ logout+jwt in capitals', { typ: 'LOGOUT+JWT' }],
      ['typ application/logout+jwt', { typ: 'application/logout+jwt' }],
      ['no typ', { typ: undefined }],
    ])('accepts %s', async (_name, header) => {
      const { provider: standin } = provider()
      expect(await verifyLogoutToken(standin, await logoutToken({ header }), now())).toMatchObject({ sid: ALICE_SID })
    })

    it.each([
      ['typ JWT (an ID token)', { alg: 'RS256', typ: 'JWT' }, 'typ is not logout+jwt'],
      ['a typ that is a number', { alg: 'RS256', typ: 1 }, 'typ is not logout+jwt'],
      ['no alg', { typ: 'logout+jwt' }, 'alg undefined is not accepted'],
      ['alg none', { alg: 'none', typ: 'logout+jwt' }, 'alg none is not accepted'],
      ['an alg the provider does not sign with', { alg: 'ES256', typ: 'logout+jwt' }, 'alg ES256 is not accepted'],
      ['a crit member', { alg: 'RS256', kid: LOGOUT_KID, crit: ['exp'], exp: 1 }, 'crit is not supported'],
    ])('refuses %s', async (_name, header, reason) => {
      const { provider: standin } = provider()
      expect(await refusal(verifyLogoutToken(standin, unsigned(header), now()))).toBe(reason)
    })

    it('refuses a header that cannot be read', async () => {
      const { provider: standin } = provider()
      expect(await refusal(verifyLogoutToken(standin, 'eyJub3Q.eyJ9.c2ln', now()))).toBe('the header cannot be read')
    })
  })

  describe('the algorithms accepted', () => {
    it("accepts a token signed with the client's registered ID token algorithm", async () => {
      const { provider: standin } = provider({ client: { id_token_signed_response_alg: 'RS256' } })
      expect(await verifyLogoutToken(standin, await logoutToken(), now())).toMatchObject({ sid: ALICE_SID })
    })

    it("takes the client's registered ID token algorithm, and only that one", async () => {
      const { provider: standin } = provider({ client: { id_token_signed_response_alg: 'PS256' } })
      expect(await refusal(verifyLogoutToken(standin, await logoutToken(), now()))).toBe('alg RS256 is not accepted')
    })

    it('refuses every token, and alg none, when the client registered none', async () => {
      const { provider: standin } = provider({ client: { id_token_signed_response_alg: 'none' } })
      expect(await refusal(verifyLogoutToken(standin, await logoutToken(), now()))).toBe('alg RS256 is not accepted')
      expect(await refusal(verifyLogoutToken(standin, unsigned({ alg: 'none', typ: 'logout+jwt' }), now()))).toBe('alg none is not accepted')
    })

    it("takes the provider's advertised algorithms without none, else RS256", async () => {
      const onlyNone = provider()
      onlyNone.op.behaviour.discovery.id_token_signing_alg_values_supported = ['none']
      expect(await verifyLogoutToken(onlyNone.provider, await logoutToken(), now())).toMatchObject({ sid: ALICE_SID })
      const nothing = provider()
      delete nothing.op.behaviour.discovery.id_token_signing_alg_values_supported
      expect(await verifyLogoutToken(nothing.provider, await logoutToken(), now())).toMatchObject({ sid: ALICE_SID })
      const es = provider()
      es.op.behaviour.discovery.id_token_signing_alg_values_supported = ['ES256']
      expect(await refusal(verifyLogoutToken(es.provider, await logoutToken(), now()))).toBe('alg RS256 is not accepted')
    })
  })

  describe('the token length', () => {
    /** A right token of exactly `length` characters (a claim, and the header when needed, padded to it). */
    async function tokenOfLength(length: number): Promise<string> {
      const signatureLength = (await logoutToken()).split('.')[2]!.length
      const claims = claimsOf()
      for (const header of [{ kid: LOGOUT_KID }, { kid: LOGOUT_KID, x: 'a' }, { kid: LOGOUT_KID, x: 'ab' }]) {
        const headerLength = base64url({ alg: 'RS256', typ: 'logout+jwt', ...header }).length
        const unpadded = JSON.stringify({ ...claims, pad: '' }).length
        for (let pad = 11_000; pad < 12_500; pad++) {
          // Unpadded base64url: four characters per three bytes, rounded up.
          const payloadLength = Math.ceil(((unpadded + pad) * 4) / 3)
          if (headerLength + payloadLength + signatureLength + 2 === length) {
            return logoutToken({ claims: { ...claims, pad: 'p'.repeat(pad) }, header })
          }
        }
      }
      throw new Error(`no token of ${length} characters`)
    }

    it('accepts a token of 16 KiB and refuses one character more', async () => {
      const { provider: standin } = provider()
      expect(await verifyLogoutToken(standin, await tokenOfLength(16 * 1024), now())).toMatchObject({ sid: ALICE_SID })
      expect(await refusal(verifyLogoutToken(standin, await tokenOfLength(16 * 1024 + 1), now()))).toBe('no logout_token, or one too long')
    })

    it.each([
      ['an empty token', '', 'no logout_token, or one too long'],
      ['two parts', 'a.b', 'not a signed JWT (JWS compact serialisation)'],
      ['four parts', 'a.b.c.d', 'not a signed JWT (JWS compact serialisation)'],
    ])('refuses %s', async (_name, token, reason) => {
      const { provider: standin } = provider()
      expect(await refusal(verifyLogoutToken(standin, token, now()))).toBe(reason)
    })
  })

  describe('the signature', () => {
    it('accepts HS256 keyed with our client secret when the provider signs with it', async () => {
      const { provider: standin } = provider()
      const token = await logoutToken({ header: { alg: 'HS256', kid: undefined }, key: encoder.encode(STANDIN_SECRET) })
      expect(await verifyLogoutToken(standin, token, now())).toMatchObject({ sid: ALICE_SID })
    })

    it('refuses HS256 when the client has no secret', async () => {
      const { provider: standin } = provider({ clientSecret: undefined, client: { token_endpoint_auth_method: 'none' } })
      const token = await logoutToken({ header: { alg: 'HS256', kid: undefined }, key: encoder.encode(STANDIN_SECRET) })
      expect(await refusal(verifyLogoutToken(standin, token, now()))).toBe('a HS256 token, but the client has no secret')
    })

    it('refuses a token signed by a key of its kid that is not the published one', async () => {
      const { provider: standin } = provider()
      const token = await logoutToken({ key: rotatedKey.privateKey })
      expect(await refusal(verifyLogoutToken(standin, token, now()))).toMatch(/^the signature does not verify \(ERR_JWS_SIGNATURE_VERIFICATION_FAILED\)$/)
    })

    it('refuses a token when the provider publishes no key set', async () => {
      const { op, provider: standin } = provider()
      delete op.behaviour.discovery.jwks_uri
      expect(await refusal(verifyLogoutToken(standin, await logoutToken(), now()))).toBe('the provider publishes no key set (jwks_uri)')
    })

    it("downloads the key set once, asking for JSON, following no redirect, with a deadline, and keeps it for the ID tokens' cache", async () => {
      const asked: { accept: string | null; redirect: RequestRedirect | undefined; signal: boolean }[] = []
      const { op, provider: standin } = provider({}, (init) => {
        asked.push({ accept: new Headers(init?.headers).get('accept'), redirect: init?.redirect, signal: init?.signal instanceof AbortSignal })
        return undefined
      })
      await verifyLogoutToken(standin, await logoutToken(), now())
      await verifyLogoutToken(standin, await logoutToken(), now())
      expect(asked).toEqual([{ accept: 'application/json, application/jwk-set+json', redirect: 'manual', signal: true }])
      expect((jwksCacheOf(standin) as { jwks?: unknown }).jwks).toEqual(op.behaviour.jwks)
    })

    it('downloads the key set again once it is five minutes old, not before', async () => {
      vi.useFakeTimers({ toFake: ['Date'] })
      const start = 2_000_000_000
      vi.setSystemTime(start * 1000)
      const { op, provider: standin } = provider()
      await verifyLogoutToken(standin, await logoutToken(), start)
      expect(op.seen.jwks).toBe(1)
      vi.setSystemTime((start + 299) * 1000)
      await verifyLogoutToken(standin, await logoutToken(), start + 299)
      expect(op.seen.jwks).toBe(1)
      vi.setSystemTime((start + 300) * 1000)
      await verifyLogoutToken(standin, await logoutToken(), start + 300)
      expect(op.seen.jwks).toBe(2)
    })

    it('downloads the key set when the cache holds a time without a key set', async () => {
      const { op, provider: standin } = provider()
      Object.assign(jwksCacheOf(standin), { uat: now() })
      expect(await verifyLogoutToken(standin, await logoutToken(), now())).toMatchObject({ sid: ALICE_SID })
      expect(op.seen.jwks).toBe(1)
    })

    it('downloads the key set when the cache holds one without its time', async () => {
      const { op, provider: standin } = provider()
      Object.assign(jwksCacheOf(standin), { jwks: { keys: [] } })
      expect(await verifyLogoutToken(standin, await logoutToken(), now())).toMatchObject({ sid: ALICE_SID })
      expect(op.seen.jwks).toBe(1)
    })

    it('fetches the key set again for a kid it lacks (a rotation)', async () => {
      const { op, provider: standin } = provider()
      await verifyLogoutToken(standin, await logoutToken(), now())
      op.behaviour.jwks = { keys: [...PUBLISHED.keys, logoutJwk, rotatedJwk] }
      const rotated = await logoutToken({ key: rotatedKey.privateKey, header: { kid: 'rotated' } })
      expect(await verifyLogoutToken(standin, rotated, now())).toMatchObject({ sid: ALICE_SID })
      expect(op.seen.jwks).toBe(2)
    })

    it('refuses a kid the provider does not publish, fetching the key set again at most once per interval', async () => {
      const { op, provider: standin } = provider()
      await verifyLogoutToken(standin, await logoutToken(), now())
      const unknown = await logoutToken({ key: rotatedKey.privateKey, header: { kid: 'never-published' } })
      expect(await refusal(verifyLogoutToken(standin, unknown, now()))).toBe('no key of the provider matches the token')
      expect(op.seen.jwks).toBe(2)
      expect(await refusal(verifyLogoutToken(standin, unknown, now()))).toBe('no key of the provider matches the token')
      expect(op.seen.jwks).toBe(2)
    })

    it.each([
      ['answers 404', () => new Response('gone', { status: 404 }), 'the key set of "standin" answered 404'],
      ['answers a JSON array', () => Response.json([]), 'the key set of "standin" is not a JWKS'],
      ['answers keys that are no list', () => Response.json({ keys: {} }), 'the key set of "standin" is not a JWKS'],
      ['answers an object without keys', () => Response.json({}), 'the key set of "standin" is not a JWKS'],
    ])('fails (not a refusal of the token) when the key set %s', async (_name, answer, message) => {
      const { provider: standin } = provider({}, answer)
      const failure = await verifyLogoutToken(standin, await logoutToken(), now()).catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(TypeError)
      expect((failure as Error).message).toBe(message)
    })
  })

  it("names the provider's issuer as its discovery document states it", async () => {
    const { provider: standin } = provider()
    expect(await issuerOf(standin)).toBe(ISSUER)
  })
})

type Strategy = 'jwt' | 'database' | 'database, index in the store'

interface AppOptions {
  strategy: Strategy
  store?: AuthStore | undefined
  noStore?: boolean
  extra?: Partial<AuthConfig>
}

/** An app with the stand-in (front-channel logout on), under `strategy`, on a memory store. */
function app({ strategy, store = memoryAuthStore(), noStore = false, extra = {} }: AppOptions) {
  const op = standIn()
  op.behaviour.jwks = { keys: [...PUBLISHED.keys, logoutJwk] }
  const rows = createMemoryStore()
  const memory = MemoryAdapter(rows)
  // An Auth.js adapter keeps no provider session with its rows: the store's index finds them.
  const { deleteProviderSessions: _ours, ...authjsLike } = memory
  const config = testConfig({
    providers: [credentialsProvider(), standInProvider(op, { frontchannelLogout: true })] as never,
    ...(noStore ? {} : { store }),
    ...(strategy === 'jwt' ? {} : { adapter: strategy === 'database' ? memory : authjsLike, session: { strategy: 'database' } }),
    ...extra,
  })
  return { op, config, rows }
}

/** A browser signed in through the stand-in as `who` (Alice by default), in provider session `sid`. */
async function signedIn(config: AuthConfig, op: StandIn, who: 'alice' | 'bob' = 'alice', sid = who === 'alice' ? ALICE_SID : BOB_SID) {
  op.behaviour.claims = who === 'alice' ? { sid } : { sid, sub: BOB_SUB, email: 'bob@example.com', name: 'Bob' }
  const client = new Client(config)
  await signInAt(client)
  expect(await sessionOf(client), `${who} signed in`).not.toBeNull()
  return client
}

const sessionOf = async (client: Client) => ((await client.session()).body as { user?: { email?: string } } | null)?.user?.email ?? null

const backchannel = (config: AuthConfig, body: Record<string, string>, json = false) =>
  Auth(
    authRequest({ path: '/auth/backchannel-logout/standin', ...(json ? { json: body } : { body }) }),
    config as Omit<AuthConfig, 'raw'>,
  )

const post = async (config: AuthConfig, signing: Signing = {}) => backchannel(config, { logout_token: await logoutToken(signing) })

describe('back-channel logout through Auth', () => {
  describe.each<Strategy>(['jwt', 'database', 'database, index in the store'])('%s sessions', (strategy) => {
    it("ends the session of the token's sid, and no other", async () => {
      const { op, config } = app({ strategy })
      const alice = await signedIn(config, op)
      const bob = await signedIn(config, op, 'bob')
      const response = await post(config)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({})
      expect(await sessionOf(alice)).toBeNull()
      expect(await sessionOf(bob), "Bob's session is another provider session").toBe('bob@example.com')
      expect(config.logger.debug).toHaveBeenCalledWith('logout by the provider', { provider: 'standin', ended: 1 })
    })

    it('ends every session of the subject when the token names only sub, and no other', async () => {
      const { op, config } = app({ strategy })
      const first = await signedIn(config, op)
      const second = await signedIn(config, op)
      const bob = await signedIn(config, op, 'bob')
      const response = await post(config, { claims: { sid: undefined } })
      expect(response.status).toBe(200)
      expect(await sessionOf(first)).toBeNull()
      expect(await sessionOf(second), 'the same subject, another browser').toBeNull()
      expect(await sessionOf(bob)).toBe('bob@example.com')
      expect(config.logger.debug).toHaveBeenCalledWith('logout by the provider', { provider: 'standin', ended: 2 })
    })

    it("ends only the session of the token's sid, not the subject's others; a token naming only sid too", async () => {
      const { op, config } = app({ strategy })
      const first = await signedIn(config, op)
      const second = await signedIn(config, op, 'alice', 'op-session-alice-2')
      expect((await post(config)).status).toBe(200)
      expect(await sessionOf(first)).toBeNull()
      expect(await sessionOf(second), "the subject's other provider session").toBe('alice@example.com')
      expect((await post(config, { claims: { sid: 'op-session-alice-2', sub: undefined } })).status).toBe(200)
      expect(await sessionOf(second)).toBeNull()
    })

    it.each([
      ['another client (aud a string)', { claims: { aud: 'another-client' } }, 'aud does not name our client'],
      ['another client (aud an array)', { claims: { aud: ['another-client', 'a-third'] } }, 'aud does not name our client'],
      ['another issuer', { claims: { iss: 'https://op.elsewhere.test' } }, 'iss is not the provider'],
    ])('refuses a token of %s, and ends no session', async (_name, signing: Signing, reason) => {
      const { op, config } = app({ strategy })
      const alice = await signedIn(config, op)
      const response = await post(config, signing)
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: 'invalid_request', error_description: `the logout token is invalid: ${reason}` })
      expect(await sessionOf(alice)).toBe('alice@example.com')
      expect(config.logger.error).toHaveBeenCalledWith(
        expect.objectContaining({ name: 'LogoutRefused', message: `Back-channel logout refused: the logout token is invalid: ${reason}` }),
      )
    })
  })

  it("ends no session of ours for another provider session's sid or another subject", async () => {
    const { op, config, rows } = app({ strategy: 'database' })
    const alice = await signedIn(config, op)
    expect((await post(config, { claims: { sid: 'op-session-nobody' } })).status).toBe(200)
    expect((await post(config, { claims: { sid: undefined, sub: 'nobody' } })).status).toBe(200)
    // Alice's provider session named with a subject that is not hers: not hers to end.
    expect((await post(config, { claims: { sub: BOB_SUB } })).status).toBe(200)
    expect(await sessionOf(alice)).toBe('alice@example.com')
    expect(rows.sessions.size).toBe(1)
  })

  it('refuses a token posted as JSON, and a form without logout_token', async () => {
    const { op, config } = app({ strategy: 'jwt' })
    const alice = await signedIn(config, op)
    const json = await backchannel(config, { logout_token: await logoutToken() }, true)
    expect(json.status).toBe(400)
    expect(await json.json()).toEqual({
      error: 'invalid_request',
      error_description: 'the request must be a form post (application/x-www-form-urlencoded)',
    })
    const missing = await backchannel(config, { token: await logoutToken() })
    expect(await missing.json()).toEqual({ error: 'invalid_request', error_description: 'logout_token is missing' })
    const empty = await backchannel(config, { logout_token: '' })
    expect(await empty.json()).toEqual({ error: 'invalid_request', error_description: 'the logout token is invalid: no logout_token, or one too long' })
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })

  it('spends each jti once: the same token again is refused, another token is not', async () => {
    const claims: string[] = []
    const backend = memoryAuthStore()
    const store: AuthStore = { ...backend, claim: (key, ttl) => (claims.push(`${key} ${ttl}`), backend.claim(key, ttl)) }
    const { op, config } = app({ strategy: 'jwt', store })
    await signedIn(config, op)
    const token = await logoutToken({ claims: { jti: 'once' } })
    expect((await backchannel(config, { logout_token: token })).status).toBe(200)
    const replayed = await backchannel(config, { logout_token: token })
    expect(replayed.status).toBe(400)
    expect(await replayed.json()).toEqual({ error: 'invalid_request', error_description: 'the logout token was already used (jti)' })
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ message: 'Back-channel logout refused: the logout token was already used (jti)' }),
    )
    expect((await post(config, { claims: { jti: 'another' } })).status).toBe(200)
    const spent = claims.filter((claim) => claim.startsWith('logout:jti:'))
    expect(spent).toHaveLength(3)
    expect(spent.every((claim) => claim.endsWith(` ${JTI_TTL}`))).toBe(true)
    expect(new Set(spent).size).toBe(2)
  })

  it('refuses (fails closed) when the store cannot spend the jti: it throws, or it does not answer before its deadline', async () => {
    const backend = memoryAuthStore()
    let mode: 'throws' | 'hangs' = 'throws'
    const store: AuthStore = {
      ...backend,
      claim: (key, ttl) =>
        key.startsWith('logout:jti:') ? (mode === 'throws' ? Promise.reject(new Error('store down')) : new Promise<boolean>(() => {})) : backend.claim(key, ttl),
    }
    const { op, config } = app({ strategy: 'jwt', store, extra: { availability: { storeTimeout: 50, retryAfter: 7 } } as never })
    const alice = await signedIn(config, op)
    const thrown = await post(config)
    expect(thrown.status).toBe(400)
    expect(await thrown.json()).toEqual({ error: 'logout_failed', error_description: 'the sessions could not be ended; see the server log' })
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ message: 'Logout by the provider failed (spendLogoutToken)', cause: expect.objectContaining({ message: 'store down' }) }),
    )
    mode = 'hangs'
    const hung = await post(config)
    expect(hung.status).toBe(503)
    expect(hung.headers.get('retry-after')).toBe('7')
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })

  it('refuses a token whose key the provider no longer publishes, and ends no session', async () => {
    const { op, config } = app({ strategy: 'jwt' })
    const alice = await signedIn(config, op)
    op.behaviour.jwks = { keys: [] }
    const rotated = await post(config, { key: rotatedKey.privateKey, header: { kid: 'rotated' } })
    expect(await rotated.json()).toEqual({ error: 'invalid_request', error_description: 'the logout token is invalid: no key of the provider matches the token' })
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })

  it('fails without a store when the token names only sub: JWT sessions cannot be found by subject', async () => {
    const { op, config } = app({ strategy: 'jwt', noStore: true })
    const alice = await signedIn(config, op)
    const response = await post(config, { claims: { sid: undefined } })
    expect(await response.json()).toMatchObject({ error: 'logout_failed' })
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({
        message: 'Logout by the provider failed (endProviderSessions)',
        cause: expect.objectContaining({ message: 'ending JWT sessions from the provider needs a `store` in the config' }),
      }),
    )
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })

  it('fails for database sessions when neither the adapter nor the store can find them', async () => {
    const backend = memoryAuthStore()
    const { addToSet: _add, setMembers: _members, ...noSets } = backend
    const { op, config } = app({ strategy: 'database, index in the store', store: noSets as AuthStore })
    const alice = await signedIn(config, op)
    const response = await post(config)
    expect(await response.json()).toMatchObject({ error: 'logout_failed' })
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({
        cause: expect.objectContaining({ message: 'the store has no sets (addToSet, setMembers): sessions cannot be found by the provider session' }),
      }),
    )
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })

  it("reaches by subject only the users of a JWT index, not a database session's entry left from before a switch", async () => {
    const store = memoryAuthStore()
    const before = app({ strategy: 'database, index in the store', store })
    await signedIn(before.config, before.op)
    const after = app({ strategy: 'jwt', store })
    const alice = await signedIn(after.config, after.op)
    expect((await post(after.config, { claims: { sid: undefined } })).status).toBe(200)
    expect(await sessionOf(alice)).toBeNull()
    expect(after.config.logger.debug).toHaveBeenCalledWith('logout by the provider', { provider: 'standin', ended: 1 })
  })

  it('fails (no session ended, not a refusal of the token) when the key set cannot be read', async () => {
    const { op, config } = app({ strategy: 'jwt' })
    const alice = await signedIn(config, op)
    op.behaviour.jwks = [] as never
    const response = await post(config, { key: rotatedKey.privateKey, header: { kid: 'rotated' } })
    expect(await response.json()).toMatchObject({ error: 'logout_failed' })
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })

  it("reaches by subject only the sealed sessions of a database index, not a JWT session's user left from before a switch", async () => {
    const store = memoryAuthStore()
    const before = app({ strategy: 'jwt', store })
    await signedIn(before.config, before.op)
    const after = app({ strategy: 'database, index in the store', store })
    const alice = await signedIn(after.config, after.op)
    expect((await post(after.config, { claims: { sid: undefined } })).status).toBe(200)
    expect(await sessionOf(alice)).toBeNull()
    expect(after.config.logger.debug).toHaveBeenCalledWith('logout by the provider', { provider: 'standin', ended: 1 })
  })

  it.each<[Strategy, Signing]>([
    ['database', {}],
    ['database', { claims: { sid: undefined } }],
    ['database, index in the store', {}],
  ])("ends a database session's cached copy too (%s, %j)", async (strategy, signing) => {
    const { op, config } = app({ strategy, extra: { session: { strategy: 'database', cache: { maxAge: 300 } } } })
    const alice = await signedIn(config, op)
    expect(alice.jar.get('__Secure-authjs.session-cache'), 'a cache entry').toBeDefined()
    expect((await post(config, signing)).status).toBe(200)
    expect(await sessionOf(alice)).toBeNull()
  })
})

/** Records each member added to a set, with its lifetime. */
function recordingSets(backend: AuthStore = memoryAuthStore()) {
  const added: { member: string; ttl: number }[] = []
  const store: AuthStore = { ...backend, addToSet: (key, member, ttl) => (added.push({ member, ttl }), backend.addToSet!(key, member, ttl)) }
  return { store, added }
}

describe('the provider session of an account', () => {
  const idToken = (claims: Record<string, unknown>) => new UnsecuredJWT(claims).encode()
  const account = (extra: Record<string, unknown>) =>
    ({ provider: 'standin', providerAccountId: 'p', userId: 'u', type: 'oidc', ...extra }) as unknown as Account

  it("is the ID token's sub and sid, with the provider", () => {
    expect(providerSessionOf(account({ id_token: idToken({ sub: 's', sid: 'x' }) }))).toStrictEqual({ provider: 'standin', sub: 's', sid: 'x' })
  })

  it('has no sid when the ID token names none, an empty one, or one that is no string', () => {
    for (const sid of [undefined, '', 7]) {
      expect(providerSessionOf(account({ id_token: idToken({ sub: 's', ...(sid !== undefined ? { sid } : {}) }) }))).toStrictEqual({
        provider: 'standin',
        sub: 's',
      })
    }
  })

  it('is none for an OAuth 2 account, an account without an ID token, or an ID token without a usable sub', () => {
    expect(providerSessionOf(account({ type: 'oauth', id_token: idToken({ sub: 's', sid: 'x' }) }))).toBeNull()
    expect(providerSessionOf(account({}))).toBeNull()
    expect(providerSessionOf(account({ id_token: idToken({ sub: '', sid: 'x' }) }))).toBeNull()
    expect(providerSessionOf(account({ id_token: idToken({ sub: 5, sid: 'x' }) }))).toBeNull()
  })

  it('puts sid and idp in a JWT only when the provider sent a sid', () => {
    expect(providerSessionClaims({ provider: 'standin', sub: 's', sid: 'x' })).toStrictEqual({ sid: 'x', idp: 'standin' })
    expect(providerSessionClaims({ provider: 'standin', sub: 's' })).toStrictEqual({})
    expect(providerSessionClaims(null)).toStrictEqual({})
  })
})

describe('what a sign-in records for a logout by the provider', () => {
  const DAY = 24 * 60 * 60

  it('JWT sessions: the user by subject, for as long as the session can live; the provider session in the token', async () => {
    const { store, added } = recordingSets()
    const { op, config } = app({ strategy: 'jwt', store, extra: { session: { maxAge: DAY, absoluteMaxAge: 7 * DAY } } })
    const alice = await signedIn(config, op)
    expect(added).toEqual([{ member: expect.stringMatching(/^u:.+/), ttl: 7 * DAY }])
    const { decode } = await import('../../core/jwt.js')
    const token = await decode({ token: alice.jar.get(SESSION_COOKIE)!, secret: config.secret as string, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ sid: ALICE_SID, idp: 'standin' })
  })

  it('database sessions an adapter cannot find by provider session: the sealed token by subject and by sid, for the idle lifetime when longer', async () => {
    const { store, added } = recordingSets()
    const { op, config } = app({ strategy: 'database, index in the store', store, extra: { session: { strategy: 'database', maxAge: 3 * DAY, absoluteMaxAge: DAY } } })
    const alice = await signedIn(config, op)
    expect(added).toHaveLength(2)
    expect(added[0]).toEqual({ member: expect.stringMatching(/^s:.+/), ttl: 3 * DAY })
    expect(added[1]).toEqual(added[0])
    expect(added[0]!.member).not.toContain(alice.jar.get(SESSION_COOKIE))
  })

  it('a sign-in without a provider sid: the sealed token by subject only, and no provider session in a JWT', async () => {
    const { store, added } = recordingSets()
    const { op, config } = app({ strategy: 'database, index in the store', store })
    op.behaviour.claims = {}
    await signInAt(new Client(config))
    expect(added).toHaveLength(1)
    const jwtApp = app({ strategy: 'jwt' })
    jwtApp.op.behaviour.claims = {}
    const client = new Client(jwtApp.config)
    await signInAt(client)
    const { decode } = await import('../../core/jwt.js')
    const token = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: jwtApp.config.secret as string, salt: SESSION_COOKIE })
    expect(token).not.toHaveProperty('sid')
    expect(token).not.toHaveProperty('idp')
  })

  it('nothing where no logout could use it: our adapter keeps it with the row; a JWT session without a store', async () => {
    const { store, added } = recordingSets()
    const { op, config } = app({ strategy: 'database', store })
    await signedIn(config, op)
    expect(added).toEqual([])
  })

  it('an index entry a changed secret cannot open ends nothing and fails nothing', async () => {
    const store = memoryAuthStore()
    const before = app({ strategy: 'database, index in the store', store })
    const alice = await signedIn(before.config, before.op)
    const after = app({ strategy: 'database, index in the store', store, extra: { secret: 'another-secret-that-is-long-enough-for-hkdf-0123456789' } })
    const response = await post(after.config)
    expect(response.status).toBe(200)
    expect(after.config.logger.debug).toHaveBeenCalledWith('logout by the provider', { provider: 'standin', ended: 0 })
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })
})

const frontchannel = (client: Client, query: Record<string, string>, path = '/frontchannel-logout/standin') => client.send({ path, query })

describe('front-channel logout through Auth', () => {
  describe.each<Strategy>(['jwt', 'database', 'database, index in the store'])('%s sessions', (strategy) => {
    it("ends this browser's session when iss and sid name its provider session, and every copy of its cookie", async () => {
      const { op, config } = app({ strategy })
      const alice = await signedIn(config, op)
      const copy = new Client(config)
      copy.jar.cookies.set(SESSION_COOKIE, alice.jar.get(SESSION_COOKIE)!)
      const page = await frontchannel(alice, { iss: ISSUER, sid: ALICE_SID })
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('You are signed out.')
      expect(await sessionOf(alice)).toBeNull()
      expect(await sessionOf(copy), 'the copy of the cookie').toBeNull()
    })

    it('ends nothing for a session not signed in through the provider, or through it without a sid', async () => {
      const { op, config } = app({ strategy })
      const password = new Client(config)
      await password.signIn({ username: 'alice', password: 'wonderland' })
      const page = await frontchannel(password, { iss: ISSUER, sid: ALICE_SID })
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('There was no session to end here.')
      expect(await sessionOf(password)).toBe('alice@example.com')
      op.behaviour.claims = { sub: 'standin-carol', email: 'carol@example.com' }
      const withoutSid = new Client(config)
      await signInAt(withoutSid)
      expect(await sessionOf(withoutSid)).toBe('carol@example.com')
      const again = await frontchannel(withoutSid, { iss: ISSUER, sid: ALICE_SID })
      expect(again.status).toBe(200)
      expect(await sessionOf(withoutSid)).toBe('carol@example.com')
    })

    it("ends nothing for another user's provider session, or another issuer's", async () => {
      const { op, config } = app({ strategy })
      const alice = await signedIn(config, op)
      await signedIn(config, op, 'bob')
      const another = await frontchannel(alice, { iss: ISSUER, sid: BOB_SID })
      expect(another.status).toBe(200)
      expect(await another.text()).toContain('There was no session to end here.')
      const elsewhere = await frontchannel(alice, { iss: 'https://op.elsewhere.test', sid: ALICE_SID })
      expect(elsewhere.status).toBe(400)
      expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: 'Front-channel logout refused: iss is not the provider' }))
      expect(await sessionOf(alice)).toBe('alice@example.com')
    })
  })

  it('refuses a request without iss or without sid: it could end any session of the browser', async () => {
    const { op, config } = app({ strategy: 'jwt' })
    const alice = await signedIn(config, op)
    const required = expect.objectContaining({ message: 'Front-channel logout refused: iss and sid are required' })
    expect((await frontchannel(alice, { sid: ALICE_SID })).status).toBe(400)
    expect(config.logger.error).toHaveBeenLastCalledWith(required)
    expect((await frontchannel(alice, { iss: ISSUER })).status).toBe(400)
    expect(config.logger.error).toHaveBeenLastCalledWith(required)
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })

  it('ends nothing in a browser without a session', async () => {
    const { config } = app({ strategy: 'jwt' })
    const page = await frontchannel(new Client(config), { iss: ISSUER, sid: ALICE_SID })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('There was no session to end here.')
    expect(config.logger.error).not.toHaveBeenCalled()
  })

  it("ends a copy of the JWT elsewhere too, with a store; and another provider's session of the same sid is not this one", async () => {
    const { op, config } = app({ strategy: 'jwt' })
    const alice = await signedIn(config, op)
    const copy = new Client(config)
    copy.jar.cookies.set(SESSION_COOKIE, alice.jar.get(SESSION_COOKIE)!)
    const second = standIn()
    const twoProviders = testConfig({
      providers: [standInProvider(op, { frontchannelLogout: true }), standInProvider(second, { id: 'other', frontchannelLogout: true })] as never,
      store: memoryAuthStore(),
    })
    const elsewhere = new Client(twoProviders)
    op.behaviour.claims = { sid: ALICE_SID }
    await signInAt(elsewhere)
    const other = await frontchannel(elsewhere, { iss: ISSUER, sid: ALICE_SID }, '/frontchannel-logout/other')
    expect(await other.text()).toContain('There was no session to end here.')
    expect(await sessionOf(elsewhere)).toBe('alice@example.com')

    await frontchannel(alice, { iss: ISSUER, sid: ALICE_SID })
    expect(await sessionOf(copy), 'the copy of the cookie').toBeNull()
  })

  it('ends nothing for database sessions when the store keeps no sets and the adapter no provider sessions', async () => {
    const backend = memoryAuthStore()
    const { addToSet: _add, setMembers: _members, ...noSets } = backend
    const { op, config } = app({ strategy: 'database, index in the store', store: noSets as AuthStore })
    const alice = await signedIn(config, op)
    const page = await frontchannel(alice, { iss: ISSUER, sid: ALICE_SID })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('There was no session to end here.')
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })

  it('fails (ends nothing) when the store cannot read the index', async () => {
    const backend = memoryAuthStore()
    let failing = false
    const store: AuthStore = { ...backend, setMembers: (key) => (failing ? Promise.reject(new Error('store down')) : backend.setMembers!(key)) }
    const { op, config } = app({ strategy: 'database, index in the store', store })
    const alice = await signedIn(config, op)
    failing = true
    const page = await frontchannel(alice, { iss: ISSUER, sid: ALICE_SID })
    expect(page.status).not.toBe(200)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: 'Logout by the provider failed (findBrowserSession)' }))
    failing = false
    expect(await sessionOf(alice)).toBe('alice@example.com')
  })
})
