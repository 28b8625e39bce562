/**
 * The OAuth sign-in's checks against an in-process stand-in of the provider (its answers changed
 * one at a time): what the authorization request may carry, which callback URLs a sign-in may
 * start with, the envelope cookie of a form_post provider, how a refused callback, code exchange
 * or ID token is reported, the symmetric ID token signature, and the redirect proxy's own origin.
 */
import { UnsecuredJWT, calculateJwkThumbprint, decodeProtectedHeader, type JWK } from 'jose'
import { describe, expect, it, vi } from 'vitest'
import { MemoryAdapter, createMemoryStore } from '../../adapters/memory.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import { decode } from '../../core/jwt.js'
import { DPOP_KEY_FIELD, openDPoPKeyPair } from '../../core/oauth/dpop.js'
import { fetchUpstreamProfile } from '../../core/oauth/exchange.js'
import { resolveOAuthProvider, type OAuthConfig } from '../../core/oauth/provider.js'
import { isLoopback } from '../../core/oauth/server.js'
import { sealValue } from '../../core/engine/envelope.js'
import type { FlowTrace } from '../../core/engine/trace.js'
import { PROXY_STATE_SALT } from '../../core/flows/oauth/flow.js'
import { Client, ORIGIN, SECRET, setCookie, testConfig } from '../fixtures/http.js'
import {
  ISSUER,
  ROTATED,
  STANDIN_SECRET,
  TWO_WITHOUT_KID,
  answerTo,
  signInAt,
  standIn,
  standInProvider,
  startAt,
  type StandIn,
} from './oauth-standin.js'
import { expectOneKeySetRefetchPerInterval } from '../oauth/helpers.js'

const STATE_COOKIE = '__Secure-authjs.state'
const PROXY = 'https://proxy.authchart.test'
const PREVIEW = 'https://preview.authchart.test'
const SESSION_COOKIE = '__Secure-authjs.session-token'

/** An OAuth 2 provider on the stand-in: configured endpoints, no discovery, no ID token expected. */
const OAUTH2 = {
  type: 'oauth',
  checks: ['pkce', 'state'],
  issuer: undefined,
  authorization: `${ISSUER}/authorize`,
  token: `${ISSUER}/token`,
  userinfo: `${ISSUER}/userinfo`,
}

function configFor(op: StandIn, extra: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}) {
  return testConfig({ providers: [standInProvider(op, extra)] as never, ...overrides })
}

type Logged = Error & { type?: string; cause?: Record<string, unknown> & { err?: Error } }

/** The errors logged, as [type, message] pairs (the message of the error an AuthError wraps). */
const logged = (config: ReturnType<typeof testConfig>) =>
  config.logger.error.mock.calls.map(([error]) => {
    const { type, message, cause } = error as Logged
    return [type, message || cause?.err?.message]
  })

/** A config that records the OAuth flow's runs (the public `inspect` hook): their steps and outcome. */
function inspected(op: StandIn) {
  const runs: { steps: string[]; outcome?: string }[] = []
  const config = configFor(op, {}, {
    inspect: (trace: FlowTrace) => {
      if (trace.flow === 'oauth-signin') runs.push({ steps: trace.steps.map((s) => `${s.event} -> ${s.to}`), outcome: trace.outcome })
    },
  })
  return { config, runs }
}

const hasSession = (response: Response) => response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))

