/**
 * Verifying a service token at the module, attacks first: the Authorization header read strictly,
 * a token signed with our key but with a header or claims we did not write, an account that is
 * not the token's, an adapter that throws (503, never a pass), and the scopes a token may still use.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose'
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { createServiceAccount, serviceAccountRoutes, serviceAccounts, verifyServiceToken } from '../../core/service-accounts.js'
import { algorithmOf, derivedSigningJwk, ourKeys } from '../../core/service-accounts/keys.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import { checkNewServiceAccount } from '../../core/service-accounts/manage.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { ORIGIN, SECRET, testConfig } from '../fixtures/http.js'

const ISSUER = `${ORIGIN}/auth`
const config = (adapter = MemoryAdapter(createMemoryStore())) =>
  testConfig({ adapter, store: memoryAuthStore(), serviceAccounts: serviceAccounts({ issuer: ISSUER }) })
const request = (authorization?: string) => new Request(`${ORIGIN}/api`, { headers: authorization === undefined ? {} : { authorization } })

async function account(auth: AuthConfig, scopes = ['reports:read', 'reports:write']) {
  const issued = (await createServiceAccount(auth, 'user-alice', { name: 'sync', scopes }))!
  return { clientId: issued.clientId, secret: issued.clientSecret! }
}

async function tokenFor(auth: AuthConfig, clientId: string, secret: string, scope?: string) {
  const body = new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) })
  const response = (await serviceAccountRoutes(
    new Request(`${ISSUER}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${clientId}:${secret}`)}` },
      body,
    }),
    auth,
  ))!
  return ((await response.json()) as { access_token: string }).access_token
}

/** A token signed with our own key, with the header and claims the test chooses (`undefined` drops one). */
async function signed(claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  const jwk = await derivedSigningJwk(SECRET)
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x }, 'sha256')
  const now = Math.floor(Date.now() / 1000)
  const all = { iss: ISSUER, aud: ISSUER, iat: now, exp: now + 60, jti: 'j-1', scope: 'reports:read', ...claims }
  const kept = Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined))
  return new SignJWT(kept).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid, ...header }).sign(await importJWK(jwk as JWK, 'EdDSA'))
}

async function answer(auth: AuthConfig, authorization?: string, options = {}) {
  const verified = await verifyServiceToken(request(authorization), auth, options)
  if (verified.ok) return { ok: true as const, token: verified.token }
  return { status: verified.status, challenge: verified.response.headers.get('www-authenticate'), body: await verified.response.json(), retryAfter: verified.response.headers.get('retry-after') }
}
const INVALID = { status: 401, challenge: 'Bearer error="invalid_token"', body: { error: 'invalid_token' }, retryAfter: null }

describe('the Authorization header', () => {
  it('asks for a token when there is none, and refuses one that is not a bearer token as invalid', async () => {
    const auth = config()
    expect(await answer(auth)).toEqual({ status: 401, challenge: 'Bearer', body: { error: 'invalid_request' }, retryAfter: null })
    expect(await answer(auth, '   ')).toEqual({ status: 401, challenge: 'Bearer', body: { error: 'invalid_request' }, retryAfter: null })
    for (const value of ['Basic abc', 'Bearer', 'Bearer a b', 'xBearer abc', 'Bearer abc!', 'Bearerabc']) expect(await answer(auth, value), value).toEqual(INVALID)
  })

  it('reads a bearer token whatever the case of the scheme, the spaces after it, or around the value', async () => {
    const auth = config()
    const { clientId, secret } = await account(auth)
    const token = await tokenFor(auth, clientId, secret)
    for (const value of [`Bearer ${token}`, `bearer  ${token}`, ` Bearer ${token} `]) expect((await answer(auth, value)).ok, value).toBe(true)
    expect(await answer(auth, `Bearer ${token}x`)).toEqual(INVALID)
    expect(await answer(auth, `x Bearer ${token}`)).toEqual(INVALID)
  })
})

describe('a token signed with our key but not written by us', () => {
  it('is refused with a header we do not write: a kid that is no string or not ours', async () => {
    const auth = config()
    const { clientId } = await account(auth)
    const claims = { sub: clientId, client_id: clientId }
    expect((await answer(auth, `Bearer ${await signed(claims)}`)).ok).toBe(true)
    expect(await answer(auth, `Bearer ${await signed(claims, { kid: 7 })}`)).toEqual(INVALID)
    expect(await answer(auth, `Bearer ${await signed(claims, { alg: 'EdDSA', kid: 'unknown' })}`)).toEqual(INVALID)
  })

  it('is refused without each claim we always write, or with a subject that is not its client', async () => {
    const auth = config()
    const { clientId } = await account(auth)
    for (const missing of ['exp', 'iat', 'jti', 'sub', 'client_id']) {
      expect(await answer(auth, `Bearer ${await signed({ sub: clientId, client_id: clientId, [missing]: undefined })}`), missing).toEqual(INVALID)
    }
    expect(await answer(auth, `Bearer ${await signed({ sub: clientId, client_id: 'another' })}`)).toEqual(INVALID)
    expect(await answer(auth, `Bearer ${await signed({ sub: clientId, client_id: clientId, jti: 5 })}`)).toEqual(INVALID)
  })
})

