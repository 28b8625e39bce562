/**
 * The step-up module's verdict on a sensitive action: the signed-in user's proof must be recent
 * enough for the action's configured policy (`./policy.ts`), else the action is stopped and the
 * re-authentication asks for that proof.
 *
 * @module
 */
import type { RequestContext } from '../../config/types.js'
import type { StepUpDemand } from '../../modules.js'
import { currentSession } from '../../session/current.js'
import { factorTimesOf, freshnessOf } from '../../session/freshness.js'
import type { Factor } from '../../session/verification.js'
import { stepUpPolicyFor, type SensitiveAction } from './policy.js'

/**
 * The verdict under the configured policy: `undefined` lets the request through (fresh enough, the
 * action's check turned off, or nobody signed in — the route answers a signed-out request itself).
 */
export async function policyDemand(ctx: RequestContext, action: SensitiveAction): Promise<StepUpDemand | undefined> {
  const current = await currentSession(ctx)
  if (!current) return undefined
  // A database adapter that keeps no session details (an Auth.js adapter without `listSessions`)
  // cannot record a re-authentication, so asking would never end: the action runs as in Auth.js.
  if (current.strategy === 'database' && typeof ctx.config.adapter?.listSessions !== 'function') return undefined
  const policy = await stepUpPolicyFor(ctx, action, current.user.id)
  if (!policy) return undefined
  const verdict = freshnessOf(factorTimesOf(current), { maxAge: policy.maxAge, factors: policy.factors as Factor[] }, ctx.at)
  return verdict.fresh ? undefined : { action, policy }
}
