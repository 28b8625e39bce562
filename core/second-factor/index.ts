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
import * as base64url from 'jose/base64url'
import { CompactEncrypt } from 'jose/jwe/compact/encrypt'
import { calculateJwkThumbprint } from 'jose/jwk/thumbprint'
import { compactDecrypt } from 'jose/jwe/compact/decrypt'
import type { Adapter, AdapterSecondFactor } from '../adapters.js'
import type { SecondFactorCodeInput } from '../config/types.js'
import type { SecondFactorCodeCheck } from '../modules.js'
import { hkdfSha256, sha256Hex, timingSafeEqual, toHex } from '../crypto.js'
import { addressBucket } from '../store/limits.js'
import type { AuthStore } from '../store/index.js'
import { enrolledFactors, USER_ATTEMPT_WINDOW, userAttemptsKey } from './stored.js'
import { TOTP_PERIOD, TOTP_WINDOW } from './totp-parameters.js'

export { enrolledFactors, newChallenge, removeSecondFactors, USER_ATTEMPT_WINDOW, userAttemptsKey } from './stored.js'

/** Wrong codes one challenge (one sign-in at the second-factor step) accepts before it is void. */
export const MAX_CODE_ATTEMPTS = 5
/**
 * Codes one user may have checked in {@link USER_ATTEMPT_WINDOW} seconds from clients that are
 * not a known device, across challenges (and codes one known device may have checked).
 */
export const MAX_USER_ATTEMPTS = 10
/**
 * Once a user's {@link MAX_USER_ATTEMPTS} are spent, each client (address bucket) still has this
 * many codes checked for the user in the window: the codes were spent by others (someone who knows
 * the password, on their own address), not by it.
 */
export const CLEAN_CLIENT_CODES = 3
/**
 * How many codes from such clean clients are checked per user per window past the user's limit:
 * the bound on what a guesser with many addresses gains from them.
 */
export const MAX_CLEAN_CLIENT_CHECKS = 10
/**
 * Once a user's (or a client's, or a known device's) limit is spent, one code per this many
 * seconds is still checked for it, each from a challenge that has had no such late check.
 */
export const USER_LOCK_SLOT = 60

/** The store key of the one late check a locked user gets in the minute `at` falls in. */
export const userSlotKey = (userId: string, at: number) => `2fa:user-slot:${userId}:${Math.floor(at / USER_LOCK_SLOT)}`
const challengeAttemptsKey = (challenge: string) => `2fa:challenge:${challenge}`
const lateCheckKey = (challenge: string) => `2fa:late:${challenge}`
/**
 * The store key counting one client's codes for one user past the user's limit (the bucket is
 * hashed: no address in clear).
 */
export const clientAttemptsKey = (userId: string, bucketHash: string) => `2fa:client:${userId}:${bucketHash}`
/** The store key of the one notice per window that someone is trying the user's codes. */
export const codesTriedKey = (userId: string) => `2fa:codes-tried:${userId}`
/** The store key counting the codes of clean clients checked past the user's limit. */
export const cleanChecksKey = (userId: string) => `2fa:clean:${userId}`
/** The store key counting one known device's codes. */
export const deviceAttemptsKey = (userId: string, device: string) => `2fa:device:${userId}:${device}`
/** The store key of the one late check a known device gets in the minute `at` falls in. */
export const deviceSlotKey = (userId: string, device: string, at: number) =>
  `2fa:device-slot:${userId}:${device}:${Math.floor(at / USER_LOCK_SLOT)}`
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

/** A TOTP code's shape; anything else can only be a backup code. */
const TOTP_SHAPE = /^\d{6}$/

