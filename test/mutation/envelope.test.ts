/**
 * The envelope's checks one at a time: each test changes exactly one claim of an otherwise valid
 * envelope (sealed as the engine seals, with the secret), so removing any single check — audience,
 * flow id, binding, version, expiry, single use — fails a test here as well as in
 * test/core/envelope.test.ts and the OAuth tests.
 */
import { EncryptJWT, base64url, calculateJwkThumbprint } from 'jose'
import { number, object, string } from 'superstruct'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { setup } from 'xstate'
import { advance } from '../../core/engine/advance.js'
import { ENVELOPE_MAX_AGE, makeRoom, openEnvelope, openValue, sealEnvelope, sealValue } from '../../core/engine/envelope.js'
import { defineFlow } from '../../core/engine/flow.js'
import { hkdfSha256 } from '../../core/crypto.js'
import { FlowStateError } from '../../core/errors.js'
import { encryptGcm, parseGcm } from '../../core/fast/jwe-gcm.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { openClaims, sealClaims, type EnvelopeClaims } from './reseal.js'

const SECRET = 'test-secret-that-is-long-enough-for-hkdf-0123456789'
const OTHER = 'another-secret-that-is-long-enough-for-hkdf-987654'
const COOKIE = 'authchart.flow.two-step'
const AT = 1_800_000_000

function flowOf(id = 'two-step', version = '1') {
  const machine = setup({
    types: {} as { context: { user: string; n: number }; events: { type: 'go'; at: number } | { type: 'finish'; at: number } },
  }).createMachine({
    id,
    version,
    initial: 'idle',
    context: { user: 'alice', n: 1 },
    states: {
      idle: { tags: 'awaitsRequest', on: { go: 'waiting' } },
      waiting: { tags: 'awaitsRequest', meta: { outcome: () => ({ type: 'redirect', url: '/next' }) }, on: { finish: 'done' } },
      working: { tags: 'effect.work' },
      done: { type: 'final' },
    },
  })
  return defineFlow({ machine, context: object({ user: string(), n: number() }), effects: { work: async () => ({ type: 'finish', at: AT }) } })
}

const options = { secrets: [SECRET], cookieName: COOKIE, at: AT }

async function sealedFor(flow = flowOf(), binding?: string): Promise<string> {
  const run = await advance(flow, {}, { type: 'go', at: AT })
  return sealEnvelope(flow, run.snapshot, { ...options, ...(binding !== undefined ? { binding } : {}) })
}

/** An envelope of `flow` with its claims changed by `change`, sealed as the engine would. */
async function forged(change: (claims: EnvelopeClaims) => EnvelopeClaims, flow = flowOf(), binding?: string) {
  const claims = await openClaims(await sealedFor(flow, binding), SECRET, COOKIE)
  return sealClaims(change(claims), SECRET, COOKIE)
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(FlowStateError)
  return { code: (error as FlowStateError).code, message: (error as Error).message }
}

