/**
 * The synchronous ID token signature check: it may only ever say "verified" for a token signed by
 * the one key oauth4webapi would select from a fresh cached key set, and import and use as it does.
 * Everything else must come back `false` (the full check then decides), never `true`, never an
 * exception. Most refusals below are checked on tokens whose signature does verify, next to the same
 * token and key set accepted without the one thing refused: the refusal is then the reason for `false`.
 */
import nodeCrypto, { constants, createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { SignJWT, type JWK } from 'jose'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { idTokenSignatureVerifiedNow } from '../../../core/fast/id-token-signature.js'

const now = Date.now()
const fresh = Math.floor(now / 1000)

const encode = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

/** How a token is signed by hand: node:crypto's digest, padding and signature encoding. */
interface Signing {
  hash: string | null
  padding?: number
  saltLength?: number
  dsaEncoding?: 'der' | 'ieee-p1363'
}

const PKCS1 = (hash: string): Signing => ({ hash })
const PSS = (hash: string, saltLength: number): Signing => ({ hash, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength })
const ECDSA = (hash: string, dsaEncoding: 'der' | 'ieee-p1363' = 'ieee-p1363'): Signing => ({ hash, dsaEncoding })
const EDDSA: Signing = { hash: null }

/** A token signed by hand: jose refuses some of these headers and mismatched algorithms. */
function handSigned(privateKey: KeyObject, header: unknown, how: Signing, payload: unknown = { sub: 'alice' }): string {
  const input = `${encode(header)}.${encode(payload)}`
  const { hash, ...options } = how
  return `${input}.${nodeCrypto.sign(hash, Buffer.from(input), { key: privateKey, ...options }).toString('base64url')}`
}

function pairOf(type: 'rsa' | 'ec' | 'ed25519' | 'ed448', options: { modulusLength?: number; namedCurve?: string } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync(type as 'rsa', options as { modulusLength: number })
  return { privateKey, jwk: publicKey.export({ format: 'jwk' }) as JWK }
}

const rsa = pairOf('rsa', { modulusLength: 2048 })
const p256 = pairOf('ec', { namedCurve: 'P-256' })
const p384 = pairOf('ec', { namedCurve: 'P-384' })
const p521 = pairOf('ec', { namedCurve: 'P-521' })
const ed25519 = pairOf('ed25519')
const ed448 = pairOf('ed448')

/** The reference token and its key: an RS256 token naming the cached key's kid. */
const rsKey: JWK = { ...rsa.jwk, kid: 'rsa', use: 'sig', alg: 'RS256' }
const rsToken = handSigned(rsa.privateKey, { alg: 'RS256', kid: 'rsa' }, PKCS1('sha256'))

const cacheOf = (keys: unknown[], uat: unknown = fresh) => ({
  jwks: { keys: keys.map((key) => (typeof key === 'object' && key !== null && !Array.isArray(key) ? { ...key } : key)) },
  uat,
})
/** The cache is typed loosely: the tests hand it what a corrupted or foreign cache might hold. */
const verified = (cache: object, token: string, at = now) => idTokenSignatureVerifiedNow(cache as never, token, at)

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the synchronous ID token signature check: the algorithms', () => {
  // The module's key pairs, not one generated per case: an RSA key takes seconds to generate, and
  // the mutation run repeats these cases for every mutant of the module's constants.
  it.each([
    ['RS256', rsa],
    ['RS384', rsa],
    ['RS512', rsa],
    ['PS256', rsa],
    ['PS384', rsa],
    ['PS512', rsa],
    ['ES256', p256],
    ['ES384', p384],
    ['ES512', p521],
    ['EdDSA', ed25519],
    ['Ed25519', ed25519],
  ] as const)('verifies a %s token that jose signed with the single cached key', async (alg, pair) => {
    const jwk = { ...pair.jwk, kid: `${alg}-key`, use: 'sig', alg }
    const token = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg, kid: jwk.kid }).sign(pair.privateKey)
    expect(verified(cacheOf([jwk]), token)).toBe(true)
  })

  it.each([
    ['RS256', 'PKCS#1 v1.5 over SHA-384', rsa, PKCS1('sha384')],
    ['RS384', 'PKCS#1 v1.5 over SHA-512', rsa, PKCS1('sha512')],
    ['RS512', 'PKCS#1 v1.5 over SHA-256', rsa, PKCS1('sha256')],
    ['RS256', 'PSS over SHA-256', rsa, PSS('sha256', 32)],
    ['PS256', 'PKCS#1 v1.5 over SHA-256', rsa, PKCS1('sha256')],
    ['PS384', 'PKCS#1 v1.5 over SHA-384', rsa, PKCS1('sha384')],
    ['PS512', 'PKCS#1 v1.5 over SHA-512', rsa, PKCS1('sha512')],
    ['PS256', 'PSS over SHA-384', rsa, PSS('sha384', 48)],
    ['PS256', 'PSS over SHA-256 with an empty salt', rsa, PSS('sha256', 0)],
    ['PS512', 'PSS over SHA-256', rsa, PSS('sha256', 32)],
    ['ES256', 'ECDSA over SHA-384', p256, ECDSA('sha384')],
    ['ES256', 'a DER-encoded ECDSA signature', p256, ECDSA('sha256', 'der')],
    ['ES384', 'ECDSA on P-256', p256, ECDSA('sha384')],
    ['ES256', 'ECDSA on P-384', p384, ECDSA('sha256')],
    ['EdDSA', 'Ed448', ed448, EDDSA],
    ['Ed25519', 'Ed448', ed448, EDDSA],
    ['RS256', 'ECDSA on P-256', p256, ECDSA('sha256')],
    ['ES256', 'Ed25519', ed25519, EDDSA],
  ] as const)('does not verify a token whose header says %s but which was signed with %s', (alg, _signedWith, pair, how) => {
    const token = handSigned(pair.privateKey, { alg, kid: 'k' }, how)
    expect(verified(cacheOf([{ ...pair.jwk, kid: 'k' }]), token)).toBe(false)
  })

  it('leaves an HS256 token to the full check, even with an oct key of that kid cached', () => {
    const input = `${encode({ alg: 'HS256', kid: 'rsa' })}.${encode({ sub: 'alice' })}`
    const hs256 = `${input}.${createHmac('sha256', 'secret').update(input).digest('base64url')}`
    expect(verified(cacheOf([rsKey, { kty: 'oct', kid: 'rsa', k: encode('secret') }]), hs256)).toBe(false)
  })

  it('leaves an unsigned (alg none) token to the full check', () => {
    const [, payload] = rsToken.split('.')
    expect(verified(cacheOf([rsKey]), `${encode({ alg: 'none', kid: 'rsa' })}.${payload}.`)).toBe(false)
  })

  it.each(['none', 'RS1', 'ES256K', 'ML-DSA-44', 'rs256', 'constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'leaves a token with alg %j to the full check, even when an RSA signature over it verifies',
    (alg) => {
      const { alg: _alg, ...anyAlg } = rsKey
      const token = handSigned(rsa.privateKey, { alg, kid: 'rsa' }, PKCS1('sha256'))
      expect(verified(cacheOf([anyAlg]), token)).toBe(false)
    },
  )
})

