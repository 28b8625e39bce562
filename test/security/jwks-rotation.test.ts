/**
 * JWKS key rotation (issue 11, item 12) against the real OpenID Provider: after the provider
 * retires its signing key and signs with a new `kid`, the next sign-in succeeds at once (OIDC Core
 * 10.1.1: an unfamiliar `kid` sends the relying party back to `jwks_uri`), while ID tokens naming
 * a forged `kid` cannot turn every callback into a JWKS fetch.
 */
import { decodeJwt, importJWK, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertConfig } from '../../core/config/resolve-config.js'
import { customFetch } from '../../core/index.js'
import { JWKS_REFETCH_INTERVAL_MS } from '../../core/oauth/server.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, expectOneKeySetRefetchPerInterval, opClient, signInThroughProvider } from '../oauth/helpers.js'

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({
    clients: [await opClient('client_secret_basic', 'op-rotate'), await opClient('client_secret_basic', 'op-forged')],
  })
})
afterAll(() => op?.close())

/** A fetch that counts the provider's JWKS downloads and can replace the ID token's `kid`. */
function observingFetch() {
  const seen = { jwks: 0, forgedKid: undefined as string | undefined }
  const fetcher: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input)
    if (url === `${op.issuer}/jwks`) seen.jwks += 1
    const response = await fetch(input, init)
    if (!seen.forgedKid || !url.endsWith('/token') || !response.ok) return response
    const body = (await response.json()) as Record<string, unknown>
    // Signed with the provider's real key: only the key id is foreign.
    const key = await importJWK(op.signingKey, 'RS256')
    body.id_token = await new SignJWT(decodeJwt(String(body.id_token)))
      .setProtectedHeader({ alg: 'RS256', kid: seen.forgedKid })
      .sign(key)
    return Response.json(body, { status: response.status, headers: response.headers })
  }
  return { seen, fetcher }
}

describe('a rotated provider signing key', () => {
  it('is accepted by the very next sign-in, with one fresh fetch of the key set', async () => {
    const { seen, fetcher } = observingFetch()
    const config = testConfig({
      providers: [appProvider(op.issuer, 'client_secret_basic', 'op-rotate', { [customFetch]: fetcher })] as never,
    })
    const first = await signInThroughProvider(new Client(config), 'op-rotate')
    expect(first.callback.headers.get('location')).toBe(ORIGIN)
    expect(seen.jwks).toBe(1)

    await op.rotateSigningKey()
    const client = new Client(config)
    const second = await signInThroughProvider(client, 'op-rotate')
    expect(second.callback.headers.get('location'), 'the rotated key is refused').toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(seen.jwks).toBe(2)
  })

  it('lets a forged kid cause at most one key-set fetch per interval, and is refused', async () => {
    const { seen, fetcher } = observingFetch()
    const config = testConfig({
      providers: [appProvider(op.issuer, 'client_secret_basic', 'op-forged', { [customFetch]: fetcher })] as never,
    })
    await signInThroughProvider(new Client(config), 'op-forged')
    expect(seen.jwks).toBe(1)

    seen.forgedKid = 'attacker-chosen-kid'
    const started = Date.now()
    for (let attempt = 0; attempt < 4; attempt++) {
      const client = new Client(config)
      const { callback } = await signInThroughProvider(client, 'op-forged')
      expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      expect((await client.session()).body).toBeNull()
    }
    const windows = 1 + Math.floor((Date.now() - started) / JWKS_REFETCH_INTERVAL_MS)
    const refetches = seen.jwks - 1
    expect(refetches, 'the unknown kid is looked up once').toBeGreaterThanOrEqual(1)
    expect(refetches, `refetches caused by four forged callbacks in ${windows} interval(s)`).toBeLessThanOrEqual(windows)
  })
})

describe('the key-set refetch limiter', () => {
  it('allows one refetch per provider per interval', () => {
    const config = assertConfig(
      testConfig({ providers: [appProvider('https://op.test', 'client_secret_basic', 'a'), appProvider('https://op.test', 'client_secret_basic', 'b')] as never }),
    )
    const [a, b] = config.providers.map((p) => p.oauth!)
    expectOneKeySetRefetchPerInterval(a!, b!, 1_000_000)
  })
})
