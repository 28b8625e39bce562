/**
 * The signed-in user's password chart's logic (see `shared/logic.ts`); the chart is
 * `password-change.machine.ts`.
 *
 * @module
 */
import { boolean, enums, nullable, object, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, toDenial, type FlowOutcome } from './shared/outcome.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'
import { ENDS_SESSIONS_TAG, SETS_PASSWORD_TAG } from './password-reset.logic.js'

export { ENDS_SESSIONS_TAG, SETS_PASSWORD_TAG }

/** The chart's id. */
export const PASSWORD_CHANGE = 'password-change'

/** What the user asks: change the password they have, set one they do not, or remove theirs. */
export const PasswordChangeMode = enums(['change', 'set', 'remove'])
export type PasswordChangeMode = Infer<typeof PasswordChangeMode>

/** Context of a change. */
export const PasswordChangeContext = object({
  providerId: string(),
  answerUrl: string(),
  mode: PasswordChangeMode,
  /** The new password, held until it is hashed; cleared on every way out. */
  password: nullable(string()),
  /** End the user's other sessions once the password changed (default on). */
  endOtherSessions: boolean(),
  denial: nullable(Denial),
})
export type PasswordChangeContext = Infer<typeof PasswordChangeContext>

/** Events of a change. */
export type PasswordChangeEvent =
  | ({
      type: 'password.change'
      providerId: string
      mode: PasswordChangeMode
      password: string
      endOtherSessions: boolean
      answerUrl: string
    } & Timestamped)
  | EffectResult<'checkChange', null, 'signedOut' | 'refused' | 'invalid' | 'threw'>
  | EffectResult<'storePassword', null, 'threw'>
  | EffectResult<'removePassword', null, 'lastFactor' | 'threw'>
  | EffectResult<'endOtherSessions', null, 'threw'>

/** Tags: effect states, the resting state, and the two the graph check follows. */
export type PasswordChangeTag =
  | 'awaitsRequest'
  | 'effect.checkChange'
  | 'effect.storePassword'
  | 'effect.removePassword'
  | 'effect.endOtherSessions'
  | typeof SETS_PASSWORD_TAG
  | typeof ENDS_SESSIONS_TAG

/** The context a change starts from. */
export const initialContext: PasswordChangeContext = {
  providerId: '',
  answerUrl: '',
  mode: 'change',
  password: null,
  endOtherSessions: true,
  denial: null,
}

type Mapper = (args: { context: PasswordChangeContext }) => FlowOutcome

/** Done: back to where the form came from. */
const toAnswer: Mapper = ({ context }) => ({ type: 'redirect', url: context.answerUrl })

type ChangeGuard = Guard<PasswordChangeContext, PasswordChangeEvent>
type ChangeAssignment = Assignment<PasswordChangeContext, PasswordChangeEvent>

/** The chart's guards. */
export const guards = {
  isRemoval: ({ context }) => context.mode === 'remove',
  endsOtherSessions: ({ context }) => context.endOtherSessions,
  isInvalid: ({ event }) => {
    expectEvent(event, 'checkChange.failed')
    return event.reason === 'invalid'
  },
  isRefused: ({ event }) => {
    expectEvent(event, ['checkChange.failed', 'removePassword.failed'])
    return event.reason === 'signedOut' || event.reason === 'refused' || event.reason === 'lastFactor'
  },
} satisfies Record<string, ChangeGuard>

/** The chart's assignments. */
export const assignments = {
  rememberChange: ({ event }) => {
    expectEvent(event, 'password.change')
    return {
      providerId: event.providerId,
      mode: event.mode,
      password: event.password,
      endOtherSessions: event.endOtherSessions,
      answerUrl: event.answerUrl,
    }
  },
  forgetPassword: () => ({ password: null }),
  recordDenial: ({ event }) => ({ password: null, denial: denialOf(event) }),
} satisfies Record<string, ChangeAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toAnswer, toDenial }
