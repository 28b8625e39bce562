/**
 * The synchronous ID token signature check: it may only ever say "verified" for a token signed by
 * the one key oauth4webapi would select from a fresh cached key set. Everything else must come back
 * `false` (the full check then decides), never `true`.
 */
import { generateKeyPairSync, sign } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { idTokenSignatureVerifiedNow } from '../../core/oauth/id-token-signature.js'

const now = Date.now()
const fresh = Math.floor(now / 1000)

async function signer(alg: string, options: { crv?: string } = {}) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...options })
  const jwk = { ...(await exportJWK(publicKey)), kid: `${alg}-key`, use: 'sig', alg }
  const sign = (header: Record<string, unknown> = {}) =>
    new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg, kid: jwk.kid, ...header }).sign(privateKey)
  return { jwk, sign }
}

const cacheOf = (keys: JWK[], uat = fresh) => ({ jwks: { keys: keys.map((key) => ({ ...key })) }, uat })

describe('the synchronous ID token signature check', () => {
  let rs: Awaited<ReturnType<typeof signer>>
  beforeAll(async () => {
    rs = await signer('RS256')
  })

  it.each(['RS256', 'PS384', 'ES256', 'ES512', 'EdDSA'])('verifies a %s token signed by the cached key', async (alg) => {
    const { jwk, sign } = alg === 'RS256' ? rs : await signer(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {})
    expect(idTokenSignatureVerifiedNow(cacheOf([jwk]), await sign(), now)).toBe(true)
  })

  it('does not verify a token whose payload was changed after signing', async () => {
    const [header, , signature] = (await rs.sign()).split('.')
    const forged = `${header}.${Buffer.from('{"sub":"mallory"}').toString('base64url')}.${signature}`
    expect(idTokenSignatureVerifiedNow(cacheOf([rs.jwk]), forged, now)).toBe(false)
  })

  it('does not verify a token signed by another key with the same kid', async () => {
    const other = await signer('RS256')
    expect(idTokenSignatureVerifiedNow(cacheOf([rs.jwk]), await other.sign(), now)).toBe(false)
  })

  it('leaves a key set older than five minutes, or none, to the full check (which refetches it)', async () => {
    const token = await rs.sign()
    expect(idTokenSignatureVerifiedNow(cacheOf([rs.jwk], fresh - 300), token, now)).toBe(false)
    expect(idTokenSignatureVerifiedNow({}, token, now)).toBe(false)
  })

  it('leaves a token whose kid names no cached key to the full check', async () => {
    const token = await rs.sign({ kid: 'rotated' })
    expect(idTokenSignatureVerifiedNow(cacheOf([rs.jwk]), token, now)).toBe(false)
  })

  it('refuses to choose between two applicable keys (the full check asks for a kid)', async () => {
    const { kid: _kid, ...anonymous } = rs.jwk
    const token = await rs.sign({ kid: undefined })
    // One key alone verifies it: two that both could are refused, not tried in turn.
    expect(idTokenSignatureVerifiedNow(cacheOf([anonymous]), token, now)).toBe(true)
    expect(idTokenSignatureVerifiedNow(cacheOf([anonymous, anonymous]), token, now)).toBe(false)
  })

  it('skips keys for encryption, for another algorithm, or without verify among their operations', async () => {
    const token = await rs.sign()
    expect(idTokenSignatureVerifiedNow(cacheOf([{ ...rs.jwk, use: 'enc' }]), token, now)).toBe(false)
    expect(idTokenSignatureVerifiedNow(cacheOf([{ ...rs.jwk, alg: 'RS512' }]), token, now)).toBe(false)
    expect(idTokenSignatureVerifiedNow(cacheOf([{ ...rs.jwk, key_ops: ['encrypt'] }]), token, now)).toBe(false)
  })

  it('refuses an RSA key shorter than 2048 bits, as oauth4webapi does', () => {
    // jose refuses to make such a key: node:crypto signs by hand.
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
    const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'short' })).toString('base64url')
    const payload = Buffer.from('{"sub":"alice"}').toString('base64url')
    const signature = sign('sha256', Buffer.from(`${header}.${payload}`), privateKey).toString('base64url')
    const jwk = { ...(publicKey.export({ format: 'jwk' }) as JWK), kid: 'short' }
    expect(idTokenSignatureVerifiedNow(cacheOf([jwk]), `${header}.${payload}.${signature}`, now)).toBe(false)
  })

  it('leaves HMAC, unknown algorithms and crit headers to the full check', async () => {
    const hs = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256', kid: rs.jwk.kid }).sign(new Uint8Array(32))
    expect(idTokenSignatureVerifiedNow(cacheOf([rs.jwk]), hs, now)).toBe(false)
    const crit = await rs.sign({ crit: ['exp'] }).catch(() => undefined)
    if (crit) expect(idTokenSignatureVerifiedNow(cacheOf([rs.jwk]), crit, now)).toBe(false)
    const [, payload, signature] = (await rs.sign()).split('.')
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.${signature}`
    expect(idTokenSignatureVerifiedNow(cacheOf([rs.jwk]), none, now)).toBe(false)
  })

  it('answers false, never throws, for tokens that are not three base64url parts', () => {
    for (const token of ['', 'a.b', 'a.b.c.d', '!!.e30.AA', 'e30.e30.!!']) {
      expect(idTokenSignatureVerifiedNow(cacheOf([rs.jwk]), token, now)).toBe(false)
    }
  })
})