describe('the synchronous ID token signature check: the cached key set', () => {
  it('verifies the reference token under its fresh key set (the control for the refusals below)', () => {
    expect(verified(cacheOf([rsKey]), rsToken)).toBe(true)
  })

  it('leaves a key set older than five minutes to the full check (which refetches it)', () => {
    expect(verified(cacheOf([rsKey], fresh - 3600), rsToken)).toBe(false)
    expect(verified(cacheOf([rsKey], fresh - 301), rsToken)).toBe(false)
  })

  it('leaves a key set exactly five minutes old to the full check, and uses one a second younger', () => {
    expect(verified(cacheOf([rsKey], fresh - 299), rsToken)).toBe(true)
    expect(verified(cacheOf([rsKey], fresh - 300), rsToken)).toBe(false)
  })

  it('counts the key set\'s age in whole seconds, as oauth4webapi does', () => {
    // 299.999 s is still 299.
    const cache = cacheOf([rsKey], fresh)
    expect(verified(cache, rsToken, (fresh + 300) * 1000 - 1)).toBe(true)
    expect(verified(cache, rsToken, (fresh + 300) * 1000)).toBe(false)
  })

  it('leaves a key set without an update time to the full check', () => {
    expect(verified({ jwks: { keys: [{ ...rsKey }] } }, rsToken)).toBe(false)
    expect(verified({}, rsToken)).toBe(false)
  })

  it('leaves a key set whose update time is not a number to the full check, even one that converts to a fresh one', () => {
    for (const uat of [String(fresh), null, [fresh], { valueOf: () => fresh }]) {
      expect(verified(cacheOf([rsKey], uat), rsToken)).toBe(false)
    }
  })

  it('leaves a cache whose jwks is not a JSON object to the full check', () => {
    for (const jwks of [undefined, null, 'keys', [{ ...rsKey }], Object.assign([], { keys: [{ ...rsKey }] })]) {
      expect(verified({ jwks, uat: fresh }, rsToken)).toBe(false)
    }
  })

  it('leaves a key set whose keys are not an array to the full check', () => {
    for (const keys of [undefined, null, { ...rsKey }, 'keys', { 0: { ...rsKey }, length: 1 }]) {
      expect(verified({ jwks: { keys }, uat: fresh }, rsToken)).toBe(false)
    }
  })

  it('leaves a key set with a member that is not a JSON object to the full check', () => {
    for (const member of ['key', null, [], [{ ...rsKey }], 42, true]) {
      expect(verified(cacheOf([rsKey, member]), rsToken)).toBe(false)
      expect(verified(cacheOf([member, rsKey]), rsToken)).toBe(false)
    }
  })
})

