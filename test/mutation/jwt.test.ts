/**
 * The session token codec's checks one at a time: the JWE's authentication tag, lengths and key,
 * the claims' types and time windows (with Auth.js's 15 s tolerance), secret rotation by key id,
 * and how `getToken` finds a token in a request.
 */
import { createCipheriv, createHmac, randomBytes } from 'node:crypto'
import { EncryptJWT, base64url, calculateJwkThumbprint } from 'jose'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { hkdfSha256 } from '../../core/crypto.js'
import { MissingSecret } from '../../core/errors.js'
import { encryptCbcHs512, parseCbcHs512 } from '../../core/fast/jwe-cbc.js'
import { DEFAULT_MAX_AGE, decode, encode, getToken } from '../../core/jwt.js'

const SECRET = 'test-secret-that-is-long-enough-for-hkdf-0123456789'
const OTHER = 'another-secret-that-is-long-enough-for-hkdf-987654'
const SALT = '__Secure-authjs.session-token'
const T0 = 1_900_000_000

afterEach(() => vi.useRealTimers())

const at = (seconds: number) => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(seconds * 1000)
}

async function keyFor(secret = SECRET, salt = SALT) {
  const key = await hkdfSha256(secret, salt, `Auth.js Generated Encryption Key (${salt})`, 64)
  const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha512')
  return { key, kid }
}

/** A token whose plaintext is exactly `plaintext`, sealed as the codec seals. */
async function sealed(plaintext: string, secret = SECRET): Promise<string> {
  const { key, kid } = await keyFor(secret)
  return encryptCbcHs512(plaintext, key, kid)
}

const decodeIt = (token: string, secret: string | string[] = SECRET) => decode({ token, secret, salt: SALT })

describe('encode', () => {
  it('adds iat, exp = iat + maxAge and a random jti, and the header names our key', async () => {
    at(T0)
    const token = await encode({ token: { sub: 'u' }, secret: SECRET, salt: SALT, maxAge: 60 })
    const header = JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[0]!)))
    expect(header).toEqual({ alg: 'dir', enc: 'A256CBC-HS512', kid: (await keyFor()).kid })
    const claims = (await decodeIt(token))!
    expect(claims).toEqual({ sub: 'u', iat: T0, exp: T0 + 60, jti: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    const again = (await decodeIt(await encode({ token: { sub: 'u' }, secret: SECRET, salt: SALT })))!
    expect(again.jti).not.toBe(claims.jti)
    expect(again.exp).toBe(T0 + DEFAULT_MAX_AGE)
    expect(DEFAULT_MAX_AGE).toBe(2_592_000)
  })

  it('encrypts with the first of several secrets, and refuses no secret', async () => {
    const token = await encode({ token: { sub: 'u' }, secret: [OTHER, SECRET], salt: SALT })
    await expect(decodeIt(token, SECRET)).rejects.toThrow()
    expect((await decodeIt(token, OTHER))!.sub).toBe('u')
    await expect(encode({ token: {}, secret: [], salt: SALT })).rejects.toThrow('Must pass `secret` to encode a JWT')
    await expect(encode({ token: {}, secret: '', salt: SALT })).rejects.toBeInstanceOf(MissingSecret)
  })
})