describe('the account behind a token', () => {
  it('refuses a token whose account the adapter answers with another id, or not at all', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const real = adapter.getServiceAccount!.bind(adapter)
    let answerFor: (id: string) => ReturnType<typeof real> = real
    adapter.getServiceAccount = (id) => answerFor(id)
    const auth = config(adapter)
    const { clientId, secret } = await account(auth)
    const { clientId: other } = await account(auth)
    const token = await tokenFor(auth, clientId, secret)
    answerFor = () => real(other)
    expect(await answer(auth, `Bearer ${token}`)).toEqual(INVALID)
    answerFor = async () => null
    expect(await answer(auth, `Bearer ${token}`)).toEqual(INVALID)
  })

  it('answers 503 with Retry-After when the adapter cannot answer, never letting the token through', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const real = adapter.getServiceAccount!.bind(adapter)
    let down = false
    adapter.getServiceAccount = (id) => (down ? Promise.reject(new Error('database down')) : real(id))
    const auth = config(adapter)
    const { clientId, secret } = await account(auth)
    const token = await tokenFor(auth, clientId, secret)
    down = true
    expect(await answer(auth, `Bearer ${token}`)).toEqual({ status: 503, challenge: null, body: { error: 'temporarily_unavailable' }, retryAfter: '5' })
  })

  it('hands the route the scopes the token may still use, its account, user and no organisation', async () => {
    const auth = config()
    const { clientId, secret } = await account(auth)
    const token = await tokenFor(auth, clientId, secret, 'reports:read reports:write')
    const verified = await answer(auth, `Bearer ${token}`, { scopes: ['reports:read'] })
    expect(verified).toMatchObject({ ok: true, token: { serviceAccountId: clientId, userId: 'user-alice', organizationId: null, scopes: ['reports:read', 'reports:write'] } })
    const spaced = await signed({ sub: clientId, client_id: clientId, scope: 'reports:read  unknown ' })
    expect(await answer(auth, `Bearer ${spaced}`)).toMatchObject({ ok: true, token: { scopes: ['reports:read'] } })
    const none = await signed({ sub: clientId, client_id: clientId, scope: undefined })
    expect(await answer(auth, `Bearer ${none}`)).toMatchObject({ ok: true, token: { scopes: [] } })
    expect(await answer(auth, `Bearer ${none}`, { scopes: ['reports:read', 'reports:write'] })).toEqual({
      status: 403,
      challenge: 'Bearer error="insufficient_scope", scope="reports:read reports:write"',
      body: { error: 'insufficient_scope' },
      retryAfter: null,
    })
  })

  it('checks the audience the route names instead of the configured one', async () => {
    const auth = config()
    const { clientId } = await account(auth)
    const token = await signed({ sub: clientId, client_id: clientId, aud: 'https://api.example' })
    expect(await answer(auth, `Bearer ${token}`)).toEqual(INVALID)
    expect((await answer(auth, `Bearer ${token}`, { audience: 'https://api.example' })).ok).toBe(true)
  })

  it('refuses a configuration without service accounts', async () => {
    await expect(verifyServiceToken(request('Bearer x'), testConfig())).rejects.toThrow(TypeError)
  })
})

