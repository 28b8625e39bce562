/**
 * DPoP and pushed authorization requests through `Auth`, against the in-process stand-in provider
 * (fast enough for every mutant of the dpop-par group): the sealed key pair (its own salt, its
 * lifetime, what it must hold), the proofs of the code exchange and the one retry a nonce
 * challenge earns, and the browser sent to the provider with `client_id` and a fresh `request_uri`
 * only, the parameters pushed over the back channel with the client's authentication.
 */
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK } from 'jose'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { customFetch } from '../../core/index.js'
import { decode, encode, type JWT } from '../../core/jwt.js'
import { generateDPoPKeyPair, openDPoPKeyPair, sealDPoPKeyPair } from '../../core/oauth/dpop.js'
import { pushAuthorizationRequest } from '../../core/oauth/par.js'
import { resolveOAuthProvider, type OAuthConfig } from '../../core/oauth/provider.js'
import { authorizationServer } from '../../core/oauth/server.js'
import { Client, ORIGIN, SECRET, testConfig } from '../fixtures/http.js'
import { ISSUER, standIn, STANDIN_SECRET, standInProvider, startAt, type StandIn } from './oauth-standin.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
/** The salt every sealed DPoP key pair was written with: sessions sealed by an earlier release must still open. */
const DPOP_KEY_SALT = 'authchart.dpop-key'
/** The field of a session's `oauth` claim that keeps the sealed key pair (sessions already issued carry it). */
const DPOP_KEY_FIELD = 'dpop_key'

afterEach(() => {
  vi.useRealTimers()
})

describe('a sealed DPoP key pair', () => {
  it('is sealed under its own salt: one sealed by an earlier release opens, and it is no session cookie', async () => {
    const keyPair = await generateDPoPKeyPair()
    const earlier = await encode({
      token: { k: await crypto.subtle.exportKey('jwk', keyPair.privateKey) } as unknown as JWT,
      secret: SECRET,
      salt: DPOP_KEY_SALT,
      maxAge: 60,
    })
    const opened = await openDPoPKeyPair(earlier, [SECRET])
    expect(await exportJWK(opened.publicKey)).toEqual(await exportJWK(keyPair.publicKey))
    const sealed = await sealDPoPKeyPair(keyPair, [SECRET], 60)
    expect(await decode({ token: sealed, secret: SECRET, salt: DPOP_KEY_SALT })).toMatchObject({ k: { kty: 'EC', d: expect.any(String) } })
    await expect(decode({ token: sealed, secret: SECRET, salt: SESSION_COOKIE })).rejects.toThrow()
  })

  it('opens with any of the secrets, and no longer once its lifetime is over', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const start = Date.now()
    const sealed = await sealDPoPKeyPair(await generateDPoPKeyPair(), [SECRET], 60)
    await expect(openDPoPKeyPair(sealed, ['a-newer-secret-that-is-long-enough-0123456789', SECRET])).resolves.toHaveProperty('privateKey')
    vi.setSystemTime(start + 120_000)
    await expect(openDPoPKeyPair(sealed, [SECRET])).rejects.toThrow('the sealed DPoP key pair does not open')
  })

  it('gives a public key the proofs can carry, and a private key that signs only', async () => {
    const opened = await openDPoPKeyPair(await sealDPoPKeyPair(await generateDPoPKeyPair(), [SECRET], 60), [SECRET])
    expect(await exportJWK(opened.publicKey)).toMatchObject({ kty: 'EC', crv: 'P-256' })
    expect(opened.privateKey.usages).toEqual(['sign'])
    expect(opened.publicKey.usages).toEqual(['verify'])
  })

  const sealedHolding = async (k: unknown) => encode({ token: { k } as unknown as JWT, secret: SECRET, salt: DPOP_KEY_SALT, maxAge: 60 })

  it.each([
    ['no seal at all (an empty string)', async () => ''],
    ['nothing', async () => sealedHolding(undefined)],
    ['an RSA private key', async () => sealedHolding(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey))],
    ['an EC public key only', async () => sealedHolding(await exportJWK((await generateDPoPKeyPair()).publicKey))],
  ])('refuses a seal holding %s', async (_name, seal) => {
    await expect(openDPoPKeyPair(await seal(), [SECRET])).rejects.toThrow(new TypeError('the sealed DPoP key pair holds no EC private key'))
  })
})

interface Seen {
  token: { headers: Headers; body: URLSearchParams }[]
  par: { headers: Headers; body: URLSearchParams }[]
}

/**
 * The stand-in with a DPoP-binding token endpoint (which may ask for a nonce first) and a PAR
 * endpoint; `asksForNonce` is how many token requests are refused with `use_dpop_nonce`.
 */
function provider({ asksForNonce = 0, par = false, parAnswer }: { asksForNonce?: number; par?: boolean; parAnswer?: () => Response } = {}) {
  const op: StandIn = standIn()
  op.behaviour.token = { access_token: 'bound-at', token_type: 'DPoP', refresh_token: 'rt', expires_in: 600 }
  if (par) op.behaviour.discovery.pushed_authorization_request_endpoint = `${ISSUER}/par`
  const seen: Seen = { token: [], par: [] }
  let pushed = 0
  let refusals = 0
  const fetching: typeof fetch = async (input, init) => {
    const request = new Request(input, init)
    if (request.url === `${ISSUER}/par`) {
      seen.par.push({ headers: request.headers, body: new URLSearchParams(await request.clone().text()) })
      if (parAnswer) return parAnswer()
      pushed += 1
      return Response.json({ request_uri: `urn:ietf:params:oauth:request_uri:pushed-${pushed}`, expires_in: 60 }, { status: 201 })
    }
    if (request.url === `${ISSUER}/token`) {
      seen.token.push({ headers: request.headers, body: new URLSearchParams(await request.clone().text()) })
      if (refusals < asksForNonce) {
        refusals += 1
        return Response.json(
          { error: 'use_dpop_nonce', error_description: 'Authorization server requires nonce in DPoP proof' },
          { status: 400, headers: { 'dpop-nonce': `nonce-${refusals}` } },
        )
      }
    }
    return op.fetch(request)
  }
  const config = testConfig({
    providers: [standInProvider(op, { [customFetch]: fetching, dpop: true, refreshTokens: true, par })] as never,
  })
  return { op, seen, config }
}