describe('the synchronous ID token signature check: the token', () => {
  it('leaves a token that is not three dot-separated parts to the full check', () => {
    const [header, payload, signature] = rsToken.split('.') as [string, string, string]
    for (const token of [`${rsToken}.`, `${rsToken}.${signature}`, `${rsToken}.x.y`, `${header}.${payload}`, header, '']) {
      expect(verified(cacheOf([rsKey]), token)).toBe(false)
    }
  })

  it('leaves a token whose header is not base64url to the full check', () => {
    const [header, payload, signature] = rsToken.split('.') as [string, string, string]
    for (const token of [`${header}=.${payload}.${signature}`, `!.${payload}.${signature}`]) {
      expect(verified(cacheOf([rsKey]), token)).toBe(false)
    }
  })

  it('leaves a token whose signature is not base64url to the full check', () => {
    const [header, payload, signature] = rsToken.split('.') as [string, string, string]
    for (const token of [`${header}.${payload}.${signature}=`, `${header}.${payload}.${signature.replace(/^./, '+')}`]) {
      expect(verified(cacheOf([rsKey]), token)).toBe(false)
    }
  })

  it('leaves a token whose header is not JSON to the full check', () => {
    for (const header of ['{"alg":"RS256"', '', 'RS256']) {
      expect(verified(cacheOf([rsKey]), handSigned(rsa.privateKey, header, PKCS1('sha256')))).toBe(false)
    }
  })

  it('leaves a token whose header is JSON but not an object to the full check', () => {
    for (const header of ['null', '[]', '["RS256"]', '"RS256"', '42', 'true']) {
      expect(verified(cacheOf([rsKey]), handSigned(rsa.privateKey, header, PKCS1('sha256')))).toBe(false)
    }
  })

  it('leaves a token whose alg is not a string to the full check, even one that names a supported algorithm', () => {
    const { alg: _alg, ...anyAlg } = rsKey
    expect(verified(cacheOf([anyAlg]), rsToken)).toBe(true)
    for (const alg of [['RS256'], { toString: () => 'RS256' }, 256, null, true]) {
      const token = handSigned(rsa.privateKey, { alg, kid: 'rsa' }, PKCS1('sha256'))
      expect(verified(cacheOf([anyAlg]), token)).toBe(false)
    }
    expect(verified(cacheOf([anyAlg]), handSigned(rsa.privateKey, { kid: 'rsa' }, PKCS1('sha256')))).toBe(false)
  })

  it('leaves a token with a crit header to the full check (oauth4webapi supports no extension)', () => {
    for (const crit of [['exp'], [], 'exp', null]) {
      const token = handSigned(rsa.privateKey, { alg: 'RS256', kid: 'rsa', crit, exp: fresh }, PKCS1('sha256'))
      expect(verified(cacheOf([rsKey]), token)).toBe(false)
    }
    expect(verified(cacheOf([rsKey]), handSigned(rsa.privateKey, { alg: 'RS256', kid: 'rsa', exp: fresh }, PKCS1('sha256')))).toBe(true)
  })

  it('does not verify a token whose signature was changed', () => {
    const [header, payload, signature] = rsToken.split('.') as [string, string, string]
    const bytes = Buffer.from(signature, 'base64url')
    bytes[bytes.length - 1]! ^= 1
    expect(verified(cacheOf([rsKey]), `${header}.${payload}.${bytes.toString('base64url')}`)).toBe(false)
    expect(verified(cacheOf([rsKey]), `${header}.${payload}.`)).toBe(false)
    expect(verified(cacheOf([rsKey]), `${header}.${payload}.${bytes.subarray(1).toString('base64url')}`)).toBe(false)
  })

  it('does not verify a token whose payload was changed after signing', () => {
    const [header, , signature] = rsToken.split('.')
    const forged = `${header}.${encode({ sub: 'mallory' })}.${signature}`
    expect(verified(cacheOf([rsKey]), forged)).toBe(false)
  })

  it('does not verify a token signed by another key with the same kid', () => {
    const other = pairOf('ec', { namedCurve: 'P-256' })
    const token = handSigned(other.privateKey, { alg: 'ES256', kid: 'k' }, ECDSA('sha256'))
    expect(verified(cacheOf([{ ...p256.jwk, kid: 'k' }]), token)).toBe(false)
    expect(verified(cacheOf([{ ...other.jwk, kid: 'k' }]), token)).toBe(true)
  })
})

