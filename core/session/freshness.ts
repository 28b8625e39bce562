/**
 * Step-up policies: how recently, and by which factors, the signed-in user must have proven who
 * they are before a sensitive action. Measured from the session's per-factor verification times
 * (`./verification.ts`), read through the one authority for who is signed in.
 *
 * @module
 */
import type { RequestContext } from '../http/context.js'
import type { SensitiveActionName, StepUpDemand } from '../modules.js'
import type { ResponseInternal } from '../types.js'
import { stoppedRequestAnswer } from '../flows/reauthenticate/challenge.js'
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

/**
 * The verdict on a built-in sensitive action (`undefined` lets the request through): the step-up
 * module's policy when the configuration names one, else the core's rule ({@link freshSignInDemand}).
 */
export function sensitiveActionDemand(ctx: RequestContext, action: SensitiveActionName): Promise<StepUpDemand | undefined> {
  const module = ctx.config.stepUp
  return module ? module.demand(ctx, action) : freshSignInDemand(ctx, action)
}

/**
 * The verdict on a built-in sensitive action without the step-up module: a factor proven in the
 * last ten minutes lets it through, anything older is stopped (a copied session cookie must not
 * be enough to add a passkey or turn a second factor off). `undefined` also when nobody is signed
 * in (the route answers a signed-out request itself), and for a database session whose adapter
 * keeps no session details (without `listSessions` no proof time is recorded, as in Auth.js).
 */
export async function freshSignInDemand(ctx: RequestContext, action: SensitiveActionName): Promise<StepUpDemand | undefined> {
  const current = await currentSession(ctx)
  if (!current) return undefined
  if (current.strategy === 'database' && typeof ctx.config.adapter!.listSessions !== 'function') return undefined
  const verdict = freshnessOf(factorTimesOf(current), {}, ctx.at)
  return verdict.fresh ? undefined : { action, policy: { maxAge: verdict.maxAge, factors: [...verdict.factors] } }
}

/**
 * The answer to a stopped action without the step-up module: a fresh sign-in, then back to the
 * action. A browser navigation is sent to `{basePath}/signin?callbackUrl=<the action>`; a fetch
 * gets 401 with the same URL (a page's script cannot follow a redirect into a sign-in form).
 */
export function freshSignInRequired(ctx: RequestContext, demand: StepUpDemand): ResponseInternal {
  const action = `${ctx.origin}${ctx.request.url.pathname}${ctx.request.url.search}`
  return stoppedRequestAnswer(ctx, demand, `${ctx.authUrl}/signin?${new URLSearchParams({ callbackUrl: action })}`)
}
