/**
 * The sign-in check with migration: a stored hash is verified (and replaced when outdated or
 * imported); a user without one may be vouched for once by the system the team is leaving.
 *
 * @module
 */
import type { PasswordHasher } from './hashing.js'

/** The app's check against its old system, for a user who has no local hash yet. */
export type VerifyLegacyPassword<U> = (user: U, password: string) => Promise<boolean>

/** The legacy system's check and the user it is asked about. */
export interface LegacyCheck<U> {
  user: U
  verifyLegacyPassword: VerifyLegacyPassword<U>
}

/** What {@link verifyOrMigrate} found. */
export interface MigrationResult {
  valid: boolean
  /**
   * Set when the caller must store this hash for the user now: the stored one was outdated or
   * imported, or the legacy system vouched for the password. Storing it is what makes the legacy
   * check happen at most once per user.
   */
  newHash?: string
  /** How the password was checked: the stored hash, the legacy system, or neither (no hash, no hook). */
  checkedBy: 'stored' | 'legacy' | 'none'
  /** The legacy check threw (its system is down, say): not a wrong password, a refusal to decide. */
  legacyFailed?: true
}

/**
 * Checks `password` for a user whose stored hash is `stored` (`null` when the user has none).
 *
 * - With a stored hash, only it decides; the legacy system is never asked. A valid but outdated
 *   or imported hash yields `newHash`.
 * - Without one, `legacy.verifyLegacyPassword(user, password)` is asked; on `true` the result
 *   carries `newHash` (our hash of the password) for the caller to store before answering.
 * - Without either, a full-cost dummy hash runs and the answer is `valid: false`, so the time
 *   taken does not tell whether the user has a password.
 *
 * Every path costs about one hash; none throws for a wrong password or malformed hash (only if
 * hashing itself fails).
 *
 * @example In the sign-in step, for the user found by address (or none):
 * ```ts
 * const stored = user ? await adapter.getUserPassword(user.id) : null
 * const result = user
 *   ? await verifyOrMigrate(hasher, stored, password, options.verifyLegacyPassword && { user, verifyLegacyPassword: options.verifyLegacyPassword })
 *   : (await hasher.dummyVerify(password), { valid: false })
 * if (result.valid && result.newHash) await adapter.setUserPassword(user.id, result.newHash)
 * ```
 */
export async function verifyOrMigrate<U>(
  hasher: PasswordHasher,
  stored: string | null | undefined,
  password: string,
  legacy?: LegacyCheck<U>,
): Promise<MigrationResult> {
  if (typeof stored === 'string' && stored.length > 0) {
    const { valid, needsRehash } = await hasher.verify(stored, password)
    if (valid && needsRehash) return { valid, checkedBy: 'stored', newHash: await hasher.hash(password) }
    return { valid, checkedBy: 'stored' }
  }
  if (!legacy) {
    await hasher.dummyVerify(password)
    return { valid: false, checkedBy: 'none' }
  }
  let vouched: boolean
  try {
    vouched = (await legacy.verifyLegacyPassword(legacy.user, password)) === true
  } catch {
    await hasher.dummyVerify(password)
    return { valid: false, checkedBy: 'legacy', legacyFailed: true }
  }
  if (!vouched) {
    await hasher.dummyVerify(password)
    return { valid: false, checkedBy: 'legacy' }
  }
  return { valid: true, checkedBy: 'legacy', newHash: await hasher.hash(password) }
}
