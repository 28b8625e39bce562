// The physical floors, with plain `node:crypto`, no jose and no library. A session read:
// decrypting and verifying the session cookie's JWE (`dir` + A256CBC-HS512, RFC 7518 §5.2). A
// credentials sign-in: encrypting the session token the same way, and the CSRF cookie's hash
// (SHA-256 over token + secret). The key is derived once (HKDF-SHA-256, as Auth.js does), as every
// library here caches it too.
import * as nodeCrypto from 'node:crypto'
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'

/** The 64-byte key Auth.js derives from `secret` for the cookie named `salt`. */
export function sessionKey(secret, salt) {
  return Buffer.from(hkdfSync('sha256', secret, salt, `Auth.js Generated Encryption Key (${salt})`, 64))
}

/**
 * Opens a compact JWE session token and returns its claims: header checked, tag verified in
 * constant time, AES-256-CBC decrypted, JSON parsed, `exp` checked. Throws on anything else.
 */
export function openSessionToken(token, key, now = Date.now() / 1000) {
  const [protectedHeader, encryptedKey, iv64, ciphertext64, tag64] = token.split('.')
  if (tag64 === undefined || encryptedKey !== '') throw new Error('not a dir JWE')
  const header = JSON.parse(Buffer.from(protectedHeader, 'base64url').toString())
  if (header.alg !== 'dir' || header.enc !== 'A256CBC-HS512') throw new Error('unexpected header')
  const aad = Buffer.from(protectedHeader, 'ascii')
  const iv = Buffer.from(iv64, 'base64url')
  const ciphertext = Buffer.from(ciphertext64, 'base64url')
  const al = Buffer.alloc(8)
  al.writeBigUInt64BE(BigInt(aad.length * 8))
  const mac = createHmac('sha512', key.subarray(0, 32)).update(aad).update(iv).update(ciphertext).update(al).digest()
  const tag = Buffer.from(tag64, 'base64url')
  if (tag.length !== 32 || !timingSafeEqual(mac.subarray(0, 32), tag)) throw new Error('bad tag')
  const decipher = createDecipheriv('aes-256-cbc', key.subarray(32), iv)
  const claims = JSON.parse(Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString())
  if (typeof claims.exp === 'number' && claims.exp <= now) throw new Error('expired')
  return claims
}

/** The 64-bit big-endian length in bits of the additional authenticated data (RFC 7518 §5.2.2.1). */
function aadLengthOf(aad) {
  const al = Buffer.alloc(8)
  al.writeBigUInt64BE(BigInt(aad.length * 8))
  return al
}

/** The protected header, its bytes (the AAD) and AL, encoded once per key id (as a library would). */
const headers = new Map()
function headerFor(kid) {
  let header = headers.get(kid)
  if (!header) {
    const encoded = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512', kid })).toString('base64url')
    const aad = Buffer.from(encoded, 'ascii')
    header = { encoded, aad, al: aadLengthOf(aad) }
    headers.set(kid, header)
  }
  return header
}

// IVs drawn from a pool of random bytes, as Node's randomUUID and the libraries here do: one
// synchronous randomBytes(16) per token costs as much as the AES itself.
let pool = Buffer.alloc(0)
let taken = 0
function randomIv() {
  if (taken + 16 > pool.length) {
    pool = randomBytes(4096)
    taken = 0
  }
  taken += 16
  return pool.subarray(taken - 16, taken)
}

/**
 * Seals `claims` as a compact JWE the way a session token is written: `{alg: "dir", enc:
 * "A256CBC-HS512", kid}` as the protected header, `iat`, `exp` and a random `jti` added, a random
 * IV, AES-256-CBC, then the HMAC-SHA-512 tag truncated to 32 bytes.
 */
export function sealSessionToken(claims, key, kid = 'floor', maxAge = 30 * 24 * 60 * 60) {
  const { encoded, aad, al } = headerFor(kid)
  const iat = Math.floor(Date.now() / 1000)
  const plaintext = JSON.stringify({ ...claims, iat, exp: iat + maxAge, jti: randomUUID() })
  const iv = randomIv()
  const cipher = createCipheriv('aes-256-cbc', key.subarray(32), iv)
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  const tag = createHmac('sha512', key.subarray(0, 32)).update(aad).update(iv).update(ciphertext).update(al).digest()
  return `${encoded}..${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${tag.toString('base64url', 0, 32)}`
}

/** The CSRF cookie's hash: SHA-256 over the token followed by the secret, as hex (Auth.js). */
export const csrfHash = nodeCrypto.hash
  ? (token, secret) => nodeCrypto.hash('sha256', `${token}${secret}`, 'hex')
  : (token, secret) => createHash('sha256').update(`${token}${secret}`).digest('hex')
