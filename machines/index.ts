/**
 * The flow machines: pure xstate charts with no I/O, usable for diagrams, model-based tests and
 * extension by applications.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import { credentialsSignInMachine } from './credentials-signin.machine.js'
import { emailSignInMachine } from './email-signin.machine.js'
import { logoutMachine } from './logout.machine.js'
import { oauthSignInMachine } from './oauth-signin.machine.js'
import { sessionMachine } from './session.machine.js'
import { signInCompletionMachine } from './signin-completion.machine.js'
import { totpEnrolmentMachine } from './totp-enrolment.machine.js'
import { reauthenticateMachine } from './reauthenticate.machine.js'
import { webauthnSignInMachine } from './webauthn-signin.machine.js'

/**
 * Every built-in flow's chart, one line each: the diagrams, the test kit's `flowMachine` and the
 * second-factor and freshness gate checks read this list, so a flow added here is drawn, testable
 * and checked.
 */
export const flowMachines: readonly AnyStateMachine[] = [
  sessionMachine,
  credentialsSignInMachine,
  oauthSignInMachine,
  emailSignInMachine,
  webauthnSignInMachine,
  signInCompletionMachine,
  totpEnrolmentMachine,
  logoutMachine,
  reauthenticateMachine,
]

export {
  sessionMachine,
  SessionContext,
  SessionPolicy,
  type SessionEvent,
  type SessionTag,
} from './session.machine.js'
export {
  credentialsSignInMachine,
  CredentialsSignInContext,
  CredentialsPolicy,
  type CredentialsSignInEvent,
  type CredentialsSignInTag,
} from './credentials-signin.machine.js'
export {
  oauthSignInMachine,
  OAuthSignInContext,
  OAuthPolicy,
  type AuthorizationRequest,
  type OAuthSignInEvent,
  type OAuthSignInTag,
} from './oauth-signin.machine.js'
export {
  emailSignInMachine,
  EmailSignInContext,
  type EmailSignInEvent,
  type EmailSignInTag,
  type PendingCode,
} from './email-signin.machine.js'
export {
  buildSignInCompletion,
  CONTINUE,
  DENY,
  EXTENSION_POINTS,
  ExtensionError,
  SECOND_FACTOR_GATE,
  SESSION_ISSUING_STATES,
  signInCompletionContext,
  signInCompletionMachine,
  SignInCompletionContext,
  SignInPolicy,
  SIGN_IN_COMPLETION,
  validateExtension,
  type CompletionExtension,
  type ExtensionPoint,
  type SignInCompletionEvent,
  type SignInCompletionTag,
} from './signin-completion.machine.js'
export {
  totpEnrolmentMachine,
  TotpEnrolmentContext,
  TOTP_ENROLMENT,
  type TotpEnrolmentEvent,
  type TotpEnrolmentTag,
} from './totp-enrolment.machine.js'
export {
  webauthnSignInMachine,
  WebAuthnSignInContext,
  WebAuthnCeremony,
  decideCeremony,
  type CeremonyOptions,
  type FoundUser,
  type WebAuthnSignInEvent,
  type WebAuthnSignInTag,
} from './webauthn-signin.machine.js'
export {
  logoutMachine,
  LogoutContext,
  LOGOUT,
  FRONT_CHANNEL_PAGE,
  type LogoutEvent,
  type LogoutTag,
} from './logout.machine.js'
export type { EffectDone, EffectFailed, EffectResult, Timestamped } from './shared/events.js'
export { AWAITS_REQUEST, EFFECT_TAG_PREFIX } from './shared/events.js'
export type { FlowOutcome, FlowResponse, SessionCookieChange, VerifiedIdentity } from './shared/outcome.js'
export {
  reauthenticateMachine,
  ReauthenticateContext,
  REAUTHENTICATE,
  SESSION_MARKING_STATE,
  type Intent,
  type ReauthenticateEvent,
  type ReauthenticateTag,
} from './reauthenticate.machine.js'
export {
  FRESHNESS_GATE_TAG,
  freshnessGateViolations,
  reauthenticationViolations,
  secondFactorGateViolations,
  SENSITIVE_TAG,
} from './checks.js'