describe('the authorization request', () => {
  it('uses the scope the provider configures, and "openid profile email" only when it names none', async () => {
    const op = standIn()
    const configured = await startAt(new Client(configFor(op, { authorization: { params: { scope: 'openid email' } } })))
    expect(new URL(configured.headers.get('location')!).searchParams.getAll('scope')).toEqual(['openid email'])
    const plain = await startAt(new Client(configFor(op)))
    expect(new URL(plain.headers.get('location')!).searchParams.getAll('scope')).toEqual(['openid profile email'])
  })

  it('never forwards the callbackUrl of the sign-in request to the provider', async () => {
    const response = await startAt(new Client(configFor(standIn())), { callbackUrl: '/dashboard', prompt: 'login' })
    const params = new URL(response.headers.get('location')!).searchParams
    expect(params.has('callbackUrl')).toBe(false)
    expect(params.get('prompt')).toBe('login')
  })

  it.each([
    ['state and nonce', ['pkce'], { state: 'attacker-state', nonce: 'attacker-nonce' }, 'code_challenge'],
    ['PKCE challenge', ['state'], { code_challenge: 'attacker-challenge', code_challenge_method: 'plain' }, 'state'],
  ])('keeps an attacker-chosen %s out even when the provider does not use that check', async (_, checks, forged, own) => {
    const response = await startAt(new Client(configFor(standIn(), { checks })), forged)
    const params = new URL(response.headers.get('location')!).searchParams
    for (const key of Object.keys(forged)) expect(params.has(key), key).toBe(false)
    expect(params.get(own), 'the check the provider does use').toBeTruthy()
  })

  it('fails, saying why, when the provider publishes no authorization endpoint', async () => {
    const op = standIn()
    delete op.behaviour.discovery.authorization_endpoint
    const config = configFor(op)
    const response = await startAt(new Client(config))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    // Logged as the sign-in that could not start (not as a callback); the answer stays Auth.js's.
    expect(logged(config)).toEqual([['OAuthSignInError', expect.stringMatching(/^The sign-in with "[\w-]+" could not start: Authorization server did not provide an authorization endpoint\.$/)]])
    // The cause names the provider and keeps the error, for the application's logger.
    const [error] = config.logger.error.mock.calls[0]! as [Logged]
    expect(error.cause).toMatchObject({ provider: 'standin', err: expect.objectContaining({ message: 'Authorization server did not provide an authorization endpoint.' }) })
  })
})

describe('the callback URL a sign-in starts with', () => {
  it('is refused before the provider is visited when the redirect callback turns it away', async () => {
    const config = configFor(standIn())
    const response = await startAt(new Client(config), undefined, { callbackUrl: 'https://evil.example/x' })
    expect(response.headers.get('location')).not.toMatch(/^https:\/\/op\.standin\.test/)
    expect(logged(config)).toContainEqual(['InvalidCallbackUrl', 'The redirect callback refused the callback URL https://evil.example'])
  })

  it('may be rewritten by the redirect callback to another page of our origin', async () => {
    const config = configFor(standIn(), {}, { callbacks: { redirect: ({ baseUrl }: { baseUrl: string }) => `${baseUrl}/welcome` } })
    const response = await startAt(new Client(config), undefined, { callbackUrl: '/dashboard' })
    expect(response.headers.get('location')).toMatch(/^https:\/\/op\.standin\.test\/authorize\?/)
    expect(config.logger.error).not.toHaveBeenCalled()
  })

  it('is not checked again when only the callback-url cookie named it (the application let it through)', async () => {
    const config = configFor(standIn(), {}, { callbacks: { redirect: ({ url }: { url: string }) => url } })
    const client = new Client(config)
    client.jar.cookies.set('__Secure-authjs.callback-url', 'https://partner.example/landing')
    const response = await startAt(client)
    expect(response.headers.get('location')).toMatch(/^https:\/\/op\.standin\.test\/authorize\?/)
    expect(config.logger.error).not.toHaveBeenCalled()
  })
})

describe('the flow cookie of a sign-in', () => {
  it('is SameSite=Lax for a provider answering with a redirect', async () => {
    const response = await startAt(new Client(configFor(standIn())))
    expect(setCookie(response, STATE_COOKIE)?.attributes).toMatchObject({ samesite: 'Lax', secure: true })
  })

  it('is SameSite=None and Secure for a form_post provider, even where cookies are otherwise not Secure', async () => {
    const op = standIn()
    const config = configFor(op, { authorization: { params: { response_mode: 'form_post' } } }, { useSecureCookies: false })
    const response = await startAt(new Client(config))
    expect(setCookie(response, 'authjs.state')?.attributes).toMatchObject({ samesite: 'None', secure: true })
  })
})

