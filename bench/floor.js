// The physical floor of a session read: decrypting and verifying the session cookie's JWE
// (`dir` + A256CBC-HS512, RFC 7518 §5.2) with plain `node:crypto`, no jose and no library. The key
// is derived once (HKDF-SHA-256, as Auth.js does), as every library here caches it too.
import { createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

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
