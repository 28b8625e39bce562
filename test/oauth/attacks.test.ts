/**
 * Attacks on the OAuth callback, each against the real OpenID Provider: the attacker tampers with
 * the callback, replays it, swaps flows between providers, or (as a network attacker or a broken
 * provider would) forges the ID token. Every one must end with an error redirect, a logged reason
 * and no session.
 */
import { SignJWT, base64url, generateKeyPair } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { customFetch } from '../../core/index.js'
import { InvalidCheck } from '../../core/errors.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'
import {
  startOidcProvider,
  visitProvider,
  type ProviderReturn,
  type RunningOidcProvider,
} from '../fixtures/oidc-provider.js'
import { CALLBACK_BASE, appProvider, deliverCallback, idTokenForger, opClient, signInThroughProvider, startSignIn, type IdTokenForgery } from './helpers.js'

const STATE_COOKIE = '__Secure-authjs.state'
const SESSION_COOKIE = '__Secure-authjs.session-token'

let op: RunningOidcProvider
const stranger = await generateKeyPair('RS256')

const forger = idTokenForger(() => op)

beforeAll(async () => {
  op = await startOidcProvider({
    clients: [
      await opClient('client_secret_basic', 'op'),
      await opClient('client_secret_basic', 'op-b'),
      await opClient('client_secret_basic', 'op-forge'),
    ],
  })
})
afterAll(() => op?.close())
beforeEach(() => {
  forger.forge = undefined
  op.decision = 'accept'
})

const checks = ['pkce', 'state', 'nonce']
function config() {
  return testConfig({
    providers: [
      appProvider(op.issuer, 'client_secret_basic', 'op', { checks }),
      appProvider(op.issuer, 'client_secret_basic', 'op-b', { checks }),
      appProvider(op.issuer, 'client_secret_basic', 'op-forge', { checks, [customFetch]: forger.fetch }),
    ] as never,
  })
}

/** The provider's answer to a fresh sign-in, not yet delivered. */
async function answerFor(client: Client, providerId = 'op'): Promise<ProviderReturn> {
  return visitProvider(await startSignIn(client, providerId), CALLBACK_BASE)
}

function withParams(answer: ProviderReturn, change: (params: URLSearchParams) => void): ProviderReturn {
  const url = new URL(answer.url)
  change(url.searchParams)
  return { ...answer, url }
}

