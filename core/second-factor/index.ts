/**
 * The built-in second factor: TOTP (RFC 6238, through `otpauth`) with single-use backup codes.
 * A TOTP secret is kept encrypted with the auth secret (it must be read back to check codes);
 * backup codes are kept only as keyed hashes. Wrong codes are counted in the server-side store
 * under the challenge id, so a replayed older flow cookie cannot reset the count, and every code
 * is spent once (a TOTP time step per factor, claimed in the store; a backup code per factor,
 * removed from the factor in one conditional update) however many requests race with it.
 * The TOTP code itself (`otpauth`, the QR encoder) is in `./totp.ts`, loaded on first use.
 *
 * @module
 */
import { CompactEncrypt, base64url, calculateJwkThumbprint, compactDecrypt } from 'jose'
import type { Adapter, AdapterSecondFactor } from '../adapters.js'
import type { SecondFactorCodeInput } from '../config/types.js'
import type { SecondFactorCodeCheck } from '../modules.js'
import { hkdfSha256, timingSafeEqual, toHex } from '../crypto.js'
import type { AuthStore } from '../store/index.js'
import { enrolledFactors, USER_ATTEMPT_WINDOW, userAttemptsKey } from './stored.js'
import { TOTP_PERIOD, TOTP_WINDOW } from './totp-parameters.js'

export { enrolledFactors, newChallenge, removeSecondFactors, USER_ATTEMPT_WINDOW, userAttemptsKey } from './stored.js'

/** Wrong codes one challenge (one sign-in at the second-factor step) accepts before it is void. */
export const MAX_CODE_ATTEMPTS = 5
/** Codes one user may have checked in {@link USER_ATTEMPT_WINDOW} seconds, across challenges. */
export const MAX_USER_ATTEMPTS = 10
/**
 * Once a user's {@link MAX_USER_ATTEMPTS} are spent, one code per this many seconds is still
 * checked for them, each from a challenge that has had no such late check: someone else's wrong
 * codes keep the owner out for a minute, not for the window, and a guesser still gets at most
 * {@link MAX_USER_ATTEMPTS} + 16 checked codes per user per window, each late one costing a new
 * sign-in.
 */
export const USER_LOCK_SLOT = 60

/** The store key of the one late check a locked user gets in the minute `at` falls in. */
export const userSlotKey = (userId: string, at: number) => `2fa:user-slot:${userId}:${Math.floor(at / USER_LOCK_SLOT)}`
const challengeAttemptsKey = (challenge: string) => `2fa:challenge:${challenge}`
const lateCheckKey = (challenge: string) => `2fa:late:${challenge}`
/** How long a spent TOTP time step stays claimed: past every window it could be accepted in. */
// Stryker disable next-line ArithmeticOperator: eq#second-factor-claim-window
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

/**
 * The TOTP code functions, loaded with `otpauth` when a code is first checked or an enrolment
 * starts: a configuration whose users never use a second factor never loads them.
 */
export const loadTotp = (): Promise<typeof import('./totp.js')> => import('./totp.js')

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
  // Stryker disable next-line BooleanLiteral: eq#second-factor-key-unexported
  const key = await crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return toHex(new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(normalizeBackupCode(code)))))
}

/** The hashes a backup-codes factor keeps, space-separated. */
// Stryker disable next-line MethodExpression: eq#second-factor-empty-hash
const hashesOf = (factor: AdapterSecondFactor) => factor.secret.split(' ').filter(Boolean)

/** The result of checking a code (the second-factor module's contract). */
export type CodeCheck = SecondFactorCodeCheck

/** What checking a code needs (the second-factor module's contract). */
export type CodeCheckInput = SecondFactorCodeInput

/**
 * Checks a code against a user's factors. Every code counts against the user, and every checked
 * code against its challenge, in the store before anything else happens, so neither a replayed
 * flow cookie nor racing requests get more guesses:
 *
 * - a challenge gets {@link MAX_CODE_ATTEMPTS} checks, then it is void (sign in again);
 * - a user gets {@link MAX_USER_ATTEMPTS} per {@link USER_ATTEMPT_WINDOW}, across challenges;
 *   beyond them, one check per {@link USER_LOCK_SLOT} seconds, each from a challenge that has not
 *   had one (a code refused because the minute's check is taken is not checked: `locked`);
 * - a right code resets the challenge's and the user's count.
 */
