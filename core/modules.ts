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
 * A leaf, as the type modules are (it imports nothing): the option types read the brand here, and
 * the modules' full shapes (`SecondFactorModule`, `StepUpModule`) are in `core/config/types.ts`.
 *
 * @module
 */

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

/** A factor a session records the proof time of (RFC 8176 values, and `email`). */
export type FactorName = 'pwd' | 'otp' | 'hwk' | 'email' | 'fed'

/** The optional features a configuration names by import. */
export type FeatureKind = 'second-factor' | 'step-up' | 'organizations' | 'api-keys' | 'service-accounts' | 'device-authorization'

/** A value branded as the module of feature `Kind`: what the option of that feature accepts. */
export interface FeatureModule<Kind extends FeatureKind> {
  readonly [FEATURE]: Kind
}

/** A flow module as a provider preset carries it (its full shape is `FlowModule`). */
export interface ProviderFlow {
  readonly id: string
}

/** The built-in sensitive actions: each changes what can sign in as the user, or who stays signed in. */
export type SensitiveActionName =
  | 'add-passkey'
  | 'enrol-second-factor'
  | 'remove-second-factor'
  | 'revoke-sessions'
  | 'link-account'
  | 'change-password'
  | 'manage-api-keys'
  | 'approve-device'
  | 'manage-organization'

/** How recently, and by which factors, a user must have proven who they are. */
export interface StepUpPolicyOptions {
  /** Seconds since the proof (default 600: ten minutes). */
  maxAge?: number | undefined
  /** The factors that count (default: any; with a second factor enrolled, only a second factor). */
  factors?: readonly FactorName[] | undefined
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
  /** `codeUsed`: a current TOTP code, already spent by an earlier sign-in. */
  | { ok: false; reason: 'wrongCode' | 'codeUsed' | 'exhausted' }
  /** Not checked: the user's codes are spent and this minute's check is taken. */
  | { ok: false; reason: 'locked'; retryAfter: number }

/** The feature a value is the module of, if it is one. */
export function featureOf(value: unknown): FeatureKind | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const kind = (value as { [FEATURE]?: unknown })[FEATURE]
  return kind === 'second-factor' || kind === 'step-up' || kind === 'organizations' || kind === 'api-keys' || kind === 'service-accounts' || kind === 'device-authorization'
    ? kind
     : undefined
}

/** The flow module a provider preset carries, if any. */
export function providerFlowOf(config: object): ProviderFlow | undefined {
  return (config as { [PROVIDER_FLOW]?: ProviderFlow })[PROVIDER_FLOW]
}
