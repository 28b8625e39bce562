import { afterEach, describe, expect, it, vi } from 'vitest'
import { base64url, calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose'
import {
  createServiceAccount,
  listServiceAccounts,
  revokeServiceAccount,
  rotateServiceAccountSecret,
  serviceAccountRoutes,
  serviceAccounts,
  verifyServiceToken,
  type ServiceAccountsOptions,
} from '../../core/service-accounts.js'
import { derivedSigningJwk } from '../../core/service-accounts/keys.js'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Auth } from '../../core/auth.js'
import { ORIGIN, SECRET, testConfig } from '../fixtures/http.js'

const ALICE = 'user-alice'
const BOB = 'user-bob'
const ISSUER = `${ORIGIN}/auth`
const TOKEN_URL = `${ISSUER}/oauth/token`
const OTHER_SECRET = 'another-secret-that-is-long-enough-for-hkdf-9876543210'

type Secret = string | [string, ...string[]]

/** Instances of one application: separate configs over one adapter store and one server store. */
function cluster(options: Partial<ServiceAccountsOptions> = {}) {
  const data = createMemoryStore()
  const store = memoryAuthStore()
  const logs: unknown[] = []
  const make = (secret: Secret = SECRET, extra: Partial<ServiceAccountsOptions> = {}) => {
    const config = testConfig({ secret, adapter: MemoryAdapter(data), store, serviceAccounts: serviceAccounts({ issuer: ISSUER, ...options, ...extra }) })
    for (const level of ['error', 'warn', 'debug'] as const) config.logger[level].mockImplementation((...args: unknown[]) => void logs.push(args))
    return config
  }
  return { first: make(), second: make(), make, data, store, logs }
}

const basic = (id: string, secret: string) => `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`

function tokenRequest(form: Record<string, string>, headers: Record<string, string> = {}, body?: string) {
  return new Request(TOKEN_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: body ?? new URLSearchParams(form).toString(),
  })
}

async function postToken(config: AuthConfig, form: Record<string, string>, headers: Record<string, string> = {}, body?: string) {
  const response = (await serviceAccountRoutes(tokenRequest(form, headers, body), config))!
  return { response, body: (await response.json()) as Record<string, unknown> }
}

async function tokenFor(config: AuthConfig, clientId: string, secret: string, scope?: string): Promise<string> {
  const { response, body } = await postToken(config, { grant_type: 'client_credentials', ...(scope ? { scope } : {}) }, { authorization: basic(clientId, secret) })
  expect(response.status).toBe(200)
  return body.access_token as string
}

const api = (token: string) => new Request(`${ORIGIN}/api/reports`, { headers: { authorization: `Bearer ${token}` } })

async function newAccount(config: AuthConfig, userId = ALICE, scopes = ['reports:read', 'reports:write']) {
  const issued = (await createServiceAccount(config, userId, { name: 'billing-sync', scopes }))!
  return { clientId: issued.clientId, secret: issued.clientSecret! }
}

/** A token signed with our real key (derived from the secret), with claims and header of the test's choosing. */
async function ourSignedToken(claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  const jwk = await derivedSigningJwk(SECRET)
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x }, 'sha256')
  const key = await importJWK(jwk as JWK, 'EdDSA')
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ client_id: claims.sub, scope: 'reports:read', ...claims })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid, ...header })
    .setIssuer((claims.iss as string) ?? ISSUER)
    .setAudience((claims.aud as string) ?? ISSUER)
    .setIssuedAt((claims.iat as number) ?? now)
    .setExpirationTime((claims.exp as number) ?? now + 60)
    .setJti('j-1')
    .sign(key)
}

