/**
 * OpenID Connect Back-Channel Logout against the real OpenID Provider: the user ends their session
 * at the provider, the provider posts a Logout Token to our back-channel URI, and our session is
 * over on the next request, whether it is a JWT (with a store) or a database row. Then every bad
 * Logout Token of the issue, forged with the provider's own key where a signature is needed: each
 * is answered 400 with a JSON error object and ends no session.
 */
import { generateKeyPair, importJWK, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import { BACKCHANNEL_LOGOUT_EVENT } from '../../core/oauth/logout-token.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, Client, ORIGIN, SECRET, testConfig } from '../fixtures/http.js'
import { endSessionAtProvider, OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CLIENT_SECRET, opClient, signInThroughProvider } from './helpers.js'
import { logoutToken as forge, unsignedLogoutToken, type Forgery } from './logout-tokens.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const BACKCHANNEL = `${ORIGIN}/auth/backchannel-logout`

let op: RunningOidcProvider
/** The app the provider's Logout Tokens are delivered to (each test signs in to its own). */
let app: AuthConfig
/** The database rows of the app's adapter, under the database strategies. */
let rows: MemoryStore

beforeAll(async () => {
  op = await startOidcProvider({
    backchannelLogout: true,
    deliver: async (url, init) => Auth(new Request(url, init), app as Omit<AuthConfig, 'raw'>),
    clients: [
      // Sends sid in ID tokens and Logout Tokens.
      await opClient('client_secret_basic', 'op', {
        backchannel_logout_uri: `${BACKCHANNEL}/op`,
        backchannel_logout_session_required: true,
      } as never),
      // Sends only sub: a logout ends every session of the subject.
      await opClient('client_secret_basic', 'opsub', { backchannel_logout_uri: `${BACKCHANNEL}/opsub` } as never),
    ],
  })
})
afterAll(() => op?.close())

type Strategy = 'jwt' | 'database' | 'database, index in the store'

/** An app with both OP clients, under `strategy`, delivered the provider's Logout Tokens. */
function appConfig(strategy: Strategy, extra: Partial<AuthConfig> = {}): ReturnType<typeof testConfig> {
  rows = createMemoryStore()
  const memory = MemoryAdapter(rows)
  // An Auth.js adapter keeps no provider session with its rows: the store's index finds them.
  const { deleteProviderSessions: _ours, ...authjsLike } = memory
  const config = testConfig({
    providers: [appProvider(op.issuer, 'client_secret_basic', 'op'), appProvider(op.issuer, 'client_secret_basic', 'opsub')] as never,
    store: memoryAuthStore(),
    ...(strategy === 'jwt' ? {} : { adapter: strategy === 'database' ? memory : authjsLike, session: { strategy: 'database' } }),
    ...extra,
  })
  app = config
  return config
}

/** A browser signed in through `providerId`, with its session at the provider. */
async function browserSignedIn(config: AuthConfig, providerId = 'op') {
  const client = new Client(config)
  const opCookies = new Map<string, string>()
  await signInThroughProvider(client, providerId, { opCookies })
  expect((await client.session()).body, 'signed in').not.toBeNull()
  return { client, opCookies }
}

const sessionOf = async (client: Client) => (await client.session()).body

describe('back-channel logout from the provider', () => {
  it.each<Strategy>(['jwt', 'database', 'database, index in the store'])(
    'ends the session (by sid) within one request: %s sessions',
    async (strategy) => {
      const config = appConfig(strategy)
      const { client, opCookies } = await browserSignedIn(config)
      if (strategy !== 'jwt') {
        // Our adapter keeps the provider session with the row; an Auth.js adapter cannot.
        const recorded = [...rows.sessions.values()].map((row) => row.providerSession)
        const expected = strategy === 'database' ? { provider: 'op', sub: OP_ACCOUNT.sub, sid: expect.any(String) } : undefined
        expect(recorded).toEqual([expected])
      }
      const delivered = op.backchannel.length
      await endSessionAtProvider(op.issuer, opCookies)
      expect(op.backchannel.slice(delivered)).toEqual([{ client: 'op', sid: expect.any(String), outcome: 'ok' }])
      expect(await sessionOf(client), 'our session is over').toBeNull()
      expect(config.logger.error).not.toHaveBeenCalled()
    },
  )

  it.each<Strategy>(['jwt', 'database', 'database, index in the store'])(
    'ends every session of the subject when the token names only sub: %s sessions',
    async (strategy) => {
      const config = appConfig(strategy)
      const first = await browserSignedIn(config, 'opsub')
      const second = await browserSignedIn(config, 'opsub')
      const delivered = op.backchannel.length
      await endSessionAtProvider(op.issuer, first.opCookies)
      expect(op.backchannel.slice(delivered)).toEqual([{ client: 'opsub', sid: expect.any(String), outcome: 'ok' }])
      expect(await sessionOf(first.client)).toBeNull()
      expect(await sessionOf(second.client), 'the same subject, another browser').toBeNull()
    },
  )

  // With the session cache, the browser holds an entry that needs no database: the marker the
  // logout writes is what ends it (ourselves by sid and subject; the index's rows by token).
  describe.each<Strategy>(['database', 'database, index in the store'])('with the session cache: %s sessions', (strategy) => {
    const cached = () => appConfig(strategy, { session: { strategy: 'database', cache: { maxAge: 300 } } })
    it('ends the session (by sid) within one request, its cache entry refused', async () => {
      const config = cached()
      const { client, opCookies } = await browserSignedIn(config)
      expect(client.jar.get('__Secure-authjs.session-cache'), 'a cache entry').toBeDefined()
      const staying = await browserSignedIn(config)
      await endSessionAtProvider(op.issuer, opCookies)
      expect(await sessionOf(client)).toBeNull()
      expect(await sessionOf(staying.client), 'signed in through another session at the provider').not.toBeNull()
    })

    it('ends every cached session of the subject when the token names only sub', async () => {
      const config = cached()
      const first = await browserSignedIn(config, 'opsub')
      const second = await browserSignedIn(config, 'opsub')
      await endSessionAtProvider(op.issuer, first.opCookies)
      expect(await sessionOf(first.client)).toBeNull()
      expect(await sessionOf(second.client)).toBeNull()
    })
  })

  it.each<Strategy>(['jwt', 'database'])('leaves the sessions of other provider sessions alone (by sid): %s sessions', async (strategy) => {
    const config = appConfig(strategy)
    const leaving = await browserSignedIn(config)
    const staying = await browserSignedIn(config)
    await endSessionAtProvider(op.issuer, leaving.opCookies)
    expect(await sessionOf(leaving.client)).toBeNull()
    expect(await sessionOf(staying.client), 'signed in through another session at the provider').not.toBeNull()
  })

  it('cannot end JWT sessions without a store: the provider is told so (400), and the log says why', async () => {
    const config = appConfig('jwt', { store: undefined as never })
    delete (config as { store?: unknown }).store
    const { client, opCookies } = await browserSignedIn(config)
    const delivered = op.backchannel.length
    await endSessionAtProvider(op.issuer, opCookies)
    expect(op.backchannel.slice(delivered)).toEqual([{ client: 'op', sid: expect.any(String), outcome: expect.stringContaining('got: 400') }])
    expect(String(config.logger.error.mock.calls[0]?.[0]?.cause)).toContain('needs a `store`')
    expect(await sessionOf(client), 'a JWT read without a store asks no one').not.toBeNull()
  })
})

/** The session's provider session, as the JWT records it. */
async function sidOf(client: Client): Promise<string> {
  const token = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
  expect(token?.idp).toBe('op')
  return token!.sid as string
}

const encoder = new TextEncoder()

describe('bad Logout Tokens: 400 with a JSON error, and no session touched', async () => {
  const stranger = await generateKeyPair('RS256')
  let client: Client
  let sid: string

  beforeAll(async () => {
    client = (await browserSignedIn(appConfig('jwt'))).client
    sid = await sidOf(client)
  })

  /** A Logout Token for our session, right in every way `forgery` does not change. */
  const logoutToken = (forgery: Forgery = {}) => forge(op, 'op', sid, forgery)

  const post = (body: Record<string, string>, init: { json?: boolean; provider?: string } = {}) =>
    Auth(
      authRequest({ path: `/auth/backchannel-logout/${init.provider ?? 'op'}`, ...(init.json ? { json: body } : { body }) }),
      app as Omit<AuthConfig, 'raw'>,
    )

  /** The request is refused with a JSON error naming `reason`, and the session lives on. */
  async function expectRefused(response: Response, reason: RegExp): Promise<void> {
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('cache-control')).toContain('no-store')
    const body = (await response.json()) as { error?: string; error_description?: string }
    expect(body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(reason) })
    expect(await sessionOf(client), 'no session touched').not.toBeNull()
  }

  const cases: [string, () => Promise<Response>, RegExp][] = [
    ['a wrong signature (a stranger key under the provider kid)', async () => post({ logout_token: await logoutToken({ key: stranger.privateKey }) }), /signature does not verify/],
    [
      'an unknown kid the provider does not publish (the key set is fetched again, and still lacks it)',
      async () => post({ logout_token: await logoutToken({ key: stranger.privateKey, header: { kid: 'not-published' } }) }),
      /no key of the provider/,
    ],
    ['a wrong iss', async () => post({ logout_token: await logoutToken({ claims: { iss: 'https://op.evil.example' } }) }), /iss is not the provider/],
    ['a wrong aud', async () => post({ logout_token: await logoutToken({ claims: { aud: 'another-client' } }) }), /aud does not name our client/],
    [
      'an aud array that does not name our client',
      async () => post({ logout_token: await logoutToken({ claims: { aud: ['another-client', 'a-third'] } }) }),
      /aud does not name our client/,
    ],
    ['an expired iat (ten minutes old)', async () => post({ logout_token: await logoutToken({ claims: { iat: Math.floor(Date.now() / 1000) - 600 } }) }), /iat is too old/],
    ['a future iat (ten minutes ahead)', async () => post({ logout_token: await logoutToken({ claims: { iat: Math.floor(Date.now() / 1000) + 600 } }) }), /iat is in the future/],
    ['no iat', async () => post({ logout_token: await logoutToken({ claims: { iat: undefined } }) }), /iat is missing/],
    ['an exp in the past', async () => post({ logout_token: await logoutToken({ claims: { exp: Math.floor(Date.now() / 1000) - 120 } }) }), /expired/],
    ['no jti', async () => post({ logout_token: await logoutToken({ claims: { jti: undefined } }) }), /jti is missing/],
    ['no events', async () => post({ logout_token: await logoutToken({ claims: { events: undefined } }) }), /: events is missing$/],
    [
      'an events member that is a string, not an object',
      async () => post({ logout_token: await logoutToken({ claims: { events: BACKCHANNEL_LOGOUT_EVENT } }) }),
      /: events must be a JSON object$/,
    ],
    [
      'events without the back-channel logout member',
      async () => post({ logout_token: await logoutToken({ claims: { events: { 'http://schemas.openid.net/event/other': {} } } }) }),
      /: events has no back-channel logout member$/,
    ],
    [
      'a back-channel logout member that is not a JSON object',
      async () => post({ logout_token: await logoutToken({ claims: { events: { [BACKCHANNEL_LOGOUT_EVENT]: 'yes' } } }) }),
      /: the back-channel logout member of events must be a JSON object$/,
    ],
    ['a nonce present (an ID token)', async () => post({ logout_token: await logoutToken({ claims: { nonce: 'n-0S6_WzA2Mj' } }) }), /nonce/],
    ['neither sid nor sub', async () => post({ logout_token: await logoutToken({ claims: { sid: undefined, sub: undefined } }) }), /neither sid nor sub/],
    ['a typ other than logout+jwt', async () => post({ logout_token: await logoutToken({ header: { typ: 'JWT' } }) }), /typ/],
    ['alg none', async () => post({ logout_token: unsignedLogoutToken(op, 'op', sid) }), /alg none is not accepted/],
    [
      'HS256 keyed with the client secret, where the client takes RS256 (algorithm confusion)',
      async () => post({ logout_token: await logoutToken({ header: { alg: 'HS256' }, key: encoder.encode(CLIENT_SECRET) }) }),
      /alg HS256 is not accepted/,
    ],
    ['an ID token instead (no events, a nonce)', async () => post({ logout_token: await logoutToken({ claims: { events: undefined, nonce: 'n' } }) }), /events/],
    ['a body that is no JWT', async () => post({ logout_token: 'not-a-jwt' }), /not a signed JWT/],
    ['no logout_token', async () => post({ token: 'x' }), /logout_token is missing/],
    ['an oversized body (past 64 KiB)', async () => post({ logout_token: 'a'.repeat(70_000) }), /too large/],
    ['a wrong content type (JSON)', async () => post({ logout_token: await logoutToken() }, { json: true }), /form post/],
    [
      'a wrong content type (text/plain)',
      async () =>
        Auth(
          new Request(`${BACKCHANNEL}/op`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `logout_token=${await logoutToken()}` }),
          app as Omit<AuthConfig, 'raw'>,
        ),
      /form post/,
    ],
    ['an unknown provider', async () => post({ logout_token: await logoutToken() }, { provider: 'nope' }), /^no OpenID Connect provider with the id "nope" is configured$/],
  ]

  it.each(cases)('%s', async (_name, send, reason) => {
    await expectRefused(await send(), reason)
  })

  it('a replayed jti: the first delivery ends the session, the same token again is refused', async () => {
    const token = await logoutToken()
    const first = await post({ logout_token: token })
    expect(first.status).toBe(200)
    expect(first.headers.get('cache-control')).toContain('no-store')
    expect(await first.json()).toEqual({})
    expect(await sessionOf(client), 'the right token ends the session').toBeNull()

    // The replayed token names the ended provider session; a new session is not ended by it.
    client = (await browserSignedIn(app)).client
    sid = await sidOf(client)
    const replayed = await post({ logout_token: token })
    expect(replayed.status).toBe(400)
    expect(await replayed.json()).toEqual({ error: 'invalid_request', error_description: 'the logout token was already used (jti)' })
    expect(await sessionOf(client), 'no session touched').not.toBeNull()
  })

  it("a key the provider rotated to since the last sign-in is fetched, and its token accepted", async () => {
    // A new app: its key set was fetched at its sign-in, and no refetch has happened since.
    client = (await browserSignedIn(appConfig('jwt'))).client
    sid = await sidOf(client)
    await op.rotateSigningKey()
    const rotated = (await importJWK(op.signingKey as JWK, 'RS256')) as CryptoKey
    const response = await post({ logout_token: await logoutToken({ key: rotated, header: { kid: op.signingKey.kid } }) })
    expect(response.status).toBe(200)
    expect(await sessionOf(client)).toBeNull()
  })
})