/**
 * Checks a code against a user's factors. Every code is counted in the store (atomic increments)
 * before it is checked, so neither a replayed flow cookie nor racing requests get more guesses, and
 * a store that cannot count fails the check (its error is thrown; nothing is checked):
 *
 * - a challenge gets {@link MAX_CODE_ATTEMPTS} checks, then it is void (sign in again);
 * - a known device (`client.device`: it completed a sign-in of this user with a second factor
 *   before, or the first factor was the user's passkey) is counted on its own,
 *   {@link MAX_USER_ATTEMPTS} per {@link USER_ATTEMPT_WINDOW};
 * - any other client is counted per user ({@link MAX_USER_ATTEMPTS} per window across clients);
 *   past the user's limit, each client (address bucket) still gets {@link CLEAN_CLIENT_CODES}
 *   checks, up to {@link MAX_CLEAN_CLIENT_CHECKS} per user per window from all clients;
 * - past its limit, a client (or device) gets one TOTP check per {@link USER_LOCK_SLOT} seconds,
 *   each from a challenge that has not had one (one refused because the minute's check is taken is
 *   not checked: `locked`); a backup code is still checked, limited by its challenge alone;
 * - a right code resets the challenge's count and those of its client (or device) and user.
 */
export async function checkCode(input: CodeCheckInput): Promise<CodeCheck> {
  const { store, userId, challenge, at } = input
  const device = input.client?.device
  // A backup code is a factor the guesser of TOTP codes lacks: TOTP lockouts do not hold it back.
  const totpShaped = TOTP_SHAPE.test(input.code.trim())
  const late =
    device === undefined
      ? await isClientPastLimit(input)
      : (await store.increment(deviceAttemptsKey(userId, device), USER_ATTEMPT_WINDOW)) > MAX_USER_ATTEMPTS
  const lateTotp = late && totpShaped
  if (lateTotp) {
    // A challenge that had its late check is void; otherwise the first code of each minute is
    // still checked, so a guesser's each late guess costs a new sign-in.
    if ((await store.get(lateCheckKey(challenge))) !== null) return { ok: false, reason: 'exhausted' }
    const slot = device === undefined ? userSlotKey(userId, at) : deviceSlotKey(userId, device, at)
    if (!(await store.claim(slot, USER_LOCK_SLOT))) {
      return { ok: false, reason: 'locked', retryAfter: USER_LOCK_SLOT - (at % USER_LOCK_SLOT) }
    }
    // Stryker disable next-line StringLiteral: eq#second-factor-late-mark
    await store.put(lateCheckKey(challenge), '1', USER_ATTEMPT_WINDOW)
  }
  const attempts = challengeAttemptsKey(challenge)
  const attempt = await store.increment(attempts, USER_ATTEMPT_WINDOW)
  if (attempt > MAX_CODE_ATTEMPTS) return { ok: false, reason: 'exhausted' }
  const spent = await spendCode(input)
  if (spent === 'otp' || spent === 'backup') {
    // The right code: whoever sent the wrong ones, this client starts again with a full count.
    const counters =
      device === undefined
        ? [userAttemptsKey(userId), clientAttemptsKey(userId, await clientBucketHash(input))]
        : [deviceAttemptsKey(userId, device)]
    await Promise.all([attempts, ...counters].map((key) => store.reset(key)))
    return { ok: true, method: spent }
  }
  // The last allowed guess was wrong: the challenge is void now, not one request later.
  if (lateTotp || attempt >= MAX_CODE_ATTEMPTS) return { ok: false, reason: 'exhausted' }
  return { ok: false, reason: spent === 'used' ? 'codeUsed' : 'wrongCode' }
}

/** The client's address bucket, hashed with the auth secret (store keys hold no address in clear). */
const clientBucketHash = (input: Pick<CodeCheckInput, 'client' | 'secrets'>) =>
  sha256Hex(`${addressBucket(input.client?.address ?? '')}\u0000${input.secrets[0]!}`)

/** The store key counting the codes of the client at `address` (none: the unknown client) for `userId`. */
export async function clientAttemptsKeyOf(userId: string, address: string | undefined, secrets: readonly string[]): Promise<string> {
  return clientAttemptsKey(userId, await clientBucketHash({ client: { address }, secrets }))
}

/**
 * Counts a code of a client that is not a known device against the user and tells whether the
 * client is past its limits. Each decision reads one atomic counter, so the limits hold exactly
 * however requests race: the user's first {@link MAX_USER_ATTEMPTS}; past them, the client's
 * first {@link CLEAN_CLIENT_CODES} (codes past the user's limit, counted per client) while the
 * user's {@link MAX_CLEAN_CLIENT_CHECKS} last.
 */
