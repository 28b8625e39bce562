/**
 * The password sign-in chart's logic: its id, context, events, guards, assignments and outputs, in
 * plain functions (see `shared/logic.ts`). The chart is `password-signin.machine.ts`.
 *
 * @module
 */
import { boolean, nullable, object, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.logic.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The password sign-in chart's id. */
export const PASSWORD_SIGN_IN = 'password-signin'

/** Context of the password sign-in. */
export const PasswordSignInContext = object({
  providerId: string(),
  callbackUrl: string(),
  /** The address as typed (normalised by the effects). */
  email: nullable(string()),
  /**
   * The password as typed: held only until it is checked (and, for an outdated hash, re-hashed),
   * cleared on every transition out of those states, and never part of any output.
   */
  password: nullable(string()),
  /** The stored user the password was verified for. */
  user: nullable(Json),
  denial: nullable(Denial),
  needsRehash: boolean(),
})
export type PasswordSignInContext = Infer<typeof PasswordSignInContext>

/** What a verified password answers: the stored user, and whether its hash is outdated. */
export interface VerifiedPassword {
  user: Record<string, unknown>
  needsRehash: boolean
}

/** Events of the password sign-in. */
export type PasswordSignInEvent =
  | ({ type: 'password.signin'; providerId: string; email: string; password: string; callbackUrl: string } & Timestamped)
  | EffectResult<'admitAttempt', null, 'limited' | 'threw'>
  | EffectResult<'verifyPassword', VerifiedPassword, 'rejected' | 'unverified' | 'threw'>
  | EffectResult<'rehashPassword', null, 'threw'>

/** Tags: effect states and the resting state. */
export type PasswordSignInTag = 'awaitsRequest' | 'effect.admitAttempt' | 'effect.verifyPassword' | 'effect.rehashPassword'

/** The context a password sign-in starts from. */
export const initialContext: PasswordSignInContext = {
  providerId: '',
  callbackUrl: '',
  email: null,
  password: null,
  user: null,
  denial: null,
  needsRehash: false,
}

type Mapper = (args: { context: PasswordSignInContext }) => FlowOutcome

/**
 * The verified user, handed to the sign-in completion (the `signIn` callback, the second factor,
 * the session). The password is not in it: the identity is sealed while a second factor waits.
 */
const toCompletion: Mapper = ({ context }) => {
  const user = context.user!
  return {
    type: 'handoff',
    flow: SIGN_IN_COMPLETION,
    identity: {
      firstFactor: PASSWORD_SIGN_IN,
      providerId: context.providerId,
      callbackUrl: context.callbackUrl,
      user,
      account: { providerAccountId: String(user.id), type: 'credentials', provider: context.providerId },
      profile: null,
      storedUser: user,
      persist: true,
      credentials: { email: context.email },
      claims: null,
    },
  }
}

type SignInGuard = Guard<PasswordSignInContext, PasswordSignInEvent>
type SignInAssignment = Assignment<PasswordSignInContext, PasswordSignInEvent>

/** The chart's guards. */
export const guards = {
  isRateLimited: ({ event }) => {
    expectEvent(event, 'admitAttempt.failed')
    return event.reason === 'limited'
  },
  isPasswordRejected: ({ event }) => {
    expectEvent(event, 'verifyPassword.failed')
    return event.reason === 'rejected'
  },
  isAddressUnverified: ({ event }) => {
    expectEvent(event, 'verifyPassword.failed')
    return event.reason === 'unverified'
  },
  needsRehash: ({ event }) => {
    expectEvent(event, 'verifyPassword.done')
    return event.output.needsRehash
  },
} satisfies Record<string, SignInGuard>

/** The chart's assignments. */
export const assignments = {
  rememberSubmission: ({ event }) => {
    expectEvent(event, 'password.signin')
    return { providerId: event.providerId, email: event.email, password: event.password, callbackUrl: event.callbackUrl }
  },
  rememberUser: ({ event }) => {
    expectEvent(event, 'verifyPassword.done')
    return { user: event.output.user, needsRehash: event.output.needsRehash }
  },
  /** The password has been checked (and re-hashed): nothing after this state needs it. */
  forgetPassword: () => ({ password: null }),
  recordDenial: ({ event }) => ({ password: null, denial: denialOf(event) }),
} satisfies Record<string, SignInAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toCompletion, toDenial }
