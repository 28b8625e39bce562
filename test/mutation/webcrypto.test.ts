/**
 * The runtimes without a synchronous `node:crypto` (edge workers, browsers): with it taken away,
 * envelopes and session tokens are sealed and opened by jose over Web Crypto, and every check must
 * hold there too. The tokens are read back with jose itself, so the claims the fallback writes are
 * checked byte for byte, not only that it can open its own output.
 */
import { EncryptJWT, base64url, calculateJwkThumbprint, jwtDecrypt } from 'jose'
import { number, object, string } from 'superstruct'
import { describe, expect, it, vi } from 'vitest'
import { setup } from 'xstate'

vi.mock('../../core/fast/sync-crypto.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../core/fast/sync-crypto.js')>()),
  syncCrypto: undefined,
  pkceChallenge: () => undefined,
}))

const { advance } = await import('../../core/engine/advance.js')
const { ENVELOPE_MAX_AGE, openEnvelope, openValue, sealEnvelope, sealValue } = await import('../../core/engine/envelope.js')
const { defineFlow } = await import('../../core/engine/flow.js')
const { hkdfSha256 } = await import('../../core/crypto.js')
const { FlowStateError } = await import('../../core/errors.js')
const { fastGcm, parseGcm } = await import('../../core/fast/jwe-gcm.js')
const { fastJwe, parseCbcHs512 } = await import('../../core/fast/jwe-cbc.js')
const { decode, encode } = await import('../../core/jwt.js')
const { Client, testConfig } = await import('../fixtures/http.js')
const { signInAt, standIn, standInProvider } = await import('./oauth-standin.js')

const SECRET = 'test-secret-that-is-long-enough-for-hkdf-0123456789'
const COOKIE = 'authchart.flow.two-step'
const AT = Math.floor(Date.now() / 1000)

function flowOf() {
  const machine = setup({
    types: {} as { context: { user: string; n: number }; events: { type: 'go'; at: number } },
  }).createMachine({
    id: 'two-step',
    version: '1',
    initial: 'idle',
    context: { user: 'alice', n: 1 },
    states: {
      idle: { tags: 'awaitsRequest', on: { go: 'waiting' } },
      waiting: { tags: 'awaitsRequest', meta: { outcome: () => ({ type: 'redirect', url: '/next' }) } },
    },
  })
  return defineFlow({ machine, context: object({ user: string(), n: number() }), effects: {} })
}

async function envelopeKey(salt = COOKIE) {
  const key = await hkdfSha256(SECRET, salt, `authchart flow envelope (${salt})`, 32)
  const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
  return { key, kid }
}

const header = (token: string) => JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[0]!)))

