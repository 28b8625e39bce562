/**
 * The credentials sign-in chart's logic: its id, context, events, guards, assignments and outputs,
 * in plain functions (see `shared/logic.ts`). The chart is `credentials-signin.machine.ts`.
 *
 * @module
 */
import { enums, nullable, number, object, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.logic.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** Settings the HTTP layer copies from the config into the submit event. */
export const CredentialsPolicy = object({
  strategy: enums(['jwt', 'database']),
  maxAge: number(),
})
export type CredentialsPolicy = Infer<typeof CredentialsPolicy>


/** Context of the credentials machine. */
export const CredentialsSignInContext = object({
  policy: nullable(CredentialsPolicy),
  providerId: string(),
  callbackUrl: string(),
  /** What the user submitted; handed to the completion for the `signIn` callback only. */
  credentials: nullable(Json),
  user: nullable(Json),
  account: nullable(Json),
  /** The stored user the credentials account is linked to (database sessions). */
  storedUser: nullable(Json),
  denial: nullable(Denial),
})
export type CredentialsSignInContext = Infer<typeof CredentialsSignInContext>

/** The user returned by `authorize`, with the account the core derives from it. */
export interface AuthorizedUser {
  user: Record<string, unknown>
  account: Record<string, unknown>
}

/** Events of the credentials machine. */
export type CredentialsSignInEvent =
  | ({
      type: 'credentials.submit'
      providerId: string
      credentials: Record<string, unknown>
      callbackUrl: string
      policy: CredentialsPolicy
    } & Timestamped)
  | EffectResult<'admitAttempt', null, 'limited' | 'threw'>
  | EffectResult<'authorize', AuthorizedUser, 'rejected' | 'threw'>
  | EffectResult<'lookUpAccount', { user: Record<string, unknown> | null }, 'threw'>

/** Tags: effect states and the resting state. */
export type CredentialsSignInTag =
  | 'awaitsRequest'
  | 'effect.admitAttempt'
  | 'effect.authorize'
  | 'effect.lookUpAccount'

/** The context a credentials sign-in starts from. */
export const initialContext: CredentialsSignInContext = {
  policy: null,
  providerId: '',
  callbackUrl: '',
  credentials: null,
  user: null,
  account: null,
  storedUser: null,
  denial: null,
}

type Mapper = (args: { context: CredentialsSignInContext }) => FlowOutcome

const toCompletion: Mapper = ({ context }) => ({
  type: 'handoff',
  flow: SIGN_IN_COMPLETION,
  identity: {
    firstFactor: 'credentials-signin',
    providerId: context.providerId,
    callbackUrl: context.callbackUrl,
    user: context.user!,
    account: context.account!,
    profile: null,
    storedUser: context.storedUser,
    // Auth.js keeps credentials users out of the database; with database sessions they need a row.
    persist: context.policy?.strategy === 'database',
    credentials: context.credentials,
    claims: null,
  },
})

/** The credentials sign-in chart's id. */
export const CREDENTIALS_SIGN_IN = 'credentials-signin'

type CredentialsGuard = Guard<CredentialsSignInContext, CredentialsSignInEvent>
type CredentialsAssignment = Assignment<CredentialsSignInContext, CredentialsSignInEvent>

/** The chart's guards. */
export const guards = {
  isRateLimited: ({ event }) => {
    expectEvent(event, 'admitAttempt.failed')
    return event.reason === 'limited'
  },
  isCredentialsRejected: ({ event }) => {
    expectEvent(event, 'authorize.failed')
    return event.reason === 'rejected'
  },
  isDatabaseStrategy: ({ context }) => context.policy?.strategy === 'database',
} satisfies Record<string, CredentialsGuard>

/** The chart's assignments. */
export const assignments = {
  rememberSubmission: ({ event }) => {
    expectEvent(event, 'credentials.submit')
    return {
      policy: event.policy,
      providerId: event.providerId,
      credentials: event.credentials,
      callbackUrl: event.callbackUrl,
    }
  },
  rememberUser: ({ event }) => {
    expectEvent(event, 'authorize.done')
    return { user: event.output.user, account: event.output.account }
  },
  rememberStoredUser: ({ event }) => {
    expectEvent(event, 'lookUpAccount.done')
    return { storedUser: event.output.user }
  },
  recordDenial: ({ event }) => ({ credentials: null, denial: denialOf(event) }),
} satisfies Record<string, CredentialsAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toCompletion, toDenial }
