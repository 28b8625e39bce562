import * as authjs from '@auth/core/jwt'
import { decodeProtectedHeader } from 'jose'
import { describe, expect, it } from 'vitest'
import { decode, encode, getToken, isSealedWith } from '../../core/jwt.js'

const SECRET = 'test-secret-that-is-long-enough-for-hkdf-0123456789'
const SALT = '__Secure-authjs.session-token'
const claims = { name: 'Alice', email: 'alice@example.com', picture: 'https://img/a.png', sub: 'u-1' }

describe('session tokens are interchangeable with @auth/core', () => {
  it('opens a token encoded by @auth/core', async () => {
    const token = await authjs.encode({ token: claims, secret: SECRET, salt: SALT })
    expect(await decode({ token, secret: SECRET, salt: SALT })).toMatchObject(claims)
  })

  it('encodes a token that @auth/core opens', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: SALT })
    expect(await authjs.decode({ token, secret: SECRET, salt: SALT })).toMatchObject(claims)
  })

  it('writes the same protected header as @auth/core (alg, enc and kid thumbprint)', async () => {
    const ours = decodeProtectedHeader(await encode({ token: claims, secret: SECRET, salt: SALT }))
    const theirs = decodeProtectedHeader(
      await authjs.encode({ token: claims, secret: SECRET, salt: SALT }),
    )
    expect(ours).toEqual(theirs)
    expect(ours).toMatchObject({ alg: 'dir', enc: 'A256CBC-HS512' })
  })

  it('produces a token exactly as long as @auth/core for the same claims', async () => {
    const ours = await encode({ token: claims, secret: SECRET, salt: SALT })
    const theirs = await authjs.encode({ token: claims, secret: SECRET, salt: SALT })
    expect(ours.length).toBe(theirs.length)
  })

  it('adds iat, exp (now + maxAge) and a random jti', async () => {
    const before = Math.floor(Date.now() / 1000)
    const token = await encode({ token: claims, secret: SECRET, salt: SALT, maxAge: 60 })
    const decoded = (await decode({ token, secret: SECRET, salt: SALT }))!
    expect(decoded.iat).toBeGreaterThanOrEqual(before)
    expect(decoded.exp).toBe(decoded.iat! + 60)
    expect(decoded.jti).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('refuses a token minted for another cookie name (the salt binds it)', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: 'authjs.session-token' })
    await expect(decode({ token, secret: SECRET, salt: SALT })).rejects.toThrow()
  })

  it('refuses an expired token, allowing 15 seconds of clock skew', async () => {
    const expiredLongAgo = await authjs.encode({ token: claims, secret: SECRET, salt: SALT, maxAge: -60 })
    await expect(decode({ token: expiredLongAgo, secret: SECRET, salt: SALT })).rejects.toThrow()
    const justExpired = await authjs.encode({ token: claims, secret: SECRET, salt: SALT, maxAge: -5 })
    expect(await decode({ token: justExpired, secret: SECRET, salt: SALT })).toMatchObject(claims)
  })

  it('returns null for an empty token', async () => {
    expect(await decode({ token: '', secret: SECRET, salt: SALT })).toBeNull()
  })
})

describe('secret rotation', () => {
  const OLD = 'the-previous-secret-that-is-long-enough-000000'

  it('decodes tokens of every listed secret', async () => {
    const token = await authjs.encode({ token: claims, secret: OLD, salt: SALT })
    expect(await decode({ token, secret: [SECRET, OLD], salt: SALT })).toMatchObject(claims)
  })

  it('encodes with the first secret', async () => {
    const token = await encode({ token: claims, secret: [SECRET, OLD], salt: SALT })
    expect(await decode({ token, secret: SECRET, salt: SALT })).toMatchObject(claims)
    await expect(decode({ token, secret: OLD, salt: SALT })).rejects.toThrow(
      'no matching decryption secret',
    )
  })
})

describe('getToken', () => {
  it('reads a chunked session cookie', async () => {
    const token = await encode({ token: { ...claims, blob: 'x'.repeat(6000) }, secret: SECRET, salt: 'authjs.session-token' })
    const cookie = `authjs.session-token.0=${token.slice(0, 3936)}; authjs.session-token.1=${token.slice(3936)}`
    const req = new Request('http://localhost/', { headers: { cookie } })
    expect(await getToken({ req, secret: SECRET })).toMatchObject(claims)
  })

  it('reads a Bearer token when there is no cookie', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: 'authjs.session-token' })
    const req = { headers: { authorization: `Bearer ${encodeURIComponent(token)}` } }
    expect(await getToken({ req, secret: SECRET })).toMatchObject(claims)
    expect(await getToken({ req, secret: SECRET, raw: true })).toBe(token)
  })

  it('returns null for malformed percent-encoding in a Bearer token', async () => {
    const req = { headers: { authorization: 'Bearer %E0%A4%A' } }
    expect(await getToken({ req, secret: SECRET })).toBeNull()
  })

  it('returns null for an invalid token and throws without a secret', async () => {
    const req = { headers: { cookie: 'authjs.session-token=garbage' } }
    expect(await getToken({ req, secret: SECRET })).toBeNull()
    await expect(getToken({ req })).rejects.toThrow(/secret/)
  })

  it('ignores cookies that merely start with the session cookie name', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: 'authjs.session-token' })
    const req = { headers: { cookie: `authjs.session-token=${token}; authjs.session-token-evil=x` } }
    expect(await getToken({ req, secret: SECRET })).toMatchObject(claims)
  })
})

describe('isSealedWith: which secret of a rotation sealed a token', () => {
  const OLD = 'sixteen-chars-ok'

  it('names the secret whose key id the token carries, for its salt only', async () => {
    const token = await authjs.encode({ token: claims, secret: OLD, salt: SALT })
    expect(await isSealedWith(token, OLD, SALT)).toBe(true)
    expect(await isSealedWith(token, SECRET, SALT)).toBe(false)
    expect(await isSealedWith(token, OLD, 'authjs.session-token')).toBe(false)
    const ours = await encode({ token: claims, secret: [SECRET, OLD], salt: SALT })
    expect(await isSealedWith(ours, SECRET, SALT)).toBe(true)
    expect(await isSealedWith(ours, OLD, SALT)).toBe(false)
  })

  it('counts a token without a readable kid as not sealed with it', async () => {
    expect(await isSealedWith('not-a-token', SECRET, SALT)).toBe(false)
    const header = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512' })).toString('base64url')
    expect(await isSealedWith(`${header}..iv.ct.tag`, SECRET, SALT)).toBe(false)
    const numericKid = Buffer.from(JSON.stringify({ alg: 'dir', kid: 7 })).toString('base64url')
    expect(await isSealedWith(`${numericKid}..iv.ct.tag`, SECRET, SALT)).toBe(false)
  })
})
