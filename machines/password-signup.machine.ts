/**
 * Password sign-up: address, password, an optional name and the application's own fields →
 * check them (the fields' schema, the password policy) → register: a new address gets an
 * unverified user, its hash, and a single-use verification link (purpose `password-verify`); a
 * known address gets no change, the same hashing work, and a notice to its owner → the same answer
 * either way ("check your e-mail").
 *
 * The link's page asks for the password again before the address counts as proven, so an owner
 * who opens a link someone else's sign-up sent cannot confirm a password they did not choose.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  guards,
  initialContext,
  outputs,
  PASSWORD_SIGN_UP,
  type PasswordSignUpContext,
  type PasswordSignUpEvent,
  type PasswordSignUpTag,
} from './password-signup.logic.js'

export { PASSWORD_SIGN_UP, PasswordSignUpContext, type PasswordSignUpEvent, type PasswordSignUpTag } from './password-signup.logic.js'

/** Builds the password sign-up machine. */
export const buildPasswordSignUp = () =>
  setup({
    types: {} as { context: PasswordSignUpContext; events: PasswordSignUpEvent; tags: PasswordSignUpTag },
    guards,
    actions: {
      rememberSignUp: assign(assignments.rememberSignUp),
      rememberChecked: assign(assignments.rememberChecked),
      rememberConfirmation: assign(assignments.rememberConfirmation),
      forgetSecrets: assign(assignments.forgetSecrets),
      recordDenial: assign(assignments.recordDenial),
    },
  }).createMachine({
    id: PASSWORD_SIGN_UP,
    version: '1',
    description: 'Signs a new address up with a password, answered alike for a known address, and proves the address by an e-mailed link.',
    initial: 'idle',
    context: initialContext,
    output: outputs.finalStateOutcome,
    states: {
      idle: {
        tags: 'awaitsRequest',
        description: 'The sign-up form (intent `signup`) or the verification link\'s page (intent `verify`) is posted to POST /callback/password.',
        on: {
          'password.signup': { target: 'signingUp', actions: 'rememberSignUp' },
          'password.verify': { target: 'verifyingAddress', actions: 'rememberConfirmation' },
        },
      },
      signingUp: {
        description: 'A sign-up: its input checked, then the account registered (or the owner told).',
        initial: 'checkingSignUp',
        states: {
          checkingSignUp: {
            tags: 'effect.checkSignUp',
            description: "Checks the address, the application's fields (its schema) and the password policy; none of it depends on whether the address is known.",
            on: {
              'checkSignUp.done': { target: 'registering', actions: 'rememberChecked' },
              'checkSignUp.failed': [
                { guard: 'isInvalid', target: '#password-signup.invalid', actions: 'recordDenial' },
                { target: '#password-signup.failed', actions: 'recordDenial' },
              ],
            },
          },
          registering: {
            tags: 'effect.register',
            description:
              'A new address: an unverified user, its hash, and the verification link sent. A known one: the same hash computed, the owner told, nothing changed.',
            on: {
              'register.done': { target: '#password-signup.checkEmail', actions: 'forgetSecrets' },
              'register.failed': { target: '#password-signup.failed', actions: 'recordDenial' },
            },
          },
        },
      },
      verifyingAddress: {
        tags: 'effect.verifyAddress',
        description:
          'Spends the verification token (single use, purpose `password-verify`) once the password typed on its page is the one signed up with; the address is then proven.',
        on: {
          'verifyAddress.done': { target: 'addressVerified', actions: 'forgetSecrets' },
          'verifyAddress.failed': [
            { guard: 'isRefused', target: 'refused', actions: 'recordDenial' },
            { target: 'failed', actions: 'recordDenial' },
          ],
        },
      },
      checkEmail: {
        type: 'final',
        description: 'The same answer for a new and a known address: the "check your e-mail" page.',
        output: outputs.toCheckEmail,
      },
      invalid: {
        type: 'final',
        description: 'The input was refused (a malformed address, a field, the policy): back with `CredentialsSignin` and the reason code.',
        output: outputs.toDenial,
      },
      addressVerified: {
        type: 'final',
        description: 'The address is proven: to the sign-in page.',
        output: outputs.toSignIn,
      },
      refused: {
        type: 'final',
        description: 'An unknown, spent, expired or superseded link, or the wrong password: the `Verification` error.',
        output: outputs.toDenial,
      },
      failed: {
        type: 'final',
        description: 'Something unexpected failed: the Configuration error page.',
        output: outputs.toDenial,
      },
    },
  })

/** The password sign-up machine; marked pure, so a bundle that never reads it does not build it. */
export const passwordSignUpMachine = /* @__PURE__ */ buildPasswordSignUp()