describe('decode: the JWE', () => {
  it('returns null for no token', async () => {
    expect(await decodeIt('')).toBeNull()
  })

  it('opens with any listed secret, matched by key id, and refuses when none matches', async () => {
    const token = await sealed(JSON.stringify({ sub: 'u' }), OTHER)
    expect(await decodeIt(token, [SECRET, OTHER])).toEqual({ sub: 'u' })
    await expect(decodeIt(token, [SECRET])).rejects.toThrow('no matching decryption secret')
  })

  it('refuses a token under another salt (another cookie name)', async () => {
    const token = await sealed(JSON.stringify({ sub: 'u' }))
    await expect(decode({ token, secret: SECRET, salt: 'authjs.session-token' })).rejects.toThrow()
  })

  it('opens a token without a key id with the first secret', async () => {
    const { key } = await keyFor()
    const header = base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512' }))
    const withKid = await sealed(JSON.stringify({ sub: 'u' }))
    // A header without kid changes the AAD: seal again through jose to get a valid token.
    const token = await new EncryptJWT({ sub: 'u' }).setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512' }).encrypt(key)
    expect(token.split('.')[0]).toBe(header)
    expect(parseCbcHs512(token)).toMatchObject({ handled: true, kid: undefined })
    expect(await decodeIt(token, [SECRET])).toEqual({ sub: 'u' })
    expect(withKid).not.toBe(token)
  })

  // Keys are derived once per (secret, salt) and then read synchronously: a salt no other test
  // uses makes decode derive it now, on its asynchronous path.
  it('opens a token without a key id on the first read under a salt, while its key is still being derived', async () => {
    const salt = `first-read-${randomBytes(6).toString('hex')}`
    const { key } = await keyFor(SECRET, salt)
    const token = await new EncryptJWT({ sub: 'u' }).setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512' }).encrypt(key)
    expect(await decode({ token, secret: [SECRET], salt })).toEqual({ sub: 'u' })
  })

  it('refuses, saying why, a token no secret matches on the first read under a salt', async () => {
    const salt = `first-read-${randomBytes(6).toString('hex')}`
    const { key, kid } = await keyFor(OTHER, salt)
    const token = encryptCbcHs512(JSON.stringify({ sub: 'u' }), key, kid)
    await expect(decode({ token, secret: [SECRET], salt })).rejects.toThrow('no matching decryption secret')
  })

  it.each([
    ['the tag', 4],
    ['the ciphertext', 3],
    ['the IV', 2],
    ['the header', 0],
  ])('refuses a token with one bit of %s changed', async (_, part) => {
    const parts = (await sealed(JSON.stringify({ sub: 'u' }))).split('.')
    const bytes = base64url.decode(parts[part]!)
    bytes[0]! ^= 0x01
    parts[part] = base64url.encode(bytes)
    await expect(decodeIt(parts.join('.'))).rejects.toThrow()
  })

  it('refuses lengths the format does not allow', async () => {
    const parts = (await sealed(JSON.stringify({ sub: 'u' }))).split('.')
    const variants = [
      [parts[0], '', base64url.encode(new Uint8Array(12)), parts[3], parts[4]],
      [parts[0], '', parts[2], parts[3], base64url.encode(new Uint8Array(16))],
      [parts[0], '', parts[2], '', parts[4]],
      [parts[0], '', parts[2], base64url.encode(base64url.decode(parts[3]!).subarray(1)), parts[4]],
      [parts[0], '', parts[2], `${parts[3]}!`, parts[4]],
    ]
    for (const variant of variants) await expect(decodeIt(variant.join('.'))).rejects.toThrow('JWE decryption failed')
    // One part too many is not the fast path's, and jose refuses it too.
    await expect(decodeIt([...parts, 'extra'].join('.'))).rejects.toThrow('Invalid Compact JWE')
    expect(parseCbcHs512([...parts, 'x'].join('.')).handled).toBe(false)
  })

  it('refuses a tag of the wrong length with its own error, even one that is a prefix of the right tag', async () => {
    const { key, kid } = await keyFor()
    const header = base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512', kid }))
    const iv = randomBytes(16)
    const cipher = createCipheriv('aes-256-cbc', key.subarray(32), iv)
    const ciphertext = Buffer.concat([cipher.update(Buffer.from('{"a":1}')), cipher.final()])
    const aad = Buffer.from(header)
    const al = Buffer.alloc(8)
    al.writeUInt32BE(aad.length * 8, 4)
    const tag = createHmac('sha512', key.subarray(0, 32)).update(aad).update(iv).update(ciphertext).update(al).digest()
    const token = (t: Uint8Array) => [header, '', base64url.encode(iv), base64url.encode(ciphertext), base64url.encode(t)].join('.')
    expect(await decodeIt(token(tag.subarray(0, 32)))).toEqual({ a: 1 })
    await expect(decodeIt(token(tag.subarray(0, 16)))).rejects.toThrow('JWE decryption failed')
    await expect(decodeIt(token(tag.subarray(0, 64)))).rejects.toThrow('JWE decryption failed')
  })

  it('decrypts only with a 64-byte key', () => {
    const fast = parseCbcHs512('eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIn0..AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    expect(fast.handled).toBe(true)
    if (fast.handled) expect(() => fast.decrypt(new Uint8Array(32))).toThrow('JWE decryption failed')
  })

  it('fails a token it cannot authenticate with a TypeError, as callers catching it expect', () => {
    const fast = parseCbcHs512('eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIn0..AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    let thrown: unknown = 'nothing thrown'
    try {
      if (fast.handled) fast.decrypt(new Uint8Array(64))
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(TypeError)
    expect((thrown as Error).message).toBe('JWE decryption failed')
  })

  it('leaves tokens it does not recognise exactly to jose', () => {
    const json = (header: unknown) => `${base64url.encode(JSON.stringify(header))}..a.b.c`
    expect(parseCbcHs512(json({ alg: 'dir', enc: 'A256GCM' })).handled).toBe(false)
    expect(parseCbcHs512(json({ alg: 'A256KW', enc: 'A256CBC-HS512' })).handled).toBe(false)
    expect(parseCbcHs512(json({ alg: 'dir', enc: 'A256CBC-HS512', zip: 'DEF' })).handled).toBe(false)
    expect(parseCbcHs512(json({ alg: 'dir', enc: 'A256CBC-HS512', kid: 7 })).handled).toBe(false)
    expect(parseCbcHs512(json(null)).handled).toBe(false)
    expect(parseCbcHs512(json('dir')).handled).toBe(false)
    expect(parseCbcHs512(`${base64url.encode('{')}..a.b.c`).handled).toBe(false)
    expect(parseCbcHs512('a.b.c.d').handled).toBe(false)
    expect(parseCbcHs512(`${base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512' }))}.x.a.b.c`).handled).toBe(false)
    expect(parseCbcHs512(json({ alg: 'dir', enc: 'A256CBC-HS512', kid: 'k' }))).toMatchObject({ handled: true, kid: 'k' })
  })

  it('opens an A256GCM token as Auth.js may write it (through jose)', async () => {
    const key = await hkdfSha256(SECRET, SALT, `Auth.js Generated Encryption Key (${SALT})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    const token = await new EncryptJWT({ sub: 'gcm' }).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid }).encrypt(key)
    expect(await decodeIt(token)).toEqual({ sub: 'gcm' })
    const foreign = await new EncryptJWT({ sub: 'gcm' }).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'other' }).encrypt(key)
    await expect(decodeIt(foreign)).rejects.toThrow('no matching decryption secret')
  })

  it('opens an A256GCM token without a key id with the first secret, as Auth.js does', async () => {
    const key = await hkdfSha256(SECRET, SALT, `Auth.js Generated Encryption Key (${SALT})`, 32)
    const token = await new EncryptJWT({ sub: 'no-kid' }).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(key)
    expect(await decodeIt(token, [SECRET, OTHER])).toEqual({ sub: 'no-kid' })
    await expect(decodeIt(token, [OTHER, SECRET])).rejects.toThrow()
  })

  it('allows 15 s of clock skew on the jose path too, and refuses other key management', async () => {
    at(T0)
    const key = await hkdfSha256(SECRET, SALT, `Auth.js Generated Encryption Key (${SALT})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    const gcm = (claims: Record<string, unknown>) =>
      new EncryptJWT(claims).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid }).encrypt(key)
    expect(await decodeIt(await gcm({ sub: 'late', exp: T0 - 10 }))).toEqual({ sub: 'late', exp: T0 - 10 })
    await expect(decodeIt(await gcm({ sub: 'late', exp: T0 - 15 }))).rejects.toThrow()
    const wrapped = await new EncryptJWT({ sub: 'kw' })
      .setProtectedHeader({ alg: 'A256KW', enc: 'A256GCM', kid })
      .encrypt(key)
    await expect(decodeIt(wrapped)).rejects.toThrow()
  })
})

describe('decode: the claims', () => {
  it.each(['not json', '[]', 'null', '7', '"s"'])('refuses plaintext that is not a JSON object: %s', async (plaintext) => {
    await expect(decodeIt(await sealed(plaintext))).rejects.toThrow('JWT Claims Set must be a top-level JSON object')
  })

  it.each(['iat', 'nbf', 'exp'])('refuses a %s that is not a number', async (claim) => {
    await expect(decodeIt(await sealed(JSON.stringify({ [claim]: '1' })))).rejects.toThrow(`"${claim}" claim must be a number`)
  })

  it('accepts a token up to 15 s after its exp and refuses it from then on', async () => {
    at(T0)
    expect(await decodeIt(await sealed(JSON.stringify({ exp: T0 - 14 })))).toEqual({ exp: T0 - 14 })
    await expect(decodeIt(await sealed(JSON.stringify({ exp: T0 - 15 })))).rejects.toThrow('"exp" claim timestamp check failed')
  })

  it('accepts a token up to 15 s before its nbf and refuses it earlier', async () => {
    at(T0)
    expect(await decodeIt(await sealed(JSON.stringify({ nbf: T0 + 15 })))).toEqual({ nbf: T0 + 15 })
    await expect(decodeIt(await sealed(JSON.stringify({ nbf: T0 + 16 })))).rejects.toThrow('"nbf" claim timestamp check failed')
  })

  it('accepts a token without time claims', async () => {
    expect(await decodeIt(await sealed(JSON.stringify({ sub: 'forever' })))).toEqual({ sub: 'forever' })
  })

  it('refuses plaintext that is not UTF-8, as jose does', async () => {
    const { key, kid } = await keyFor()
    const header = base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512', kid }))
    const iv = randomBytes(16)
    const cipher = createCipheriv('aes-256-cbc', key.subarray(32), iv)
    const ciphertext = Buffer.concat([cipher.update(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])), cipher.final()])
    const aad = Buffer.from(header)
    const al = Buffer.alloc(8)
    al.writeUInt32BE(aad.length * 8, 4)
    const tag = createHmac('sha512', key.subarray(0, 32)).update(aad).update(iv).update(ciphertext).update(al).digest().subarray(0, 32)
    const token = [header, '', iv, ciphertext, tag].map((p) => (typeof p === 'string' ? p : base64url.encode(p))).join('.')
    await expect(decodeIt(token)).rejects.toThrow('JWE decryption failed')
    // The same bytes with valid UTF-8 open: only the encoding was wrong.
    const good = createCipheriv('aes-256-cbc', key.subarray(32), iv)
    const fine = Buffer.concat([good.update(Buffer.from('{"a":1}')), good.final()])
    const fineTag = createHmac('sha512', key.subarray(0, 32)).update(aad).update(iv).update(fine).update(al).digest().subarray(0, 32)
    expect(await decodeIt([header, '', base64url.encode(iv), base64url.encode(fine), base64url.encode(fineTag)].join('.'))).toEqual({ a: 1 })
  })
})

