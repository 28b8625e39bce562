/**
 * Second, independent tests for the OAuth sign-in's checks, against the real OpenID Provider: the
 * protected authorization parameters, the sealed flow's audience, flow id, provider binding and
 * single use (each changed alone in a real envelope, resealed with the secret), and the ID token's
 * signature (a valid token's signature broken, a valid signature moved onto other claims).
 */
import { base64url, decodeJwt } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { customFetch } from '../../core/index.js'
import { Client, ORIGIN, SECRET, testConfig } from '../fixtures/http.js'
import { startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { CALLBACK_BASE, appProvider, deliverCallback, opClient, startSignIn } from '../oauth/helpers.js'
import { reseal, type EnvelopeClaims } from './reseal.js'

const STATE_COOKIE = '__Secure-authjs.state'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const EVIL_CALLBACK = 'https://evil.example/cb'

let op: RunningOidcProvider
let rewriteIdToken: ((idToken: string) => string) | undefined

/** A fetch that rewrites the ID token of token responses (a network attacker, a broken provider). */
const rewritingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init)
  const url = input instanceof Request ? input.url : String(input)
  if (!rewriteIdToken || !url.endsWith('/token') || !response.ok) return response
  const body = (await response.json()) as Record<string, unknown>
  body.id_token = rewriteIdToken(String(body.id_token))
  return new Response(JSON.stringify(body), { status: response.status, headers: response.headers })
}

beforeAll(async () => {
  op = await startOidcProvider({
    clients: [await opClient('client_secret_basic', 'op'), await opClient('client_secret_basic', 'op-b')],
  })
})
afterAll(() => op?.close())
beforeEach(() => {
  rewriteIdToken = undefined
  op.decision = 'accept'
})

const checks = ['pkce', 'state', 'nonce']
function config() {
  return testConfig({
    providers: [
      appProvider(op.issuer, 'client_secret_basic', 'op', { checks, [customFetch]: rewritingFetch }),
      appProvider(op.issuer, 'client_secret_basic', 'op-b', { checks }),
    ] as never,
  })
}