describe('a new service account’s input', () => {
  const valid = { name: 'sync', scopes: ['reports:read'] }
  const x = 'A'.repeat(43)

  it('keeps what is valid, each scope once, and only the public members of a key', () => {
    expect(checkNewServiceAccount({ ...valid, scopes: ['reports:read', 'reports:read'] })).toStrictEqual({ name: 'sync', scopes: ['reports:read'] })
    expect(checkNewServiceAccount({ ...valid, clientSecret: false, publicJwk: { kty: 'OKP', crv: 'Ed25519', x, use: 'sig', alg: 'EdDSA' } })).toStrictEqual({
      ...valid,
      clientSecret: false,
      publicJwk: { kty: 'OKP', crv: 'Ed25519', x },
    })
    expect(checkNewServiceAccount({ ...valid, publicJwk: { kty: 'EC', crv: 'P-256', x, y: x, kid: 'k' } }).publicJwk).toStrictEqual({ kty: 'EC', crv: 'P-256', x, y: x })
    const n = 'B'.repeat(342)
    expect(checkNewServiceAccount({ ...valid, publicJwk: { kty: 'RSA', n, e: 'AQAB' } }).publicJwk).toStrictEqual({ kty: 'RSA', n, e: 'AQAB' })
  })

  it.each([
    ['a private key', { kty: 'OKP', crv: 'Ed25519', x, d: x }],
    ['an RSA private key', { kty: 'RSA', n: 'B'.repeat(342), e: 'AQAB', p: x }],
    ['a symmetric key', { kty: 'oct', k: x }],
  ])('refuses %s', (_, publicJwk) => expect(() => checkNewServiceAccount({ ...valid, publicJwk })).toThrow('a service account registers a public key only'))

  it.each([
    ['X25519', { kty: 'OKP', crv: 'X25519', x }],
    ['Ed25519 without x', { kty: 'OKP', crv: 'Ed25519' }],
    ['an x that is not base64url', { kty: 'OKP', crv: 'Ed25519', x: 'a+b' }],
    ['an x too long', { kty: 'OKP', crv: 'Ed25519', x: 'A'.repeat(1025) }],
    ['P-384', { kty: 'EC', crv: 'P-384', x, y: x }],
    ['P-256 without y', { kty: 'EC', crv: 'P-256', x }],
    ['P-256 without x', { kty: 'EC', crv: 'P-256', y: x }],
    ['RSA under 2048 bits', { kty: 'RSA', n: 'B'.repeat(341), e: 'AQAB' }],
    ['RSA without e', { kty: 'RSA', n: 'B'.repeat(342) }],
    ['RSA without n', { kty: 'RSA', e: 'AQAB' }],
    ['no object', 'a key'],
    ['EC members under OKP', { kty: 'OKP', crv: 'P-256', x, y: x }],
  ])('refuses a key that is %s', (_, publicJwk) =>
    expect(() => checkNewServiceAccount({ ...valid, publicJwk })).toThrow('a service-account public key is an Ed25519, P-256 or RSA (2048 bits or more) public JWK'),
  )

  it.each([
    [{ name: '' }, 'a service account name is 1 to 100 characters'],
    [{ name: '   ' }, 'a service account name is 1 to 100 characters'],
    [{ name: 'n'.repeat(101) }, 'a service account name is 1 to 100 characters'],
    [{ name: 7 }, 'a service account name is 1 to 100 characters'],
    [{ scopes: 'reports:read' }, 'service account scopes are at most'],
    [{ scopes: [7] }, 'service account scopes are at most'],
    [{ scopes: ['no action'] }, 'service account scopes are at most'],
    [{ organizationId: 7 }, 'a service account organizationId is an organisation id'],
    [{ organizationId: 'not an id!' }, 'a service account organizationId is an organisation id'],
    [{ clientSecret: 'yes' }, 'a service account clientSecret is true or false'],
  ])('refuses %j', (change, message) => expect(() => checkNewServiceAccount({ ...valid, ...change })).toThrow(message))

  it('takes a name of 100 characters', () => {
    expect(checkNewServiceAccount({ ...valid, name: 'n'.repeat(100) }).name).toHaveLength(100)
    expect(() => checkNewServiceAccount(null)).toThrow('a service account name is 1 to 100 characters')
  })
})

describe('our signing keys', () => {
  const x = 'A'.repeat(43)

  it('are Ed25519 or P-256 JWKs with their public members, and nothing else', () => {
    expect(algorithmOf({ kty: 'OKP', crv: 'Ed25519', x } as never)).toBe('EdDSA')
    expect(algorithmOf({ kty: 'EC', crv: 'P-256', x, y: x } as never)).toBe('ES256')
    for (const jwk of [
      { kty: 'OKP', crv: 'X25519', x },
      { kty: 'EC', crv: 'Ed25519', x },
      { kty: 'OKP', crv: 'Ed25519' },
      { kty: 'EC', crv: 'P-256', x },
      { kty: 'EC', crv: 'P-256', y: x },
      { kty: 'EC', crv: 'P-384', x, y: x },
      { kty: 'OKP', crv: 'P-256', x, y: x },
      { kty: 'RSA', crv: 'P-256', x, y: x },
    ]) {
      expect(() => algorithmOf(jwk as never), JSON.stringify(jwk)).toThrow('a service-account signing key is an Ed25519 (OKP) or P-256 (EC) JWK')
    }
  })

  it('derive a different key from each secret, and the same one from the same secret', async () => {
    const a = await derivedSigningJwk(SECRET)
    expect(await derivedSigningJwk(SECRET)).toEqual(a)
    expect((await derivedSigningJwk(`${SECRET}-other`)).x).not.toBe(a.x)
    expect(a).toMatchObject({ kty: 'OKP', crv: 'Ed25519' })
  })

  it('publish the public part of each key for signatures, once each', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    const signing = { ...(await exportJWK(privateKey)), kid: 'k-1' }
    const publicOnly = { kty: 'OKP', crv: 'Ed25519', x: (await derivedSigningJwk(SECRET)).x }
    const auth = testConfig({ adapter: MemoryAdapter(createMemoryStore()), store: memoryAuthStore(), serviceAccounts: serviceAccounts({ issuer: ISSUER, signingKeys: [signing, publicOnly, signing] as never }) })
    const keys = await ourKeys(assertConfig(auth))
    expect(keys.jwks.keys.map((key) => [key.kid, key.alg, key.use, 'd' in key])).toEqual([
      ['k-1', 'ES256', 'sig', false],
      [expect.any(String), 'EdDSA', 'sig', false],
    ])
  })
})