describe('an envelope with one claim changed', () => {
  it('opens when nothing was changed (the forging helper is faithful)', async () => {
    const snapshot = await openEnvelope(flowOf(), await forged((c) => c), options)
    expect(snapshot.value).toBe('waiting')
    expect(snapshot.context).toEqual({ user: 'alice', n: 1 })
  })

  it('is refused when only its audience names another flow', async () => {
    const sealed = await forged((c) => ({ ...c, aud: 'other-flow' }))
    expect(await refusal(openEnvelope(flowOf(), sealed, options))).toEqual({
      code: 'ERR_FLOW_STATE_INVALID',
      message: 'two-step: envelope was sealed for "other-flow"',
    })
  })

  it('is refused when it has no audience', async () => {
    const sealed = await forged(({ aud: _aud, ...c }) => c)
    expect((await refusal(openEnvelope(flowOf(), sealed, options))).code).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('is refused when only its flow id names another flow', async () => {
    const sealed = await forged((c) => ({ ...c, env: { ...c.env, id: 'other-flow' } }))
    expect(await refusal(openEnvelope(flowOf(), sealed, options))).toEqual({
      code: 'ERR_FLOW_STATE_INVALID',
      message: 'two-step: envelope holds flow "other-flow"',
    })
  })

  it('is refused when only its binding names another provider, or it has none', async () => {
    const other = await forged((c) => ({ ...c, sub: 'google' }), flowOf(), 'github')
    const opening = { ...options, binding: 'github' }
    expect(await refusal(openEnvelope(flowOf(), other, opening))).toEqual({
      code: 'ERR_FLOW_STATE_INVALID',
      message: 'two-step: envelope is bound to another provider',
    })
    const none = await forged(({ sub: _sub, ...c }) => c, flowOf(), 'github')
    expect((await refusal(openEnvelope(flowOf(), none, opening))).code).toBe('ERR_FLOW_STATE_INVALID')
    // An unbound flow refuses a bound envelope too.
    const bound = await forged((c) => c, flowOf(), 'github')
    expect((await refusal(openEnvelope(flowOf(), bound, options))).code).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('is refused as from another version when only its version differs', async () => {
    const sealed = await forged((c) => ({ ...c, env: { ...c.env, v: '0' } }))
    expect(await refusal(openEnvelope(flowOf(), sealed, options))).toEqual({
      code: 'ERR_FLOW_VERSION_CHANGED',
      message: 'two-step: envelope from version 0, machine is 1',
    })
  })

  it('is refused when it has no id to spend, or no flow at all', async () => {
    const noId = await forged(({ jti: _jti, ...c }) => c as EnvelopeClaims)
    expect(await refusal(openEnvelope(flowOf(), noId, options))).toEqual({
      code: 'ERR_FLOW_STATE_INVALID',
      message: 'two-step: envelope has no id',
    })
    const noFlow = await forged(({ env: _env, ...c }) => c as EnvelopeClaims)
    expect(await refusal(openEnvelope(flowOf(), noFlow, options))).toEqual({
      code: 'ERR_FLOW_STATE_INVALID',
      message: 'two-step: envelope has no flow',
    })
  })

  it('is refused when it names a state that runs an effect rather than waiting for a request', async () => {
    const sealed = await forged((c) => ({ ...c, env: { ...c.env, value: 'working' } }))
    expect(await refusal(openEnvelope(flowOf(), sealed, options))).toEqual({
      code: 'ERR_FLOW_STATE_INVALID',
      message: 'two-step: envelope state does not await a request',
    })
  })

  it('names where its context does not fit', async () => {
    const sealed = await forged((c) => ({ ...c, env: { ...c.env, context: { user: 'alice', n: 'one' } } }))
    expect((await refusal(openEnvelope(flowOf(), sealed, options))).message).toBe(
      'two-step: envelope context does not fit at context.n',
    )
  })
})

describe('the age of an envelope', () => {
  const aged = (iat: number, exp: number) => forged((c) => ({ ...c, iat, exp }))

  it('lives exactly ENVELOPE_MAX_AGE seconds: 15 minutes', async () => {
    expect(ENVELOPE_MAX_AGE).toBe(900)
    const claims = await openClaims(await sealedFor(), SECRET, COOKIE)
    expect(claims.iat).toBe(AT)
    expect(claims.exp).toBe(AT + ENVELOPE_MAX_AGE)
    expect(claims.aud).toBe('two-step')
  })

  it('opens one second before it expires and is stale at its expiry', async () => {
    const sealed = await sealedFor()
    expect((await openEnvelope(flowOf(), sealed, { ...options, at: AT + ENVELOPE_MAX_AGE - 1, peek: true })).value).toBe('waiting')
    expect(await refusal(openEnvelope(flowOf(), sealed, { ...options, at: AT + ENVELOPE_MAX_AGE }))).toEqual({
      code: 'ERR_FLOW_STATE_STALE',
      message: 'two-step: sealed flow expired',
    })
  })

  it('is stale when issued longer ago than ENVELOPE_MAX_AGE, whatever its exp says', async () => {
    const sealed = await aged(AT - ENVELOPE_MAX_AGE - 1, AT + 3600)
    expect((await refusal(openEnvelope(flowOf(), sealed, options))).code).toBe('ERR_FLOW_STATE_STALE')
    const justInTime = await aged(AT - ENVELOPE_MAX_AGE, AT + 3600)
    expect((await openEnvelope(flowOf(), justInTime, options)).value).toBe('waiting')
  })

  it('is refused when issued in the future, and opens when issued this very second', async () => {
    const future = await aged(AT + 1, AT + 60)
    expect((await refusal(openEnvelope(flowOf(), future, options))).code).toBe('ERR_FLOW_STATE_INVALID')
    expect((await openEnvelope(flowOf(), await aged(AT, AT + 60), options)).value).toBe('waiting')
  })

  it('is refused when iat or exp is missing or not a number', async () => {
    for (const change of [
      ({ iat: _iat, ...c }: EnvelopeClaims) => c as EnvelopeClaims,
      ({ exp: _exp, ...c }: EnvelopeClaims) => c as EnvelopeClaims,
      (c: EnvelopeClaims) => ({ ...c, iat: String(c.iat) }) as unknown as EnvelopeClaims,
      (c: EnvelopeClaims) => ({ ...c, exp: String(c.exp) }) as unknown as EnvelopeClaims,
    ]) {
      expect((await refusal(openEnvelope(flowOf(), await forged(change), options))).code).toBe('ERR_FLOW_STATE_INVALID')
    }
  })
})

describe('malformed plaintext under a valid key', () => {
  async function sealedText(plaintext: string): Promise<string> {
    const key = await hkdfSha256(SECRET, COOKIE, `authchart flow envelope (${COOKIE})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    return encryptGcm(plaintext, key, kid)
  }

  it.each(['not json', '[1,2]', 'null', '42', '"text"'])('is refused, never thrown as a 500: %s', async (plaintext) => {
    expect((await refusal(openEnvelope(flowOf(), await sealedText(plaintext), options))).code).toBe('ERR_FLOW_STATE_INVALID')
  })
})

describe('single use', () => {
  it('opens once in this process and refuses the same envelope the second time', async () => {
    const sealed = await sealedFor()
    expect((await openEnvelope(flowOf(), sealed, options)).value).toBe('waiting')
    expect(await refusal(openEnvelope(flowOf(), sealed, options))).toEqual({
      code: 'ERR_FLOW_STATE_INVALID',
      message: 'two-step: envelope was already used',
    })
  })

  it('spends nothing when only peeked at, in this process', async () => {
    const sealed = await sealedFor()
    await openEnvelope(flowOf(), sealed, { ...options, peek: true })
    await openEnvelope(flowOf(), sealed, { ...options, peek: true })
    expect((await openEnvelope(flowOf(), sealed, options)).value).toBe('waiting')
  })

  it('claims its id in the store for as long as it has left to live', async () => {
    const sealed = await sealedFor()
    const claimed: [string, number][] = []
    const store = memoryAuthStore()
    const claim = (jti: string, ttl: number) => {
      claimed.push([jti, ttl])
      return store.claim(jti, ttl)
    }
    await openEnvelope(flowOf(), sealed, { ...options, at: AT + 100, claim })
    const { jti } = await openClaims(sealed, SECRET, COOKIE)
    expect(claimed).toEqual([[jti, ENVELOPE_MAX_AGE - 100]])
    expect(await refusal(openEnvelope(flowOf(), sealed, { ...options, at: AT + 100, claim }))).toMatchObject({
      message: 'two-step: envelope was already used',
    })
  })

  it('gets a new id every time it is sealed', async () => {
    const flow = flowOf()
    const run = await advance(flow, {}, { type: 'go', at: AT })
    const a = await openClaims(await sealEnvelope(flow, run.snapshot, options), SECRET, COOKIE)
    const b = await openClaims(await sealEnvelope(flow, run.snapshot, options), SECRET, COOKIE)
    expect(a.jti).toMatch(/^[0-9a-f-]{36}$/)
    expect(a.jti).not.toBe(b.jti)
  })
})

describe('keys and secrets', () => {
  it('seals with the first secret and opens with any listed one', async () => {
    const flow = flowOf()
    const run = await advance(flow, {}, { type: 'go', at: AT })
    const sealed = await sealEnvelope(flow, run.snapshot, { ...options, secrets: [OTHER, SECRET] })
    await expect(openClaims(sealed, SECRET, COOKIE)).rejects.toThrow()
    expect((await openClaims(sealed, OTHER, COOKIE)).aud).toBe('two-step')
    expect((await openEnvelope(flow, sealed, { ...options, secrets: [SECRET, OTHER], peek: true })).value).toBe('waiting')
    expect((await refusal(openEnvelope(flow, sealed, options))).message).toBe('two-step: sealed flow does not decrypt')
  })

  it('opens a token jose sealed with extra header fields (the Web Crypto path), checking the same claims', async () => {
    const key = await hkdfSha256(SECRET, COOKIE, `authchart flow envelope (${COOKIE})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    const claims = await openClaims(await sealedFor(), SECRET, COOKIE)
    const viaJose = (payload: Record<string, unknown>, withKid = kid) =>
      new EncryptJWT(payload).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: withKid, typ: 'JWT' }).encrypt(key)
    const sealed = await viaJose({ ...claims })
    expect(parseGcm(sealed)).toBeUndefined()
    expect((await openEnvelope(flowOf(), sealed, options)).value).toBe('waiting')
    const expired = await viaJose({ ...claims, jti: 'x', iat: AT - ENVELOPE_MAX_AGE - 5, exp: AT - 5 })
    expect((await refusal(openEnvelope(flowOf(), expired, options))).code).toBe('ERR_FLOW_STATE_STALE')
    const unknownKid = await viaJose({ ...claims, jti: 'y' }, 'not-our-kid')
    expect((await refusal(openEnvelope(flowOf(), unknownKid, options))).code).toBe('ERR_FLOW_STATE_INVALID')
    const noExp = await viaJose({ env: claims.env, jti: 'z', aud: claims.aud, iat: AT })
    expect((await refusal(openEnvelope(flowOf(), noExp, options))).code).toBe('ERR_FLOW_STATE_INVALID')
  })
})

describe('sealed values (the redirect proxy state)', () => {
  const valueOptions = { secrets: [SECRET], salt: 'authchart.redirect-proxy-state', at: AT }

  it('opens a value for 15 minutes under the same salt, and never under another', async () => {
    const sealed = await sealValue({ origin: 'https://a.example' }, valueOptions)
    expect(await openValue(sealed, { ...valueOptions, at: AT + ENVELOPE_MAX_AGE - 1 })).toEqual({ origin: 'https://a.example' })
    expect(await openValue(sealed, { ...valueOptions, at: AT + ENVELOPE_MAX_AGE })).toBeNull()
    expect(await openValue(sealed, { ...valueOptions, salt: 'another-salt' })).toBeNull()
    expect(await openValue(sealed, { ...valueOptions, secrets: [OTHER] })).toBeNull()
    expect(await openValue('garbage', valueOptions)).toBeNull()
  })

  it('gives null for sealed claims whose value is not an object', async () => {
    const key = await hkdfSha256(SECRET, valueOptions.salt, `authchart flow envelope (${valueOptions.salt})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    for (const value of ['text', null, 7]) {
      const sealed = encryptGcm(JSON.stringify({ value, iat: AT, exp: AT + 60 }), key, kid)
      expect(await openValue(sealed, valueOptions)).toBeNull()
    }
  })
})

describe('why an envelope did not open (the cause it is refused with)', () => {
  async function causeOf(sealed: string, at = AT): Promise<Error> {
    const error = await openEnvelope(flowOf(), sealed, { ...options, at }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(FlowStateError)
    return (error as FlowStateError).cause as Error
  }
  async function sealedText(plaintext: string): Promise<string> {
    const key = await hkdfSha256(SECRET, COOKIE, `authchart flow envelope (${COOKIE})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    return encryptGcm(plaintext, key, kid)
  }

  it('names a claims set that is not a JSON object', async () => {
    for (const plaintext of ['not json', 'null', '[]', '"s"']) {
      const cause = await causeOf(await sealedText(plaintext))
      expect(cause.name, plaintext).toBe('JWTInvalid')
      expect(cause.message).toBe('JWT Claims Set must be a top-level JSON object')
    }
  })

  it('names a missing time claim, an expiry, an old or a future issue time', async () => {
    const missing = await causeOf(await forged(({ iat: _iat, ...c }) => c as EnvelopeClaims))
    expect([missing.name, missing.message]).toEqual(['JWTClaimValidationFailed', 'missing or invalid "iat" or "exp" claim'])
    const expired = await causeOf(await sealedFor(), AT + ENVELOPE_MAX_AGE)
    expect([expired.name, expired.message]).toEqual(['JWTExpired', '"exp" claim timestamp check failed'])
    const old = await causeOf(await forged((c) => ({ ...c, iat: AT - ENVELOPE_MAX_AGE - 1, exp: AT + 60 })))
    expect([old.name, old.message]).toEqual(['JWTExpired', '"iat" claim timestamp check failed (too far in the past)'])
    const future = await causeOf(await forged((c) => ({ ...c, iat: AT + 1, exp: AT + 60 })))
    expect([future.name, future.message]).toEqual([
      'JWTClaimValidationFailed',
      '"iat" claim timestamp check failed (it should be in the past)',
    ])
  })

  it('names a secret it does not know, on either path', async () => {
    const foreign = await sealEnvelope(flowOf(), (await advance(flowOf(), {}, { type: 'go', at: AT })).snapshot, {
      ...options,
      secrets: [OTHER],
    })
    expect((await causeOf(foreign)).message).toBe('sealed with an unknown secret')
    const key = await hkdfSha256(OTHER, COOKIE, `authchart flow envelope (${COOKIE})`, 32)
    const viaJose = await new EncryptJWT({ aud: 'two-step' })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'unknown', typ: 'JWT' })
      .encrypt(key)
    expect((await causeOf(viaJose)).message).toBe('sealed with an unknown secret')
  })

  it('refuses a sealed flow whose id or version is not a string before comparing it', async () => {
    const numericId = await forged((c) => ({ ...c, env: { ...c.env, id: 7 as unknown as string } }))
    expect((await refusal(openEnvelope(flowOf(), numericId, options))).message).toBe('two-step: envelope has no flow')
    const numericVersion = await forged((c) => ({ ...c, env: { ...c.env, v: 1 as unknown as string } }))
    expect((await refusal(openEnvelope(flowOf(), numericVersion, options))).message).toBe('two-step: envelope has no flow')
  })

  it('names the path of a nested context field that does not fit', async () => {
    const machine = setup({ types: {} as { context: { user: { name: string } }; events: { type: 'go'; at: number } } }).createMachine({
      id: 'two-step',
      version: '1',
      initial: 'idle',
      context: { user: { name: 'alice' } },
      states: {
        idle: { tags: 'awaitsRequest', on: { go: 'waiting' } },
        waiting: { tags: 'awaitsRequest', meta: { outcome: () => ({ type: 'redirect', url: '/next' }) } },
      },
    })
    const nested = defineFlow({ machine, context: object({ user: object({ name: string() }) }), effects: {} })
    const sealed = await forged((c) => ({ ...c, env: { ...c.env, context: { user: { name: 1 } } } }))
    expect((await refusal(openEnvelope(nested, sealed, options))).message).toBe('two-step: envelope context does not fit at context.user.name')
  })

  it('refuses a state named like an inherited property of the table (constructor, __proto__, toString)', async () => {
    for (const value of ['constructor', '__proto__', 'toString', { constructor: 'name' }]) {
      const sealed = await forged((c) => ({ ...c, env: { ...c.env, value } }))
      expect(await refusal(openEnvelope(flowOf(), sealed, options))).toEqual({
        code: 'ERR_FLOW_STATE_INVALID',
        message: 'two-step: envelope names an unknown state',
      })
    }
  })

  it('keeps the superstruct or xstate error as the cause of a misfit', async () => {
    const misfit = await causeOf(await forged((c) => ({ ...c, env: { ...c.env, context: { user: 1, n: 1 } } })))
    expect(misfit.name).toBe('StructError')
    const nowhere = (await openEnvelope(flowOf(), await forged((c) => ({ ...c, env: { ...c.env, value: 'nowhere' } })), options).catch(
      (e: unknown) => e,
    )) as FlowStateError
    expect(nowhere.message).toBe('two-step: envelope names an unknown state')
    expect(nowhere.cause).toBeInstanceOf(Error)
  })
})

describe('the compact form the fast path accepts', () => {
  it('refuses a dir token carrying an encrypted key, or with a part missing', async () => {
    const parts = (await sealedFor()).split('.')
    const withKey = [parts[0], 'AAAA', ...parts.slice(2)].join('.')
    expect((await refusal(openEnvelope(flowOf(), withKey, options))).code).toBe('ERR_FLOW_STATE_INVALID')
    const short = [parts[0], ...parts.slice(2)].join('.')
    expect((await refusal(openEnvelope(flowOf(), short, options))).code).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('refuses a header naming another algorithm, even over a valid dir ciphertext', async () => {
    const key = await hkdfSha256(SECRET, COOKIE, `authchart flow envelope (${COOKIE})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    const claims = await openClaims(await sealedFor(), SECRET, COOKIE)
    for (const extra of [{ alg: 'A256KW' }, { enc: 'A128GCM' }, { zip: 'DEF' }]) {
      // Seal with the header as it would read, so only the header's meaning is wrong.
      const headerText = base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid, ...extra }))
      const iv = crypto.getRandomValues(new Uint8Array(12))
      const aesKey = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, 'AES-GCM', false, ['encrypt'])
      const sealedBytes = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(headerText) },
          aesKey,
          new TextEncoder().encode(JSON.stringify({ ...claims, jti: crypto.randomUUID() })),
        ),
      )
      const token = [headerText, '', base64url.encode(iv), base64url.encode(sealedBytes.slice(0, -16)), base64url.encode(sealedBytes.slice(-16))].join('.')
      expect(parseGcm(token), JSON.stringify(extra)).toBeUndefined()
      expect((await refusal(openEnvelope(flowOf(), token, options))).code, JSON.stringify(extra)).toBe('ERR_FLOW_STATE_INVALID')
    }
  })

  it('parses exactly {alg, enc, kid} headers, kid optional but a string', () => {
    const token = (h: unknown) => `${base64url.encode(JSON.stringify(h))}..AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA`
    expect(parseGcm(token({ alg: 'dir', enc: 'A256GCM', kid: 'k' }))?.kid).toBe('k')
    expect(parseGcm(token({ alg: 'dir', enc: 'A256GCM' }))).toMatchObject({ kid: undefined })
    expect(parseGcm(token({ alg: 'dir', enc: 'A256GCM', kid: 1 }))).toBeUndefined()
    expect(parseGcm(token(null))).toBeUndefined()
    expect(parseGcm(token('dir'))).toBeUndefined()
    expect(parseGcm(`${base64url.encode('{')}..a.b.c`)).toBeUndefined()
  })

  it('refuses wrong lengths of key, IV and tag', async () => {
    const parts = (await sealedFor()).split('.')
    const token = parseGcm(parts.join('.'))!
    expect(() => token.decrypt(new Uint8Array(16))).toThrow('JWE decryption failed')
    const shortIv = parseGcm([parts[0], '', base64url.encode(new Uint8Array(8)), parts[3], parts[4]].join('.'))!
    const key = await hkdfSha256(SECRET, COOKIE, `authchart flow envelope (${COOKIE})`, 32)
    expect(() => shortIv.decrypt(key)).toThrow('JWE decryption failed')
    const shortTag = parseGcm([parts[0], '', parts[2], parts[3], base64url.encode(new Uint8Array(12))].join('.'))!
    expect(() => shortTag.decrypt(key)).toThrow('JWE decryption failed')
    expect(token.decrypt(key)).toContain('"aud":"two-step"')
  })
})

describe('single use across the clock', () => {
  it('refuses a replay even after envelopes expired by the wall clock were opened in between', async () => {
    // Envelopes stamped in the past (their own `at` keeps them valid): what the process remembers
    // of them must not be dropped while they can still be presented.
    const past = Math.floor(Date.now() / 1000) - 3 * ENVELOPE_MAX_AGE
    const flow = flowOf()
    const run = await advance(flow, {}, { type: 'go', at: past })
    const pastOptions = { ...options, at: past }
    const first = await sealEnvelope(flow, run.snapshot, pastOptions)
    const second = await sealEnvelope(flow, run.snapshot, pastOptions)
    await openEnvelope(flow, first, pastOptions)
    await openEnvelope(flow, second, pastOptions)
    expect((await refusal(openEnvelope(flow, first, pastOptions))).code).toBe('ERR_FLOW_STATE_INVALID')
  })
})

describe('the memory of spent envelope ids, when full', () => {
  const NOW = 1_800_000_000
  afterEach(() => vi.useRealTimers())
  const spent = (...entries: [string, number][]) => new Map(entries)

  it('is left alone below its size', () => {
    const ids = spent(['a', NOW - 100], ['b', NOW + 100])
    makeRoom(ids, 3)
    expect([...ids.keys()]).toEqual(['a', 'b'])
  })

  it('forgets the ids expired by the wall clock, and keeps every live one (even one expiring this second)', () => {
    vi.useFakeTimers({ now: NOW * 1000 })
    const ids = spent(['old', NOW + 100], ['expired', NOW - 1], ['now', NOW], ['live', NOW + 900])
    makeRoom(ids, 4)
    expect([...ids.keys()]).toEqual(['old', 'now', 'live'])
  })

  it('drops only the oldest id when every one is still live, rather than grow', () => {
    vi.useFakeTimers({ now: NOW * 1000 })
    const ids = spent(['oldest', NOW + 100], ['b', NOW + 200], ['c', NOW + 300])
    makeRoom(ids, 3)
    expect([...ids.keys()]).toEqual(['b', 'c'])
  })
})

describe('tokens sealed with our key but outside the format', () => {
  /** Seals `plaintext` with AES-GCM under the envelope key, with the IV and tag lengths given. */
  async function sealedRaw(plaintext: Uint8Array<ArrayBuffer>, ivLength = 12, tagLength = 16): Promise<string> {
    const key = await hkdfSha256(SECRET, COOKIE, `authchart flow envelope (${COOKIE})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    const header = base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid }))
    const iv = crypto.getRandomValues(new Uint8Array(ivLength))
    const aesKey = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, 'AES-GCM', false, ['encrypt'])
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(header), tagLength: 128 }, aesKey, plaintext),
    )
    const tag = sealed.slice(-16).slice(0, tagLength)
    return [header, '', base64url.encode(iv), base64url.encode(sealed.slice(0, -16)), base64url.encode(tag)].join('.')
  }
  const claimsBytes = async () => new TextEncoder().encode(JSON.stringify({ ...(await openClaims(await sealedFor(), SECRET, COOKIE)), jti: crypto.randomUUID() }))

  it('opens one sealed exactly as the engine seals (the helper is faithful)', async () => {
    expect((await openEnvelope(flowOf(), await sealedRaw(await claimsBytes()), options)).value).toBe('waiting')
  })

  it('refuses a truncated authentication tag, which AES-GCM alone would accept', async () => {
    const sealed = await sealedRaw(await claimsBytes(), 12, 12)
    const error = (await openEnvelope(flowOf(), sealed, options).catch((e: unknown) => e)) as FlowStateError
    expect(error).toBeInstanceOf(FlowStateError)
    expect((error.cause as Error).message).toBe('JWE decryption failed')
    expect(((error.cause as Error).cause as Error).message).toBe('lengths')
  })

  it('refuses an IV other than 96 bits', async () => {
    const sealed = await sealedRaw(await claimsBytes(), 16)
    expect((await refusal(openEnvelope(flowOf(), sealed, options))).code).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('refuses a token with a sixth part', async () => {
    const sealed = `${await sealedRaw(await claimsBytes())}.extra`
    expect((await refusal(openEnvelope(flowOf(), sealed, options))).code).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('refuses plaintext that is not UTF-8, even inside a JSON string', async () => {
    const text = JSON.stringify({ ...(await openClaims(await sealedFor(), SECRET, COOKIE)), jti: crypto.randomUUID() })
    const at = text.indexOf('"alice"') + 1
    const bytes = new TextEncoder().encode(text)
    bytes[at] = 0xff
    expect((await refusal(openEnvelope(flowOf(), await sealedRaw(bytes), options))).code).toBe('ERR_FLOW_STATE_INVALID')
  })
})

describe('a context kept on the server (the park)', () => {
  /** A park over a memory store that records every key it is asked to keep and to forget. */
  function recordingPark(room: number) {
    const store = memoryAuthStore()
    const put: string[] = []
    const forgotten: string[] = []
    const park = {
      room,
      put: async (key: string, value: string, ttl: number) => {
        put.push(key)
        await store.put(key, value, ttl)
      },
      get: (key: string) => store.get(key),
      forget: async (key: string) => {
        forgotten.push(key)
        await store.reset(key)
      },
    }
    return { park, put, forgotten, store }
  }
  const waitingWith = (flow: ReturnType<typeof flowOf>, user: string) =>
    flow.machine.resolveState({ value: 'waiting', context: { user, n: 1 } })
  const claim = () => {
    const store = memoryAuthStore()
    return (jti: string, ttl: number) => store.claim(`envelope:${jti}`, ttl)
  }

  it('keeps each of two waiting flows apart: both resume with their own context', async () => {
    const flow = flowOf()
    const { park, put } = recordingPark(700)
    const first = await sealEnvelope(flow, waitingWith(flow, `ada-${'a'.repeat(1200)}`), { ...options, park })
    const second = await sealEnvelope(flow, waitingWith(flow, `bob-${'b'.repeat(1200)}`), { ...options, park })
    expect(new Set(put).size).toBe(2)
    expect(put.every((key) => /^flow:context:[0-9a-f-]{36}$/.test(key))).toBe(true)
    const opened = { ...options, park, claim: claim() }
    expect(((await openEnvelope(flow, first, opened)).context as { user: string }).user).toBe(`ada-${'a'.repeat(1200)}`)
    expect(((await openEnvelope(flow, second, opened)).context as { user: string }).user).toBe(`bob-${'b'.repeat(1200)}`)
  })

  it('leaves in the cookie an envelope exactly as long as the room, and parks one a character longer', async () => {
    const flow = flowOf()
    const snapshot = waitingWith(flow, 'x'.repeat(400))
    const length = (await sealEnvelope(flow, snapshot, options)).length
    const exact = recordingPark(length)
    expect((await sealEnvelope(flow, snapshot, { ...options, park: exact.park })).length).toBe(length)
    expect(exact.put).toEqual([])
    const short = recordingPark(length - 1)
    expect((await sealEnvelope(flow, snapshot, { ...options, park: short.park })).length).toBeLessThan(length)
    expect(short.put).toHaveLength(1)
  })

  it('asks the store to forget only the context it kept, once the envelope is spent', async () => {
    const flow = flowOf()
    const { park, put, forgotten } = recordingPark(700)
    const small = await sealEnvelope(flow, waitingWith(flow, 'ada'), { ...options, park })
    await openEnvelope(flow, small, { ...options, park, claim: claim() })
    expect(forgotten).toEqual([])
    const large = await sealEnvelope(flow, waitingWith(flow, 'y'.repeat(1200)), { ...options, park })
    await openEnvelope(flow, large, { ...options, park, claim: claim() })
    expect(forgotten).toEqual(put)
  })

  it('says why a parked envelope did not open: its context is gone, or what is kept is not its own', async () => {
    const flow = flowOf()
    const { park, put, store } = recordingPark(700)
    const mine = await sealEnvelope(flow, waitingWith(flow, 'm'.repeat(1200)), { ...options, park })
    await sealEnvelope(flow, waitingWith(flow, 't'.repeat(1200)), { ...options, park })
    const theirs = (await store.get(put[1]!))!
    expect(await refusal(openEnvelope(flow, mine, { ...options, park: { ...park, get: async () => null } }))).toEqual({
      code: 'ERR_FLOW_STATE_STALE',
      message: "two-step: the sealed flow's context is no longer kept",
    })
    expect(await refusal(openEnvelope(flow, mine, { ...options, park: { ...park, get: async () => theirs } }))).toEqual({
      code: 'ERR_FLOW_STATE_INVALID',
      message: 'two-step: the kept context belongs to another flow',
    })
  })
})

describe('a migration that throws', () => {
  it('refuses the envelope as from another version, saying the migration failed, with its error as the cause', async () => {
    const v1 = flowOf('two-step', '1')
    const sealed = await sealEnvelope(v1, v1.machine.resolveState({ value: 'waiting', context: { user: 'ada', n: 1 } }), options)
    const failure = new Error('cannot carry it over')
    const v2 = defineFlow({
      machine: flowOf('two-step', '2').machine,
      context: object({ user: string(), n: number() }),
      effects: { work: async () => ({ type: 'finish', at: AT }) },
      migrations: {
        '1': () => {
          throw failure
        },
      },
    })
    const error = await openEnvelope(v2, sealed, options).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(FlowStateError)
    expect((error as FlowStateError).code).toBe('ERR_FLOW_VERSION_CHANGED')
    expect((error as Error).message).toBe('two-step: envelope from version 1, machine is 2; its migration failed')
    expect((error as Error).cause).toBe(failure)
  })
})
