/**
 * Step-up re-authentication, brought in by its import: `stepUp: stepUp({ … })` from
 * `authchart/step-up`. With it, a built-in sensitive action (`add-passkey`,
 * `enrol-second-factor`, `remove-second-factor`, `revoke-sessions`, `link-account`,
 * `change-password`, `manage-api-keys`, `manage-organization`) asked with a stale session starts a re-authentication
 * (`{basePath}/step/reauthenticate`): the user proves a factor again, and the action resumes. Without it the core still refuses a stale session at those
 * actions, with a fresh sign-in as the proof (see `core/session/freshness.ts`).
 *
 * @example
 * ```ts
 * import { stepUp } from 'authchart/step-up'
 *
 * const config = { providers, stepUp: stepUp({ maxAge: 300, actions: { 'revoke-sessions': false } }) }
 * ```
 *
 * @module
 */
import { policyDemand } from './flows/reauthenticate/demand.js'
import { intentOf, reauthenticationRequired } from './flows/reauthenticate/gate.js'
import { respondResumePage } from './flows/reauthenticate/resume.js'
import { reauthenticateFlow, waitingReauthentication } from './flows/reauthenticate/chart.js'
import { reauthenticateModule } from './flows/reauthenticate/index.js'
import type { StepUpModule } from './config/types.js'
import { FEATURE, type StepUpOptions, type StepUpPolicyOptions } from './modules.js'

export type { StepUpModule, StepUpOptions, StepUpPolicyOptions }

const copyPolicy = (policy: StepUpPolicyOptions): StepUpPolicyOptions =>
  Object.freeze({ ...policy, ...(policy.factors ? { factors: Object.freeze([...policy.factors]) } : {}) })

/**
 * The step-up module: how recently, and by which factors, the signed-in user must have proven who
 * they are before a built-in sensitive action. By default a factor proven in the last ten minutes;
 * when the user has a second factor, only a second factor (a code or a passkey) counts. The global
 * fields apply to every action; `actions` sets one action's policy, or `false` to turn its check
 * off. The options are checked when the configuration is loaded.
 */
export function stepUp(options: StepUpOptions = {}): StepUpModule {
  const { actions, ...global } = options
  const copied: StepUpOptions = {
    ...copyPolicy(global),
    ...(actions
      ? {
          actions: Object.freeze(
            Object.fromEntries(Object.entries(actions).map(([action, policy]) => [action, policy && copyPolicy(policy)])),
          ),
        }
      : {}),
  }
  return Object.freeze({
    [FEATURE]: 'step-up' as const,
    options: Object.freeze(copied),
    flows: Object.freeze([reauthenticateModule]),
    flow: reauthenticateFlow,
    demand: policyDemand,
    waiting: waitingReauthentication,
    intentOf,
    required: reauthenticationRequired,
    outcomePages: Object.freeze({ resume: respondResumePage }),
  })
}
