/**
 * Turning on the second factor, for a signed-in user: a new TOTP secret is shown (QR code and key)
 * while the flow waits, sealed, for a code from the authenticator app; the right code stores the
 * factor with a set of backup codes, which are shown once. Wrong codes are counted on the server.
 *
 * @module
 */
import { array, nullable, object, string, type Infer } from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { ErrorType } from './shared/errors.js'
import type { EffectResult, Timestamped } from './shared/events.js'
import { denialOf, finalStateOutcome, type FlowOutcome } from './shared/outcome.js'

/** The id of the enrolment flow. */
export const TOTP_ENROLMENT = 'totp-enrolment'

/** What the confirmation step accepts: the code the app shows. */
export const EnrolmentConfirmation = object({ code: string() })

/** Context of the enrolment machine; sealed while the user is at their authenticator app. */
export const TotpEnrolmentContext = object({
  callbackUrl: string(),
  userId: nullable(string()),
  /**
   * Shown to the user (as a QR code and as a key) and kept only in the sealed flow until confirmed.
   * The QR code and `otpauth://` URI are rendered from it at page time, never sealed: a cookie over
   * 4,096 bytes is dropped by the browser.
   */
  secret: nullable(string()),
  /** Names this enrolment's attempts in the server-side store. */
  challenge: nullable(string()),
  stepError: nullable(string()),
  /** The backup codes, shown once on the last page (never sealed: the flow ends there). */
  codes: nullable(array(string())),
  denial: nullable(string()),
})
export type TotpEnrolmentContext = Infer<typeof TotpEnrolmentContext>

/** Events of the enrolment machine. */
export type TotpEnrolmentEvent =
  | ({ type: 'enrolment.start'; callbackUrl: string } & Timestamped)
  | ({ type: 'enrolment.confirm'; code: string } & Timestamped)
  | EffectResult<
      'createTotpSecret',
      { userId: string; secret: string; challenge: string },
      'signedOut' | 'alreadyEnrolled' | 'threw'
    >
  | EffectResult<'confirmTotp', { codes: string[] }, 'wrongCode' | 'exhausted' | 'signedOut' | 'alreadyEnrolled' | 'threw'>
  | EffectResult<'checkFreshness', null, 'stale' | 'threw'>

/** Tags: effect states and the resting states. */
export type TotpEnrolmentTag =
  | 'awaitsRequest'
  | 'effect.checkFreshness'
  | 'effect.createTotpSecret'
  | 'effect.confirmTotp'
  /** A state whose effect changes what can sign in as the user: only past the freshness gate. */
  | 'sensitive'

const initialContext: TotpEnrolmentContext = {
  callbackUrl: '',
  userId: null,
  secret: null,
  challenge: null,
  stepError: null,
  codes: null,
  denial: null,
}

type Mapper = (args: { context: TotpEnrolmentContext }) => FlowOutcome

const toStepPage = (): FlowOutcome => ({ type: 'step' })
const toBackupCodes: Mapper = ({ context }) => ({
  type: 'page',
  page: 'backup-codes',
  // Stryker disable next-line ArrayDeclaration: eq#totp-enrolment-codes-page
  data: { codes: context.codes ?? [], continueUrl: context.callbackUrl },
})
const toStepUp = (): FlowOutcome => ({ type: 'stepUp', action: 'enrol-second-factor' })
const toCallbackUrl: Mapper = ({ context }) => ({ type: 'redirect', url: context.callbackUrl })
const toDenial: Mapper = ({ context }) => ({ type: 'error', error: (context.denial ?? 'Configuration') as ErrorType })

/** The TOTP enrolment machine. */
export const totpEnrolmentMachine = setup({
  types: {} as { context: TotpEnrolmentContext; events: TotpEnrolmentEvent; tags: TotpEnrolmentTag },
  guards: {
    isAlreadyEnrolled: ({ event }) => {
      assertEvent(event, ['createTotpSecret.failed', 'confirmTotp.failed'])
      return event.reason === 'alreadyEnrolled'
    },
    isStale: ({ event }) => {
      assertEvent(event, 'checkFreshness.failed')
      return event.reason === 'stale'
    },
    isCodeWrong: ({ event }) => {
      assertEvent(event, 'confirmTotp.failed')
      return event.reason === 'wrongCode'
    },
  },
  actions: {
    rememberStart: assign(({ event }) => {
      assertEvent(event, 'enrolment.start')
      return { callbackUrl: event.callbackUrl }
    }),
    rememberSecret: assign(({ event }) => {
      assertEvent(event, 'createTotpSecret.done')
      const { userId, secret, challenge } = event.output
      return { userId, secret, challenge, stepError: null }
    }),
    recordWrongCode: assign({ stepError: 'InvalidCode' }),
    rememberCodes: assign(({ event }) => {
      assertEvent(event, 'confirmTotp.done')
      return { codes: event.output.codes, secret: null }
    }),
    recordDenial: assign(({ event }) => ({ secret: null, denial: denialOf(event).error })),
  },
}).createMachine({
  id: TOTP_ENROLMENT,
  version: '3',
  description: 'Turns on two-step verification (TOTP and backup codes) for a signed-in user.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
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
        outcome: toStepPage,
        step: { page: 'totp-enrolment', events: { 'enrolment.confirm': EnrolmentConfirmation } },
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
      output: toBackupCodes,
    },
    reauthenticationRequired: {
      type: 'final',
      description: 'The proof is too old for turning it on: the user confirms it is them first, and the request resumes after.',
      output: toStepUp,
    },
    alreadyEnrolled: {
      type: 'final',
      description: 'The user already has a second factor (perhaps enrolled since this one started): back to where they came from.',
      output: toCallbackUrl,
    },
    failed: {
      type: 'final',
      description: 'Signed out (or signed in as someone else) by now, too many wrong codes, or the store failed: the error page.',
      output: toDenial,
    },
  },
})