async function isClientPastLimit(input: CodeCheckInput): Promise<boolean> {
  const { store, userId } = input
  const userAttempt = await store.increment(userAttemptsKey(userId), USER_ATTEMPT_WINDOW)
  if (userAttempt <= MAX_USER_ATTEMPTS) return false
  // The owner is told once per window (the claim holds across instances and right-code resets).
  if (userAttempt === MAX_USER_ATTEMPTS + 1 && input.onCodesTried && (await store.claim(codesTriedKey(userId), USER_ATTEMPT_WINDOW))) {
    await input.onCodesTried().catch(() => undefined)
  }
  // The user's codes were spent, by others if this client has sent few since: it is still
  // checked, within an allowance that bounds what many addresses gain.
  const clientAttempt = await store.increment(clientAttemptsKey(userId, await clientBucketHash(input)), USER_ATTEMPT_WINDOW)
  if (clientAttempt > CLEAN_CLIENT_CODES) return true
  return (await store.increment(cleanChecksKey(userId), USER_ATTEMPT_WINDOW)) > MAX_CLEAN_CLIENT_CHECKS
}

/**
 * Spends `input.code` if it is a current TOTP code or an unused backup code of the user: which one
 * it was, `used` for a current TOTP code already spent, `null` otherwise.
 */
async function spendCode(input: CodeCheckInput): Promise<'otp' | 'backup' | 'used' | null> {
  const { adapter, store, secrets, userId, at } = input
  const code = input.code.trim()
  const factors = await enrolledFactors(adapter, userId)
  const totpFactors = factors.filter((f) => f.type === 'totp')
  let used = false
  if (totpFactors.length > 0) {
    const { totpStep } = await loadTotp()
    for (const factor of totpFactors) {
      const step = totpStep(await openFactorSecret(factor.secret, secrets), code, at)
      if (step === null) continue
      // A code is good for one sign-in: its time step is spent once per factor.
      if (await store.claim(totpStepKey(factor.id, step), TOTP_STEP_CLAIM_SECONDS)) return 'otp'
      used = true
    }
  }
  const hash = await hashBackupCode(code, secrets[0]!)
  // Stryker disable next-line MethodExpression,ConditionalExpression: eq#second-factor-backup-only
  for (const factor of factors.filter((f) => f.type === 'backup-codes')) {
    const match = hashesOf(factor).find((candidate) => timingSafeEqual(candidate, hash))
    if (match && (await spendBackupCode(adapter, store, factor, match))) return 'backup'
  }
  return used ? 'used' : null
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
  const lock = await lockBackupCodes(store, factor.id)
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

/** Takes the turn of one backup-code factor's writers; the caller resets the key it returns. */
async function lockBackupCodes(store: AuthStore, factorId: string): Promise<string> {
  const lock = `2fa:backup-lock:${factorId}`
  for (let attempt = 0; !(await store.claim(lock, BACKUP_LOCK_SECONDS)); attempt++) {
    if (attempt >= BACKUP_LOCK_TRIES) throw new Error('backup codes are locked by another sign-in')
    await new Promise((resolve) => setTimeout(resolve, BACKUP_LOCK_WAIT))
  }
  return lock
}

/**
 * Replaces the stored backup codes of `factor` with `secret` (the new codes' hashes). Under the
 * spends' turn where spends read and write the factor: a spend racing the replacement would
 * otherwise write the old codes back, less the one it spent. An adapter's conditional spend
 * removes a hash only where it still is, so it needs no turn.
 */
export async function replaceBackupCodes(adapter: Adapter, store: AuthStore, factor: AdapterSecondFactor, secret: string): Promise<void> {
  if (adapter.spendBackupCode) {
    await adapter.updateSecondFactor!({ id: factor.id, secret })
    return
  }
  const lock = await lockBackupCodes(store, factor.id)
  try {
    await adapter.updateSecondFactor!({ id: factor.id, secret })
  } finally {
    await store.reset(lock)
  }
}

