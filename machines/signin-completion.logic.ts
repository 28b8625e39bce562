/**
 * The sign-in completion chart's logic: its id, version, extension points, context, events,
 * guards, assignments and outputs, in plain functions (see `shared/logic.ts`), and what an
 * extension is written with. The chart is `signin-completion.machine.ts`, which builds it with
 * the application's extensions.
 *
 * @module
 */
import {
  array,
  boolean,
  enums,
  nullable,
  number,
  object,
  optional,
  string,
  type Infer,
  type Struct,
} from 'superstruct'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { expectEvent, type Assignment, type Guard, type ParameterisedAssignment } from './shared/logic.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome, type VerifiedIdentity } from './shared/outcome.js'

/** The id of the completion flow, the target of every first factor's handoff. */
export const SIGN_IN_COMPLETION = 'signin-completion'

/** The version of the built-in chart; an extended chart's version adds its extensions'. */
export const SIGN_IN_COMPLETION_VERSION = '6'

/** Where applications may insert their own states. */
export const EXTENSION_POINTS = ['afterFirstFactor', 'afterFirstSignIn', 'beforeSession'] as const
/** An extension point of the sign-in completion. */
export type ExtensionPoint = (typeof EXTENSION_POINTS)[number]

/** Transition target of an extension state: on to the next step of the sign-in. */
export const CONTINUE = '$continue'
/** Transition target of an extension state: refuse the sign-in (`AccessDenied`). */
export const DENY = '$deny'

/**
 * Transition target of an extension state: refuse the sign-in (`AccessDenied`) for `reason`
 * (lower-case letters, digits and `-`, e.g. `declined`). The error redirect carries
 * `code=<extension id>.<reason>`, so the error page can say what happened in the extension's words
 * (its `denials`) instead of "You do not have permission".
 */
export function denyBecause<const Reason extends string>(reason: Reason): `${typeof DENY}:${Reason}` {
  return `${DENY}:${reason}`
}

/** The states that issue sessions: reachable only through the second-factor gate. */
export const SESSION_ISSUING_STATES = ['issuingSession', 'creatingDatabaseSession'] as const
/** The second-factor gate. */
export const SECOND_FACTOR_GATE = 'checkingSecondFactor'

/** Settings the HTTP layer copies from the config into the handoff event. */
export const SignInPolicy = object({
  strategy: enums(['jwt', 'database']),
  maxAge: number(),
  /** `pages.newUser`, where a first sign-in goes. */
  newUserUrl: nullable(string()),
})
export type SignInPolicy = Infer<typeof SignInPolicy>


const coreContextSchema = {
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
  /** A credential the first factor enrolled (a new passkey), saved by its user store. */
  enrolment: nullable(Json),
  /** The first factor signs in even when the `signIn` callback returns a URL (passkeys). */
  ignoresSignInRedirect: boolean(),
  isNewUser: boolean(),
  /** The open second-factor challenge (its attempts are counted on the server under this id). */
  challenge: nullable(string()),
  /** Why the last submitted code was refused, for the page. */
  stepError: nullable(string()),
  /** How the user signed in (RFC 8176 values, e.g. `['pwd', 'otp']`). */
  amr: array(string()),
  /** Where the `signIn` callback asked to send the user instead. */
  redirect: nullable(string()),
  /** The new session cookie value, or null when the `jwt` callback returned null. */
  issued: nullable(string()),
  expires: number(),
  denial: nullable(Denial),
  /** With several steps at `afterFirstSignIn`: the id of the one being checked, run or recorded. */
  firstSignInStep: optional(string()),
}

/** Context of the built-in completion machine. */
export const SignInCompletionContext = object(coreContextSchema)
/** The completion's own context fields, read off its struct: no extension may write them. */
export const CORE_CONTEXT_FIELDS: ReadonlySet<string> = new Set(Object.keys(SignInCompletionContext.schema))
/** The tags of the completion's states: `awaitsRequest` on a state that waits for the browser, `effect.<name>` on one that runs that effect. */
export type SignInCompletionTag = 'awaitsRequest' | `effect.${(typeof CORE_EFFECTS)[number]}`
export type SignInCompletionContext = Infer<typeof SignInCompletionContext>

/** What the second-factor step accepts: one code (a TOTP code or a backup code). */
export const SecondFactorInput = object({ code: string() })