async function refused(config: AuthConfig, token: string) {
  const verified = await verifyServiceToken(api(token), config)
  expect(verified.ok).toBe(false)
  if (verified.ok) return
  expect(verified.status).toBe(401)
  expect(verified.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
}

afterEach(() => vi.restoreAllMocks())

describe('the client credentials grant', () => {
  it('issues an RFC 9068 access token for client_secret_basic that verifyServiceToken accepts', async () => {
    const { first } = cluster()
    const { clientId, secret } = await newAccount(first)
    const { response, body } = await postToken(first, { grant_type: 'client_credentials', scope: 'reports:read' }, { authorization: basic(clientId, secret) })
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 300, scope: 'reports:read' })
    const token = body.access_token as string
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt' })
    const claims = decodeJwt(token)
    expect(claims).toMatchObject({ iss: ISSUER, sub: clientId, aud: ISSUER, client_id: clientId, scope: 'reports:read' })
    expect(claims.exp! - claims.iat!).toBe(300)
    expect(typeof claims.jti).toBe('string')
    const verified = await verifyServiceToken(api(token), first, { scopes: ['reports:read'] })
    expect(verified.ok && verified.token).toMatchObject({ serviceAccountId: clientId, userId: ALICE, organizationId: null, scopes: ['reports:read'] })
  })

  it('accepts client_secret_post, grants every scope of the account when none is asked, and judges scopes on the token', async () => {
    const { first } = cluster()
    const { clientId, secret } = await newAccount(first)
    const { body } = await postToken(first, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret })
    expect(body.scope).toBe('reports:read reports:write')
    const narrow = await tokenFor(first, clientId, secret, 'reports:read')
    const verified = await verifyServiceToken(api(narrow), first, { scopes: ['reports:write'] })
    expect(!verified.ok && verified.status).toBe(403)
  })

  it('authenticates private_key_jwt with the registered key, once per assertion', async () => {
    const { first } = cluster()
    const { publicKey, privateKey } = await generateKeyPair('ES256')
    const issued = (await createServiceAccount(first, ALICE, { name: 'signer', scopes: ['reports:read'], publicJwk: (await exportJWK(publicKey)) as never }))!
    expect(issued.clientSecret).toBeUndefined()
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(issued.clientId)
      .setSubject(issued.clientId)
      .setAudience(TOKEN_URL)
      .setExpirationTime('2m')
      .setJti(crypto.randomUUID())
      .sign(privateKey)
    const form = { grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion }
    const accepted = await postToken(first, form)
    expect(accepted.response.status).toBe(200)
    expect((await verifyServiceToken(api(accepted.body.access_token as string), first)).ok).toBe(true)
    // Replayed, on this instance or another: the jti is spent in the shared store.
    const replayed = await postToken(first, form)
    expect(replayed.response.status).toBe(401)
    expect(replayed.body.error).toBe('invalid_client')
  })

  it("refuses an assertion made for another server, replayed here under that server's Host", async () => {
    const { first } = cluster()
    const { publicKey, privateKey } = await generateKeyPair('ES256')
    const issued = (await createServiceAccount(first, ALICE, { name: 'signer', scopes: ['reports:read'], publicJwk: (await exportJWK(publicKey)) as never }))!
    const elsewhere = 'https://other-server.example/auth/oauth/token'
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(issued.clientId)
      .setSubject(issued.clientId)
      .setAudience(elsewhere)
      .setExpirationTime('2m')
      .setJti(crypto.randomUUID())
      .sign(privateKey)
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion })
    const replayed = (await serviceAccountRoutes(
      new Request(elsewhere, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }),
      first,
    ))!
    expect(replayed.status).toBe(401)
  })

  it('refuses an assertion signed by another key, or HS256 with the public key as its secret', async () => {
    const { first } = cluster()
    const { publicKey } = await generateKeyPair('ES256')
    const attacker = await generateKeyPair('ES256')
    const publicJwk = await exportJWK(publicKey)
    const issued = (await createServiceAccount(first, ALICE, { name: 'signer', scopes: ['reports:read'], publicJwk: publicJwk as never }))!
    const claims = (builder: SignJWT) => builder.setIssuer(issued.clientId).setSubject(issued.clientId).setAudience(TOKEN_URL).setExpirationTime('2m').setJti(crypto.randomUUID())
    const forged = await claims(new SignJWT({}).setProtectedHeader({ alg: 'ES256' })).sign(attacker.privateKey)
    const hs = await claims(new SignJWT({}).setProtectedHeader({ alg: 'HS256' })).sign(new TextEncoder().encode(JSON.stringify(publicJwk)))
    for (const assertion of [forged, hs]) {
      const { response } = await postToken(first, { grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion })
      expect(response.status).toBe(401)
    }
  })

  it('answers the RFC 6749 errors: unsupported_grant_type, invalid_request, invalid_scope, invalid_client with its challenge', async () => {
    const { first } = cluster()
    const { clientId, secret } = await newAccount(first)
    const auth = { authorization: basic(clientId, secret) }
    expect((await postToken(first, { grant_type: 'password' }, auth)).body.error).toBe('unsupported_grant_type')
    expect((await postToken(first, {}, auth)).body.error).toBe('invalid_request')
    const repeated = await postToken(first, {}, auth, 'grant_type=client_credentials&grant_type=client_credentials')
    expect([repeated.response.status, repeated.body.error]).toEqual([400, 'invalid_request'])
    const json = (await serviceAccountRoutes(new Request(TOKEN_URL, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: '{"grant_type":"client_credentials"}' }), first))!
    expect(json.status).toBe(400)
    const twoMethods = await postToken(first, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret }, auth)
    expect(twoMethods.body.error).toBe('invalid_request')
    const beyond = await postToken(first, { grant_type: 'client_credentials', scope: 'reports:read admin:all' }, auth)
    expect([beyond.response.status, beyond.body.error]).toEqual([400, 'invalid_scope'])
    const wrong = await postToken(first, { grant_type: 'client_credentials' }, { authorization: basic(clientId, `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`) })
    expect([wrong.response.status, wrong.body.error]).toEqual([401, 'invalid_client'])
    expect(wrong.response.headers.get('www-authenticate')).toMatch(/^Basic realm=/)
    const unknown = await postToken(first, { grant_type: 'client_credentials' }, { authorization: basic('nosuchclient', secret) })
    expect([unknown.response.status, unknown.body]).toEqual([401, wrong.body])
    expect((await serviceAccountRoutes(new Request(TOKEN_URL), first))!.status).toBe(405)
    // A body past 16 KiB is refused without being read to its end, whatever its length header says.
    const oversized = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode(`grant_type=client_credentials&pad=${'a'.repeat(8192)}`))
      },
    })
    const flood = new Request(TOKEN_URL, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth }, body: oversized, duplex: 'half' } as RequestInit)
    const refusedFlood = (await serviceAccountRoutes(flood, first))!
    expect([refusedFlood.status, ((await refusedFlood.json()) as { error: string }).error]).toEqual([400, 'invalid_request'])
    expect(await serviceAccountRoutes(new Request(`${ISSUER}/session`), first)).toBeUndefined()
  })
})