export async function checkCode(input: CodeCheckInput): Promise<CodeCheck> {
  const { adapter, store, secrets, userId, challenge, at } = input
  // Every submission is counted before it is checked: the limits hold however requests race.
  const userAttempt = await store.increment(userAttemptsKey(userId), USER_ATTEMPT_WINDOW)
  const late = userAttempt > MAX_USER_ATTEMPTS
  if (late) {
    // The user's codes are spent, perhaps by someone else who knows the password. A challenge
    // that had its late check is void; otherwise the first code of each minute is still checked,
    // so the owner is kept out for a minute at most once the wrong codes stop, and each late
    // guess costs a new sign-in.
    if ((await store.get(lateCheckKey(challenge))) !== null) return { ok: false, reason: 'exhausted' }
    if (!(await store.claim(userSlotKey(userId, at), USER_LOCK_SLOT))) {
      return { ok: false, reason: 'locked', retryAfter: USER_LOCK_SLOT - (at % USER_LOCK_SLOT) }
    }
    // Stryker disable next-line StringLiteral: eq#second-factor-late-mark
    await store.put(lateCheckKey(challenge), '1', USER_ATTEMPT_WINDOW)
  }
  const attempts = challengeAttemptsKey(challenge)
  const attempt = await store.increment(attempts, USER_ATTEMPT_WINDOW)
  if (attempt > MAX_CODE_ATTEMPTS) return { ok: false, reason: 'exhausted' }
  const method = await spendCode(input)
  if (method) {
    // The right code: whoever sent the wrong ones, the owner starts again with a full count.
    await Promise.all([store.reset(attempts), store.reset(userAttemptsKey(userId))])
    return { ok: true, method }
  }
  // The last allowed guess was wrong: the challenge is void now, not one request later.
  return { ok: false, reason: late || attempt >= MAX_CODE_ATTEMPTS ? 'exhausted' : 'wrongCode' }
}

/** Spends `input.code` if it is a current TOTP code or an unused backup code of the user. */
async function spendCode(input: CodeCheckInput): Promise<'otp' | 'backup' | null> {
  const { adapter, store, secrets, userId, at } = input
  const code = input.code.trim()
  const factors = await enrolledFactors(adapter, userId)
  const totpFactors = factors.filter((f) => f.type === 'totp')
  if (totpFactors.length > 0) {
    const { totpStep } = await loadTotp()
    for (const factor of totpFactors) {
      const step = totpStep(await openFactorSecret(factor.secret, secrets), code, at)
      // A code is good for one sign-in: its time step is spent once per factor.
      if (step !== null && (await store.claim(totpStepKey(factor.id, step), TOTP_STEP_CLAIM_SECONDS))) return 'otp'
    }
  }
  const hash = await hashBackupCode(code, secrets[0]!)
  // Stryker disable next-line MethodExpression,ConditionalExpression: eq#second-factor-backup-only
  for (const factor of factors.filter((f) => f.type === 'backup-codes')) {
    const match = hashesOf(factor).find((candidate) => timingSafeEqual(candidate, hash))
    if (match && (await spendBackupCode(adapter, store, factor, match))) return 'backup'
  }
  return null
}

/** How long a lock on one factor's backup codes lives at most (a crashed holder's is freed then). */
const BACKUP_LOCK_SECONDS = 10
/** How often, and how long apart (ms), a spend waits for another spend of the same factor. */
const BACKUP_LOCK_TRIES = 50
const BACKUP_LOCK_WAIT = 20

/**
 * Spends one backup code: removes its hash from the factor in the adapter, where the spent state
 * lives (a store that forgets, as the memory store does on a restart, cannot bring it back).
 * Through the adapter's one conditional update when it has one; otherwise the spends of one factor
 * take turns under a lock in the store, each re-reading the factor before writing it, so two
 * codes spent at once are both removed and one code is spent once.
 */
export async function spendBackupCode(
  adapter: Adapter,
  store: AuthStore,
  factor: AdapterSecondFactor,
  hash: string,
): Promise<boolean> {
  if (adapter.spendBackupCode) return adapter.spendBackupCode({ id: factor.id, hash })
  const lock = `2fa:backup-lock:${factor.id}`
  for (let attempt = 0; !(await store.claim(lock, BACKUP_LOCK_SECONDS)); attempt++) {
    if (attempt >= BACKUP_LOCK_TRIES) throw new Error('backup codes are locked by another sign-in')
    await new Promise((resolve) => setTimeout(resolve, BACKUP_LOCK_WAIT))
  }
  try {
    const current = (await enrolledFactors(adapter, factor.userId)).find((f) => f.id === factor.id)
    // Stryker disable next-line ArrayDeclaration: eq#second-factor-missing-factor
    const hashes = current ? hashesOf(current) : []
    if (!hashes.includes(hash)) return false
    await adapter.updateSecondFactor!({ id: factor.id, secret: hashes.filter((h) => h !== hash).join(' ') })
    return true
  } finally {
    await store.reset(lock)
  }
}