describe('a callback the provider refused or that does not match the flow', () => {
  it('logs the provider error with its parameters and the provider, and ends refused by the provider', async () => {
    const { config, runs } = inspected(standIn())
    const client = new Client(config)
    const start = await startAt(client)
    const { state } = answerTo(start.headers.get('location')!)
    const response = await client.send({
      path: '/callback/standin',
      query: { error: 'access_denied', error_description: 'the user said no', state: state! },
    })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=OAuthCallbackError`)
    const [error] = config.logger.error.mock.calls.at(-1)! as [Error & { type: string }]
    expect(error.type).toBe('OAuthCallbackError')
    expect(error.message).toBe('OAuth Provider returned an error')
    expect(error.cause).toMatchObject({ providerId: 'standin', error: 'access_denied', error_description: 'the user said no' })
    expect(runs.at(-1)).toEqual({
      steps: ['oauth.callback -> validatingCallback', 'validateCallback.failed -> refusedByProvider'],
      outcome: 'error:OAuthCallbackError',
    })
  })

  it('logs a state that is not the flow\'s as InvalidCheck of that provider, and exchanges no code', async () => {
    const op = standIn()
    const { config, runs } = inspected(op)
    const client = new Client(config)
    const start = await startAt(client)
    const response = await client.send({ path: '/callback/standin', query: answerTo(start.headers.get('location')!, { state: 'other' }) })
    expect(runs.at(-1)).toEqual({
      steps: ['oauth.callback -> validatingCallback', 'validateCallback.failed -> failed'],
      outcome: 'error:InvalidCheck',
    })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(op.seen.token).toBe(0)
    const [error] = config.logger.error.mock.calls.at(-1)! as [Error & { type: string; cause: Record<string, unknown> }]
    expect(error.type).toBe('InvalidCheck')
    expect(error.cause).toMatchObject({ provider: 'standin' })
    expect(hasSession(response)).toBe(false)
  })
})

describe('the code exchange', () => {
  it('reports a refused grant as a failed callback, logging why', async () => {
    const op = standIn()
    op.behaviour.token = null
    const config = configFor(op)
    const { callback } = await signInAt(new Client(config))
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(logged(config)).toEqual([['CallbackRouteError', 'server responded with an error in the response body']])
    expect(hasSession(callback)).toBe(false)
  })

  it('refuses an OIDC token response without an ID token at the exchange, even without the nonce check', async () => {
    const op = standIn()
    op.behaviour.idToken = 'none'
    const config = configFor(op, { checks: ['pkce', 'state'] })
    const { callback } = await signInAt(new Client(config))
    expect(hasSession(callback)).toBe(false)
    expect(logged(config)).toEqual([['CallbackRouteError', '"response" body "id_token" property must be a string']])
  })

  it('signs in an OAuth 2 provider, which sends no ID token, with the userinfo profile', async () => {
    const op = standIn()
    op.behaviour.idToken = 'none'
    const config = configFor(op, OAUTH2)
    const client = new Client(config)
    const { callback } = await signInAt(client)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })

  it('signs in an OAuth 2 provider without a key set whose token response also carries an ID token', async () => {
    // Configured endpoints, no discovery: no jwks_uri to check the token against, and the profile
    // comes from userinfo; the token came straight from the token endpoint over TLS.
    const op = standIn()
    const config = configFor(op, OAUTH2)
    const { callback } = await signInAt(new Client(config))
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(config.logger.error).not.toHaveBeenCalled()
    expect(op.seen.jwks).toBe(0)
  })

  it('stores expires_at as the sign-in time plus expires_in, and none when the provider gives no lifetime', async () => {
    const signIn = vi.fn(() => true)
    const op = standIn()
    op.behaviour.token = { access_token: 'at', token_type: 'Bearer', expires_in: 600 }
    const before = Math.floor(Date.now() / 1000)
    await signInAt(new Client(configFor(op, {}, { callbacks: { signIn } })))
    const after = Math.floor(Date.now() / 1000)
    const account = (signIn.mock.calls.at(-1) as unknown as [{ account: Record<string, unknown> }])[0].account
    expect(account.expires_at).toBeGreaterThanOrEqual(before + 600)
    expect(account.expires_at).toBeLessThanOrEqual(after + 600)

    op.behaviour.token = { access_token: 'at', token_type: 'Bearer' }
    await signInAt(new Client(configFor(op, {}, { callbacks: { signIn } })))
    const second = (signIn.mock.calls.at(-1) as unknown as [{ account: Record<string, unknown> }])[0].account
    expect(second).not.toHaveProperty('expires_at')
  })

  it("applies the provider's token conform step, and keeps the response when it returns nothing", async () => {
    const op = standIn()
    op.behaviour.token = { access_token: 'at' } // no token_type: oauth4webapi refuses this as it stands
    const conform = vi.fn(async (response: Response) => {
      const body = (await response.json()) as Record<string, unknown>
      return Response.json({ ...body, token_type: 'bearer' })
    })
    const fixed = await signInAt(new Client(configFor(op, { token: { url: `${ISSUER}/token`, conform } })))
    expect(fixed.callback.headers.get('location')).toBe(ORIGIN)
    expect(conform).toHaveBeenCalledOnce()

    op.behaviour.token = { access_token: 'at', token_type: 'Bearer' }
    const untouched = await signInAt(
      new Client(configFor(op, { token: { url: `${ISSUER}/token`, conform: async () => undefined } })),
    )
    expect(untouched.callback.headers.get('location')).toBe(ORIGIN)
  })
})

describe('a DPoP provider (dpop: true)', () => {
  it("sends the code exchange with a proof from a fresh key pair, and keeps that pair, sealed, with the session's tokens", async () => {
    const op = standIn()
    op.behaviour.token = { access_token: 'at', token_type: 'DPoP', refresh_token: 'rt', expires_in: 600 }
    const client = new Client(configFor(op, { dpop: true, refreshTokens: true }))
    const { callback } = await signInAt(client)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    const proof = op.seen.tokenHeaders[0]!.get('dpop')
    expect(proof, 'the token request carries a DPoP proof').toEqual(expect.any(String))
    const claims = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    const sealed = (claims!.oauth as Record<string, string>)[DPOP_KEY_FIELD]
    expect(sealed, 'the key pair is kept with the session, sealed').toEqual(expect.any(String))
    // The proof was made with the key pair the session keeps.
    const keyPair = await openDPoPKeyPair(sealed!, [SECRET])
    const kept = await calculateJwkThumbprint((await crypto.subtle.exportKey('jwk', keyPair.publicKey)) as JWK)
    expect(await calculateJwkThumbprint(decodeProtectedHeader(proof!).jwk as JWK)).toBe(kept)
  })

  it('is not what another provider does: no proof, no key pair', async () => {
    const op = standIn()
    op.behaviour.token = { access_token: 'at', token_type: 'Bearer', refresh_token: 'rt', expires_in: 600 }
    const client = new Client(configFor(op, { refreshTokens: true }))
    await signInAt(client)
    expect(op.seen.tokenHeaders[0]!.has('dpop')).toBe(false)
    const claims = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(claims!.oauth).not.toHaveProperty(DPOP_KEY_FIELD)
  })
})

describe('an ID token signed with the client secret (HS256)', () => {
  const hmacClient = { client: { token_endpoint_auth_method: 'client_secret_basic', id_token_signed_response_alg: 'HS256' } }

  it('signs in when the client secret verifies it', async () => {
    const op = standIn()
    op.behaviour.idToken = { alg: 'HS256', secret: STANDIN_SECRET }
    const { callback } = await signInAt(new Client(configFor(op, hmacClient)))
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(op.seen.jwks).toBe(0)
  })

  it('is refused when another secret signed it', async () => {
    const op = standIn()
    op.behaviour.idToken = { alg: 'HS256', secret: `${STANDIN_SECRET}-forged` }
    const config = configFor(op, hmacClient)
    const { callback } = await signInAt(new Client(config))
    expect(hasSession(callback)).toBe(false)
    expect(logged(config)).toEqual([['CallbackRouteError', 'signature verification failed']])
  })

  it('is refused, saying why, when the provider has no client secret to check it with', async () => {
    const op = standIn()
    op.behaviour.idToken = { alg: 'HS256', secret: STANDIN_SECRET }
    const config = configFor(op, { ...hmacClient, clientSecret: undefined, client: { ...hmacClient.client, token_endpoint_auth_method: 'none' } })
    const { callback } = await signInAt(new Client(config))
    expect(hasSession(callback)).toBe(false)
    expect(logged(config)).toEqual([['CallbackRouteError', 'provider "standin" has no clientSecret to verify a HS256 ID token']])
  })
})

describe("the provider's key set", () => {
  it('is fetched again, once, when the provider signs with a key it did not publish before (a rotation)', async () => {
    const op = standIn()
    const config = configFor(op)
    expect((await signInAt(new Client(config))).callback.headers.get('location')).toBe(ORIGIN)
    expect(op.seen.jwks).toBe(1)
    op.behaviour.jwks = ROTATED
    op.behaviour.idToken = { alg: 'RS256', kid: 'k2', key: 'other' }
    const client = new Client(config)
    const { callback } = await signInAt(client)
    expect(callback.headers.get('location'), 'the rotated key is refused').toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(op.seen.jwks).toBe(2)
    expect(config.logger.error).not.toHaveBeenCalled()
  })

  it('is not fetched again for a forged kid within the interval of the last refetch, and the token is refused', async () => {
    const op = standIn()
    const config = configFor(op)
    await signInAt(new Client(config))
    op.behaviour.jwks = ROTATED
    op.behaviour.idToken = { alg: 'RS256', kid: 'k2', key: 'other' }
    await signInAt(new Client(config))
    expect(op.seen.jwks).toBe(2)
    op.behaviour.idToken = { alg: 'RS256', kid: 'attacker-chosen', key: 'other' }
    for (let attempt = 0; attempt < 2; attempt++) {
      const client = new Client(config)
      const { callback } = await signInAt(client)
      expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      expect((await client.session()).body).toBeNull()
    }
    expect(op.seen.jwks, 'no refetch for the forged kid').toBe(2)
  })

  it('is refetched at most once per provider per interval', () => {
    const op = standIn()
    const config = assertConfig(testConfig({ providers: [standInProvider(op), standInProvider(op, { id: 'standin-b' })] as never }))
    const [a, b] = config.providers.map((p) => p.oauth!)
    expectOneKeySetRefetchPerInterval(a!, b!, 1_000_000)
  })

  it('is not fetched again for a token whose signature is wrong under a known key', async () => {
    const op = standIn()
    op.behaviour.idToken = { alg: 'RS256', kid: 'k1', key: 'other' }
    const config = configFor(op)
    const { callback } = await signInAt(new Client(config))
    expect(hasSession(callback)).toBe(false)
    expect(op.seen.jwks).toBe(1)
  })

  it('is not fetched again when a token without kid matches more than one key', async () => {
    const op = standIn()
    op.behaviour.jwks = TWO_WITHOUT_KID
    op.behaviour.idToken = { alg: 'RS256' }
    const config = configFor(op)
    const { callback } = await signInAt(new Client(config))
    expect(hasSession(callback)).toBe(false)
    expect(op.seen.jwks).toBe(1)
  })
})

describe('an OpenID provider read through userinfo (idToken: false)', () => {
  it("signs in with the userinfo profile when it names the ID token's subject", async () => {
    const op = standIn()
    op.behaviour.userinfo = { sub: 'standin-user', email: 'alice@example.com', name: 'Alice from userinfo' }
    const config = configFor(op, { idToken: false })
    const client = new Client(config)
    const { callback } = await signInAt(client)
    expect(hasSession(callback)).toBe(true)
    expect((await client.session()).body).toMatchObject({ user: { name: 'Alice from userinfo' } })
  })

  it("fetchUpstreamProfile refuses a userinfo answer for another subject than the ID token's, and takes one for the same", async () => {
    const op = standIn()
    const provider = resolveOAuthProvider(standInProvider(op, { idToken: false }) as unknown as OAuthConfig<Record<string, unknown>>, undefined)
    const tokens = { access_token: 'standin-access-token', token_type: 'bearer', id_token: new UnsecuredJWT({ sub: 'standin-user' }).encode() }
    op.behaviour.userinfo = { sub: 'mallory', email: 'mallory@example.com' }
    await expect(fetchUpstreamProfile(provider, tokens as never, {})).rejects.toThrow()
    op.behaviour.userinfo = { sub: 'standin-user', email: 'alice@example.com' }
    await expect(fetchUpstreamProfile(provider, tokens as never, {})).resolves.toMatchObject({ sub: 'standin-user' })
  })

  it("is refused when userinfo answers for another subject than the ID token's (a swapped access token)", async () => {
    const op = standIn()
    op.behaviour.userinfo = { sub: 'mallory', email: 'mallory@example.com', name: 'Mallory' }
    const config = configFor(op, { idToken: false })
    const client = new Client(config)
    const { callback } = await signInAt(client)
    expect(hasSession(callback)).toBe(false)
    expect((await client.session()).body).toBeNull()
    expect(config.logger.error).toHaveBeenCalled()
  })
})

describe('a profile that is not an object', () => {
  it.each([[['a', 'list']], [null], ['text']])('is refused as a profile parse error: %j', async (userinfo) => {
    const op = standIn()
    op.behaviour.idToken = 'none'
    op.behaviour.userinfo = userinfo
    const config = configFor(op, {
      ...OAUTH2,
      profile: (profile: Record<string, unknown>) => ({ id: 'x', email: 'alice@example.com', ...profile }),
    })
    const { callback } = await signInAt(new Client(config))
    expect(hasSession(callback)).toBe(false)
    expect(logged(config)).toEqual([['OAuthProfileParseError', 'the profile is not an object']])
  })
})

describe('plain HTTP to the provider', () => {
  it.each(['http://localhost:3000/x', 'http://127.0.0.1/x', 'http://[::1]:8080/x'])('is allowed to the loopback host %s', (url) => {
    expect(isLoopback(url)).toBe(true)
  })

  it.each(['https://localhost/x', 'http://example.com/x', 'https://example.com/x', 'http://localhost.example.com/x', 'http://127.0.0.2/x'])(
    'is not allowed to %s (TLS required or not loopback)',
    (url) => {
      expect(isLoopback(url)).toBe(false)
    },
  )
})

describe('a deployment that is its own redirect proxy', () => {

  it('signs in a user who starts there, without forwarding, and with no allowlist', async () => {
    const op = standIn()
    const config = configFor(op, {}, { redirectProxyUrl: `${PROXY}/auth`, adapter: MemoryAdapter(createMemoryStore()) })
    const client = new Client(config, PROXY)
    const { start, callback } = await signInAt(client)
    expect(start.headers.get('location')).toMatch(/^https:\/\/op\.standin\.test\/authorize\?/)
    expect(callback.headers.get('location')).toBe(PROXY)
    expect(config.logger.error).not.toHaveBeenCalled()
  })
})

describe('a sign-in started behind the redirect proxy', () => {
  it('is refused, before the provider is visited, on an origin neither the proxy nor on the allowlist', async () => {
    const op = standIn()
    const config = configFor(op, {}, { redirectProxyUrl: `${PROXY}/auth`, redirectProxyOrigins: [PREVIEW] })
    const response = await startAt(new Client(config, 'https://evil.example'))
    expect(response.headers.get('location')).toBe('https://evil.example/auth/error?error=Configuration')
    // Reported as the untrusted origin it is, not as a sign-in that could not start.
    expect(logged(config)).toEqual([
      ['UntrustedHost', 'The origin https://evil.example is not in redirectProxyOrigins (AUTH_REDIRECT_PROXY_ORIGINS): a sign-in through the redirect proxy must start on an allowed origin'],
    ])
  })

  it('on an allowed origin, sends the provider to the proxy, which forwards the answer to that origin, where it completes', async () => {
    const op = standIn()
    const config = configFor(op, {}, { redirectProxyUrl: `${PROXY}/auth`, redirectProxyOrigins: [PREVIEW] })
    const preview = new Client(config, PREVIEW)
    const start = await startAt(preview)
    const authorization = new URL(start.headers.get('location')!)
    expect(authorization.searchParams.get('redirect_uri')).toBe(`${PROXY}/auth/callback/standin`)
    const answer = answerTo(start.headers.get('location')!, { iss: ISSUER })
    const forwarded = await new Client(config, PROXY).send({ path: '/callback/standin', query: answer })
    const next = new URL(forwarded.headers.get('location')!)
    expect(`${next.origin}${next.pathname}`).toBe(`${PREVIEW}/auth/callback/standin`)
    // Every parameter of the provider's answer, as it came.
    expect(Object.fromEntries(next.searchParams)).toEqual(answer)
    const done = await preview.send({ path: '/callback/standin', query: Object.fromEntries(next.searchParams) })
    expect(done.headers.get('location')).toBe(PREVIEW)
    expect((await preview.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })
})

describe('the redirect proxy receiving a callback', () => {
  /** The proxy, and the deployments it may forward to. */
  const proxyConfig = (op: StandIn) =>
    configFor(op, {}, { redirectProxyUrl: `${PROXY}/auth`, redirectProxyOrigins: [ORIGIN, PREVIEW] })

  /** The proxy's error for a callback it refused to forward, as logged. */
  async function refusedAtProxy(state: string) {
    const config = proxyConfig(standIn())
    const response = await new Client(config, PROXY).send({ path: '/callback/standin', query: { code: 'x', state } })
    expect(response.headers.get('location')).toBe(`${PROXY}/auth/error?error=Configuration`)
    const [error] = config.logger.error.mock.calls.at(-1)! as [Logged]
    return error
  }

  it('refuses a sealed state whose origin is not a string, even one naming an allowed deployment', async () => {
    const state = await sealValue(
      { origin: [`${PREVIEW}/auth/callback/standin`], random: 'r' },
      { secrets: [SECRET], salt: PROXY_STATE_SALT, at: Math.floor(Date.now() / 1000) },
    )
    const error = await refusedAtProxy(state)
    expect([error.type, error.message, error.cause?.provider]).toEqual(['InvalidCheck', 'State could not be decoded', 'standin'])
  })

  it('refuses, naming it, a sealed origin that is not on the allowlist', async () => {
    const state = await sealValue(
      { origin: 'https://evil.example/auth/callback/standin', random: 'r' },
      { secrets: [SECRET], salt: PROXY_STATE_SALT, at: Math.floor(Date.now() / 1000) },
    )
    const error = await refusedAtProxy(state)
    expect([error.type, error.message, error.cause?.provider]).toEqual([
      'InvalidCheck',
      'The redirect proxy refused to forward to https://evil.example: not in redirectProxyOrigins',
      'standin',
    ])
  })

  it('opens a state sealed under the wire salt, so a proxy and the deployments behind it may run different versions', async () => {
    // The literal, not the constant: renaming the salt would strand every state in flight between versions.
    const state = await sealValue(
      { origin: 'https://evil.example/auth/callback/standin', random: 'r' },
      { secrets: [SECRET], salt: 'authchart.redirect-proxy-state', at: Math.floor(Date.now() / 1000) },
    )
    const error = await refusedAtProxy(state)
    expect(error.message).toMatch(/not in redirectProxyOrigins/)
  })

  it('refuses as undecodable a state sealed with the same secret for another purpose', async () => {
    const state = await sealValue(
      { origin: `${PREVIEW}/auth/callback/standin`, random: 'r' },
      { secrets: [SECRET], salt: '', at: Math.floor(Date.now() / 1000) },
    )
    const error = await refusedAtProxy(state)
    expect(error.message).toBe('State could not be decoded')
  })

  it('treats a callback without state as its own (the flow cookie is then missing), not as undecodable', async () => {
    const config = proxyConfig(standIn())
    const response = await new Client(config, PROXY).send({ path: '/callback/standin', query: { code: 'x' } })
    expect(response.headers.get('location')).toBe(`${PROXY}/auth/error?error=FlowExpired`)
    const messages = config.logger.error.mock.calls.map(([error]) => (error as Error).message)
    expect(messages).not.toContain('State could not be decoded')
    expect(messages.join('\n')).toMatch(/could not be resumed/)
  })

  it('is not done by a deployment that merely uses the proxy: it never forwards a callback itself', async () => {
    const op = standIn()
    const config = proxyConfig(op)
    // A sign-in started on the preview deployment: its state names the preview's callback.
    const start = await startAt(new Client(config, PREVIEW))
    const answer = answerTo(start.headers.get('location')!)
    // Delivered to another deployment that is not the proxy: it answers for itself.
    const response = await new Client(config, ORIGIN).send({ path: '/callback/standin', query: answer })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=FlowExpired`)
    expect(config.logger.error.mock.calls.map(([error]) => (error as Error).message).join('\n')).toMatch(/could not be resumed/)
  })
})