/** The sign-in ended in an error redirect with no session, and the provider issued no tokens. */
async function expectRefused(client: Client, response: Response, tokenRequestsBefore?: number) {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toMatch(new RegExp(`^${ORIGIN}/auth/(error|signin)\\?error=\\w+$`))
  expect(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
  expect((await client.session()).body).toBeNull()
  if (tokenRequestsBefore !== undefined) expect(op.tokenRequests, 'no code exchange').toBe(tokenRequestsBefore)
}

async function expectSignedIn(client: Client, response: Response) {
  expect(response.headers.get('location')).toBe(ORIGIN)
  expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
}

describe('a sign-in request naming protected authorization parameters', () => {
  const forged = {
    redirect_uri: EVIL_CALLBACK,
    response_type: 'token',
    client_id: 'evil-client',
    state: 'attacker-state',
    nonce: 'attacker-nonce',
    code_challenge: 'attacker-challenge',
    code_challenge_method: 'plain',
    request: 'attacker.request.object',
    request_uri: 'https://evil.example/request',
  }

  it('never puts them in the authorization URL, while an ordinary parameter passes', async () => {
    const client = new Client(config())
    const url = new URL(await startSignIn(client, 'op', { query: { ...forged, prompt: 'login', login_hint: 'alice' } }))
    const params = url.searchParams
    expect(params.getAll('redirect_uri')).toEqual([`${CALLBACK_BASE}op`])
    expect(params.getAll('response_type')).toEqual(['code'])
    expect(params.getAll('client_id')).toEqual(['op'])
    expect(params.getAll('code_challenge_method')).toEqual(['S256'])
    for (const [key, value] of Object.entries(forged)) {
      expect(params.getAll(key), key).not.toContain(value)
    }
    expect(params.has('request')).toBe(false)
    expect(params.has('request_uri')).toBe(false)
    expect(params.get('prompt')).toBe('login')
    expect(params.get('login_hint')).toBe('alice')
    expect(params.has('callbackUrl')).toBe(false)
  })

  it('still signs in at the provider with our redirect_uri, whatever the request named', async () => {
    const client = new Client(config())
    const authorizationUrl = await startSignIn(client, 'op', { query: { redirect_uri: EVIL_CALLBACK } })
    const answer = await visitProvider(authorizationUrl, CALLBACK_BASE)
    // The provider sends the code where the authorization URL said: to us, never to evil.example.
    expect(answer.url.href.startsWith(`${CALLBACK_BASE}op?`)).toBe(true)
    await expectSignedIn(client, await deliverCallback(client, answer))
  })
})

/** A started sign-in: the client with its flow cookie, and the provider's answer not yet delivered. */
async function startedSignIn(providerId = 'op') {
  const client = new Client(config())
  const answer = await visitProvider(await startSignIn(client, providerId), CALLBACK_BASE)
  return { client, answer, envelope: client.jar.get(STATE_COOKIE)! }
}

async function deliverWith(change: (claims: EnvelopeClaims) => EnvelopeClaims) {
  const { client, answer, envelope } = await startedSignIn()
  client.jar.cookies.set(STATE_COOKIE, await reseal(envelope, SECRET, STATE_COOKIE, change))
  const before = op.tokenRequests
  return { client, before, response: await deliverCallback(client, answer) }
}

describe('a callback whose flow cookie was resealed with one claim changed', () => {
  it('completes when nothing was changed (the resealing itself is faithful)', async () => {
    const { client, response } = await deliverWith((claims) => claims)
    await expectSignedIn(client, response)
  })

  it('is refused when only the audience names another flow', async () => {
    const { client, before, response } = await deliverWith((claims) => ({ ...claims, aud: 'credentials-signin' }))
    await expectRefused(client, response, before)
  })

  it('is refused when the audience is missing', async () => {
    const { client, before, response } = await deliverWith(({ aud: _aud, ...claims }) => claims)
    await expectRefused(client, response, before)
  })

  it('is refused when only the sealed flow id names another flow', async () => {
    const { client, before, response } = await deliverWith((claims) => ({
      ...claims,
      env: { ...claims.env, id: 'credentials-signin' },
    }))
    await expectRefused(client, response, before)
  })

  it('is refused when only the provider binding names another provider', async () => {
    const { client, before, response } = await deliverWith((claims) => ({ ...claims, sub: 'op-b' }))
    await expectRefused(client, response, before)
  })

  it('is refused when the provider binding is missing', async () => {
    const { client, before, response } = await deliverWith(({ sub: _sub, ...claims }) => claims)
    await expectRefused(client, response, before)
  })
})

describe('a flow cookie used twice', () => {
  it('completes the first callback and refuses a second tab delivering the same answer', async () => {
    const { client, answer, envelope } = await startedSignIn()
    await expectSignedIn(client, await deliverCallback(client, answer))
    const second = new Client(client.config)
    second.jar.cookies.set(STATE_COOKIE, envelope)
    const before = op.tokenRequests
    await expectRefused(second, await deliverCallback(second, answer), before)
  })

})

/** The parts of a compact JWS. */
const partsOf = (jws: string) => jws.split('.') as [string, string, string]

describe('an ID token whose signature does not verify', () => {
  it('is refused when one byte of an otherwise valid signature is changed', async () => {
    rewriteIdToken = (idToken) => {
      const [header, payload, signature] = partsOf(idToken)
      const bytes = base64url.decode(signature)
      bytes[bytes.length - 1]! ^= 0x01
      return `${header}.${payload}.${base64url.encode(bytes)}`
    }
    const { client, answer } = await startedSignIn()
    await expectRefused(client, await deliverCallback(client, answer))
  })

  it("is refused when the provider's signature of one token is moved onto other claims", async () => {
    rewriteIdToken = (idToken) => {
      const [header, , signature] = partsOf(idToken)
      const claims = { ...decodeJwt(idToken), email: 'mallory@example.com', sub: 'mallory' }
      return `${header}.${base64url.encode(JSON.stringify(claims))}.${signature}`
    }
    const { client, answer } = await startedSignIn()
    await expectRefused(client, await deliverCallback(client, answer))
  })
})
