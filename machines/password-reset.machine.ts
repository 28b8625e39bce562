/**
 * Forgotten password: a request (an address) → the reset limits (per address, per client) → a
 * single-use link (purpose `password-reset`, bound to the user, 15 minutes) sent to a known
 * address, a notice of the same cost to an unknown one → the same answer either way. The link's
 * page (which spends nothing) posts a new password → the policy → the token spent and the hash
 * stored → every session of the user ended, and their other reset and verification links → the
 * sign-in page.
 *
 * Every path on which a password is stored reaches `endingSessions` before any answer: the graph
 * check in the tests holds the chart to it.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  ENDS_SESSIONS_TAG,
  guards,
  initialContext,
  outputs,
  PASSWORD_RESET,
  SETS_PASSWORD_TAG,
  type PasswordResetContext,
  type PasswordResetEvent,
  type PasswordResetTag,
} from './password-reset.logic.js'

export { PASSWORD_RESET, PasswordResetContext, type PasswordResetEvent, type PasswordResetTag } from './password-reset.logic.js'

/** Builds the forgotten-password machine. */
export const buildPasswordReset = () =>
  setup({
    types: {} as { context: PasswordResetContext; events: PasswordResetEvent; tags: PasswordResetTag },
    guards,
    actions: {
      rememberRequest: assign(assignments.rememberRequest),
      rememberReset: assign(assignments.rememberReset),
      rememberUser: assign(assignments.rememberUser),
      recordDenial: assign(assignments.recordDenial),
    },
  }).createMachine({
    id: PASSWORD_RESET,
    version: '1',
    description: 'Sends a single-use reset link, answered alike for every address, and sets a new password, ending every session of the user.',
    initial: 'idle',
    context: initialContext,
    output: outputs.finalStateOutcome,
    states: {
      idle: {
        tags: 'awaitsRequest',
        description: 'The forgotten-password form (intent `forgot`) or the reset link\'s page (intent `reset`) is posted to POST /callback/password.',
        on: {
          'password.forgot': { target: 'requesting', actions: 'rememberRequest' },
          'password.reset': { target: 'resetting', actions: 'rememberReset' },
        },
      },
      requesting: {
        description: 'A reset request: counted, then answered alike for a known and an unknown address.',
        initial: 'admittingRequest',
        states: {
          admittingRequest: {
            tags: 'effect.admitResetRequest',
            description: 'Counts the request against the reset limits, per address and per client address.',
            on: {
              'admitResetRequest.done': 'sendingLink',
              'admitResetRequest.failed': [
                { guard: 'isLimited', target: '#password-reset.limited', actions: 'recordDenial' },
                { target: '#password-reset.failed', actions: 'recordDenial' },
              ],
            },
          },
          sendingLink: {
            tags: 'effect.sendResetLink',
            description: 'A known address: a reset link issued and sent. An unknown one: the same store work and a notice, so the answer takes as long.',
            on: {
              'sendResetLink.done': '#password-reset.checkEmail',
              'sendResetLink.failed': { target: '#password-reset.failed', actions: 'recordDenial' },
            },
          },
        },
      },
      resetting: {
        description: 'A new password from the reset link: checked, stored, then every session ended.',
        initial: 'checkingNewPassword',
        states: {
          checkingNewPassword: {
            tags: 'effect.checkNewPassword',
            description: 'Checks that the token is a live reset token (without spending it) and the new password passes the policy.',
            on: {
              'checkNewPassword.done': 'settingPassword',
              'checkNewPassword.failed': [
                { guard: 'isTokenRefused', target: '#password-reset.refused', actions: 'recordDenial' },
                { guard: 'isPasswordInvalid', target: '#password-reset.invalid', actions: 'recordDenial' },
                { target: '#password-reset.failed', actions: 'recordDenial' },
              ],
            },
          },
          settingPassword: {
            tags: ['effect.setPassword', SETS_PASSWORD_TAG],
            description: 'Spends the token (once, atomically) and stores the new hash; the address counts as proven.',
            on: {
              'setPassword.done': { target: 'endingSessions', actions: 'rememberUser' },
              'setPassword.failed': [
                { guard: 'isTokenRefused', target: '#password-reset.refused', actions: 'recordDenial' },
                { target: '#password-reset.failed', actions: 'recordDenial' },
              ],
            },
          },
          endingSessions: {
            tags: ['effect.endSessions', ENDS_SESSIONS_TAG],
            description: "Ends every session of the user (database rows, or every JWT signed in until now) and the user's other reset and verification links.",
            on: {
              'endSessions.done': '#password-reset.passwordReset',
              'endSessions.failed': { target: '#password-reset.failed', actions: 'recordDenial' },
            },
          },
        },
      },
      checkEmail: {
        type: 'final',
        description: 'The same answer for every address: the "check your e-mail" page.',
        output: outputs.toAnswer,
      },
      limited: {
        type: 'final',
        description: 'Too many reset requests for this address or from this client: `EmailSignin` with `retryAfter`.',
        output: outputs.toDenial,
      },
      refused: {
        type: 'final',
        description: 'An unknown, spent, expired or superseded reset token (or one of another purpose): the `Verification` error.',
        output: outputs.toDenial,
      },
      invalid: {
        type: 'final',
        description: 'The new password was refused by the policy: back with `CredentialsSignin` and the reason code; the token stays good.',
        output: outputs.toDenial,
      },
      passwordReset: {
        type: 'final',
        description: 'The password is set and every session ended: to the sign-in page.',
        output: outputs.toAnswer,
      },
      failed: {
        type: 'final',
        description: 'Something unexpected failed: the Configuration error page.',
        output: outputs.toDenial,
      },
    },
  })

/** The forgotten-password machine; marked pure, so a bundle that never reads it does not build it. */
export const passwordResetMachine = /* @__PURE__ */ buildPasswordReset()
