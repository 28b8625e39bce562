/**
 * Sign-in completion: the one tail every first factor (credentials, OAuth/OIDC, e-mail, passkeys)
 * hands its verified identity to. It asks the `signIn` callback, stores the user and account the
 * way the first factor needs, issues the session (an encrypted JWT or a database row) and
 * announces the sign-in. A first-factor machine has no way to issue a session itself: it can only
 * end in a handoff to this machine, so every step inserted here (a second factor, an application's
 * page) reaches every way of signing in.
 *
 * @module
 */
import {
  boolean,
  enums,
  nullable,
  number,
  object,
  record,
  string,
  unknown,
  type Infer,
} from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { ErrorType } from '../core/errors.js'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { finalStateOutcome, type FlowOutcome, type VerifiedIdentity } from './shared/outcome.js'

/** The id of the completion flow, the target of every first factor's handoff. */
export const SIGN_IN_COMPLETION = 'signin-completion'

/** Settings the HTTP layer copies from the config into the handoff event. */
export const SignInPolicy = object({
  strategy: enums(['jwt', 'database']),
  maxAge: number(),
  /** `pages.newUser`, where a first sign-in goes. */
  newUserUrl: nullable(string()),
})
export type SignInPolicy = Infer<typeof SignInPolicy>

const Json = record(string(), unknown())
const Denial = object({ error: string(), code: nullable(string()) })

/** Context of the completion machine. */
export const SignInCompletionContext = object({
  policy: nullable(SignInPolicy),
  firstFactor: string(),
  providerId: string(),
  callbackUrl: string(),
  user: nullable(Json),
  account: nullable(Json),
  profile: nullable(Json),
  storedUser: nullable(Json),
  persist: boolean(),
  /** What the user submitted; cleared as soon as the `signIn` callback has seen it. */
  credentials: nullable(Json),
  claims: nullable(Json),
  isNewUser: boolean(),
  /** Where the `signIn` callback asked to send the user instead. */
  redirect: nullable(string()),
  /** The new session cookie value, or null when the `jwt` callback returned null. */
  issued: nullable(string()),
  expires: number(),
  denial: nullable(Denial),
})
export type SignInCompletionContext = Infer<typeof SignInCompletionContext>

/** Events of the completion machine. */
export type SignInCompletionEvent =
  | ({ type: 'signin.verified'; identity: VerifiedIdentity; policy: SignInPolicy } & Timestamped)
  | EffectResult<'checkSignIn', { redirect: string | null }, 'denied'>
  | EffectResult<
      'storeUser',
      { user: Record<string, unknown>; account: Record<string, unknown>; isNewUser: boolean },
      'notLinked' | 'threw'
    >
  | EffectResult<'issueSession', { value: string | null; expires: number }, 'threw'>
  | EffectResult<'createDatabaseSession', { value: string; expires: number }, 'threw'>
  | EffectDone<'emitSignInEvent', null>

/** Tags: effect states and the resting state. */
export type SignInCompletionTag =
  | 'awaitsRequest'
  | 'effect.checkSignIn'
  | 'effect.storeUser'
  | 'effect.issueSession'
  | 'effect.createDatabaseSession'
  | 'effect.emitSignInEvent'

const initialContext: SignInCompletionContext = {
  policy: null,
  firstFactor: '',
  providerId: '',
  callbackUrl: '',
  user: null,
  account: null,
  profile: null,
  storedUser: null,
  persist: false,
  credentials: null,
  claims: null,
  isNewUser: false,
  redirect: null,
  issued: null,
  expires: 0,
  denial: null,
}

type Mapper = (args: { context: SignInCompletionContext }) => FlowOutcome

const sessionChange = (context: SignInCompletionContext): FlowOutcome['session'] =>
  context.issued === null
    ? { op: 'clear' }
    : { op: 'set', value: context.issued, expires: context.expires }

const toSignedIn: Mapper = ({ context }) => ({
  type: 'redirect',
  url: context.callbackUrl,
  session: sessionChange(context),
})
const toNewUserPage: Mapper = ({ context }) => {
  const page = context.policy!.newUserUrl!
  const separator = page.includes('?') ? '&' : '?'
  return {
    type: 'redirect',
    url: `${page}${separator}${new URLSearchParams({ callbackUrl: context.callbackUrl })}`,
    session: sessionChange(context),
  }
}
const toSignInRedirect: Mapper = ({ context }) => ({ type: 'redirect', url: context.redirect! })
const toDenial: Mapper = ({ context }) => ({
  type: 'error',
  error: (context.denial?.error ?? 'Configuration') as ErrorType,
  ...(context.denial?.code ? { code: context.denial.code } : {}),
})

/** Where a verified, stored user goes next: the session of the configured strategy. */
const toSessionIssue = <A extends string>(actions: A) =>
  [
    { guard: 'isDatabaseStrategy', target: 'creatingDatabaseSession', actions },
    { target: 'issuingSession', actions },
  ] as const

