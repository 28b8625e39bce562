/**
 * A signed-in user's password: change it, set one (a user who signed up with OAuth, a passkey or
 * e-mail), or remove it while another way of signing in remains. The route asks for a recent
 * proof first (the `change-password` sensitive action, step-up), and the one session authority
 * says who is signed in → the request checked (the policy for a new password) → the hash stored
 * → the user's other sessions ended (on by default) → back where the form came from.
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
  PASSWORD_CHANGE,
  SETS_PASSWORD_TAG,
  type PasswordChangeContext,
  type PasswordChangeEvent,
  type PasswordChangeTag,
} from './password-change.logic.js'

export { PASSWORD_CHANGE, PasswordChangeContext, type PasswordChangeEvent, type PasswordChangeTag } from './password-change.logic.js'

/** Builds the password change machine. */
export const buildPasswordChange = () =>
  setup({
    types: {} as { context: PasswordChangeContext; events: PasswordChangeEvent; tags: PasswordChangeTag },
    guards,
    actions: {
      rememberChange: assign(assignments.rememberChange),
      forgetPassword: assign(assignments.forgetPassword),
      recordDenial: assign(assignments.recordDenial),
    },
  }).createMachine({
    id: PASSWORD_CHANGE,
    version: '1',
    description: "Changes, sets or removes a signed-in user's password behind step-up, ending the other sessions.",
    initial: 'idle',
    context: initialContext,
    output: outputs.finalStateOutcome,
    states: {
      idle: {
        tags: 'awaitsRequest',
        description: 'The password settings form is posted (POST /signin/password with intent `change`, `set` or `remove`), past the step-up gate.',
        on: { 'password.change': { target: 'checkingChange', actions: 'rememberChange' } },
      },
      checkingChange: {
        tags: 'effect.checkChange',
        description:
          'Finds who is signed in (the one session authority), that they have a password to change or remove (or none, to set), and that a new one passes the policy.',
        on: {
          'checkChange.done': [
            { guard: 'isRemoval', target: 'removingPassword' },
            { target: 'storingPassword' },
          ],
          'checkChange.failed': [
            { guard: 'isInvalid', target: 'invalid', actions: 'recordDenial' },
            { guard: 'isRefused', target: 'refused', actions: 'recordDenial' },
            { target: 'failed', actions: 'recordDenial' },
          ],
        },
      },
      storingPassword: {
        tags: ['effect.storePassword', SETS_PASSWORD_TAG],
        description: "Stores the new password's hash, and ends the user's pending reset and verification links.",
        on: {
          'storePassword.done': [
            { guard: 'endsOtherSessions', target: 'endingOtherSessions', actions: 'forgetPassword' },
            { target: 'changed', actions: 'forgetPassword' },
          ],
          'storePassword.failed': { target: 'failed', actions: 'recordDenial' },
        },
      },
      removingPassword: {
        tags: 'effect.removePassword',
        description: 'Removes the password, only while another way of signing in remains (a passkey, a linked account, an e-mail provider).',
        on: {
          'removePassword.done': { target: 'endingOtherSessions', actions: 'forgetPassword' },
          'removePassword.failed': [
            { guard: 'isRefused', target: 'refused', actions: 'recordDenial' },
            { target: 'failed', actions: 'recordDenial' },
          ],
        },
      },
      endingOtherSessions: {
        tags: ['effect.endOtherSessions', ENDS_SESSIONS_TAG],
        description: "Ends every session of the user but this one (a thief's stale session with the old password among them).",
        on: {
          'endOtherSessions.done': 'changed',
          'endOtherSessions.failed': { target: 'failed', actions: 'recordDenial' },
        },
      },
      changed: {
        type: 'final',
        description: 'Done: back where the form came from.',
        output: outputs.toAnswer,
      },
      invalid: {
        type: 'final',
        description: 'The new password was refused by the policy: back with `CredentialsSignin` and the reason code.',
        output: outputs.toDenial,
      },
      refused: {
        type: 'final',
        description: 'Nobody is signed in, there is no password to change (or one already to set), or it is the last way to sign in: `AccessDenied`.',
        output: outputs.toDenial,
      },
      failed: {
        type: 'final',
        description: 'Something unexpected failed: the Configuration error page.',
        output: outputs.toDenial,
      },
    },
  })

/** The password change machine; marked pure, so a bundle that never reads it does not build it. */
export const passwordChangeMachine = /* @__PURE__ */ buildPasswordChange()
