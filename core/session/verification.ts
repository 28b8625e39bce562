/**
 * When each factor was last proven in a session: a small map, factor → epoch seconds (`fva`, as
 * Clerk calls it), set at sign-in and on re-authentication. A JWT carries it as the `fva` claim
 * (an Auth.js deployment reading the token ignores it); a database session keeps it beside its row
 * (adapters that keep session details). Step-up policies measure freshness from it.
 *
 * A session without the map (issued before it existed, or by Auth.js) counts as proven at its
 * sign-in time (`auth_time`, or the row's `createdAt`) by the factors its `amr` names, else by a
 * single first factor of any kind; without a sign-in time, never, so its first sensitive action asks.
 *
 * @module
 */
import type { AdapterSession } from '../adapters.js'
import type { JWT } from '../jwt.js'

/** The JWT claim that carries the per-factor verification times. */
export const FACTOR_VERIFICATION_CLAIM = 'fva'

/**
 * A factor a user can prove, by its RFC 8176 `amr` name: a password, a one-time code (TOTP or a
 * backup code), a hardware key (passkey), a code or link sent to the e-mail address, a federated
 * provider.
 */
export type Factor = 'pwd' | 'otp' | 'hwk' | 'email' | 'fed'

/** Every factor, strongest kinds of second factor first. */
export const FACTORS: readonly Factor[] = ['hwk', 'otp', 'pwd', 'email', 'fed']

/** The factors that sign a user in on their own. */
const FIRST_FACTORS: readonly Factor[] = ['pwd', 'hwk', 'email', 'fed']

/** When each factor was last proven (epoch seconds); a factor never proven is absent. */
export type FactorTimes = Partial<Record<Factor, number>>

const isFactor = (value: unknown): value is Factor => (FACTORS as readonly unknown[]).includes(value)

/** A time as stored: a finite number (epoch seconds). */
const isTime = (value: unknown): value is number => Number.isFinite(value)

/** The factor an `amr` value names (a backup code proves the one-time-code factor), if any. */
export function factorOfAmr(amr: string): Factor | undefined {
  if (amr === 'backup') return 'otp'
  return isFactor(amr) ? amr : undefined
}

/** The verification times of a fresh sign-in: every factor it used, proven `at`. */
export function signInFactorTimes(amr: readonly string[], at: number): FactorTimes {
  const times: FactorTimes = {}
  for (const value of amr) {
    const factor = factorOfAmr(value)
    if (factor) times[factor] = at
  }
  return times
}

/**
 * The map as read from untrusted storage: only known factors with finite, non-negative times
 * (a token is sealed by us, but an application's codec or a hand-edited row may hold anything).
 */
function validTimes(value: unknown): FactorTimes | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined
  const times: FactorTimes = {}
  for (const [key, time] of Object.entries(value)) {
    if (isFactor(key) && isTime(time) && time >= 0) times[key] = time
  }
  return times
}

/** A session without the map: proven at its sign-in time by what its `amr` names, else by any first factor. */
function legacyTimes(signedInAt: unknown, amr: unknown): FactorTimes {
  if (!isTime(signedInAt)) return {}
  const named = Array.isArray(amr) ? amr.map((value) => factorOfAmr(String(value))).filter(isFactor) : []
  const factors = named.length > 0 ? named : FIRST_FACTORS
  return Object.fromEntries(factors.map((factor) => [factor, signedInAt]))
}

/** When each factor was last proven in a JWT session (see the module notes for tokens without the claim). */
export function factorTimesOfToken(token: JWT): FactorTimes {
  return validTimes(token[FACTOR_VERIFICATION_CLAIM]) ?? legacyTimes(token.auth_time, token.amr)
}

/** When each factor was last proven in a database session (see the module notes for rows without them). */
export function factorTimesOfSession(session: AdapterSession): FactorTimes {
  const createdAt = session.createdAt ? Math.floor(new Date(session.createdAt).getTime() / 1000) : undefined
  return validTimes(session.fva) ?? legacyTimes(createdAt, session.amr)
}

/** `times` with `factor` proven `at` (a later proof never moves a time backwards). */
export function withFactorVerified(times: FactorTimes, factor: Factor, at: number): FactorTimes {
  return { ...times, [factor]: Math.max(times[factor] ?? 0, at) }
}

/**
 * The most recent time any of `factors` (every factor when not given) was proven, or `undefined`
 * when none ever was.
 */
export function lastVerified(times: FactorTimes, factors: readonly Factor[] = FACTORS): number | undefined {
  const proven = factors.map((factor) => times[factor]).filter((time) => time !== undefined)
  return proven.length > 0 ? Math.max(...proven) : undefined
}
