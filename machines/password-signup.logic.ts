/**
 * The password sign-up chart's logic (see `shared/logic.ts`); the chart is
 * `password-signup.machine.ts`.
 *
 * @module
 */
import { nullable, object, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome } from './shared/outcome.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The password sign-up chart's id. */
export const PASSWORD_SIGN_UP = 'password-signup'

/** Context of the password sign-up. */
export const PasswordSignUpContext = object({
  providerId: string(),
  /** Where the answer sends the browser: the "check your e-mail" page, or the sign-in page. */
  answerUrl: string(),
  email: nullable(string()),
  /** The chosen password, held until it is hashed; cleared on every way out of those states. */
  password: nullable(string()),
  name: nullable(string()),
  /** The application's own fields, as its schema validated them. */
  fields: nullable(Json),
  /** The verification link's token (a confirmation), held until it is checked. */
  token: nullable(string()),
  denial: nullable(Denial),
})
export type PasswordSignUpContext = Infer<typeof PasswordSignUpContext>

/** Events of the password sign-up. */
export type PasswordSignUpEvent =
  | ({
      type: 'password.signup'
      providerId: string
      email: string
      password: string
      name: string | null
      fields: Record<string, unknown>
      answerUrl: string
    } & Timestamped)
  | ({ type: 'password.verify'; providerId: string; token: string; password: string; answerUrl: string } & Timestamped)
  | EffectResult<'checkSignUp', { email: string; fields: Record<string, unknown> }, 'invalid' | 'threw'>
  | EffectResult<'register', null, 'threw'>
  | EffectResult<'verifyAddress', null, 'refused' | 'limited' | 'threw'>

/** Tags: effect states and the resting state. */
export type PasswordSignUpTag = 'awaitsRequest' | 'effect.checkSignUp' | 'effect.register' | 'effect.verifyAddress'

/** The context a sign-up starts from. */
export const initialContext: PasswordSignUpContext = {
  providerId: '',
  answerUrl: '',
  email: null,
  password: null,
  name: null,
  fields: null,
  token: null,
  denial: null,
}

type Mapper = (args: { context: PasswordSignUpContext }) => FlowOutcome

/** The same answer for a new address and a known one: to the "check your e-mail" page. */
const toCheckEmail: Mapper = ({ context }) => ({ type: 'redirect', url: context.answerUrl })

/** A proven address: to the sign-in page, to sign in with the password. */
const toSignIn: Mapper = ({ context }) => ({ type: 'redirect', url: context.answerUrl })

type SignUpGuard = Guard<PasswordSignUpContext, PasswordSignUpEvent>
type SignUpAssignment = Assignment<PasswordSignUpContext, PasswordSignUpEvent>

/** The chart's guards. */
export const guards = {
  isInvalid: ({ event }) => {
    expectEvent(event, 'checkSignUp.failed')
    return event.reason === 'invalid'
  },
  isRefused: ({ event }) => {
    expectEvent(event, 'verifyAddress.failed')
    return event.reason === 'refused' || event.reason === 'limited'
  },
} satisfies Record<string, SignUpGuard>

/** The chart's assignments. */
export const assignments = {
  rememberSignUp: ({ event }) => {
    expectEvent(event, 'password.signup')
    return {
      providerId: event.providerId,
      email: event.email,
      password: event.password,
      name: event.name,
      fields: event.fields,
      answerUrl: event.answerUrl,
    }
  },
  rememberChecked: ({ event }) => {
    expectEvent(event, 'checkSignUp.done')
    return { email: event.output.email, fields: event.output.fields }
  },
  rememberConfirmation: ({ event }) => {
    expectEvent(event, 'password.verify')
    return { providerId: event.providerId, token: event.token, password: event.password, answerUrl: event.answerUrl }
  },
  /** Hashed and stored, or refused: nothing after this needs the password or the token. */
  forgetSecrets: () => ({ password: null, token: null }),
  recordDenial: ({ event }) => ({ password: null, token: null, denial: denialOf(event) }),
} satisfies Record<string, SignUpAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toCheckEmail, toSignIn, toDenial }
