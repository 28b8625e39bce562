/**
 * Optional features are imports: what a configuration names is what a bundler links. The second
 * factor (`totp()` from `authchart/second-factor`), step-up re-authentication (`stepUp()` from
 * `authchart/step-up`) and WebAuthn (the `Passkey` / `WebAuthn` provider presets) are values that
 * carry their flows; the core reaches a feature's code only through its value, so a configuration
 * without it links none of it (`otpauth`, the QR encoder, `@simplewebauthn/server`, the flows).
 *
 * Each value is branded with {@link FEATURE}, a `unique symbol`: the option types accept only the
 * values these functions return, so a plain object is a compile error, and `resolveConfig`
 * refuses one at load with the line to write instead.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import type { FlowBinding, FlowModule, RequestContext } from './config/types.js'
import type { FlowDefinition } from './engine/flow.js'
import type { ResponseInternal } from './types.js'
import type { Factor } from './session/verification.js'

/**
 * The brand of a feature module's value: only the feature's own function sets it. A registered
 * symbol, so that a value made by one copy of the package is known to another (two bundles of an
 * application, a test's fresh modules).
 */
export const FEATURE: unique symbol = Symbol.for('authchart.feature')

/**
 * Where a provider preset puts the flow module it runs (`Passkey`, `WebAuthn`): the registry reads
 * it, so the core imports no WebAuthn code of its own.
 */
export const PROVIDER_FLOW: unique symbol = Symbol.for('authchart.providerFlow')

/** The built-in sensitive actions: each changes what can sign in as the user, or who stays signed in. */
export type SensitiveActionName = 'add-passkey' | 'enrol-second-factor' | 'remove-second-factor' | 'revoke-sessions' | 'link-account'

/** How recently, and by which factors, a user must have proven who they are. */
export interface StepUpPolicyOptions {
  /** Seconds since the proof (default 600: ten minutes). */
  maxAge?: number | undefined
  /** The factors that count (default: any; with a second factor enrolled, only a second factor). */
  factors?: readonly Factor[] | undefined
  /** `2` counts only a second factor (a one-time code or a passkey); `1`, the default, any factor. */
  aal?: 1 | 2 | undefined
}

/** The options of `stepUp()`: the global policy, and per action a policy or `false` (no check). */
export interface StepUpOptions extends StepUpPolicyOptions {
  actions?: Partial<Record<SensitiveActionName, StepUpPolicyOptions | false>> | undefined
}

/** A request the freshness gate stops: the action, and the proof it asks for. */
export interface StepUpDemand {
  action: SensitiveActionName
  policy: { maxAge: number; factors: string[] }
}

/** The result of checking a second-factor code (see `core/second-factor/index.ts`). */
export type SecondFactorCodeCheck =
  | { ok: true; method: 'otp' | 'backup' }
  | { ok: false; reason: 'wrongCode' | 'exhausted' }
  | { ok: false; reason: 'locked'; retryAfter: number }

/** What checking a code needs: the user, the challenge the code answers, the code, the time. */
export interface SecondFactorCodeInput {
  adapter: NonNullable<RequestContext['adapter']>
  store: RequestContext['config']['store']
  secrets: readonly string[]
  userId: string
  challenge: string
  code: string
  at: number
}

/** A page a flow of the feature ends with, by the name its chart gives it. */
export type OutcomePage = (ctx: RequestContext, data: Record<string, unknown>) => ResponseInternal

/** The value of `secondFactor: totp()`: the TOTP enrolment flow and the code check of a sign-in. */
export interface SecondFactorModule {
  readonly [FEATURE]: 'second-factor'
  /** The flows the feature adds (the enrolment at `{basePath}/two-factor`). */
  readonly flows: readonly FlowModule[]
  /** The issuer shown in the authenticator app (default: the request's host). */
  readonly issuer: string | undefined
  /** Checks (and spends) a TOTP or backup code of the user, counting attempts in the store. */
  readonly checkCode: (input: SecondFactorCodeInput) => Promise<SecondFactorCodeCheck>
  /** The pages its flows end with (`backup-codes`). */
  readonly outcomePages: Readonly<Record<string, OutcomePage>>
}

/** The value of `stepUp: stepUp({ … })`: the policies and the re-authentication flow. */
export interface StepUpModule {
  readonly [FEATURE]: 'step-up'
  /** The policies as configured (defaults applied per request). */
  readonly options: Readonly<StepUpOptions>
  /** The flows the feature adds (the re-authentication at `{basePath}/step/reauthenticate`). */
  readonly flows: readonly FlowModule[]
  /** The re-authentication flow a stopped sensitive action starts. */
  readonly flow: FlowDefinition<AnyStateMachine, RequestContext>
  /** The gate's verdict for `action` under the configured policy: `undefined` lets it through. */
  readonly demand: (ctx: RequestContext, action: SensitiveActionName) => Promise<StepUpDemand | undefined>
  /** The re-authentication waiting at a provider's callback for this answer, if any. */
  readonly waiting: (ctx: RequestContext, params: Record<string, string>) => Promise<FlowBinding<Record<string, string>> | undefined>
  /** What resumes after the proof: the stopped request, as the re-authentication seals it. */
  readonly intentOf: (ctx: RequestContext) => unknown
  /** The answer to a stopped request: the re-authentication page for a browser, 401 for a fetch. */
  readonly required: (ctx: RequestContext, demand: StepUpDemand, url: string) => ResponseInternal
  /** The pages its flows end with (`resume`). */
  readonly outcomePages: Readonly<Record<string, OutcomePage>>
}

/** The feature a value is the module of, if it is one. */
export function featureOf(value: unknown): 'second-factor' | 'step-up' | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const kind = (value as { [FEATURE]?: unknown })[FEATURE]
  return kind === 'second-factor' || kind === 'step-up' ? kind : undefined
}

/** The flow module a provider preset carries, if any. */
export function providerFlowOf(config: object): FlowModule | undefined {
  return (config as { [PROVIDER_FLOW]?: FlowModule })[PROVIDER_FLOW]
}
