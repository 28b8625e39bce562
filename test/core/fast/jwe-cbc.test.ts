/**
 * The synchronous A256CBC-HS512 path (node:crypto) next to jose, through the session-token codec:
 * what it writes jose opens, what it refuses jose refuses, and what it does not recognise goes to
 * jose.
 */
import * as jose from 'jose'
import { decodeProtectedHeader } from 'jose'
import { describe, expect, it } from 'vitest'
import { encryptCbcHs512, parseCbcHs512 } from '../../../core/fast/jwe-cbc.js'
import { decode, encode } from '../../../core/jwt.js'

const SECRET = 'test-secret-that-is-long-enough-for-hkdf-0123456789'
const SALT = '__Secure-authjs.session-token'
const claims = { name: 'Alice', email: 'alice@example.com', picture: 'https://img/a.png', sub: 'u-1' }
const key = crypto.getRandomValues(new Uint8Array(64))

describe('the fast A256CBC-HS512 JWE next to jose', () => {
  it('writes a token jose decrypts to the same plaintext, under the same header', async () => {
    const token = encryptCbcHs512('{"sub":"u-1"}', key, 'kid-1')
    const { plaintext, protectedHeader } = await jose.compactDecrypt(token, key)
    expect(new TextDecoder().decode(plaintext)).toBe('{"sub":"u-1"}')
    expect(protectedHeader).toEqual({ alg: 'dir', enc: 'A256CBC-HS512', kid: 'kid-1' })
    expect(token.split('.')[0]).toBe(jose.base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512', kid: 'kid-1' })))
  })

  it('opens a token jose encrypted, and refuses it under another key as jose does', async () => {
    const token = await new jose.CompactEncrypt(new TextEncoder().encode('hello'))
      .setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512', kid: 'kid-1' })
      .encrypt(key)
    const parsed = parseCbcHs512(token)
    expect(parsed.handled).toBe(true)
    if (!parsed.handled) return
    expect(parsed.kid).toBe('kid-1')
    expect(parsed.decrypt(key)).toBe('hello')
    const other = crypto.getRandomValues(new Uint8Array(64))
    expect(() => parsed.decrypt(other)).toThrow(TypeError)
    await expect(jose.compactDecrypt(token, other)).rejects.toThrow()
  })

  it('agrees with jose at every padding length, and over the same key many times', async () => {
    // Plaintexts of 0 to 48 bytes cover every PKCS#7 padding (1 to 16, a whole block at multiples of 16).
    for (let length = 0; length <= 48; length++) {
      const text = 'x'.repeat(length)
      const ours = encryptCbcHs512(text, key, 'kid-1')
      expect(new TextDecoder().decode((await jose.compactDecrypt(ours, key)).plaintext)).toBe(text)
      const theirs = await new jose.CompactEncrypt(new TextEncoder().encode(text))
        .setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512', kid: 'kid-1' })
        .encrypt(key)
      const parsed = parseCbcHs512(theirs)
      if (!parsed.handled) throw new Error('not handled')
      expect(parsed.decrypt(key)).toBe(text)
    }
  })

  it.each([
    ['a pad byte of 0', (block: Uint8Array) => block.fill(0, 12)],
    ['a pad byte above 16', (block: Uint8Array) => block.fill(17, 12)],
    ['pad bytes that disagree', (block: Uint8Array) => block.fill(4, 12).fill(3, 15)],
  ])('refuses an authentic token whose padding is bad (%s), as jose does', async (_, pad) => {
    // Only the key's holder can write such a token: sealed by hand, with a valid tag.
    const { createCipheriv, createHmac } = await import('node:crypto')
    const iv = new Uint8Array(16).fill(9)
    const block = pad(new TextEncoder().encode('0123456789abcdef'))
    const cipher = createCipheriv('aes-256-cbc', key.subarray(32), iv).setAutoPadding(false)
    const ciphertext = Buffer.concat([cipher.update(block), cipher.final()])
    const header = jose.base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512', kid: 'kid-1' }))
    const al = Buffer.alloc(8)
    al.writeUInt32BE(header.length * 8, 4)
    const tag = createHmac('sha512', key.subarray(0, 32)).update(header).update(iv).update(ciphertext).update(al).digest().subarray(0, 32)
    const token = [header, '', jose.base64url.encode(iv), jose.base64url.encode(ciphertext), jose.base64url.encode(tag)].join('.')
    const parsed = parseCbcHs512(token)
    if (!parsed.handled) throw new Error('not handled')
    expect(() => parsed.decrypt(key)).toThrow(new TypeError('JWE decryption failed'))
    await expect(jose.compactDecrypt(token, key)).rejects.toThrow()
    // The same block with valid padding opens: the refusal is the padding's.
    const good = createCipheriv('aes-256-cbc', key.subarray(32), iv)
    const sealed = Buffer.concat([good.update('0123456789ab'), good.final()])
    const goodTag = createHmac('sha512', key.subarray(0, 32)).update(header).update(iv).update(sealed).update(al).digest().subarray(0, 32)
    const fine = parseCbcHs512([header, '', jose.base64url.encode(iv), jose.base64url.encode(sealed), jose.base64url.encode(goodTag)].join('.'))
    if (!fine.handled) throw new Error('not handled')
    expect(fine.decrypt(key)).toBe('0123456789ab')
  })

  it('opens tokens of any size one after another, large then small, as jose does', async () => {
    for (const text of ['x'.repeat(3000), 'small', 'y'.repeat(40_000), '']) {
      const theirs = await new jose.CompactEncrypt(new TextEncoder().encode(text))
        .setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512', kid: 'kid-1' })
        .encrypt(key)
      const parsed = parseCbcHs512(theirs)
      if (!parsed.handled) throw new Error('not handled')
      expect(parsed.decrypt(key)).toBe(text)
    }
  })

  it.each([
    ['an IV a character longer', 2, (part: string) => `${part}A`],
    ['an IV a character shorter', 2, (part: string) => part.slice(0, -1)],
    ['a tag a character longer', 4, (part: string) => `${part}A`],
    ['a tag of twice the length', 4, (part: string) => `${part}${part}`],
    ['a ciphertext a block shorter', 3, (part: string) => part.slice(0, -22)],
    ['a character outside base64url', 3, (part: string) => `${part.slice(0, 10)}+${part.slice(11)}`],
  ])('refuses a token with %s, as jose does', async (_, index, change) => {
    const token = encryptCbcHs512('{"sub":"u-1"}', key, 'kid-1')
    const altered = token
      .split('.')
      .map((part, i) => (i === index ? change(part) : part))
      .join('.')
    const parsed = parseCbcHs512(altered)
    if (!parsed.handled) throw new Error('not handled')
    expect(() => parsed.decrypt(key)).toThrow(new TypeError('JWE decryption failed'))
    await expect(jose.compactDecrypt(altered, key)).rejects.toThrow()
    // The untouched token still opens after the refusal.
    const intact = parseCbcHs512(token)
    if (!intact.handled) throw new Error('not handled')
    expect(intact.decrypt(key)).toBe('{"sub":"u-1"}')
  })

  it('leaves a header with any other parameter to jose', async () => {
    const token = await new jose.CompactEncrypt(new TextEncoder().encode('hello'))
      .setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512', kid: 'kid-1', cty: 'JWT' })
      .encrypt(key)
    expect(parseCbcHs512(token)).toEqual({ handled: false })
  })
})

describe('the synchronous A256CBC-HS512 path (node:crypto) and its jose fallback', () => {
  const flip = (part: string) => `${part.slice(0, -2)}${part.at(-2) === 'A' ? 'B' : 'A'}${part.at(-1)}`
  const tamper = (token: string, index: number) =>
    token
      .split('.')
      .map((part, i) => (i === index ? flip(part) : part))
      .join('.')

  it.each([
    [2, 'initialisation vector'],
    [3, 'ciphertext'],
    [4, 'authentication tag'],
  ])('refuses a token whose %s was altered (index %i)', async (index) => {
    const token = await encode({ token: claims, secret: SECRET, salt: SALT })
    await expect(decode({ token: tamper(token, Number(index)), secret: SECRET, salt: SALT })).rejects.toThrow()
  })

  it('refuses a token whose protected header was altered (it is authenticated data)', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: SALT })
    const [, ...rest] = token.split('.')
    const header = Buffer.from(JSON.stringify({ enc: 'A256CBC-HS512', alg: 'dir', kid: decodeProtectedHeader(token).kid })).toString('base64url')
    await expect(decode({ token: [header, ...rest].join('.'), secret: SECRET, salt: SALT })).rejects.toThrow()
  })

  it('authenticates every token whose header it has seen before, and is not swayed by forged headers', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: SALT })
    expect(await decode({ token, secret: SECRET, salt: SALT })).toMatchObject(claims)
    // The same (now familiar) header on a tampered body is still refused.
    for (const index of [2, 3, 4]) {
      await expect(decode({ token: tamper(token, index), secret: SECRET, salt: SALT })).rejects.toThrow()
    }
    // A flood of well-formed headers with kids of no key of ours: all refused, and the real one still opens.
    const [, ...rest] = token.split('.')
    for (let i = 0; i < 100; i++) {
      const forged = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512', kid: `forged-${i}` })).toString('base64url')
      await expect(decode({ token: [forged, ...rest].join('.'), secret: SECRET, salt: SALT })).rejects.toThrow()
    }
    const kidless = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512' })).toString('base64url')
    await expect(decode({ token: [kidless, ...rest].join('.'), secret: SECRET, salt: SALT })).rejects.toThrow()
    expect(await decode({ token, secret: SECRET, salt: SALT })).toMatchObject(claims)
  })

  it('leaves tokens with other header parameters to jose, which still opens valid ones', async () => {
    const { EncryptJWT, base64url, calculateJwkThumbprint } = await import('jose')
    const { hkdf } = await import('node:crypto')
    const key = await new Promise<Uint8Array>((resolve, reject) =>
      hkdf('sha256', SECRET, SALT, `Auth.js Generated Encryption Key (${SALT})`, 64, (error, bits) =>
        error ? reject(error) : resolve(new Uint8Array(bits)),
      ),
    )
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha512')
    const token = await new EncryptJWT({ ...claims })
      .setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512', kid, typ: 'JWT' })
      .setExpirationTime('1h')
      .encrypt(key)
    expect(await decode({ token, secret: SECRET, salt: SALT })).toMatchObject(claims)
  })

  it('checks exp, nbf and numeric claims as jose does (15 s tolerance)', async () => {
    const now = Math.floor(Date.now() / 1000)
    const notYet = await encode({ token: { ...claims, nbf: now + 60 }, secret: SECRET, salt: SALT })
    await expect(decode({ token: notYet, secret: SECRET, salt: SALT })).rejects.toThrow(/nbf/)
    const soon = await encode({ token: { ...claims, nbf: now + 10 }, secret: SECRET, salt: SALT })
    expect(await decode({ token: soon, secret: SECRET, salt: SALT })).toMatchObject(claims)
    const badIat = await encode({ token: { ...claims, nbf: 'yesterday' }, secret: SECRET, salt: SALT })
    await expect(decode({ token: badIat, secret: SECRET, salt: SALT })).rejects.toThrow(/number/)
  })
})
