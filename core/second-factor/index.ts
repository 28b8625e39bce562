/// <reference path="../deep-imports.d.ts" />
/**
 * The built-in second factor: TOTP (RFC 6238, through `otpauth`) with single-use backup codes.
 * A TOTP secret is kept encrypted with the auth secret (it must be read back to check codes);
 * backup codes are kept only as keyed hashes. Wrong codes are counted in the server-side store
 * under the challenge id, so a replayed older flow cookie cannot reset the count, and every code
 * is spent once (a TOTP time step per factor, a backup code per factor) however many requests
 * race with it.
 *
 * @module
 */
import { CompactEncrypt, base64url, calculateJwkThumbprint, compactDecrypt } from 'jose'
import { Secret, TOTP } from 'otpauth'
import type { Adapter, AdapterSecondFactor } from '../adapters.js'
import { hkdfSha256, randomHex, timingSafeEqual, toHex } from '../crypto.js'
import type { AuthStore } from '../store/index.js'

/** Wrong codes one challenge accepts before it is void. */
export const MAX_CODE_ATTEMPTS = 5
/** Wrong codes one user may send in {@link USER_ATTEMPT_WINDOW} seconds, across challenges. */
export const MAX_USER_ATTEMPTS = 20
/** The window of {@link MAX_USER_ATTEMPTS}, and how long a challenge's count is kept. */
export const USER_ATTEMPT_WINDOW = 15 * 60
/** TOTP parameters every authenticator app understands (RFC 6238 defaults). */
const TOTP_PERIOD = 30
const TOTP_DIGITS = 6
/** Codes of the previous and next time step are accepted too (clock drift). */
const TOTP_WINDOW = 1
/** How long a spent TOTP time step stays claimed: past every window it could be accepted in. */
export const TOTP_STEP_CLAIM_SECONDS = TOTP_PERIOD * (2 * TOTP_WINDOW + 2)

/** The store key that spends one time step of one factor. */
export const totpStepKey = (factorId: string, step: number) => `2fa:totp:${factorId}:${step}`

/** How many backup codes a user receives at enrolment. */
export const BACKUP_CODE_COUNT = 10
const BACKUP_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'

const encoder = new TextEncoder()

interface VaultKey {
  key: Uint8Array
  kid: string
}

async function vaultKey(secret: string): Promise<VaultKey> {
  const key = await hkdfSha256(secret, 'authchart.second-factor', 'authchart second factor secrets', 32)
  return { key, kid: await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256') }
}

/** Encrypts a TOTP secret for storage with the first auth secret (JWE, dir, A256GCM). */
export async function sealFactorSecret(value: string, secrets: readonly string[]): Promise<string> {
  const { key, kid } = await vaultKey(secrets[0]!)
  return new CompactEncrypt(encoder.encode(value)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid }).encrypt(key)
}

/**
 * Decrypts a stored TOTP secret with whichever auth secret sealed it (secrets rotate).
 *
 * @throws when no secret opens it (tampered, or sealed with a retired secret).
 */
export async function openFactorSecret(sealed: string, secrets: readonly string[]): Promise<string> {
  const { plaintext } = await compactDecrypt(
    sealed,
    async ({ kid }) => {
      for (const secret of secrets) {
        const candidate = await vaultKey(secret)
        if (candidate.kid === kid) return candidate.key
      }
      throw new Error('the second-factor secret was sealed with an unknown secret')
    },
    { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] },
  )
  return new TextDecoder().decode(plaintext)
}

function totpFor(secret: string, label = '', issuer = ''): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    secret: Secret.fromBase32(secret),
  })
}

/** A new TOTP secret (160 random bits, base32, as RFC 4226 recommends). */
export function createTotpSecret(): string {
  return new Secret({ size: 20 }).base32
}

/** What an authenticator app is shown: the `otpauth://` URI and its QR code as SVG. */
export async function totpEnrolment(
  secret: string,
  label: string,
  issuer: string,
): Promise<{ uri: string; qr: string }> {
  const uri = totpFor(secret, label, issuer).toString()
  // Loaded for the enrolment page alone: nothing else draws a QR code.
  const [{ create }, { render }] = await Promise.all([import('qrcode/lib/core/qrcode.js'), import('qrcode/lib/renderer/svg-tag.js')])
  return { uri, qr: render(create(uri, { errorCorrectionLevel: 'M' }), { type: 'svg', margin: 1 }) }
}

/**
 * The time step a TOTP code belongs to at `at` (epoch seconds), allowing one step of drift each
 * way; `null` for a wrong code.
 */
