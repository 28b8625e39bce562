/**
 * Credentials sign-in, the first factor: submit → count the attempt against the rate limits →
 * `authorize` → (database sessions) find the user
 * the credentials account is linked to → hand the verified user to the sign-in completion, which
 * asks the `signIn` callback and issues the session. A rejected attempt ends in `rejected`
 * (CredentialsSignin with its `code`); anything unexpected in `failed` (Configuration).
 *
 * Under the `database` strategy the user is stored for real (Auth.js silently fails here, its issues
 * #9636 and #3729): the id `authorize` returns is the credentials account's `providerAccountId`, so
 * the user is found through `getUserByAccount`, never by e-mail address.
 *
 * @module
 */
import { enums, nullable, number, object, string, type Infer } from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.machine.js'

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

const initialContext: CredentialsSignInContext = {
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

/**
 * Builds the credentials sign-in machine. The engine builds its own on the first request that runs it
 * (a session read never does), so that start-up does not pay for the chart.
 */
export const buildCredentialsSignIn = () => setup({
  types: {} as {
    context: CredentialsSignInContext
    events: CredentialsSignInEvent
    tags: CredentialsSignInTag
  },
  guards: {
    isRateLimited: ({ event }) => {
      assertEvent(event, 'admitAttempt.failed')
      return event.reason === 'limited'
    },
    isCredentialsRejected: ({ event }) => {
      assertEvent(event, 'authorize.failed')
      return event.reason === 'rejected'
    },
    isDatabaseStrategy: ({ context }) => context.policy?.strategy === 'database',
  },
  actions: {
    rememberSubmission: assign(({ event }) => {
      assertEvent(event, 'credentials.submit')
      return {
        policy: event.policy,
        providerId: event.providerId,
        credentials: event.credentials,
        callbackUrl: event.callbackUrl,
      }
    }),
    rememberUser: assign(({ event }) => {
      assertEvent(event, 'authorize.done')
      return { user: event.output.user, account: event.output.account }
    }),
    rememberStoredUser: assign(({ event }) => {
      assertEvent(event, 'lookUpAccount.done')
      return { storedUser: event.output.user }
    }),
    recordDenial: assign(({ event }) => ({ credentials: null, denial: denialOf(event) })),
  },
}).createMachine({
  id: CREDENTIALS_SIGN_IN,
  version: '3',
  description: 'Checks credentials with the application, then hands the user to the sign-in completion.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'The sign-in form is posted (POST /callback/:provider, CSRF-checked).',
      on: { 'credentials.submit': { target: 'admittingAttempt', actions: 'rememberSubmission' } },
    },
    admittingAttempt: {
      tags: 'effect.admitAttempt',
      description:
        'Counts the attempt against the rate limits (per identifier, per client address) in the shared store.',
      on: {
        'admitAttempt.done': 'authorizing',
        'admitAttempt.failed': [
          { guard: 'isRateLimited', target: 'limited', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    authorizing: {
      tags: 'effect.authorize',
      description: "Runs the provider's `authorize` with the submitted credentials.",
      on: {
        'authorize.done': [
          { guard: 'isDatabaseStrategy', target: 'lookingUpAccount', actions: 'rememberUser' },
          { target: 'verified', actions: 'rememberUser' },
        ],
        'authorize.failed': [
          { guard: 'isCredentialsRejected', target: 'rejected', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    lookingUpAccount: {
      tags: 'effect.lookUpAccount',
      description: 'Finds the stored user linked to this credentials account (getUserByAccount).',
      on: {
        'lookUpAccount.done': { target: 'verified', actions: 'rememberStoredUser' },
        'lookUpAccount.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    verified: {
      type: 'final',
      description: 'The credentials are good: hand the user over to the sign-in completion.',
      output: toCompletion,
    },
    rejected: {
      type: 'final',
      description: 'authorize rejected the credentials: back to sign-in with `CredentialsSignin`.',
      output: toDenial,
    },
    limited: {
      type: 'final',
      description:
        'Too many attempts: back to sign-in with `CredentialsSignin`, code `rate_limited` and `retryAfter`; authorize is not called.',
      output: toDenial,
    },
    failed: {
      type: 'final',
      description: 'Something unexpected failed: the Configuration error page.',
      output: toDenial,
    },
  },
})

/** The credentials sign-in machine; marked pure, so a bundle that never reads it does not build it. */
export const credentialsSignInMachine = /* @__PURE__ */ buildCredentialsSignIn()
