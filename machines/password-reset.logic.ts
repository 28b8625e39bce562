/**
 * The forgotten-password chart's logic (see `shared/logic.ts`); the chart is
 * `password-reset.machine.ts`.
 *
 * @module
 */
import { nullable, object, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, toDenial, type FlowOutcome } from './shared/outcome.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The forgotten-password chart's id. */
export const PASSWORD_RESET = 'password-reset'

/** The tag of the state that stores a new password. */
export const SETS_PASSWORD_TAG = 'setsPassword'
/** The tag of the state that ends every session of the user. */
export const ENDS_SESSIONS_TAG = 'endsSessions'

/** Context of a reset. */
export const PasswordResetContext = object({
  providerId: string(),
  answerUrl: string(),
  email: nullable(string()),
  /** The reset link's token, held until it is spent; cleared on every way out. */
  token: nullable(string()),
  /** The new password, held until it is hashed; cleared on every way out. */
  password: nullable(string()),
  /** The user the token was issued for, once it is spent. */
  userId: nullable(string()),
  denial: nullable(Denial),
})
export type PasswordResetContext = Infer<typeof PasswordResetContext>

/** Events of a reset. */
export type PasswordResetEvent =
  | ({ type: 'password.forgot'; providerId: string; email: string; answerUrl: string } & Timestamped)
  | ({ type: 'password.reset'; providerId: string; token: string; password: string; answerUrl: string } & Timestamped)
  | EffectResult<'admitResetRequest', null, 'limited' | 'threw'>
  | EffectResult<'sendResetLink', null, 'threw'>
  | EffectResult<'checkNewPassword', null, 'refused' | 'invalid' | 'threw'>
  | EffectResult<'setPassword', { userId: string }, 'refused' | 'threw'>
  | EffectResult<'endSessions', null, 'threw'>

/** Tags: effect states, the resting state, and the two the graph check follows. */
export type PasswordResetTag =
  | 'awaitsRequest'
  | 'effect.admitResetRequest'
  | 'effect.sendResetLink'
  | 'effect.checkNewPassword'
  | 'effect.setPassword'
  | 'effect.endSessions'
  | typeof SETS_PASSWORD_TAG
  | typeof ENDS_SESSIONS_TAG

/** The context a reset starts from. */
export const initialContext: PasswordResetContext = {
  providerId: '',
  answerUrl: '',
  email: null,
  token: null,
  password: null,
  userId: null,
  denial: null,
}

type Mapper = (args: { context: PasswordResetContext }) => FlowOutcome

/** The same answer for a known address and an unknown one; after a reset, the sign-in page. */
const toAnswer: Mapper = ({ context }) => ({ type: 'redirect', url: context.answerUrl })

type ResetGuard = Guard<PasswordResetContext, PasswordResetEvent>
type ResetAssignment = Assignment<PasswordResetContext, PasswordResetEvent>

/** The chart's guards. */
export const guards = {
  isLimited: ({ event }) => {
    expectEvent(event, 'admitResetRequest.failed')
    return event.reason === 'limited'
  },
  isTokenRefused: ({ event }) => {
    expectEvent(event, ['checkNewPassword.failed', 'setPassword.failed'])
    return event.reason === 'refused'
  },
  isPasswordInvalid: ({ event }) => {
    expectEvent(event, 'checkNewPassword.failed')
    return event.reason === 'invalid'
  },
} satisfies Record<string, ResetGuard>

/** The chart's assignments. */
export const assignments = {
  rememberRequest: ({ event }) => {
    expectEvent(event, 'password.forgot')
    return { providerId: event.providerId, email: event.email, answerUrl: event.answerUrl }
  },
  rememberReset: ({ event }) => {
    expectEvent(event, 'password.reset')
    return { providerId: event.providerId, token: event.token, password: event.password, answerUrl: event.answerUrl }
  },
  rememberUser: ({ event }) => {
    expectEvent(event, 'setPassword.done')
    return { userId: event.output.userId, token: null, password: null }
  },
  recordDenial: ({ event }) => ({ token: null, password: null, denial: denialOf(event) }),
} satisfies Record<string, ResetAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toAnswer, toDenial }
