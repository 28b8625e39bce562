/**
 * Second, independent tests for the OAuth sign-in's checks, against the in-process stand-in
 * provider (test/mutation/oauth-standin.ts), fast enough to rerun under every mutant: the
 * protected authorization parameters, the sealed flow's audience, flow id, provider binding and
 * single use (each changed alone in a real envelope, resealed with the secret), and the ID token's
 * signature (a valid token's signature broken, a valid signature moved onto other claims). Attacks
 * on the callback against the real OpenID Provider (a tampered, replayed or other provider's flow
 * cookie, forged ID tokens) are in test/oauth/attacks.test.ts.
 */
import { base64url, decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { customFetch } from '../../core/index.js'
import { Client, ORIGIN, SECRET, testConfig } from '../fixtures/http.js'
import { answerTo, standIn, standInProvider, startAt, type StandIn } from './oauth-standin.js'
import { reseal, type EnvelopeClaims } from './reseal.js'

const STATE_COOKIE = '__Secure-authjs.state'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const EVIL_CALLBACK = 'https://evil.example/cb'
const OUR_CALLBACK = `${ORIGIN}/auth/callback/standin`

/** A fetch to the stand-in that rewrites the ID token of token responses (a network attacker, a broken provider). */
function rewritingFetch(op: StandIn, rewrite: (idToken: string) => string): typeof fetch {
  return async (input, init) => {
    const response = await op.fetch(input, init)
    const url = input instanceof Request ? input.url : String(input)
    if (!url.endsWith('/token') || !response.ok) return response
    const body = (await response.json()) as Record<string, unknown>
    body.id_token = rewrite(String(body.id_token))
    return Response.json(body, { status: response.status })
  }
}

/** The stand-in as two providers of the app ("standin", "standin-b"); the first through `fetchImpl` when given. */
function config(op: StandIn, fetchImpl?: typeof fetch) {
  return testConfig({
    providers: [
      standInProvider(op, fetchImpl ? { [customFetch]: fetchImpl } : {}),
      standInProvider(op, { id: 'standin-b', name: 'Stand-in B' }),
    ] as never,
  })
}

/** The sign-in ended in an error redirect with no session, and the provider issued no tokens. */
async function expectRefused(client: Client, response: Response, op: StandIn, tokenRequestsBefore?: number) {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toMatch(new RegExp(`^${ORIGIN}/auth/(error|signin)\\?error=\\w+$`))
  expect(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
  expect((await client.session()).body).toBeNull()
  if (tokenRequestsBefore !== undefined) expect(op.seen.token, 'no code exchange').toBe(tokenRequestsBefore)
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
    const response = await startAt(new Client(config(standIn())), { ...forged, prompt: 'login', login_hint: 'alice' })
    const params = new URL(response.headers.get('location')!).searchParams
    expect(params.getAll('redirect_uri')).toEqual([OUR_CALLBACK])
    expect(params.getAll('response_type')).toEqual(['code'])
    expect(params.getAll('client_id')).toEqual(['standin'])
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

  it('still signs in with our redirect_uri at the token endpoint, whatever the request named', async () => {
    const op = standIn()
    const client = new Client(config(op))
    const start = await startAt(client, { redirect_uri: EVIL_CALLBACK })
    const callback = await client.send({ path: '/callback/standin', query: answerTo(start.headers.get('location')!) })
    await expectSignedIn(client, callback)
    expect(op.seen.tokenBodies.map((body) => body.get('redirect_uri'))).toEqual([OUR_CALLBACK])
  })
})

/** A started sign-in: the client with its flow cookie, and the provider's answer not yet delivered. */
async function startedSignIn(op: StandIn, fetchImpl?: typeof fetch) {
  const client = new Client(config(op, fetchImpl))
  const start = await startAt(client)
  return { client, answer: answerTo(start.headers.get('location')!), envelope: client.jar.get(STATE_COOKIE)! }
}

const deliver = (client: Client, answer: Record<string, string>) => client.send({ path: '/callback/standin', query: answer })

async function deliverWith(change: (claims: EnvelopeClaims) => EnvelopeClaims) {
  const op = standIn()
  const { client, answer, envelope } = await startedSignIn(op)
  client.jar.cookies.set(STATE_COOKIE, await reseal(envelope, SECRET, STATE_COOKIE, change))
  const before = op.seen.token
  return { op, client, before, response: await deliver(client, answer) }
}

describe('a callback whose flow cookie was resealed with one claim changed', () => {
  it('completes when nothing was changed (the resealing itself is faithful)', async () => {
    const { client, response } = await deliverWith((claims) => claims)
    await expectSignedIn(client, response)
  })

  it('is refused when only the audience names another flow', async () => {
    const { op, client, before, response } = await deliverWith((claims) => ({ ...claims, aud: 'credentials-signin' }))
    await expectRefused(client, response, op, before)
  })

  it('is refused when the audience is missing', async () => {
    const { op, client, before, response } = await deliverWith(({ aud: _aud, ...claims }) => claims)
    await expectRefused(client, response, op, before)
  })

  it('is refused when only the sealed flow id names another flow', async () => {
    const { op, client, before, response } = await deliverWith((claims) => ({
      ...claims,
      env: { ...claims.env, id: 'credentials-signin' },
    }))
    await expectRefused(client, response, op, before)
  })

  it('is refused when only the provider binding names another provider', async () => {
    const { op, client, before, response } = await deliverWith((claims) => ({ ...claims, sub: 'standin-b' }))
    await expectRefused(client, response, op, before)
  })

  it('is refused when the provider binding is missing', async () => {
    const { op, client, before, response } = await deliverWith(({ sub: _sub, ...claims }) => claims)
    await expectRefused(client, response, op, before)
  })
})

describe('a flow cookie used twice', () => {
  it('completes the first callback and refuses a second tab delivering the same answer', async () => {
    const op = standIn()
    const { client, answer, envelope } = await startedSignIn(op)
    await expectSignedIn(client, await deliver(client, answer))
    const second = new Client(client.config)
    second.jar.cookies.set(STATE_COOKIE, envelope)
    const before = op.seen.token
    await expectRefused(second, await deliver(second, answer), op, before)
  })
})

/** The parts of a compact JWS. */
const partsOf = (jws: string) => jws.split('.') as [string, string, string]

describe('an ID token whose signature does not verify', () => {
  it('is refused when one byte of an otherwise valid signature is changed', async () => {
    const op = standIn()
    const flipped = rewritingFetch(op, (idToken) => {
      const [header, payload, signature] = partsOf(idToken)
      const bytes = base64url.decode(signature)
      bytes[bytes.length - 1]! ^= 0x01
      return `${header}.${payload}.${base64url.encode(bytes)}`
    })
    const { client, answer } = await startedSignIn(op, flipped)
    await expectRefused(client, await deliver(client, answer), op)
  })

  it("is refused when the provider's signature of one token is moved onto other claims", async () => {
    const op = standIn()
    const moved = rewritingFetch(op, (idToken) => {
      const [header, , signature] = partsOf(idToken)
      const claims = { ...decodeJwt(idToken), email: 'mallory@example.com', sub: 'mallory' }
      return `${header}.${base64url.encode(JSON.stringify(claims))}.${signature}`
    })
    const { client, answer } = await startedSignIn(op, moved)
    await expectRefused(client, await deliver(client, answer), op)
  })
})
