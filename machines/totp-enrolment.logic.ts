/**
 * The TOTP enrolment chart's logic: its id, context, events, guards, assignments and outputs, in
 * plain functions (see `shared/logic.ts`). The chart is `totp-enrolment.machine.ts`.
 *
 * @module
 */
import { array, nullable, object, string, type Infer } from 'superstruct'
import type { ErrorType } from './shared/errors.js'
import type { EffectResult, Timestamped } from './shared/events.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'
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

/** The context an enrolment starts from. */
export const initialContext: TotpEnrolmentContext = {
  callbackUrl: '',
  userId: null,
  secret: null,
  challenge: null,
  stepError: null,
  codes: null,
  denial: null,
}

type Mapper = (args: { context: TotpEnrolmentContext }) => FlowOutcome
type EnrolmentGuard = Guard<TotpEnrolmentContext, TotpEnrolmentEvent>
type EnrolmentAssignment = Assignment<TotpEnrolmentContext, TotpEnrolmentEvent>

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

/** The chart's guards. */
export const guards = {
  isAlreadyEnrolled: ({ event }) => {
    expectEvent(event, ['createTotpSecret.failed', 'confirmTotp.failed'])
    return event.reason === 'alreadyEnrolled'
  },
  isStale: ({ event }) => {
    expectEvent(event, 'checkFreshness.failed')
    return event.reason === 'stale'
  },
  isCodeWrong: ({ event }) => {
    expectEvent(event, 'confirmTotp.failed')
    return event.reason === 'wrongCode'
  },
} satisfies Record<string, EnrolmentGuard>

/** The chart's assignments. */
export const assignments = {
  rememberStart: ({ event }) => {
    expectEvent(event, 'enrolment.start')
    return { callbackUrl: event.callbackUrl }
  },
  rememberSecret: ({ event }) => {
    expectEvent(event, 'createTotpSecret.done')
    const { userId, secret, challenge } = event.output
    return { userId, secret, challenge, stepError: null }
  },
  recordWrongCode: () => ({ stepError: 'InvalidCode' }),
  rememberCodes: ({ event }) => {
    expectEvent(event, 'confirmTotp.done')
    return { codes: event.output.codes, secret: null }
  },
  recordDenial: ({ event }) => ({ secret: null, denial: denialOf(event).error }),
} satisfies Record<string, EnrolmentAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toStepPage, toBackupCodes, toStepUp, toCallbackUrl, toDenial }

/** What the enrolment page posts (`meta.step` of the waiting state). */
export const ENROLMENT_STEP = { page: 'totp-enrolment', events: { 'enrolment.confirm': EnrolmentConfirmation } } as const
