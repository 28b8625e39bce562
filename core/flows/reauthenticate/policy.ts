/**
 * Which built-in actions ask for a recent proof, and how recent: the step-up policy of each, from
 * the defaults, the configuration's global `stepUp` and its per-action entries.
 *
 * @module
 */
import type { RequestContext } from '../../config/types.js'
import { enrolledFactors } from '../../second-factor/stored.js'
import { acceptedFactors, DEFAULT_STEP_UP_MAX_AGE, type StepUpPolicy } from '../../session/freshness.js'

/**
 * The built-in sensitive actions: each changes what can sign in as the user, or who stays signed
 * in, so a copied session cookie must not be enough for it.
 */
export const SENSITIVE_ACTIONS = ['add-passkey', 'enrol-second-factor', 'remove-second-factor', 'revoke-sessions', 'link-account', 'change-password', 'manage-api-keys', 'approve-device', 'manage-organization'] as const
export type SensitiveAction = (typeof SENSITIVE_ACTIONS)[number]

/** How the page names each action ("Confirm it's you to …"). */
export const ACTION_LABELS: Readonly<Record<string, string>> = {
  'add-passkey': 'add a passkey',
  'enrol-second-factor': 'turn on two-step verification',
  'remove-second-factor': 'turn off two-step verification',
  'revoke-sessions': 'sign out your other sessions',
  'link-account': 'link another account',
  'change-password': 'change your password',
  'manage-api-keys': 'manage your API keys',
  'approve-device': 'sign a device in',
  'manage-organization': 'delete or hand over your organisation',
  app: 'continue',
}

/** How the page names a revocation by what its form asked ("sign out everywhere" is not "other sessions"). */
const REVOKE_LABELS: Readonly<Record<string, string>> = {
  all: 'sign out everywhere, this browser too',
  others: 'sign out of every other session',
  one: 'sign out a session',
}

/**
 * The name of the action being confirmed, for the page's heading, the e-mailed code and the
 * resume page: the action's label, told apart by what its sealed form asked where one action has
 * several forms (`revoke-sessions`: one session, the others, or everywhere).
 */
export function actionLabelOf(action: string, fields: Readonly<Record<string, string>> = {}): string {
  if (action === 'revoke-sessions') {
    const revoke = fields.revoke
    if (revoke !== undefined && Object.hasOwn(REVOKE_LABELS, revoke)) return REVOKE_LABELS[revoke]!
  }
  return (Object.hasOwn(ACTION_LABELS, action) ? ACTION_LABELS[action] : undefined) ?? ACTION_LABELS.app!
}

/** The step-up configuration: a global policy, and per action a policy or `false` (off). */
export interface StepUpConfig extends StepUpPolicy {
  actions?: Partial<Record<SensitiveAction, StepUpPolicy | false>>
}

/** A policy as the gate applies it: seconds and the accepted factors, strongest first. */
export interface ResolvedStepUp {
  maxAge: number
  factors: string[]
}

/** Whether the user has a second factor (a TOTP app, with its backup codes). */
async function hasSecondFactor(ctx: RequestContext, userId: string): Promise<boolean> {
  return (await enrolledFactors(ctx.config.adapter, userId)).length > 0
}

/**
 * The policy of `action` for `userId`, or `null` when the configuration turned it off. By default
 * a factor proven in the last ten minutes; when the user has a second factor, only a second factor
 * (a one-time code or a passkey) counts: the strongest enrolled factor, so a stolen password does
 * not unlock the action.
 */
export async function stepUpPolicyFor(ctx: RequestContext, action: SensitiveAction, userId: string): Promise<ResolvedStepUp | null> {
  const config: StepUpConfig = ctx.config.stepUp?.options ?? {}
  const own = config.actions?.[action]
  if (own === false) return null
  const { actions: _actions, ...global } = config
  const policy: StepUpPolicy = { ...global, ...own }
  if (policy.aal === undefined && policy.factors === undefined && (await hasSecondFactor(ctx, userId))) policy.aal = 2
  const maxAge = Number.isFinite(policy.maxAge) ? Math.max(0, policy.maxAge!) : DEFAULT_STEP_UP_MAX_AGE
  return { maxAge, factors: [...acceptedFactors(policy)] }
}
