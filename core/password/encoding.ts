/**
 * Byte encodings used by stored password hashes (PHC base64, passlib's adapted base64, hex) and
 * the constant-time digest comparison every verifier ends with. Web APIs only (`atob`/`btoa`).
 *
 * @module
 */

/** Standard base64 (RFC 4648 §4) without `=` padding, the PHC string format's encoding. */
export function encodeBase64Unpadded(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/=+$/, '')
}

/**
 * Decodes standard base64, padded or not; `undefined` for anything else (never throws), so a
 * malformed stored hash is a failed check rather than an exception.
 */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1) return undefined
  try {
    const binary = atob(text.replace(/=+$/, '').padEnd(Math.ceil(text.replace(/=+$/, '').length / 4) * 4, '='))
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  } catch {
    return undefined
  }
}

/** Decodes passlib's "adapted base64" (`.` instead of `+`, no padding), as in `$pbkdf2-sha256$`. */
export function decodeAdaptedBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.includes('+')) return undefined
  return decodeBase64(text.replaceAll('.', '+'))
}

/** Encodes passlib's "adapted base64". */
export function encodeAdaptedBase64(bytes: Uint8Array): string {
  return encodeBase64Unpadded(bytes).replaceAll('+', '.')
}

/** Decodes lowercase or uppercase hex; `undefined` for odd lengths or other characters. */
export function decodeHex(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return undefined
  const bytes = new Uint8Array(text.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

/**
 * Compares two digests in time that depends only on their lengths: a verifier that stopped at the
 * first differing byte would tell a timing attacker how much of a forged digest was right.
 */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number)
  return diff === 0
}

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text)
}
