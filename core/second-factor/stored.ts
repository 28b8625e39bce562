/**
 * What the core knows of stored second factors without the second-factor module: whether a user
 * has one (one adapter call), and how to remove them. No code checking lives here (that is
 * `./index.ts`, reached through `authchart/second-factor`), so a configuration that names no second
 * factor bundles neither `otpauth` nor the QR encoder, and still sees a user's stored factor.
 *
 * @module
 */
import type { Adapter, AdapterSecondFactor } from '../adapters.js'
import { randomHex } from '../crypto.js'

/** How long a user's count of codes lasts (seconds), and how long a challenge's count is kept. */
export const USER_ATTEMPT_WINDOW = 15 * 60

/** The store key counting a user's codes in the current window. */
export const userAttemptsKey = (userId: string) => `2fa:user:${userId}`

/** A user's enrolled factors, or none when the adapter cannot store them. */
export async function enrolledFactors(adapter: Adapter | undefined, userId: string): Promise<AdapterSecondFactor[]> {
  if (!adapter?.listSecondFactors) return []
  return adapter.listSecondFactors(userId)
}

/**
 * Turns two-step verification off for `userId`: removes their TOTP factor and their backup codes,
 * and gives back how many factors were removed. The one place a second factor is removed (a policy
 * that asks for a recent sign-in wraps this function). The backup codes go first: a removal cut
 * short leaves the user with their authenticator app, never with codes and no app.
 */
export async function removeSecondFactors(adapter: Adapter | undefined, userId: string): Promise<number> {
  if (!adapter?.deleteSecondFactor) return 0
  // Only this user's: an adapter that returned another user's row does not make it theirs to remove.
  const factors = (await enrolledFactors(adapter, userId)).filter((factor) => factor.userId === userId)
  const ordered = [...factors.filter((f) => f.type === 'backup-codes'), ...factors.filter((f) => f.type === 'totp')]
  for (const factor of ordered) await adapter.deleteSecondFactor(factor.id)
  return ordered.length
}

/** A random challenge id. */
export function newChallenge(): string {
  return randomHex(16)
}