describe('the synchronous ID token signature check: choosing the key, as oauth4webapi does', () => {
  const { kid: _kid, ...anonymous } = rsKey
  const anonymousToken = handSigned(rsa.privateKey, { alg: 'RS256' }, PKCS1('sha256'))

  it('leaves a token whose kid names no cached key to the full check', () => {
    const token = handSigned(rsa.privateKey, { alg: 'RS256', kid: 'rotated' }, PKCS1('sha256'))
    expect(verified(cacheOf([rsKey]), token)).toBe(false)
    expect(verified(cacheOf([{ ...rsKey, kid: 'rotated' }]), token)).toBe(true)
  })

  it('verifies a token without a kid under the single applicable key, whatever that key\'s kid', () => {
    expect(verified(cacheOf([rsKey]), anonymousToken)).toBe(true)
    expect(verified(cacheOf([anonymous]), anonymousToken)).toBe(true)
  })

  it('refuses to choose between two applicable keys (the full check asks for a kid)', () => {
    expect(verified(cacheOf([anonymous, anonymous]), anonymousToken)).toBe(false)
    expect(verified(cacheOf([rsKey, { ...rsKey, kid: 'other' }]), anonymousToken)).toBe(false)
    expect(verified(cacheOf([rsKey, rsKey]), rsToken)).toBe(false)
  })

  it('does not count keys of another type, or for another curve, among the applicable ones', () => {
    const { kid: _p256, ...p256Key } = { ...p256.jwk, kid: '' }
    const { kid: _p384, ...p384Key } = { ...p384.jwk, kid: '' }
    expect(verified(cacheOf([anonymous, p256Key, ed25519.jwk]), anonymousToken)).toBe(true)
    const es256 = handSigned(p256.privateKey, { alg: 'ES256' }, ECDSA('sha256'))
    expect(verified(cacheOf([p384Key, p256Key, anonymous]), es256)).toBe(true)
    const eddsa = handSigned(ed25519.privateKey, { alg: 'EdDSA' }, EDDSA)
    expect(verified(cacheOf([ed448.jwk, ed25519.jwk]), eddsa)).toBe(true)
    expect(verified(cacheOf([ed448.jwk]), eddsa)).toBe(false)
  })

  it('leaves a token to the full check when the cached key with its kid is of another type', () => {
    expect(verified(cacheOf([{ ...p256.jwk, kid: 'rsa' }]), rsToken)).toBe(false)
    expect(verified(cacheOf([{ ...ed25519.jwk, kid: 'rsa' }]), rsToken)).toBe(false)
  })

  it('leaves a token to the full check when the cached key with its kid is for another curve', () => {
    const es256 = handSigned(p256.privateKey, { alg: 'ES256', kid: 'ec' }, ECDSA('sha256'))
    expect(verified(cacheOf([{ ...p256.jwk, kid: 'ec', crv: 'P-384' }]), es256)).toBe(false)
    expect(verified(cacheOf([{ ...p256.jwk, kid: 'ec' }]), es256)).toBe(true)
  })

  it('chooses an RSA key whatever curve member it carries (oauth4webapi checks curves for EC and OKP keys only)', () => {
    expect(verified(cacheOf([{ ...rsKey, crv: 'P-256' }]), rsToken)).toBe(true)
  })

  it('verifies under a key that states no alg or use', () => {
    const { alg: _alg, use: _use, ...bare } = rsKey
    expect(verified(cacheOf([bare]), rsToken)).toBe(true)
  })

  it('verifies under a key that lists verify among its operations', () => {
    expect(verified(cacheOf([{ ...rsKey, key_ops: ['verify'] }]), rsToken)).toBe(true)
    expect(verified(cacheOf([{ ...rsKey, key_ops: ['sign', 'verify'] }]), rsToken)).toBe(true)
  })

  it('leaves a token to the full check when its only key is for encryption', () => {
    expect(verified(cacheOf([{ ...rsKey, use: 'enc' }]), rsToken)).toBe(false)
    expect(verified(cacheOf([{ ...rsKey, use: 'SIG' }]), rsToken)).toBe(false)
  })

  it('leaves a token to the full check when its only key is for another algorithm', () => {
    expect(verified(cacheOf([{ ...rsKey, alg: 'RS512' }]), rsToken)).toBe(false)
    expect(verified(cacheOf([{ ...rsKey, alg: 'PS256' }]), rsToken)).toBe(false)
  })

  it('leaves a token to the full check when its only key does not list verify among its operations', () => {
    expect(verified(cacheOf([{ ...rsKey, key_ops: ['encrypt'] }]), rsToken)).toBe(false)
    expect(verified(cacheOf([{ ...rsKey, key_ops: [] }]), rsToken)).toBe(false)
  })

  it('verifies under the one applicable key among keys for encryption, another algorithm or other operations', () => {
    const skipped = [{ ...rsKey, use: 'enc' }, { ...rsKey, alg: 'RS512' }, { ...rsKey, key_ops: ['sign'] }]
    expect(verified(cacheOf([...skipped, rsKey]), rsToken)).toBe(true)
  })
})

