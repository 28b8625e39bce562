/**
 * Password sign-in, the first factor: address and password → count the attempt against the
 * credentials rate limits (per identifier, per client address, in the shared store) → verify the
 * stored hash (for an unknown address, or a user without a password, a dummy verification of the
 * same cost, so the answer takes as long) → re-hash an outdated hash → hand the user to the sign-in
 * completion, which alone runs the `signIn` callback, the second factor and the session.
 *
 * A wrong password and an unknown address end alike in `rejected`. The right password for an
 * address nobody has proven yet, with `requireEmailVerification`, ends in `unverified`: only the
 * password's holder learns that (and is told to verify), and no session is issued.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  guards,
  initialContext,
  outputs,
  PASSWORD_SIGN_IN,
  type PasswordSignInContext,
  type PasswordSignInEvent,
  type PasswordSignInTag,
} from './password-signin.logic.js'

export { PASSWORD_SIGN_IN, PasswordSignInContext, type PasswordSignInEvent, type PasswordSignInTag } from './password-signin.logic.js'

/** Builds the password sign-in machine: the notation the diagrams, the model-based tests and the compiler read. */
export const buildPasswordSignIn = () =>
  setup({
    types: {} as { context: PasswordSignInContext; events: PasswordSignInEvent; tags: PasswordSignInTag },
    guards,
    actions: {
      rememberSubmission: assign(assignments.rememberSubmission),
      rememberUser: assign(assignments.rememberUser),
      forgetPassword: assign(assignments.forgetPassword),
      recordDenial: assign(assignments.recordDenial),
    },
  }).createMachine({
    id: PASSWORD_SIGN_IN,
    version: '1',
    description: 'Checks an address and password against the stored hash, then hands the user to the sign-in completion.',
    initial: 'idle',
    context: initialContext,
    output: outputs.finalStateOutcome,
    states: {
      idle: {
        tags: 'awaitsRequest',
        description: 'The sign-in form is posted (POST /callback/password, CSRF-checked).',
        on: { 'password.signin': { target: 'admittingAttempt', actions: 'rememberSubmission' } },
      },
      admittingAttempt: {
        tags: 'effect.admitAttempt',
        description: 'Counts the attempt against the credentials rate limits (per address typed, per client address).',
        on: {
          'admitAttempt.done': 'verifyingPassword',
          'admitAttempt.failed': [
            { guard: 'isRateLimited', target: 'limited', actions: 'recordDenial' },
            { target: 'failed', actions: 'recordDenial' },
          ],
        },
      },
      verifyingPassword: {
        tags: 'effect.verifyPassword',
        description:
          'Verifies the password against the stored hash; an unknown address or a user without a password gets a dummy verification of the same cost.',
        on: {
          'verifyPassword.done': [
            { guard: 'needsRehash', target: 'rehashingPassword', actions: 'rememberUser' },
            { target: 'verified', actions: ['rememberUser', 'forgetPassword'] },
          ],
          'verifyPassword.failed': [
            { guard: 'isPasswordRejected', target: 'rejected', actions: 'recordDenial' },
            { guard: 'isAddressUnverified', target: 'unverified', actions: 'recordDenial' },
            { target: 'failed', actions: 'recordDenial' },
          ],
        },
      },
      rehashingPassword: {
        tags: 'effect.rehashPassword',
        description: 'The hash has outdated parameters or algorithm: the password is hashed again and stored (a failure is logged, the sign-in goes on).',
        on: {
          'rehashPassword.done': { target: 'verified', actions: 'forgetPassword' },
          'rehashPassword.failed': { target: 'verified', actions: 'forgetPassword' },
        },
      },
      verified: {
        type: 'final',
        description: 'The password is right: hand the user to the sign-in completion (second factor, session).',
        output: outputs.toCompletion,
      },
      rejected: {
        type: 'final',
        description: 'A wrong password or an unknown address, answered alike: back to sign-in with `CredentialsSignin`.',
        output: outputs.toDenial,
      },
      unverified: {
        type: 'final',
        description: 'The right password for an address not yet proven: no session; back to sign-in with code `email_unverified`.',
        output: outputs.toDenial,
      },
      limited: {
        type: 'final',
        description: 'Too many attempts: `CredentialsSignin` with code `rate_limited` and `retryAfter`; no hash is verified.',
        output: outputs.toDenial,
      },
      failed: {
        type: 'final',
        description: 'Something unexpected failed: the Configuration error page.',
        output: outputs.toDenial,
      },
    },
  })

/** The password sign-in machine; marked pure, so a bundle that never reads it does not build it. */
export const passwordSignInMachine = /* @__PURE__ */ buildPasswordSignIn()