/** Events of the completion machine. */
export type SignInCompletionEvent =
  | ({ type: 'signin.verified'; identity: VerifiedIdentity; policy: SignInPolicy } & Timestamped)
  | ({ type: 'secondFactor.submit'; code: string } & Timestamped)
  | EffectResult<'checkSignIn', { redirect: string | null }, 'denied'>
  | EffectResult<
      'storeUser',
      { user: Record<string, unknown>; account: Record<string, unknown>; isNewUser: boolean },
      'notLinked' | 'threw'
    >
  | EffectResult<'findSecondFactor', { challenge: string | null }, 'threw'>
  | EffectResult<'verifySecondFactor', { method: string }, 'wrongCode' | 'codeUsed' | 'locked' | 'exhausted' | 'threw'>
  | EffectDone<'prepareSession', { amr: string[] }>
  | EffectResult<'issueSession', { value: string | null; expires: number }, 'threw'>
  | EffectResult<'createDatabaseSession', { value: string; expires: number }, 'threw'>
  | EffectDone<'emitSignInEvent', null>
  | EffectResult<'findCompletedStep', { pending: boolean }, 'threw'>
  | EffectResult<'recordCompletedStep', null, 'threw'>

/** The effects of the built-in chart; extensions may not name them. */
export const CORE_EFFECTS = [
  'checkSignIn',
  'storeUser',
  'findSecondFactor',
  'verifySecondFactor',
  'prepareSession',
  'issueSession',
  'createDatabaseSession',
  'emitSignInEvent',
  'findCompletedStep',
  'recordCompletedStep',
] as const

/** The context a sign-in completion starts from (an extended chart adds its extensions' fields). */
export const initialContext: SignInCompletionContext = {
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
  enrolment: null,
  ignoresSignInRedirect: false,
  isNewUser: false,
  challenge: null,
  stepError: null,
  amr: [],
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
/** A resting step: the browser is sent to the step's page. */
export const toStepPage = (): FlowOutcome => ({ type: 'step' })


type CompletionGuard = Guard<SignInCompletionContext, SignInCompletionEvent>
/** An assignment of the completion; `never`: any params (a plain assignment takes none). */
type CompletionStepAssignment<Params> = ParameterisedAssignment<SignInCompletionContext, SignInCompletionEvent, Params>

/** The chart's guards. */
export const guards = {
  /** The `signIn` callback returned a URL, and the first factor follows it (passkeys do not). */
  hasSignInRedirect: ({ context, event }) => {
    expectEvent(event, 'checkSignIn.done')
    return event.output.redirect !== null && !context.ignoresSignInRedirect
  },
  /** Database sessions always belong to a stored user; otherwise the first factor decides. */
  isUserStored: ({ context }) =>
    // Stryker disable next-line OptionalChaining,ConditionalExpression,StringLiteral: eq#completion-database-user-stored
    context.persist || context.policy?.strategy === 'database',
  isDatabaseStrategy: ({ context }) =>
    // Stryker disable next-line OptionalChaining: eq#completion-policy-set
    context.policy?.strategy === 'database',
  isNotLinked: ({ event }) => {
    expectEvent(event, 'storeUser.failed')
    return event.reason === 'notLinked'
  },
  /** The user has an enrolled second factor: the gate opens a challenge. */
  isEnrolled: ({ event }) => {
    expectEvent(event, 'findSecondFactor.done')
    return event.output.challenge !== null
  },
  isCodeWrong: ({ event }) => {
    expectEvent(event, 'verifySecondFactor.failed')
    return event.reason === 'wrongCode'
  },
  /** A current TOTP code that an earlier sign-in spent. */
  isCodeUsed: ({ event }) => {
    expectEvent(event, 'verifySecondFactor.failed')
    return event.reason === 'codeUsed'
  },
  /** The user's codes are spent (perhaps by someone else) and this minute's check is taken. */
  isUserLocked: ({ event }) => {
    expectEvent(event, 'verifySecondFactor.failed')
    return event.reason === 'locked'
  },
  isCodeLimitReached: ({ event }) => {
    expectEvent(event, 'verifySecondFactor.failed')
    return event.reason === 'exhausted'
  },
  isNewUser: ({ context }) => context.isNewUser,
  /** The user has not completed the step after the first sign-in at its current version. */
  isFirstSignInStepPending: ({ event }) => {
    expectEvent(event, 'findCompletedStep.done')
    return event.output.pending
  },
  isNewUserWithPage: ({ context }) =>
    // Stryker disable next-line OptionalChaining: eq#completion-policy-set
    context.isNewUser && context.policy?.newUserUrl != null,
} satisfies Record<string, CompletionGuard>

/** The chart's assignments; two take the action's `params` (the chart builds them with a step's id or a denial's code). */
export const assignments = {
  rememberIdentity: ({ event }) => {
    expectEvent(event, 'signin.verified')
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
      enrolment: identity.enrolment ?? null,
      ignoresSignInRedirect: identity.ignoresSignInRedirect ?? false,
    }
  },
  // Submitted credentials exist for the `signIn` callback only: never sealed, never kept.
  forgetCredentials: () => ({ credentials: null }),
  rememberSignInRedirect: ({ event }) => {
    expectEvent(event, 'checkSignIn.done')
    return { redirect: event.output.redirect }
  },
  rememberStoredUser: ({ event }) => {
    expectEvent(event, 'storeUser.done')
    return { user: event.output.user, account: event.output.account, isNewUser: event.output.isNewUser }
  },
  rememberChallenge: ({ event }) => {
    expectEvent(event, 'findSecondFactor.done')
    return { challenge: event.output.challenge, stepError: null }
  },
  recordWrongCode: () => ({ stepError: 'InvalidCode' }),
  recordCodeUsed: () => ({ stepError: 'CodeUsed' }),
  recordLockedOut: () => ({ stepError: 'TooManyAttempts' }),
  rememberSecondFactor: ({ event }) => {
    expectEvent(event, 'verifySecondFactor.done')
    return { challenge: null, stepError: null, amr: [event.output.method] }
  },
  rememberPreparedSession: ({ event }) => {
    expectEvent(event, 'prepareSession.done')
    return { amr: event.output.amr }
  },
  rememberIssuedSession: ({ event }) => {
    expectEvent(event, ['issueSession.done', 'createDatabaseSession.done'])
    return { issued: event.output.value, expires: event.output.expires }
  },
  recordDenial: ({ event }) => ({
    credentials: null,
    challenge: null,
    denial: denialOf(event),
  }),
  /** Which step at `afterFirstSignIn` the check and the record that follow are about. */
  selectFirstSignInStep: ((_, params) => ({ firstSignInStep: params.step })) satisfies CompletionStepAssignment<{ step: string }>,
  /** An application's step refused the sign-in (`code`: its extension id and reason, if it gave one). */
  recordStepDenial: ((_, params) => ({
    credentials: null,
    challenge: null,
    denial: { error: 'AccessDenied', code: params?.code ?? null },
  })) satisfies CompletionStepAssignment<{ code: string } | undefined>,
} satisfies Record<string, CompletionStepAssignment<never>>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toSignedIn, toNewUserPage, toSignInRedirect, toStepPage, toDenial }