describe('without a synchronous node:crypto', () => {
  it('takes the jose path', () => {
    expect(fastGcm).toBe(false)
    expect(fastJwe).toBe(false)
    expect(parseGcm('a..b.c.d')).toBeUndefined()
    expect(parseCbcHs512('a..b.c.d')).toEqual({ handled: false })
  })

  it('seals an envelope jose can read: dir + A256GCM under our key id, with every claim', async () => {
    const flow = flowOf()
    const run = await advance(flow, {}, { type: 'go', at: AT })
    const sealed = await sealEnvelope(flow, run.snapshot, { secrets: [SECRET], cookieName: COOKIE, at: AT, binding: 'github' })
    const { key, kid } = await envelopeKey()
    expect(header(sealed)).toEqual({ alg: 'dir', enc: 'A256GCM', kid })
    const { payload } = await jwtDecrypt(sealed, key, { currentDate: new Date(AT * 1000) })
    expect(payload).toEqual({
      env: { id: 'two-step', v: '1', value: 'waiting', context: { user: 'alice', n: 1 } },
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      aud: 'two-step',
      iat: AT,
      exp: AT + ENVELOPE_MAX_AGE,
      sub: 'github',
    })
    const unbound = await sealEnvelope(flow, run.snapshot, { secrets: [SECRET], cookieName: COOKIE, at: AT })
    expect((await jwtDecrypt(unbound, key, { currentDate: new Date(AT * 1000) })).payload.sub).toBeUndefined()
  })

  it('opens its own envelope once, under the same binding, and refuses it stale or foreign', async () => {
    const flow = flowOf()
    const run = await advance(flow, {}, { type: 'go', at: AT })
    const options = { secrets: [SECRET], cookieName: COOKIE, at: AT, binding: 'github' }
    const sealed = await sealEnvelope(flow, run.snapshot, options)
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => 'opened',
        (e: unknown) => (e instanceof FlowStateError ? e.code : String(e)),
      )
    expect(await refusal(openEnvelope(flow, sealed, { ...options, binding: 'google' }))).toBe('ERR_FLOW_STATE_INVALID')
    expect(await refusal(openEnvelope(flow, sealed, { ...options, at: AT + ENVELOPE_MAX_AGE }))).toBe('ERR_FLOW_STATE_STALE')
    expect(await refusal(openEnvelope(flow, sealed, { ...options, secrets: ['another-secret-that-is-long-enough-00000'] }))).toBe(
      'ERR_FLOW_STATE_INVALID',
    )
    expect((await openEnvelope(flow, sealed, options)).value).toBe('waiting')
    expect(await refusal(openEnvelope(flow, sealed, options))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('seals a value for 15 minutes and opens it only under its salt', async () => {
    const options = { secrets: [SECRET], salt: 'proxy', at: AT }
    const sealed = await sealValue({ origin: 'https://a.example' }, options)
    const { key, kid } = await envelopeKey('proxy')
    expect(header(sealed)).toEqual({ alg: 'dir', enc: 'A256GCM', kid })
    expect((await jwtDecrypt(sealed, key, { currentDate: new Date(AT * 1000) })).payload).toEqual({
      value: { origin: 'https://a.example' },
      iat: AT,
      exp: AT + ENVELOPE_MAX_AGE,
    })
    expect(await openValue(sealed, options)).toEqual({ origin: 'https://a.example' })
    expect(await openValue(sealed, { ...options, salt: 'other' })).toBeNull()
    expect(await openValue(sealed, { ...options, at: AT + ENVELOPE_MAX_AGE })).toBeNull()
  })

  it('refuses an envelope without exp through jose too', async () => {
    const { key, kid } = await envelopeKey()
    const sealed = await new EncryptJWT({ env: {}, aud: 'two-step', jti: 'j' })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid })
      .setIssuedAt(AT)
      .encrypt(key)
    const error = await openEnvelope(flowOf(), sealed, { secrets: [SECRET], cookieName: COOKIE, at: AT }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(FlowStateError)
  })

  it('encodes a session token as Auth.js does (dir + A256CBC-HS512, our kid) and decodes it', async () => {
    const salt = '__Secure-authjs.session-token'
    const token = await encode({ token: { sub: 'u' }, secret: SECRET, salt, maxAge: 60 })
    const key = await hkdfSha256(SECRET, salt, `Auth.js Generated Encryption Key (${salt})`, 64)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha512')
    expect(header(token)).toEqual({ alg: 'dir', enc: 'A256CBC-HS512', kid })
    const { payload } = await jwtDecrypt(token, key)
    expect(payload).toEqual({ sub: 'u', iat: expect.any(Number), exp: (payload.iat as number) + 60, jti: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect(await decode({ token, secret: ['another-secret-that-is-long-enough-00000', SECRET], salt })).toEqual(payload)
    await expect(decode({ token, secret: 'another-secret-that-is-long-enough-00000', salt })).rejects.toThrow()
  })

  it('starts an OAuth sign-in with the S256 challenge of its PKCE verifier, which the provider accepts', async () => {
    const op = standIn()
    const client = new Client(testConfig({ providers: [standInProvider(op)] as never }))
    const { location, callback } = await signInAt(client)
    expect(new URL(location).searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // The stand-in's token endpoint refuses a verifier whose S256 is not the challenge it was shown.
    expect(op.seen.token).toBe(1)
    expect(callback.headers.get('location')).toBe('https://authchart.test')
  })
})