/** The attack failed: an error redirect, a logged reason, no session cookie, no session. */
async function expectRefused(client: Client, response: Response, error = 'Configuration') {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toMatch(new RegExp(`^${ORIGIN}/auth/(error|signin)\\?error=${error}$`))
  expect(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
  expect(client.config.logger!.error).toHaveBeenCalled()
  expect((await client.session()).body).toBeNull()
}

/** What was logged is an InvalidCheck, as Auth.js logs a missing or unreadable check cookie. */
function expectLoggedInvalidCheck(client: Client) {
  const logged = (client.config.logger!.error as unknown as { mock: { calls: unknown[][] } }).mock.calls.map(([e]) => e)
  expect(logged.length).toBeGreaterThan(0)
  for (const error of logged) {
    expect(error).toBeInstanceOf(InvalidCheck)
    expect((error as InvalidCheck).type).toBe('InvalidCheck')
  }
}

describe('a tampered or replayed callback', () => {
  it('is refused when the state does not match the flow', async () => {
    const client = new Client(config())
    const answer = withParams(await answerFor(client), (p) => p.set('state', 'attacker-state'))
    await expectRefused(client, await deliverCallback(client, answer))
  })

  it('is refused when the state is missing', async () => {
    const client = new Client(config())
    const answer = withParams(await answerFor(client), (p) => p.delete('state'))
    await expectRefused(client, await deliverCallback(client, answer))
  })

  it('is refused without the flow cookie (a callback the browser never started)', async () => {
    const client = new Client(config())
    const answer = await answerFor(client)
    client.jar.cookies.delete(STATE_COOKIE)
    // Not an attack on its face (another browser, a cleared cookie): the user is asked to start again.
    await expectRefused(client, await deliverCallback(client, answer), 'FlowExpired')
    expectLoggedInvalidCheck(client)
  })

  it('is refused when the flow cookie was tampered with, logging InvalidCheck', async () => {
    const client = new Client(config())
    const answer = await answerFor(client)
    const parts = client.jar.get(STATE_COOKIE)!.split('.')
    parts[3] = `${parts[3]![0] === 'A' ? 'B' : 'A'}${parts[3]!.slice(1)}`
    client.jar.cookies.set(STATE_COOKIE, parts.join('.'))
    await expectRefused(client, await deliverCallback(client, answer))
    expectLoggedInvalidCheck(client)
  })

  it('is refused when replayed with the same flow cookie, before reaching the provider', async () => {
    const client = new Client(config())
    const answer = await answerFor(client)
    const envelope = client.jar.get(STATE_COOKIE)!
    const first = await deliverCallback(client, answer)
    expect(first.headers.get('location')).toBe(ORIGIN)

    const attacker = new Client(client.config)
    attacker.jar.cookies.set(STATE_COOKIE, envelope)
    const tokenRequestsBefore = op.tokenRequests
    await expectRefused(attacker, await deliverCallback(attacker, answer))
    expect(op.tokenRequests, 'no second code exchange').toBe(tokenRequestsBefore)
    expectLoggedInvalidCheck(attacker)
  })

  it("is refused when the flow was started for another provider", async () => {
    const client = new Client(config())
    const answer = await answerFor(client, 'op-b')
    const swapped: ProviderReturn = { ...answer, url: new URL(answer.url.href.replace('/callback/op-b', '/callback/op')) }
    await expectRefused(client, await deliverCallback(client, swapped))
    expectLoggedInvalidCheck(client)
  })

  it('is refused when the RFC 9207 iss parameter names another issuer', async () => {
    const client = new Client(config())
    const answer = await answerFor(client)
    expect(answer.url.searchParams.get('iss')).toBe(op.issuer)
    const mixedUp = withParams(answer, (p) => p.set('iss', 'https://evil.example'))
    await expectRefused(client, await deliverCallback(client, mixedUp))
  })

  it('is refused without the RFC 9207 iss parameter when the provider advertises it (a mix-up stripping it)', async () => {
    const client = new Client(config())
    const answer = await answerFor(client)
    const stripped = withParams(answer, (p) => p.delete('iss'))
    await expectRefused(client, await deliverCallback(client, stripped))
    expectLoggedInvalidCheck(client)
  })

  it('sends the user back to sign-in when the provider answers error=access_denied', async () => {
    op.decision = 'deny'
    const client = new Client(config())
    const answer = await answerFor(client)
    expect(answer.url.searchParams.get('error')).toBe('access_denied')
    await expectRefused(client, await deliverCallback(client, answer), 'OAuthCallbackError')
  })
})

describe('a forged ID token', () => {
  const forgeries: Record<string, IdTokenForgery> = {
    'names another issuer (iss)': (c) => forger.signedByProvider({ ...c, iss: 'https://evil.example' }),
    'is for another client (aud)': (c) => forger.signedByProvider({ ...c, aud: 'op-b' }),
    'carries another nonce': (c) => forger.signedByProvider({ ...c, nonce: 'attacker-nonce' }),
    'has expired': (c) => forger.signedByProvider({ ...c, iat: Number(c.iat) - 7200, exp: Number(c.iat) - 3600 }),
    'is unsigned (alg none)': async (c) =>
      `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify(c))}.`,
    "is signed with a stranger's key under the provider's key id": (c) =>
      new SignJWT(c).setProtectedHeader({ alg: 'RS256', kid: op.signingKey.kid }).sign(stranger.privateKey),
  }

  it('is accepted untouched (the tampering fetch itself changes nothing)', async () => {
    forger.forge = async (claims) => forger.signedByProvider(claims)
    const client = new Client(config())
    const { callback } = await signInThroughProvider(client, 'op-forge')
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })

  it.each(Object.keys(forgeries))('is refused when it %s', async (name) => {
    forger.forge = forgeries[name]
    const client = new Client(config())
    const { callback } = await signInThroughProvider(client, 'op-forge')
    await expectRefused(client, callback)
  })
})

describe('an open redirect through callbackUrl', () => {
  it.each(['https://evil.example/phish', '//evil.example/phish'])(
    'is refused before the user is sent to the provider, with no flow and no session: %s',
    async (callbackUrl) => {
      const client = new Client(config())
      const csrfToken = await client.csrfToken()
      const response = await client.send({ path: '/signin/op', body: { csrfToken, callbackUrl } })
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      expect(client.jar.get(STATE_COOKIE)).toBeUndefined()
      expect(client.config.logger!.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'InvalidCallbackUrl' }))
      expect((await client.session()).body).toBeNull()
    },
  )

  it('lets through another origin that the application\'s redirect callback accepts', async () => {
    const cfg = config()
    cfg.callbacks = { redirect: ({ url }) => url }
    const client = new Client(cfg)
    const { callback } = await signInThroughProvider(client, 'op', { callbackUrl: 'https://partner.example/welcome' })
    expect(callback.headers.get('location')).toBe('https://partner.example/welcome')
  })

  it.each(['javascript:alert(1)', 'data:text/html,hi'])('is refused with 400 before any flow starts: %s', async (callbackUrl) => {
    const client = new Client(config())
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/signin/op', body: { csrfToken, callbackUrl } })
    expect(response.status).toBe(400)
    expect(client.jar.get(STATE_COOKIE)).toBeUndefined()
    expect((await client.session()).body).toBeNull()
  })
})