/** The sign-in completion machine. */
export const signInCompletionMachine = setup({
  types: {} as {
    context: SignInCompletionContext
    events: SignInCompletionEvent
    tags: SignInCompletionTag
  },
  guards: {
    hasSignInRedirect: ({ event }) => {
      assertEvent(event, 'checkSignIn.done')
      return event.output.redirect !== null
    },
    /** Database sessions always belong to a stored user; otherwise the first factor decides. */
    isUserStored: ({ context }) => context.persist || context.policy?.strategy === 'database',
    isDatabaseStrategy: ({ context }) => context.policy?.strategy === 'database',
    isNotLinked: ({ event }) => {
      assertEvent(event, 'storeUser.failed')
      return event.reason === 'notLinked'
    },
    isNewUserWithPage: ({ context }) => context.isNewUser && context.policy?.newUserUrl != null,
  },
  actions: {
    rememberIdentity: assign(({ event }) => {
      assertEvent(event, 'signin.verified')
      const { identity } = event
      return {
        policy: event.policy,
        firstFactor: identity.firstFactor,
        providerId: identity.providerId,
        callbackUrl: identity.callbackUrl,
        user: identity.user,
        account: identity.account,
        profile: identity.profile,
        storedUser: identity.storedUser,
        persist: identity.persist,
        credentials: identity.credentials,
        claims: identity.claims,
      }
    }),
    // Submitted credentials exist for the `signIn` callback only: never sealed, never kept.
    forgetCredentials: assign({ credentials: null }),
    rememberSignInRedirect: assign(({ event }) => {
      assertEvent(event, 'checkSignIn.done')
      return { redirect: event.output.redirect }
    }),
    rememberStoredUser: assign(({ event }) => {
      assertEvent(event, 'storeUser.done')
      return { user: event.output.user, account: event.output.account, isNewUser: event.output.isNewUser }
    }),
    rememberIssuedSession: assign(({ event }) => {
      assertEvent(event, ['issueSession.done', 'createDatabaseSession.done'])
      return { issued: event.output.value, expires: event.output.expires }
    }),
    recordDenial: assign(({ event }) => {
      assertEvent(event, [
        'checkSignIn.failed',
        'storeUser.failed',
        'issueSession.failed',
        'createDatabaseSession.failed',
      ])
      return { credentials: null, denial: { error: event.error ?? 'Configuration', code: event.code ?? null } }
    }),
  },
}).createMachine({
  id: SIGN_IN_COMPLETION,
  version: '1',
  description: 'Completes every sign-in: the signIn callback, the stored user, the session, the events.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'A first factor (credentials, OAuth, e-mail, passkey) hands over a verified identity.',
      on: { 'signin.verified': { target: 'checkingSignIn', actions: 'rememberIdentity' } },
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
          { guard: 'isUserStored', target: 'storingUser', actions: 'forgetCredentials' },
          { target: 'issuingSession', actions: 'forgetCredentials' },
        ],
        'checkSignIn.failed': { target: 'denied', actions: 'recordDenial' },
      },
    },
    storingUser: {
      tags: 'effect.storeUser',
      description: 'Signs in the linked user, links the account, or creates the user (per first factor).',
      on: {
        'storeUser.done': toSessionIssue('rememberStoredUser'),
        'storeUser.failed': [
          { guard: 'isNotLinked', target: 'notLinked', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    issuingSession: {
      tags: 'effect.issueSession',
      description: 'Runs the `jwt` callback (trigger signIn or signUp) and encrypts the session token.',
      on: {
        'issueSession.done': { target: 'announcingSignIn', actions: 'rememberIssuedSession' },
        'issueSession.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    creatingDatabaseSession: {
      tags: 'effect.createDatabaseSession',
      description: 'Stores a new database session for the user.',
      on: {
        'createDatabaseSession.done': { target: 'announcingSignIn', actions: 'rememberIssuedSession' },
        'createDatabaseSession.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    announcingSignIn: {
      tags: 'effect.emitSignInEvent',
      description: 'Fires `events.signIn`.',
      on: {
        'emitSignInEvent.done': [
          { guard: 'isNewUserWithPage', target: 'welcomedNewUser' },
          { target: 'signedIn' },
        ],
      },
    },
    signedIn: {
      type: 'final',
      description: 'The session is set; redirect to the callback URL.',
      output: toSignedIn,
    },
    welcomedNewUser: {
      type: 'final',
      description: 'A first sign-in: redirect to `pages.newUser` with the callback URL.',
      output: toNewUserPage,
    },
    redirectedBySignIn: {
      type: 'final',
      description: 'The `signIn` callback returned a URL: redirect there without a session.',
      output: toSignInRedirect,
    },
    denied: {
      type: 'final',
      description: 'The `signIn` callback refused: `AccessDenied` (or the AuthError it threw).',
      output: toDenial,
    },
    notLinked: {
      type: 'final',
      description: 'The account or its e-mail belongs to another user: `OAuthAccountNotLinked` (`AccountNotLinked`).',
      output: toDenial,
    },
    failed: {
      type: 'final',
      description: 'Storing the user or issuing the session failed: the Configuration error (reason logged).',
      output: toDenial,
    },
  },
})
