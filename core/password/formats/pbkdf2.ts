/**
 * PBKDF2-HMAC hashes in the two common string forms:
 * - Django: `pbkdf2_sha256$<iterations>$<salt>$<base64 digest>` (salt as text, digest padded
 *   standard base64; `pbkdf2_sha1` too, Django's older default);
 * - passlib / PHC: `$pbkdf2-sha256$<rounds>$<salt>$<digest>` in passlib's adapted base64 (`.` for
 *   `+`, no padding), also `$pbkdf2-sha512$`, and the PHC variant with `i=<rounds>`.
 *
 * @module
 */
import { bytesEqual, decodeAdaptedBase64, decodeBase64, utf8 } from '../encoding.js'
import { pbkdf2Digest } from '../kdf.js'
import type { StoredHashFormat } from './types.js'

/** The most iterations accepted from a stored hash (Django 5 uses 870 000–1 000 000). */
export const PBKDF2_MAX_ITERATIONS = 10_000_000

const DIGESTS = { sha1: 'SHA-1', sha256: 'SHA-256', sha512: 'SHA-512' } as const
type DigestName = keyof typeof DIGESTS

function iterations(text: string): number | undefined {
  if (!/^[1-9]\d{0,7}$/.test(text)) return undefined
  const value = Number(text)
  return value <= PBKDF2_MAX_ITERATIONS ? value : undefined
}

async function matches(digest: DigestName, password: string, salt: Uint8Array<ArrayBuffer>, rounds: number, expected: Uint8Array) {
  if (expected.length < 16 || expected.length > 64) return false
  const computed = await pbkdf2Digest(DIGESTS[digest], utf8(password), salt, rounds, expected.length)
  return bytesEqual(computed, expected)
}

const DJANGO = /^pbkdf2_(sha1|sha256)\$(\d{1,8})\$([^$]{1,128})\$([A-Za-z0-9+/]{20,88}={0,2})$/

/** Django's `pbkdf2_sha256$…` (and `pbkdf2_sha1$…`). */
export const djangoPbkdf2Format: StoredHashFormat = {
  id: 'django-pbkdf2',
  recognises: (stored) => stored.startsWith('pbkdf2_sha256$') || stored.startsWith('pbkdf2_sha1$'),
  async verify(stored, password) {
    const match = DJANGO.exec(stored)
    if (!match) return false
    const [, digest, roundsText, salt, digestText] = match as unknown as [string, DigestName, string, string, string]
    const rounds = iterations(roundsText)
    const expected = decodeBase64(digestText)
    return rounds !== undefined && expected !== undefined && matches(digest, password, utf8(salt), rounds, expected)
  },
}

const PASSLIB = /^\$pbkdf2-(sha256|sha512)\$(?:i=)?(\d{1,8})\$([./A-Za-z0-9+]{0,1400})\$([./A-Za-z0-9+]{22,88})$/

/** passlib's `$pbkdf2-sha256$…` / `$pbkdf2-sha512$…` and the PHC `i=` variant. */
export const phcPbkdf2Format: StoredHashFormat = {
  id: 'phc-pbkdf2',
  recognises: (stored) => stored.startsWith('$pbkdf2-sha256$') || stored.startsWith('$pbkdf2-sha512$'),
  async verify(stored, password) {
    const match = PASSLIB.exec(stored)
    if (!match) return false
    const [, digest, roundsText, saltText, digestText] = match as unknown as [string, DigestName, string, string, string]
    const rounds = iterations(roundsText)
    // passlib writes `.` where base64 has `+`; PHC writers use `+`: both decode to the same bytes.
    const decode = (text: string) => decodeAdaptedBase64(text.replaceAll('+', '.'))
    const salt = decode(saltText)
    const expected = decode(digestText)
    return rounds !== undefined && salt !== undefined && expected !== undefined && matches(digest, password, salt, rounds, expected)
  },
}