/** The schema of an extension's context fields. */
export type ContextSchema = Record<string, Struct<any, any>>
type AnyStateConfig = Record<string, any>
type AnyImplementation = any

/**
 * The machine-level part of an application's extension: states inserted at one extension point,
 * with their guards and `assign` actions, and the context fields they keep (sealed with the flow
 * while a step waits for the user, so plain JSON).
 */
export interface CompletionExtension {
  /** Names the extension in versions and errors: letters, digits and `-`. */
  id: string
  /** Bump it when the states change: flows sealed by another version are refused cleanly. */
  version: string
  /**
   * At `afterFirstSignIn`: the version a user's completion of the step is recorded under (default
   * {@link CompletionExtension.version}); a new one asks every user again.
   */
  stepVersion?: string
  at: ExtensionPoint
  /** The first state entered at the extension point. */
  initial: string
  /** States in xstate's config form. Targets: own states, {@link CONTINUE} or {@link DENY}. */
  states: Record<string, AnyStateConfig>
  guards?: Record<string, AnyImplementation>
  /** Only `assign` actions: charts stay pure. */
  actions?: Record<string, AnyImplementation>
  /** Context fields the extension keeps, with their initial values. */
  context?: { schema: ContextSchema; initial: Record<string, unknown> }
}

/** An extension that cannot be inserted safely; thrown when the config is loaded. */
export class ExtensionError extends Error {
  override name = 'ExtensionError'
}

/** The context struct of a completion built with `extensions`. */
export function signInCompletionContext(extensions: readonly CompletionExtension[] = []): Struct<
  SignInCompletionContext & Record<string, unknown>,
  unknown
> {
  if (extensions.length === 0) return SignInCompletionContext as never
  return object({
    ...coreContextSchema,
    ...Object.assign({}, ...extensions.map((e) => e.context?.schema ?? {})),
  }) as never
}

/** What the second-factor page posts (`meta.step` of the waiting state). */
export const SECOND_FACTOR_STEP = { page: 'second-factor', events: { 'secondFactor.submit': SecondFactorInput } } as const