describe('getToken', () => {
  const request = (headers: Record<string, string>) => new Request('https://a.example/', { headers })

  it('reads the plain session cookie by default and the __Secure- one with secureCookie', async () => {
    const plain = await encode({ token: { sub: 'plain' }, secret: SECRET, salt: 'authjs.session-token' })
    const secure = await encode({ token: { sub: 'secure' }, secret: SECRET, salt: SALT })
    const req = request({ cookie: `authjs.session-token=${plain}; ${SALT}=${secure}` })
    expect((await getToken({ req, secret: SECRET }))?.sub).toBe('plain')
    expect((await getToken({ req, secret: SECRET, secureCookie: true }))?.sub).toBe('secure')
    expect(await getToken({ req, secret: SECRET, secureCookie: true, raw: true })).toBe(secure)
  })

  it('reads a Bearer token when there is no cookie, and nothing from another scheme', async () => {
    const token = await encode({ token: { sub: 'bearer' }, secret: SECRET, salt: 'authjs.session-token' })
    expect((await getToken({ req: request({ authorization: `Bearer ${token}` }), secret: SECRET }))?.sub).toBe('bearer')
    expect(await getToken({ req: request({ authorization: `Basic ${token}` }), secret: SECRET })).toBeNull()
    expect(await getToken({ req: request({ authorization: 'Bearer %E0%A4%A' }), secret: SECRET })).toBeNull()
    expect(await getToken({ req: { headers: { authorization: `Bearer ${token}` } }, secret: SECRET, raw: true })).toBe(token)
    expect(await getToken({ req: request({ authorization: 'Bearer' }), secret: SECRET, raw: true })).toBeNull()
  })

  it('gives null for an invalid token, and throws without a secret only when there is a token', async () => {
    expect(await getToken({ req: request({ cookie: 'authjs.session-token=garbage' }), secret: SECRET })).toBeNull()
    expect(await getToken({ req: request({}) })).toBeNull()
    await expect(getToken({ req: request({ cookie: 'authjs.session-token=x' }) })).rejects.toBeInstanceOf(MissingSecret)
    await expect(getToken({ req: request({ cookie: 'authjs.session-token=x' }), secret: [] })).rejects.toBeInstanceOf(MissingSecret)
    await expect(getToken({ req: undefined as never, secret: SECRET })).rejects.toThrow('Must pass `req` to getToken()')
  })

  it('uses the cookie name as the salt unless told otherwise, and a custom decoder', async () => {
    const token = await encode({ token: { sub: 'custom' }, secret: SECRET, salt: 'my-salt' })
    const req = request({ cookie: `my-cookie=${token}` })
    expect(await getToken({ req, secret: SECRET, cookieName: 'my-cookie' })).toBeNull()
    expect((await getToken({ req, secret: SECRET, cookieName: 'my-cookie', salt: 'my-salt' }))?.sub).toBe('custom')
    const seen: unknown[] = []
    const decoded = await getToken({
      req,
      secret: SECRET,
      cookieName: 'my-cookie',
      decode: (params) => {
        seen.push(params)
        return { sub: 'mine' }
      },
    })
    expect(decoded).toEqual({ sub: 'mine' })
    expect(seen).toEqual([{ token, secret: SECRET, salt: 'my-cookie' }])
  })
})
