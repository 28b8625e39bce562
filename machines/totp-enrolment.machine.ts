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
  /** Shown to the user (QR code and key) and kept only in the sealed flow until confirmed. */
  secret: nullable(string()),
  /** The `otpauth://` URI and its QR code, for the page. */
  uri: nullable(string()),
  qr: nullable(string()),
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
      { userId: string; secret: string; uri: string; qr: string; challenge: string },
      'signedOut' | 'alreadyEnrolled' | 'threw'
    >
  | EffectResult<'confirmTotp', { codes: string[] }, 'wrongCode' | 'exhausted' | 'threw'>

/** Tags: effect states and the resting states. */
export type TotpEnrolmentTag = 'awaitsRequest' | 'effect.createTotpSecret' | 'effect.confirmTotp'

const initialContext: TotpEnrolmentContext = {
  callbackUrl: '',
  userId: null,
  secret: null,
  uri: null,
  qr: null,
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
  data: { codes: context.codes ?? [], continueUrl: context.callbackUrl },
})
const toCallbackUrl: Mapper = ({ context }) => ({ type: 'redirect', url: context.callbackUrl })
const toDenial: Mapper = ({ context }) => ({ type: 'error', error: (context.denial ?? 'Configuration') as ErrorType })

/** The TOTP enrolment machine. */
export const totpEnrolmentMachine = setup({
  types: {} as { context: TotpEnrolmentContext; events: TotpEnrolmentEvent; tags: TotpEnrolmentTag },
  guards: {
    isAlreadyEnrolled: ({ event }) => {
      assertEvent(event, 'createTotpSecret.failed')
      return event.reason === 'alreadyEnrolled'
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
      const { userId, secret, uri, qr, challenge } = event.output
      return { userId, secret, uri, qr, challenge, stepError: null }
    }),
    recordWrongCode: assign({ stepError: 'InvalidCode' }),
    rememberCodes: assign(({ event }) => {
      assertEvent(event, 'confirmTotp.done')
      return { codes: event.output.codes, secret: null, qr: null, uri: null }
    }),
    recordDenial: assign(({ event }) => ({ secret: null, denial: denialOf(event).error })),
  },
}).createMachine({
  id: TOTP_ENROLMENT,
  version: '1',
  description: 'Turns on two-step verification (TOTP and backup codes) for a signed-in user.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'The user asks to turn it on (POST /two-factor, CSRF-checked, signed in).',
      on: { 'enrolment.start': { target: 'creatingSecret', actions: 'rememberStart' } },
    },
    creatingSecret: {
      tags: 'effect.createTotpSecret',
      description: 'Creates a TOTP secret for the signed-in user and its QR code.',
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
      tags: 'effect.confirmTotp',
      description: 'Checks the code; stores the factor and a set of backup codes.',
      on: {
        'confirmTotp.done': { target: 'enrolled', actions: 'rememberCodes' },
        'confirmTotp.failed': [
          { guard: 'isCodeWrong', target: 'awaitingConfirmation', actions: 'recordWrongCode' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    enrolled: {
      type: 'final',
      description: 'Two-step verification is on: the backup codes are shown once.',
      output: toBackupCodes,
    },
    alreadyEnrolled: {
      type: 'final',
      description: 'The user already has a second factor: back to where they came from.',
      output: toCallbackUrl,
    },
    failed: {
      type: 'final',
      description: 'Signed out, too many wrong codes, or the store failed: the error page.',
      output: toDenial,
    },
  },
})