describe('a store that cannot spend the jti', () => {
  it('refuses the logout (fails closed): a token whose single use cannot be recorded ends no session', async () => {
    const store = memoryAuthStore()
    const spendingFails: typeof store = {
      ...store,
      claim: (key, ttl) => (key.startsWith('logout:jti:') ? Promise.reject(new Error('store down')) : store.claim(key, ttl)),
    }
    const config = appConfig('jwt', { store: spendingFails })
    const { client } = await browserSignedIn(config)
    const token = await forge(op, 'op', await sidOf(client))
    const response = await Auth(authRequest({ path: '/auth/backchannel-logout/op', body: { logout_token: token } }), config as Omit<AuthConfig, 'raw'>)
    expect(response.status).not.toBe(200)
    expect(await sessionOf(client), 'no session ended on an unrecorded jti').not.toBeNull()
    expect(config.logger.error).toHaveBeenCalled()
  })

  it('answers 503 with Retry-After (fails closed) when the store does not answer the spend before its deadline', async () => {
    const store = memoryAuthStore()
    let asked = 0
    const spendingHangs: typeof store = {
      ...store,
      claim: (key, ttl) => {
        if (!key.startsWith('logout:jti:')) return store.claim(key, ttl)
        asked++
        return new Promise<boolean>(() => {})
      },
    }
    const config = appConfig('jwt', { store: spendingHangs, availability: { storeTimeout: 50, retryAfter: 7 } } as never)
    const { client } = await browserSignedIn(config)
    const token = await forge(op, 'op', await sidOf(client))
    const started = Date.now()
    const response = await Auth(authRequest({ path: '/auth/backchannel-logout/op', body: { logout_token: token } }), config as Omit<AuthConfig, 'raw'>)
    expect(asked).toBe(1)
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('7')
    expect(Date.now() - started, 'answered at the deadline, not when the store wakes').toBeLessThan(5_000)
    expect(await sessionOf(client), 'no session ended on an unrecorded jti').not.toBeNull()
  })
})
