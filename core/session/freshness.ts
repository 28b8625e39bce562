/**
 * Step-up policies: how recently, and by which factors, the signed-in user must have proven who
 * they are before a sensitive action. Measured from the session's per-factor verification times
 * (`./verification.ts`), read through the one authority for who is signed in.
 *
 * @module
 */
import type { RequestContext } from '../http/context.js'
import { currentSession, type CurrentSession } from './current.js'
import { type Factor, type FactorTimes, factorTimesOfSession, factorTimesOfToken, FACTORS, lastVerified } from './verification.js'

/** How recently, and by what, a user must have proven who they are. */
export interface StepUpPolicy {
  /** Seconds since the proof (default 600: ten minutes). */
  maxAge?: number
  /** The factors that count (default: any). */
  factors?: readonly Factor[]
  /**
   * The assurance level the proof must reach: `2` counts only a second factor (a one-time code
   * or a passkey), `1` (the default) any factor.
   */
  aal?: 1 | 2
}

/** The default freshness: a factor proven in the last ten minutes. */
export const DEFAULT_STEP_UP_MAX_AGE = 600

const SECOND_FACTORS: readonly Factor[] = ['otp', 'hwk']

/** The factors `policy` accepts. */
export function acceptedFactors(policy: StepUpPolicy): readonly Factor[] {
  const named = policy.factors ?? FACTORS
  return policy.aal === 2 ? named.filter((factor) => SECOND_FACTORS.includes(factor)) : named
}

/** The verdict on a session's freshness. */
export type Freshness =
  | { fresh: true; verifiedAt: number }
  | {
      fresh: false
      /** `signedOut`: no live session; `stale`: none of the accepted factors proven recently enough. */
      reason: 'signedOut' | 'stale'
      /** The accepted factors, for the page that asks (and the `WWW-Authenticate` detail). */
      factors: readonly Factor[]
      maxAge: number
    }

/**
 * Whether `times` satisfy `policy` at `at`. A time in the future (a skewed clock) counts as now;
 * a negative or non-finite `maxAge` accepts nothing older than now.
 */
export function freshnessOf(times: FactorTimes | null, policy: StepUpPolicy, at: number): Freshness {
  const factors = acceptedFactors(policy)
  const maxAge = Number.isFinite(policy.maxAge) ? Math.max(0, policy.maxAge!) : DEFAULT_STEP_UP_MAX_AGE
  if (!times) return { fresh: false, reason: 'signedOut', factors, maxAge }
  const verifiedAt = lastVerified(times, factors)
  if (verifiedAt === undefined || at - verifiedAt > maxAge) return { fresh: false, reason: 'stale', factors, maxAge }
  return { fresh: true, verifiedAt }
}

/** When each factor was last proven in a live session. */
export function factorTimesOf(current: CurrentSession): FactorTimes {
  return current.strategy === 'jwt' ? factorTimesOfToken(current.token) : factorTimesOfSession(current.session)
}

/** The request's freshness under `policy`: its live session (through the authority) and its factor times. */
export async function requestFreshness(ctx: RequestContext, policy: StepUpPolicy): Promise<Freshness> {
  const current = await currentSession(ctx)
  return freshnessOf(current ? factorTimesOf(current) : null, policy, ctx.at)
}