describe('the synchronous ID token signature check: importing the key, as oauth4webapi does', () => {
  it('refuses an RSA key shorter than 2048 bits, as oauth4webapi does', () => {
    const short = pairOf('rsa', { modulusLength: 1024 })
    const token = handSigned(short.privateKey, { alg: 'RS256', kid: 'short' }, PKCS1('sha256'))
    expect(verified(cacheOf([{ ...short.jwk, kid: 'short' }]), token)).toBe(false)
  })

  it('refuses a key the cache publishes with its private part (Web Crypto will not verify with it)', () => {
    const cases = [
      [rsa, { alg: 'RS256', kid: 'k' }, PKCS1('sha256')],
      [p256, { alg: 'ES256', kid: 'k' }, ECDSA('sha256')],
      [ed25519, { alg: 'EdDSA', kid: 'k' }, EDDSA],
    ] as const
    for (const [pair, header, how] of cases) {
      const token = handSigned(pair.privateKey, header, how)
      const { d } = pair.privateKey.export({ format: 'jwk' })
      expect(verified(cacheOf([{ ...pair.jwk, kid: 'k' }]), token)).toBe(true)
      expect(verified(cacheOf([{ ...pair.jwk, kid: 'k', d }]), token)).toBe(false)
      expect(verified(cacheOf([{ ...pair.jwk, kid: 'k', d: null }]), token)).toBe(false)
    }
  })

  it('answers false, and does not throw, for a key node:crypto cannot import or imports as an empty modulus', () => {
    for (const key of [
      { ...rsKey, n: '' },
      { kty: 'RSA', kid: 'rsa' },
      { ...rsKey, e: 42 },
      { ...p256.jwk, kid: 'ec', x: p384.jwk.x },
      { ...ed25519.jwk, kid: 'ed', x: encode('short') },
    ]) {
      const alg = { RSA: 'RS256', EC: 'ES256', OKP: 'EdDSA' }[key.kty as string]!
      expect(verified(cacheOf([key]), handSigned(rsa.privateKey, { alg, kid: key.kid }, PKCS1('sha256')))).toBe(false)
    }
  })

  it('imports a cached JWK once, and keeps verifying with it', () => {
    const createPublicKey = vi.spyOn(nodeCrypto, 'createPublicKey')
    const cache = cacheOf([rsKey])
    expect(verified(cache, rsToken)).toBe(true)
    expect(verified(cache, rsToken)).toBe(true)
    expect(verified(cache, handSigned(rsa.privateKey, { alg: 'RS256', kid: 'rsa' }, PKCS1('sha256'), { sub: 'bob' }))).toBe(true)
    expect(createPublicKey).toHaveBeenCalledTimes(1)
    // A copy of the key set (oauth4webapi's cache after a refetch) is imported afresh.
    expect(verified(cacheOf([rsKey]), rsToken)).toBe(true)
    expect(createPublicKey).toHaveBeenCalledTimes(2)
  })

  it('keeps refusing a cached JWK it refused once, without importing it again', () => {
    const createPublicKey = vi.spyOn(nodeCrypto, 'createPublicKey')
    const short = pairOf('rsa', { modulusLength: 1024 })
    const shortToken = handSigned(short.privateKey, { alg: 'RS256', kid: 'short' }, PKCS1('sha256'))
    const es256 = handSigned(p256.privateKey, { alg: 'ES256', kid: 'ec' }, ECDSA('sha256'))
    const refused = [
      // Not a point on P-256: node:crypto throws.
      { cache: cacheOf([{ ...p256.jwk, kid: 'ec', x: p384.jwk.x }]), token: es256, imports: 1 },
      { cache: cacheOf([{ ...short.jwk, kid: 'short' }]), token: shortToken, imports: 1 },
      { cache: cacheOf([{ ...rsKey, d: rsa.privateKey.export({ format: 'jwk' }).d }]), token: rsToken, imports: 0 },
    ]
    for (const { cache, token, imports } of refused) {
      createPublicKey.mockClear()
      expect(verified(cache, token)).toBe(false)
      expect(verified(cache, token)).toBe(false)
      expect(createPublicKey).toHaveBeenCalledTimes(imports)
    }
  })
})

describe('the synchronous ID token signature check: the runtime', () => {
  it('answers false where the runtime has no synchronous verify or key import (the full check runs instead)', () => {
    for (const name of ['verify', 'createPublicKey'] as const) {
      const original = nodeCrypto[name]
      try {
        ;(nodeCrypto as Record<string, unknown>)[name] = undefined
        expect(verified(cacheOf([rsKey]), rsToken)).toBe(false)
      } finally {
        ;(nodeCrypto as Record<string, unknown>)[name] = original
      }
    }
    expect(verified(cacheOf([rsKey]), rsToken)).toBe(true)
  })

  it('answers false when node:crypto throws while verifying, never true and never the exception', () => {
    vi.spyOn(nodeCrypto, 'verify').mockImplementation(() => {
      throw new Error('provider failure')
    })
    expect(verified(cacheOf([rsKey]), rsToken)).toBe(false)
  })
})
