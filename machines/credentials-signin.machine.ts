/**
 * Credentials sign-in: submit → `authorize` → `signIn` callback → issue a session → `signedIn`.
 * Under the `database` strategy the session is a real database row (Auth.js silently fails here,
 * its issues #9636 and #3729): the user returned by `authorize` is found or created first.
 * A rejected attempt ends in `rejected` (CredentialsSignin with its `code`); anything unexpected
 * in `failed` (Configuration). The submitted credentials are forgotten as soon as the `signIn`
 * callback has seen them, so they can never be sealed into a cookie by an extended flow.
 *
 * @module
 */
import {
  enums,
  nullable,
  number,
  object,
  optional,
  record,
  string,
  unknown,
  type Infer,
} from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { ErrorType } from '../core/errors.js'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { finalStateOutcome, type FlowOutcome } from './shared/outcome.js'

/** Settings the HTTP layer copies from the config into the submit event. */
export const CredentialsPolicy = object({
  strategy: enums(['jwt', 'database']),
  maxAge: number(),
})
export type CredentialsPolicy = Infer<typeof CredentialsPolicy>

const Denial = object({ error: string(), code: optional(string()) })

/** Context of the credentials machine. */
export const CredentialsSignInContext = object({
  policy: nullable(CredentialsPolicy),
  providerId: string(),
  callbackUrl: string(),
  /** What the user submitted; cleared after the `signIn` callback. */
  credentials: nullable(record(string(), unknown())),
  user: nullable(record(string(), unknown())),
  account: nullable(record(string(), unknown())),
  /** Where the `signIn` callback asked to send the user instead. */
  redirect: nullable(string()),
  /** The new session cookie value, or null when the `jwt` callback returned null. */
  issued: nullable(string()),
  expires: number(),
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
  | EffectResult<'authorize', AuthorizedUser, 'rejected' | 'threw'>
  | EffectResult<'checkSignIn', { redirect: string | null }, 'denied'>
  | EffectResult<'issueSession', { value: string | null; expires: number }, 'threw'>
  | EffectResult<
      'createDatabaseSession',
      { value: string; expires: number; user: Record<string, unknown> },
      'threw'
    >
  | EffectDone<'emitSignInEvent', null>

/** Tags: effect states and the resting state. */
export type CredentialsSignInTag =
  | 'awaitsRequest'
  | 'effect.authorize'
  | 'effect.checkSignIn'
  | 'effect.issueSession'
  | 'effect.createDatabaseSession'
  | 'effect.emitSignInEvent'

const initialContext: CredentialsSignInContext = {
  policy: null,
  providerId: '',
  callbackUrl: '',
  credentials: null,
  user: null,
  account: null,
  redirect: null,
  issued: null,
  expires: 0,
  denial: null,
}

type Mapper = (args: { context: CredentialsSignInContext }) => FlowOutcome

const toSignedIn: Mapper = ({ context }) => ({
  type: 'redirect',
  url: context.callbackUrl,
  session:
    context.issued === null
      ? { op: 'clear' }
      : { op: 'set', value: context.issued, expires: context.expires },
})
const toSignInRedirect: Mapper = ({ context }) => ({ type: 'redirect', url: context.redirect! })
const toDenial: Mapper = ({ context }) => ({
  type: 'error',
  error: (context.denial?.error ?? 'Configuration') as ErrorType,
  ...(context.denial?.code !== undefined ? { code: context.denial.code } : {}),
})

/** The credentials sign-in machine. */
export const credentialsSignInMachine = setup({
  types: {} as {
    context: CredentialsSignInContext
    events: CredentialsSignInEvent
    tags: CredentialsSignInTag
  },
  guards: {
    isCredentialsRejected: ({ event }) => {
      assertEvent(event, 'authorize.failed')
      return event.reason === 'rejected'
    },
    isDatabaseStrategy: ({ context }) => context.policy?.strategy === 'database',
    hasSignInRedirect: ({ event }) => {
      assertEvent(event, 'checkSignIn.done')
      return event.output.redirect !== null
    },
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
    rememberSignInRedirect: assign(({ event }) => {
      assertEvent(event, 'checkSignIn.done')
      return { redirect: event.output.redirect }
    }),
    forgetCredentials: assign({ credentials: null }),
    recordDenial: assign(({ event }) => {
      assertEvent(event, [
        'authorize.failed',
        'checkSignIn.failed',
        'issueSession.failed',
        'createDatabaseSession.failed',
      ])
      return {
        credentials: null,
        denial: {
          error: event.error ?? 'Configuration',
          ...(event.code !== undefined ? { code: event.code } : {}),
        },
      }
    }),
    rememberIssuedSession: assign(({ event }) => {
      assertEvent(event, 'issueSession.done')
      return { issued: event.output.value, expires: event.output.expires }
    }),
    rememberDatabaseSession: assign(({ event }) => {
      assertEvent(event, 'createDatabaseSession.done')
      return { issued: event.output.value, expires: event.output.expires, user: event.output.user }
    }),
  },
}).createMachine({
  id: 'credentials-signin',
  version: '1',
  description: 'Signs a user in with credentials checked by the application.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'The sign-in form is posted (POST /callback/:provider, CSRF-checked).',
      on: { 'credentials.submit': { target: 'authorizing', actions: 'rememberSubmission' } },
    },
    authorizing: {
      tags: 'effect.authorize',
      description: "Runs the provider's `authorize` with the submitted credentials.",
      on: {
        'authorize.done': { target: 'checkingSignIn', actions: 'rememberUser' },
        'authorize.failed': [
          { guard: 'isCredentialsRejected', target: 'rejected', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    checkingSignIn: {
      tags: 'effect.checkSignIn',
      description: 'Asks the `signIn` callback whether this user may sign in.',
      on: {
        'checkSignIn.done': [
          {
            guard: 'hasSignInRedirect',
            target: 'redirectedBySignIn',
            actions: ['forgetCredentials', 'rememberSignInRedirect'],
          },
          {
            guard: 'isDatabaseStrategy',
            target: 'creatingDatabaseSession',
            actions: 'forgetCredentials',
          },
          { target: 'issuingSession', actions: 'forgetCredentials' },
        ],
        'checkSignIn.failed': { target: 'denied', actions: 'recordDenial' },
      },
    },
    issuingSession: {
      tags: 'effect.issueSession',
      description: 'Runs the `jwt` callback (trigger signIn) and encrypts the session token.',
      on: {
        'issueSession.done': { target: 'announcingSignIn', actions: 'rememberIssuedSession' },
        'issueSession.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    creatingDatabaseSession: {
      tags: 'effect.createDatabaseSession',
      description: 'Finds or creates the user row, then stores a new database session for it.',
      on: {
        'createDatabaseSession.done': { target: 'announcingSignIn', actions: 'rememberDatabaseSession' },
        'createDatabaseSession.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    announcingSignIn: {
      tags: 'effect.emitSignInEvent',
      description: 'Fires `events.signIn`.',
      on: { 'emitSignInEvent.done': { target: 'signedIn' } },
    },
    signedIn: {
      type: 'final',
      description: 'The session cookie is set; redirect to the callback URL.',
      output: toSignedIn,
    },
    redirectedBySignIn: {
      type: 'final',
      description: 'The `signIn` callback returned a URL: redirect there without a session.',
      output: toSignInRedirect,
    },
    rejected: {
      type: 'final',
      description: 'authorize rejected the credentials: back to sign-in with `CredentialsSignin`.',
      output: toDenial,
    },
    denied: {
      type: 'final',
      description: 'The `signIn` callback refused: `AccessDenied` (or the AuthError it threw).',
      output: toDenial,
    },
    failed: {
      type: 'final',
      description: 'Something unexpected failed: the Configuration error page.',
      output: toDenial,
    },
  },
})