describe('the routes served by Auth', () => {
  it('answers the token endpoint and the key set under the base path, and neither without serviceAccounts()', async () => {
    const { first } = cluster()
    const { clientId, secret } = await newAccount(first)
    const issued = await Auth(tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) }), first)
    expect(issued.status).toBe(200)
    const { access_token } = (await issued.json()) as { access_token: string }
    expect((await verifyServiceToken(api(access_token), first)).ok).toBe(true)
    const jwks = await Auth(new Request(`${ISSUER}/jwks`), first)
    expect(jwks.headers.get('content-type')).toBe('application/jwk-set+json')
    expect(((await jwks.json()) as { keys: JWK[] }).keys.map((key) => key.kid)).toContain(decodeProtectedHeader(access_token).kid)
    expect((await Auth(new Request(`${ISSUER}/session`), first)).status).toBe(200)
    const without = testConfig()
    expect((await Auth(tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) }), without)).status).toBe(400)
    expect((await Auth(new Request(`${ISSUER}/jwks`), without)).status).toBe(400)
  })
})

describe('verifyServiceToken (attacks)', () => {
  it('refuses a token with a forged kid without fetching anything', async () => {
    const { first } = cluster()
    const { clientId } = await newAccount(first)
    const fetch = vi.spyOn(globalThis, 'fetch')
    const attacker = await generateKeyPair('EdDSA', { crv: 'Ed25519' })
    const kid = await calculateJwkThumbprint(await exportJWK(attacker.publicKey), 'sha256')
    const forged = await new SignJWT({ client_id: clientId, scope: 'reports:read' })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid, jku: 'https://attacker.example/jwks', jwk: await exportJWK(attacker.publicKey) } as never)
      .setIssuer(ISSUER).setAudience(ISSUER).setSubject(clientId).setIssuedAt().setExpirationTime('1m').setJti('x')
      .sign(attacker.privateKey)
    await refused(first, forged)
    // Our kid on the attacker's signature: the signature is checked with our key.
    const ours = decodeProtectedHeader(await ourSignedToken({ sub: clientId })).kid!
    const borrowed = await new SignJWT({ client_id: clientId, scope: 'reports:read' })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: ours })
      .setIssuer(ISSUER).setAudience(ISSUER).setSubject(clientId).setIssuedAt().setExpirationTime('1m').setJti('x')
      .sign(attacker.privateKey)
    await refused(first, borrowed)
    expect(fetch).not.toHaveBeenCalled()
  })

  it('refuses alg none, and HS256 signed with our public key', async () => {
    const { first } = cluster()
    const { clientId } = await newAccount(first)
    const genuine = await ourSignedToken({ sub: clientId })
    expect((await verifyServiceToken(api(genuine), first)).ok).toBe(true)
    const { kid } = decodeProtectedHeader(genuine)
    const [, payload] = genuine.split('.')
    const none = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid }))}.${payload}.`
    await refused(first, none)
    const jwks = (await (await serviceAccountRoutes(new Request(`${ISSUER}/jwks`), first))!.json()) as { keys: JWK[] }
    const published = jwks.keys[0]!
    for (const secret of [JSON.stringify(published), published.x!, base64url.decode(published.x!)]) {
      const hs = await new SignJWT(decodeJwt(genuine)).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid }).sign(typeof secret === 'string' ? new TextEncoder().encode(secret) : secret)
      await refused(first, hs)
    }
  })

  it('refuses another issuer, another audience, a past exp and a token that is not typed at+jwt', async () => {
    const { first } = cluster()
    const { clientId } = await newAccount(first)
    const now = Math.floor(Date.now() / 1000)
    await refused(first, await ourSignedToken({ sub: clientId, iss: 'https://other.example/auth' }))
    await refused(first, await ourSignedToken({ sub: clientId, aud: 'https://other.example/api' }))
    await refused(first, await ourSignedToken({ sub: clientId, iat: now - 600, exp: now - 60 }))
    await refused(first, await ourSignedToken({ sub: clientId }, { typ: 'JWT' }))
    // A scope the account does not hold counts for nothing, even in a token signed with our key.
    const inflated = await verifyServiceToken(api(await ourSignedToken({ sub: clientId, scope: 'admin:all reports:read' })), first, { scopes: ['admin:all'] })
    expect(!inflated.ok && inflated.status).toBe(403)
    // An application with another issuer but the same secret signs with the same derived key: the iss still tells them apart.
    const { make } = cluster()
    const other = make(SECRET, { issuer: 'https://other.example/auth' })
    const { clientId: otherId, secret } = await newAccount(other)
    await refused(first, await tokenFor(other, otherId, secret))
  })

  it("refuses a revoked account's token on another instance sharing the adapter, and its secret at the token endpoint", async () => {
    const { first, second } = cluster()
    const { clientId, secret } = await newAccount(first)
    const token = await tokenFor(first, clientId, secret)
    expect((await verifyServiceToken(api(token), second)).ok).toBe(true)
    expect(await revokeServiceAccount(second, ALICE, clientId)).toBe(true)
    await refused(first, token)
    const { response, body } = await postToken(first, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) })
    expect([response.status, body.error]).toEqual([401, 'invalid_client'])
  })

  it('refuses a rotated-away secret at once on another instance, and accepts the new one', async () => {
    const { first, second } = cluster()
    const { clientId, secret } = await newAccount(first)
    const rotated = (await rotateServiceAccountSecret(first, ALICE, clientId))!
    expect(rotated.clientSecret).not.toBe(secret)
    expect((await postToken(second, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) })).response.status).toBe(401)
    expect((await postToken(second, { grant_type: 'client_credentials' }, { authorization: basic(clientId, rotated.clientSecret!) })).response.status).toBe(200)
  })

  it('never logs a client secret, an assertion or a token', async () => {
    const { first, logs } = cluster()
    const console_ = vi.spyOn(console, 'log')
    const { clientId, secret } = await newAccount(first)
    const token = await tokenFor(first, clientId, secret)
    await postToken(first, { grant_type: 'client_credentials' }, { authorization: basic(clientId, `${secret}x`) })
    await verifyServiceToken(api(`${token}x`), first)
    const failing = { ...first, adapter: { ...first.adapter!, getServiceAccount: async () => { throw new Error(`db down while reading ${clientId}`) } } } as AuthConfig
    await postToken(failing, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) })
    const text = JSON.stringify([logs, console_.mock.calls], (_, value) => (value instanceof Error ? `${value.message} ${value.stack}` : value))
    expect(logs.length).toBeGreaterThan(0)
    expect(text).not.toContain(secret)
    expect(text).not.toContain(token.split('.')[2])
  })

  it('limits guesses of a client secret per client id across instances sharing the store', async () => {
    const { first, second } = cluster({ clientLimit: { points: 3, window: 60 } })
    const { clientId, secret } = await newAccount(first)
    for (const config of [first, second, first]) {
      expect((await postToken(config, { grant_type: 'client_credentials' }, { authorization: basic(clientId, 'A'.repeat(43)) })).response.status).toBe(401)
    }
    const limited = await postToken(second, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) })
    expect(limited.response.status).toBe(429)
    expect(Number(limited.response.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another client is not held up by the guesses at this one.
    const other = await newAccount(first)
    expect((await postToken(second, { grant_type: 'client_credentials' }, { authorization: basic(other.clientId, other.secret) })).response.status).toBe(200)
  })

  it('keeps tokens in flight verifying across a key rotation, and the retired key published until it is dropped', async () => {
    const { make } = cluster()
    const before = make(SECRET)
    const { clientId, secret } = await newAccount(before)
    const inFlight = await tokenFor(before, clientId, secret)
    const rotated = make([OTHER_SECRET, SECRET])
    const jwks = (await (await serviceAccountRoutes(new Request(`${ISSUER}/jwks`), rotated))!.json()) as { keys: JWK[] }
    expect(jwks.keys).toHaveLength(2)
    expect(jwks.keys.every((key) => key.d === undefined)).toBe(true)
    expect(jwks.keys.map((key) => key.kid)).toContain(decodeProtectedHeader(inFlight).kid)
    expect((await verifyServiceToken(api(inFlight), rotated)).ok).toBe(true)
    // Client secrets hashed under the old config secret still authenticate; new tokens use the new key.
    const fresh = await tokenFor(rotated, clientId, secret)
    expect(decodeProtectedHeader(fresh).kid).toBe(jwks.keys[0]!.kid)
    expect(decodeProtectedHeader(fresh).kid).not.toBe(decodeProtectedHeader(inFlight).kid)
    const dropped = make(OTHER_SECRET)
    await refused(dropped, inFlight)
    expect((await verifyServiceToken(api(fresh), dropped)).ok).toBe(true)
  })

  it('rotates configured keys: the new P-256 key signs, the retired one listed without d only verifies', async () => {
    const { make } = cluster()
    const exported = async (alg: 'EdDSA' | 'ES256') => {
      const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) })
      return (await exportJWK(privateKey)) as never as { kty: 'OKP' | 'EC'; crv: 'Ed25519' | 'P-256'; x: string; y?: string; d: string }
    }
    const old = await exported('EdDSA')
    const next = await exported('ES256')
    const before = make(SECRET, { signingKeys: [old] })
    const { clientId, secret } = await newAccount(before)
    const inFlight = await tokenFor(before, clientId, secret)
    const { d: _retired, ...oldPublic } = old
    const after = make(SECRET, { signingKeys: [next, oldPublic] })
    const fresh = await tokenFor(after, clientId, secret)
    expect(decodeProtectedHeader(fresh).alg).toBe('ES256')
    expect((await verifyServiceToken(api(inFlight), after)).ok).toBe(true)
    expect((await verifyServiceToken(api(fresh), after)).ok).toBe(true)
    const jwks = (await (await serviceAccountRoutes(new Request(`${ISSUER}/jwks`), after))!.json()) as { keys: JWK[] }
    expect(jwks.keys.map((key) => key.alg)).toEqual(['ES256', 'EdDSA'])
    expect(jwks.keys.every((key) => key.d === undefined)).toBe(true)
    // An EdDSA token under the P-256 key's kid is refused: the kid fixes the algorithm.
    const [, payload, signature] = inFlight.split('.')
    const swapped = `${base64url.encode(JSON.stringify({ ...decodeProtectedHeader(inFlight), kid: jwks.keys[0]!.kid }))}.${payload}.${signature}`
    await refused(after, swapped)
    expect(() => serviceAccounts({ issuer: ISSUER, signingKeys: [oldPublic] })).toThrow(TypeError)
  })

  it('fails closed with 503 and Retry-After when the adapter throws', async () => {
    const { first } = cluster()
    const { clientId, secret } = await newAccount(first)
    const token = await tokenFor(first, clientId, secret)
    const failing = { ...first, adapter: { ...first.adapter!, getServiceAccount: async () => { throw new Error('down') } } } as AuthConfig
    const verified = await verifyServiceToken(api(token), failing)
    expect(!verified.ok && [verified.status, verified.response.headers.get('retry-after')]).toEqual([503, expect.stringMatching(/^\d+$/)])
    const { response } = await postToken(failing, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) })
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/)
  })
})

describe('service-account ownership (two owners)', () => {
  it("lets neither owner list, rotate or revoke the other's account", async () => {
    const { first } = cluster()
    const alice = await newAccount(first, ALICE)
    await newAccount(first, BOB)
    expect((await listServiceAccounts(first, BOB))!.map((account) => account.id)).not.toContain(alice.clientId)
    expect(await rotateServiceAccountSecret(first, BOB, alice.clientId)).toBeNull()
    expect(await revokeServiceAccount(first, BOB, alice.clientId)).toBe(false)
    expect((await postToken(first, { grant_type: 'client_credentials' }, { authorization: basic(alice.clientId, alice.secret) })).response.status).toBe(200)
    const listed = (await listServiceAccounts(first, ALICE))!
    expect(listed).toHaveLength(1)
    expect(JSON.stringify(listed)).not.toContain(alice.secret)
    expect(JSON.stringify(listed)).not.toMatch(/hash/i)
  })

  it('refuses an organisation account to someone who is no member of it', async () => {
    const { first } = cluster()
    expect(await createServiceAccount(first, ALICE, { name: 'x', scopes: [], organizationId: 'org-1' })).toBeNull()
  })
})

describe('the service-account feature at load', () => {
  it('names the missing adapter methods, and refuses a plain object or a missing issuer', async () => {
    const without = Object.fromEntries(Object.entries(MemoryAdapter()).filter(([name]) => !name.includes('ServiceAccount')))
    await expect(verifyServiceToken(api('x'), testConfig({ adapter: without, serviceAccounts: serviceAccounts({ issuer: ISSUER }) }))).rejects.toThrow(
      /Required adapter methods were missing: createServiceAccount, getServiceAccount, listServiceAccounts, listOrganizationServiceAccounts, updateServiceAccount/,
    )
    await expect(verifyServiceToken(api('x'), testConfig({ adapter: MemoryAdapter(), serviceAccounts: { issuer: ISSUER } as never }))).rejects.toThrow(
      /import \{ serviceAccounts \} from 'authchart\/service-accounts'/,
    )
    expect(() => serviceAccounts({} as never)).toThrow(TypeError)
    expect(() => serviceAccounts({ issuer: 'http://example.com' })).toThrow(TypeError)
    expect(() => serviceAccounts({ issuer: ISSUER, tokenTtl: 86_400 })).toThrow(TypeError)
  })
})