export function totpStep(secret: string, code: string, at: number): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const delta = totpFor(secret).validate({ token: code, timestamp: at * 1000, window: TOTP_WINDOW })
  return delta === null ? null : Math.floor(at / TOTP_PERIOD) + delta
}

/** The TOTP code of `secret` at `at` (for tests and tools). */
export function totpCode(secret: string, at: number): string {
  return totpFor(secret).generate({ timestamp: at * 1000 })
}

/** Fresh backup codes, shown once: 10 characters each (about 49 bits), as `xxxxx-xxxxx`. */
export function createBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const bytes = crypto.getRandomValues(new Uint8Array(10))
    const chars = [...bytes].map((b) => BACKUP_ALPHABET[b % BACKUP_ALPHABET.length]).join('')
    return `${chars.slice(0, 5)}-${chars.slice(5)}`
  })
}

const normalizeBackupCode = (code: string) => code.toLowerCase().replace(/[^a-z0-9]/g, '')

/** A backup code's keyed hash (HMAC-SHA-256 under a key derived from the auth secret). */
export async function hashBackupCode(code: string, secret: string): Promise<string> {
  const raw = await hkdfSha256(secret, 'authchart.backup-codes', 'authchart backup code hashes', 32)
  const key = await crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return toHex(new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(normalizeBackupCode(code)))))
}

/** The hashes a backup-codes factor keeps, space-separated. */
const hashesOf = (factor: AdapterSecondFactor) => factor.secret.split(' ').filter(Boolean)

/** A user's enrolled factors, or none when the adapter cannot store them. */
export async function enrolledFactors(adapter: Adapter | undefined, userId: string): Promise<AdapterSecondFactor[]> {
  if (!adapter?.listSecondFactors) return []
  return adapter.listSecondFactors(userId)
}

/** The result of checking a code. */
export type CodeCheck =
  | { ok: true; method: 'otp' | 'backup' }
  | { ok: false; reason: 'wrongCode' | 'exhausted' }

/** What checking a code needs. */
export interface CodeCheckInput {
  adapter: Adapter
  store: AuthStore
  secrets: readonly string[]
  userId: string
  /** The challenge the code answers: its wrong attempts are counted under this id. */
  challenge: string
  code: string
  /** Epoch seconds. */
  at: number
}

/**
 * Checks a code against a user's factors. Every wrong code counts against the challenge (and the
 * user) in the store before anything else happens, so neither a replayed flow cookie nor racing
 * requests get more than {@link MAX_CODE_ATTEMPTS} guesses.
 */
export async function checkCode(input: CodeCheckInput): Promise<CodeCheck> {
  const { adapter, store, secrets, userId, challenge, at } = input
  const attempts = `2fa:challenge:${challenge}`
  // Every submission is counted before it is checked: the limit holds however requests race.
  const attempt = await store.increment(attempts, USER_ATTEMPT_WINDOW)
  const userAttempt = await store.increment(`2fa:user:${userId}`, USER_ATTEMPT_WINDOW)
  if (attempt > MAX_CODE_ATTEMPTS || userAttempt > MAX_USER_ATTEMPTS) return { ok: false, reason: 'exhausted' }
  const code = input.code.trim()
  const factors = await enrolledFactors(adapter, userId)
  for (const factor of factors.filter((f) => f.type === 'totp')) {
    const step = totpStep(await openFactorSecret(factor.secret, secrets), code, at)
    // A code is good for one sign-in: its time step is spent once per factor.
    if (step !== null && (await store.claim(totpStepKey(factor.id, step), TOTP_STEP_CLAIM_SECONDS))) {
      await store.reset(attempts)
      return { ok: true, method: 'otp' }
    }
  }
  const hash = await hashBackupCode(code, secrets[0]!)
  for (const factor of factors.filter((f) => f.type === 'backup-codes')) {
    const remaining = hashesOf(factor)
    const match = remaining.find((candidate) => timingSafeEqual(candidate, hash))
    if (match && (await store.claim(`2fa:backup:${factor.id}:${match}`, 24 * 60 * 60))) {
      await adapter.updateSecondFactor!({ id: factor.id, secret: remaining.filter((h) => h !== match).join(' ') })
      await store.reset(attempts)
      return { ok: true, method: 'backup' }
    }
  }
  // The last allowed guess was wrong: the challenge is void now, not one request later.
  return { ok: false, reason: attempt >= MAX_CODE_ATTEMPTS ? 'exhausted' : 'wrongCode' }
}

/** A random challenge id. */
export function newChallenge(): string {
  return randomHex(16)
}
