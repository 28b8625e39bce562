/**
 * Turning on the second factor, for a signed-in user: a new TOTP secret is shown (QR code and key)
 * while the flow waits, sealed, for a code from the authenticator app; the right code stores the
 * factor with a set of backup codes, which are shown once. Wrong codes are counted on the server.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  ENROLMENT_STEP,
  EnrolmentConfirmation,
  guards,
  initialContext,
  outputs,
  TOTP_ENROLMENT,
  type TotpEnrolmentContext,
  type TotpEnrolmentEvent,
  type TotpEnrolmentTag,
} from './totp-enrolment.logic.js'

export {
  EnrolmentConfirmation,
  TOTP_ENROLMENT,
  TotpEnrolmentContext,
  type TotpEnrolmentEvent,
  type TotpEnrolmentTag,
} from './totp-enrolment.logic.js'

/** The TOTP enrolment machine. */
export const totpEnrolmentMachine = setup({
  types: {} as { context: TotpEnrolmentContext; events: TotpEnrolmentEvent; tags: TotpEnrolmentTag },
  guards,
  actions: {
    rememberStart: assign(assignments.rememberStart),
    rememberSecret: assign(assignments.rememberSecret),
    recordWrongCode: assign(assignments.recordWrongCode),
    rememberCodes: assign(assignments.rememberCodes),
    recordDenial: assign(assignments.recordDenial),
  },
}).createMachine({
  id: TOTP_ENROLMENT,
  version: '3',
  description: 'Turns on two-step verification (TOTP and backup codes) for a signed-in user.',
  initial: 'idle',
  context: initialContext,
  output: outputs.finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'The user asks to turn it on (POST /two-factor, CSRF-checked, signed in).',
      on: { 'enrolment.start': { target: 'checkingFreshness', actions: 'rememberStart' } },
    },
    checkingFreshness: {
      tags: 'effect.checkFreshness',
      description:
        'The freshness gate: the signed-in user proved a factor recently enough for the step-up policy (the request was sent to re-authenticate first otherwise).',
      on: {
        'checkFreshness.done': { target: 'creatingSecret' },
        'checkFreshness.failed': [
          { guard: 'isStale', target: 'reauthenticationRequired' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    creatingSecret: {
      tags: ['effect.createTotpSecret', 'sensitive'],
      description: 'Creates a TOTP secret for the signed-in user.',
      on: {
        'createTotpSecret.done': { target: 'awaitingConfirmation', actions: 'rememberSecret' },
        'createTotpSecret.failed': [
          { guard: 'isAlreadyEnrolled', target: 'alreadyEnrolled' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    awaitingConfirmation: {
      tags: 'awaitsRequest',
      description: 'Shows the QR code; waits, sealed, for a code from the app (POST /step/totp-enrolment).',
      meta: {
        outcome: outputs.toStepPage,
        step: ENROLMENT_STEP,
      },
      on: { 'enrolment.confirm': { target: 'confirmingCode' } },
    },
    confirmingCode: {
      tags: ['effect.confirmTotp', 'sensitive'],
      description:
        'Re-checks that the enrolling user is still signed in and has no factor yet, checks the code; stores the factor and its backup codes.',
      on: {
        'confirmTotp.done': { target: 'enrolled', actions: 'rememberCodes' },
        'confirmTotp.failed': [
          { guard: 'isCodeWrong', target: 'awaitingConfirmation', actions: 'recordWrongCode' },
          { guard: 'isAlreadyEnrolled', target: 'alreadyEnrolled' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    enrolled: {
      type: 'final',
      description: 'Two-step verification is on: the backup codes are shown once.',
      output: outputs.toBackupCodes,
    },
    reauthenticationRequired: {
      type: 'final',
      description: 'The proof is too old for turning it on: the user confirms it is them first, and the request resumes after.',
      output: outputs.toStepUp,
    },
    alreadyEnrolled: {
      type: 'final',
      description: 'The user already has a second factor (perhaps enrolled since this one started): back to where they came from.',
      output: outputs.toCallbackUrl,
    },
    failed: {
      type: 'final',
      description: 'Signed out (or signed in as someone else) by now, too many wrong codes, or the store failed: the error page.',
      output: outputs.toDenial,
    },
  },
})