/** The provider's answer to a pushed request: the code names the PKCE challenge and nonce it was pushed. */
const answerToPushed = (pushed: URLSearchParams) => ({
  code: `${pushed.get('code_challenge')}~${pushed.get('nonce')}`,
  state: pushed.get('state')!,
})

/** Signs in through a PAR provider: start, the provider's answer to what was pushed, the callback. */
async function signInPushed(client: Client, seen: Seen) {
  const start = await startAt(client)
  const callback = await client.send({ path: '/callback/standin', query: answerToPushed(seen.par.at(-1)!.body) })
  return { start, callback }
}

const sessionClaims = async (client: Client) => (await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE }))!

describe('DPoP through Auth', () => {
  it("sends the code exchange with a proof of the key pair the session keeps, sealed", async () => {
    const { seen, config } = provider({ par: true })
    const client = new Client(config)
    const { callback } = await signInPushed(client, seen)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(seen.token).toHaveLength(1)
    const proof = seen.token[0]!.headers.get('dpop')!
    expect(decodeJwt(proof)).toMatchObject({ htm: 'POST', htu: `${ISSUER}/token` })
    const sealed = ((await sessionClaims(client)).oauth as Record<string, string>)[DPOP_KEY_FIELD]!
    const kept = await openDPoPKeyPair(sealed, [SECRET])
    expect(await calculateJwkThumbprint(decodeProtectedHeader(proof).jwk as JWK)).toBe(await calculateJwkThumbprint((await exportJWK(kept.publicKey)) as JWK))
  })

  it('sends once more, with the nonce, when the token endpoint asks for one', async () => {
    const { seen, config } = provider({ asksForNonce: 1, par: true })
    const { callback } = await signInPushed(new Client(config), seen)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(seen.token).toHaveLength(2)
    expect(decodeJwt(seen.token[0]!.headers.get('dpop')!).nonce).toBeUndefined()
    expect(decodeJwt(seen.token[1]!.headers.get('dpop')!).nonce).toBe('nonce-1')
  })

  it('does not loop on an endpoint that asks for a nonce every time: two requests, and no session', async () => {
    const { seen, config } = provider({ asksForNonce: 10, par: true })
    const client = new Client(config)
    const { callback } = await signInPushed(client, seen)
    expect(seen.token).toHaveLength(2)
    expect(callback.headers.get('location')).toContain('error=')
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })
})

describe('a pushed authorization request through Auth', () => {
  it('sends the browser to the authorization endpoint with client_id and the request_uri only', async () => {
    const { seen, config } = provider({ par: true })
    const start = await startAt(new Client(config))
    expect(start.headers.get('location')).toBe(
      `${ISSUER}/authorize?client_id=standin&request_uri=${encodeURIComponent('urn:ietf:params:oauth:request_uri:pushed-1')}`,
    )
    expect(seen.par).toHaveLength(1)
  })

  it("pushes the request's parameters over the back channel, with the client's authentication", async () => {
    const { seen, config } = provider({ par: true })
    await startAt(new Client(config))
    const { headers, body } = seen.par[0]!
    expect(headers.get('authorization')).toBe(`Basic ${btoa(`standin:${STANDIN_SECRET}`)}`)
    expect(Object.fromEntries(body)).toMatchObject({
      response_type: 'code',
      redirect_uri: `${ORIGIN}/auth/callback/standin`,
      code_challenge: expect.any(String),
      code_challenge_method: 'S256',
      state: expect.any(String),
      nonce: expect.any(String),
    })
  })

  it('pushes every sign-in anew: each browser gets a request_uri of its own', async () => {
    const { seen, config } = provider({ par: true })
    const first = await startAt(new Client(config))
    const second = await startAt(new Client(config))
    expect(seen.par).toHaveLength(2)
    const uri = (response: Response) => new URL(response.headers.get('location')!).searchParams.get('request_uri')
    expect(uri(first)).toBe('urn:ietf:params:oauth:request_uri:pushed-1')
    expect(uri(second)).toBe('urn:ietf:params:oauth:request_uri:pushed-2')
    expect(seen.par[0]!.body.get('state')).not.toBe(seen.par[1]!.body.get('state'))
  })

  it('sends no browser to the provider when the provider refuses the push', async () => {
    const { config } = provider({ par: true, parAnswer: () => Response.json({ error: 'invalid_request' }, { status: 400 }) })
    const start = await startAt(new Client(config))
    expect(start.headers.get('location')).not.toContain(ISSUER)
    expect(start.headers.get('location')).toContain('error=')
  })

  it('is refused at the module when the provider advertises no PAR endpoint', async () => {
    const op = standIn()
    const resolved = resolveOAuthProvider(standInProvider(op, { par: true }) as OAuthConfig<Record<string, unknown>>, undefined)
    const as = await authorizationServer(resolved)
    await expect(pushAuthorizationRequest(resolved, as, new URL(`${ISSUER}/authorize?state=s`))).rejects.toThrow(
      new TypeError('provider "standin" has `par: true` but advertises no pushed_authorization_request_endpoint'),
    )
  })
})
