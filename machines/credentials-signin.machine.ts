/**
 * Credentials sign-in, the first factor: submit → count the attempt against the rate limits →
 * `authorize` → (database sessions) find the user
 * the credentials account is linked to → hand the verified user to the sign-in completion, which
 * asks the `signIn` callback and issues the session. A rejected attempt ends in `rejected`
 * (CredentialsSignin with its `code`); anything unexpected in `failed` (Configuration).
 *
 * Under the `database` strategy the user is stored for real (Auth.js silently fails here, its issues
 * #9636 and #3729): the id `authorize` returns is the credentials account's `providerAccountId`, so
 * the user is found through `getUserByAccount`, never by e-mail address.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  CREDENTIALS_SIGN_IN,
  guards,
  initialContext,
  outputs,
  type CredentialsSignInContext,
  type CredentialsSignInEvent,
  type CredentialsSignInTag,
} from './credentials-signin.logic.js'

export {
  CREDENTIALS_SIGN_IN,
  CredentialsPolicy,
  CredentialsSignInContext,
  type AuthorizedUser,
  type CredentialsSignInEvent,
  type CredentialsSignInTag,
} from './credentials-signin.logic.js'

/**
 * Builds the credentials sign-in machine: the notation the diagrams, the model-based tests and
 * the chart compiler read (the engine runs the compiled chart).
 */
export const buildCredentialsSignIn = () => setup({
  types: {} as {
    context: CredentialsSignInContext
    events: CredentialsSignInEvent
    tags: CredentialsSignInTag
  },
  guards,
  actions: {
    rememberSubmission: assign(assignments.rememberSubmission),
    rememberUser: assign(assignments.rememberUser),
    rememberStoredUser: assign(assignments.rememberStoredUser),
    recordDenial: assign(assignments.recordDenial),
  },
}).createMachine({
  id: CREDENTIALS_SIGN_IN,
  version: '3',
  description: 'Checks credentials with the application, then hands the user to the sign-in completion.',
  initial: 'idle',
  context: initialContext,
  output: outputs.finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'The sign-in form is posted (POST /callback/:provider, CSRF-checked).',
      on: { 'credentials.submit': { target: 'admittingAttempt', actions: 'rememberSubmission' } },
    },
    admittingAttempt: {
      tags: 'effect.admitAttempt',
      description:
        'Counts the attempt against the rate limits (per identifier, per client address) in the shared store.',
      on: {
        'admitAttempt.done': 'authorizing',
        'admitAttempt.failed': [
          { guard: 'isRateLimited', target: 'limited', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    authorizing: {
      tags: 'effect.authorize',
      description: "Runs the provider's `authorize` with the submitted credentials.",
      on: {
        'authorize.done': [
          { guard: 'isDatabaseStrategy', target: 'lookingUpAccount', actions: 'rememberUser' },
          { target: 'verified', actions: 'rememberUser' },
        ],
        'authorize.failed': [
          { guard: 'isCredentialsRejected', target: 'rejected', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    lookingUpAccount: {
      tags: 'effect.lookUpAccount',
      description: 'Finds the stored user linked to this credentials account (getUserByAccount).',
      on: {
        'lookUpAccount.done': { target: 'verified', actions: 'rememberStoredUser' },
        'lookUpAccount.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    verified: {
      type: 'final',
      description: 'The credentials are good: hand the user over to the sign-in completion.',
      output: outputs.toCompletion,
    },
    rejected: {
      type: 'final',
      description: 'authorize rejected the credentials: back to sign-in with `CredentialsSignin`.',
      output: outputs.toDenial,
    },
    limited: {
      type: 'final',
      description:
        'Too many attempts: back to sign-in with `CredentialsSignin`, code `rate_limited` and `retryAfter`; authorize is not called.',
      output: outputs.toDenial,
    },
    failed: {
      type: 'final',
      description: 'Something unexpected failed: the Configuration error page.',
      output: outputs.toDenial,
    },
  },
})

/** The credentials sign-in machine; marked pure, so a bundle that never reads it does not build it. */
export const credentialsSignInMachine = /* @__PURE__ */ buildCredentialsSignIn()
