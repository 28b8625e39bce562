/**
 * The notation of every built-in chart, by chart id: what the diagrams, the inspector, the test kit
 * and the gate check walk beside the table the engine runs (`core/charts/`). Nothing on the request
 * path imports this module, so no request loads xstate; `core/flows/loaded.ts` registers it.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'

/** Loads the xstate machine of each built-in chart. */
export const BUILT_IN_NOTATIONS: Readonly<Record<string, () => Promise<AnyStateMachine>>> = {
  'credentials-signin': () => import('./credentials-signin.machine.js').then((module) => module.credentialsSignInMachine),
  'device-authorization': () => import('./device-authorization.machine.js').then((module) => module.deviceAuthorizationMachine),
  'email-signin': () => import('./email-signin.machine.js').then((module) => module.emailSignInMachine),
  logout: () => import('./logout.machine.js').then((module) => module.logoutMachine),
  'oauth-signin': () => import('./oauth-signin.machine.js').then((module) => module.oauthSignInMachine),
  'organization-invitation': () =>
    import('./organization-invitation.machine.js').then((module) => module.organizationInvitationMachine),
  'organization-membership': () =>
    import('./organization-membership.machine.js').then((module) => module.organizationMembershipMachine),
  'password-change': () => import('./password-change.machine.js').then((module) => module.passwordChangeMachine),
  'password-reset': () => import('./password-reset.machine.js').then((module) => module.passwordResetMachine),
  'password-signin': () => import('./password-signin.machine.js').then((module) => module.passwordSignInMachine),
  'password-signup': () => import('./password-signup.machine.js').then((module) => module.passwordSignUpMachine),
  reauthenticate: () => import('./reauthenticate.machine.js').then((module) => module.reauthenticateMachine),
  session: () => import('./session.machine.js').then((module) => module.sessionMachine),
  'signin-completion': () => import('./signin-completion.machine.js').then((module) => module.signInCompletionMachine),
  'totp-enrolment': () => import('./totp-enrolment.machine.js').then((module) => module.totpEnrolmentMachine),
  'webauthn-signin': () => import('./webauthn-signin.machine.js').then((module) => module.webauthnSignInMachine),
}
