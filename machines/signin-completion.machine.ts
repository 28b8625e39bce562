/**
 * Sign-in completion: the one tail every first factor (credentials, OAuth/OIDC, e-mail, passkeys)
 * hands its verified identity to. It asks the `signIn` callback, stores the user and account the
 * way the first factor needs, passes the second-factor gate, runs the application's own steps,
 * issues the session (an encrypted JWT or a database row) and announces the sign-in.
 *
 * A first-factor machine has no way to issue a session itself: it can only end in a handoff to this
 * machine, so the gate and every step inserted here reach every way of signing in (OWASP ASVS 5.0
 * §6.3.4). Applications insert states at three extension points — after the first factor (before
 * the gate), after the first sign-in (until the user has completed the step once, at its version),
 * and before the session — with {@link buildSignInCompletion};
 * their states can only leave through {@link CONTINUE} (on to the next step) or {@link DENY}, so
 * they can neither skip the gate nor issue a session (ASVS §2.3.1: steps in order, none skipped).
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
  record,
  string,
  unknown,
  type Infer,
  type Struct,
} from 'superstruct'
import { assertEvent, assign, setup, type AnyStateMachine } from 'xstate'
import { AWAITS_REQUEST, type EffectDone, type EffectResult, type Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome, type VerifiedIdentity } from './shared/outcome.js'

import { SIGN_IN_COMPLETION } from './signin-completion.logic.js'

export { SIGN_IN_COMPLETION }

/** The version of the built-in chart; an extended chart's version adds its extensions'. */
export const SIGN_IN_COMPLETION_VERSION = '5'

/** Where applications may insert their own states. */
export const EXTENSION_POINTS = ['afterFirstFactor', 'afterFirstSignIn', 'beforeSession'] as const
/** An extension point of the sign-in completion. */
export type ExtensionPoint = (typeof EXTENSION_POINTS)[number]

/** Transition target of an extension state: on to the next step of the sign-in. */
export const CONTINUE = '$continue'
/** Transition target of an extension state: refuse the sign-in (`AccessDenied`). */
export const DENY = '$deny'

const DENIAL_REASON = /^[a-z][a-z0-9-]{0,31}$/

/**
 * Transition target of an extension state: refuse the sign-in (`AccessDenied`) for `reason`
 * (lower-case letters, digits and `-`, e.g. `declined`). The error redirect carries
 * `code=<extension id>.<reason>`, so the error page can say what happened in the extension's words
 * (its `denials`) instead of "You do not have permission".
 */
export function denyBecause<const Reason extends string>(reason: Reason): `${typeof DENY}:${Reason}` {
  return `${DENY}:${reason}`
}

/** The reason of a {@link denyBecause} target; `null` for a plain {@link DENY}, `undefined` for neither. */
function denialReasonOf(target: string): string | null | undefined {
  if (target === DENY) return null
  if (target.startsWith(`${DENY}:`)) return target.slice(DENY.length + 1)
  return undefined
}

/** The states that issue sessions: reachable only through the second-factor gate. */
export const SESSION_ISSUING_STATES = ['issuingSession', 'creatingDatabaseSession'] as const
/** The second-factor gate. */
export const SECOND_FACTOR_GATE = 'checkingSecondFactor'

/** With a step at `afterFirstSignIn`: the states that decide whether it runs, and record it ran. */
const FIRST_SIGN_IN_STEP_CHECK = 'checkingFirstSignInStep'
const FIRST_SIGN_IN_STEP_RECORD = 'recordingFirstSignInStep'

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
  | EffectResult<'verifySecondFactor', { method: string }, 'wrongCode' | 'locked' | 'exhausted' | 'threw'>
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

/** The events of the built-in chart: an extension's states may not take them. */
const CORE_EVENTS: ReadonlySet<string> = new Set([
  'signin.verified',
  'secondFactor.submit',
  ...CORE_EFFECTS.flatMap((effect) => [`${effect}.done`, `${effect}.failed`]),
])

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

/** Where a verified user goes once everything before the session is done. */
const toSessionIssue = <A extends string>(actions: A) =>
  [
    { guard: 'isDatabaseStrategy', target: 'creatingDatabaseSession', actions },
    { target: 'issuingSession', actions },
  ] as const

/** The core guards, by name. */
const guards = {
  /** The `signIn` callback returned a URL, and the first factor follows it (passkeys do not). */
  hasSignInRedirect: ({ context, event }: { context: SignInCompletionContext; event: SignInCompletionEvent }) => {
    assertEvent(event, 'checkSignIn.done')
    return event.output.redirect !== null && !context.ignoresSignInRedirect
  },
  /** Database sessions always belong to a stored user; otherwise the first factor decides. */
  isUserStored: ({ context }: { context: SignInCompletionContext }) =>
    // Stryker disable next-line OptionalChaining,ConditionalExpression,StringLiteral: eq#completion-database-user-stored
    context.persist || context.policy?.strategy === 'database',
  isDatabaseStrategy: ({ context }: { context: SignInCompletionContext }) =>
    // Stryker disable next-line OptionalChaining: eq#completion-policy-set
    context.policy?.strategy === 'database',
  isNotLinked: ({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'storeUser.failed')
    return event.reason === 'notLinked'
  },
  /** The user has an enrolled second factor: the gate opens a challenge. */
  isEnrolled: ({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'findSecondFactor.done')
    return event.output.challenge !== null
  },
  isCodeWrong: ({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'verifySecondFactor.failed')
    return event.reason === 'wrongCode'
  },
  /** The user's codes are spent (perhaps by someone else) and this minute's check is taken. */
  isUserLocked: ({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'verifySecondFactor.failed')
    return event.reason === 'locked'
  },
  isCodeLimitReached: ({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'verifySecondFactor.failed')
    return event.reason === 'exhausted'
  },
  isNewUser: ({ context }: { context: SignInCompletionContext }) => context.isNewUser,
  /** The user has not completed the step after the first sign-in at its current version. */
  isFirstSignInStepPending: ({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'findCompletedStep.done')
    return event.output.pending
  },
  isNewUserWithPage: ({ context }: { context: SignInCompletionContext }) =>
    // Stryker disable next-line OptionalChaining: eq#completion-policy-set
    context.isNewUser && context.policy?.newUserUrl != null,
}

/** The core actions, by name. */
const actions = {
  rememberIdentity: assign(({ event }: { event: SignInCompletionEvent }) => {
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
      enrolment: identity.enrolment ?? null,
      ignoresSignInRedirect: identity.ignoresSignInRedirect ?? false,
    }
  }),
  // Submitted credentials exist for the `signIn` callback only: never sealed, never kept.
  forgetCredentials: assign({ credentials: null }),
  rememberSignInRedirect: assign(({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'checkSignIn.done')
    return { redirect: event.output.redirect }
  }),
  rememberStoredUser: assign(({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'storeUser.done')
    return { user: event.output.user, account: event.output.account, isNewUser: event.output.isNewUser }
  }),
  rememberChallenge: assign(({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'findSecondFactor.done')
    return { challenge: event.output.challenge, stepError: null }
  }),
  recordWrongCode: assign({ stepError: 'InvalidCode' }),
  recordLockedOut: assign({ stepError: 'TooManyAttempts' }),
  rememberSecondFactor: assign(({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'verifySecondFactor.done')
    return { challenge: null, stepError: null, amr: [event.output.method] }
  }),
  rememberPreparedSession: assign(({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, 'prepareSession.done')
    return { amr: event.output.amr }
  }),
  rememberIssuedSession: assign(({ event }: { event: SignInCompletionEvent }) => {
    assertEvent(event, ['issueSession.done', 'createDatabaseSession.done'])
    return { issued: event.output.value, expires: event.output.expires }
  }),
  recordDenial: assign(({ event }: { event: SignInCompletionEvent }) => ({
    credentials: null,
    challenge: null,
    denial: denialOf(event),
  })),
  /** Which step at `afterFirstSignIn` the check and the record that follow are about. */
  selectFirstSignInStep: assign((_: unknown, params: { step: string }) => ({ firstSignInStep: params.step })),
  /** An application's step refused the sign-in (`code`: its extension id and reason, if it gave one). */
  recordStepDenial: assign((_: unknown, params?: { code: string }) => ({
    credentials: null,
    challenge: null,
    denial: { error: 'AccessDenied', code: params?.code ?? null },
  })),
}

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

const RESERVED_TAG_PREFIXES = CORE_EFFECTS.map((effect) => `effect.${effect}`)
const FORBIDDEN_STATE_KEYS = ['invoke', 'after', 'always', 'entry', 'exit', 'type', 'states', 'initial', 'history']

function targetsOf(transition: unknown): string[] {
  const list = Array.isArray(transition) ? transition : [transition]
  return list.flatMap((candidate) => {
    if (typeof candidate === 'string') return [candidate]
    if (candidate && typeof candidate === 'object' && 'target' in candidate) {
      const target = (candidate as { target?: unknown }).target
      return typeof target === 'string' ? [target] : Array.isArray(target) ? target.map(String) : []
    }
    return []
  })
}

function actionsOf(transition: unknown): unknown[] {
  const list = Array.isArray(transition) ? transition : [transition]
  return list.flatMap((candidate) => {
    if (!candidate || typeof candidate !== 'object' || !('actions' in candidate)) return []
    const own = (candidate as { actions?: unknown }).actions
    return own === undefined ? [] : Array.isArray(own) ? own : [own]
  })
}

/**
 * What is wrong with an action an extension runs, if anything: it must be an `assign` in the
 * property form (so the fields it writes are known at load), and none of them a core field.
 */
function assignProblem(action: unknown, ownFields: ReadonlySet<string>): string | undefined {
  const { type, assignment } = (action ?? {}) as { type?: unknown; assignment?: unknown }
  if (typeof action !== 'function' || type !== 'xstate.assign') return 'is not an assign: effects belong in effect states'
  if (typeof assignment === 'function' || !assignment || typeof assignment !== 'object') {
    return 'computes which fields it writes: write assign({ <field>: ({ event }) => … }) so they are known at load'
  }
  for (const field of Object.keys(assignment)) {
    if (CORE_CONTEXT_FIELDS.has(field)) return `writes the core field "${field}"`
    if (!ownFields.has(field)) return `writes "${field}", which its context does not declare`
  }
  return undefined
}

/**
 * Checks an extension before it is inserted: it may not bypass the core's security steps.
 *
 * @throws {ExtensionError} when a state targets a core state, is final, uses `invoke`, `after`,
 *   eventless or entry/exit actions, names a core effect, collides with a core state or context
 *   field, waits for a request without declaring its step, answers with a `meta.outcome` other
 *   than its step page, or runs an action other than one of its own `assign`s, or an `assign`
 *   that writes a core context field (a written `amr` would make a password-only JWT `aal: 2`).
 */
export function validateExtension(extension: CompletionExtension, coreStates: readonly string[]): void {
  const fail = (message: string): never => {
    throw new ExtensionError(`extension "${extension.id}": ${message}`)
  }
  if (!/^[A-Za-z0-9-]+$/.test(extension.id ?? '')) fail('needs an id of letters, digits and "-"')
  if (!/^[A-Za-z0-9.-]+$/.test(extension.version ?? '')) fail('needs a version (letters, digits, ".", "-")')
  if (extension.stepVersion !== undefined && (typeof extension.stepVersion !== 'string' || extension.stepVersion === '')) {
    fail('stepVersion must be a non-empty string')
  }
  if (!EXTENSION_POINTS.includes(extension.at)) {
    fail(`"at" must be one of ${EXTENSION_POINTS.join(', ')}`)
  }
  const own = Object.keys(extension.states ?? {})
  if (own.length === 0) fail('has no states')
  const ownFields = new Set(Object.keys(extension.context?.schema ?? {}))
  const ownActions = extension.actions ?? {}
  if (!own.includes(extension.initial)) fail(`its initial state "${extension.initial}" is not one of its states`)
  for (const key of own) {
    if (coreStates.includes(key)) fail(`state "${key}" would replace a state of the sign-in completion`)
    const state = extension.states[key]!
    for (const forbidden of FORBIDDEN_STATE_KEYS) {
      if (forbidden in state) {
        fail(
          forbidden === 'type'
            ? `state "${key}" may not be final: leave through "${CONTINUE}" or "${DENY}"`
            : `state "${key}" uses "${forbidden}", which a pure flow chart may not`,
        )
      }
    }
    const tags: string[] = typeof state.tags === 'string' ? [state.tags] : (state.tags ?? [])
    for (const tag of tags) {
      if (RESERVED_TAG_PREFIXES.includes(tag)) fail(`state "${key}" runs the core effect ${tag.slice(7)}`)
      if (tag !== 'awaitsRequest' && !tag.startsWith('effect.')) fail(`state "${key}" has an unknown tag "${tag}"`)
    }
    const effects = tags.filter((tag) => tag.startsWith('effect.'))
    if (effects.length > 1) fail(`state "${key}" runs more than one effect`)
    if (tags.includes('awaitsRequest')) {
      if (effects.length > 0) fail(`state "${key}" cannot both wait for a request and run an effect`)
      const step = state.meta?.step as { page?: unknown; events?: unknown } | undefined
      if (typeof step?.page !== 'string' || !step.events || typeof step.events !== 'object') {
        fail(`state "${key}" waits for a request: declare meta.step = { page, events: { <event>: <struct> } }`)
      }
      for (const event of Object.keys(step!.events as object)) {
        if (!(event in (state.on ?? {}))) fail(`state "${key}" declares the step event "${event}" but does not take it`)
      }
    } else if (effects.length === 0) {
      fail(`state "${key}" neither waits for a request nor runs an effect`)
    }
    // A waiting state's answer is its step page; any other outcome (a session cookie, a redirect)
    // would be decided by the extension, before or around the second factor.
    if (state.meta && typeof state.meta === 'object' && 'outcome' in state.meta) {
      if (!tags.includes('awaitsRequest')) fail(`state "${key}" has a meta.outcome, which only a waiting state shows (its step page)`)
      if (state.meta.outcome !== toStepPage) {
        fail(`state "${key}" answers with its own meta.outcome: a waiting state shows its step page (leave meta.outcome out, or write toStepPage)`)
      }
    }
    for (const [event, transition] of Object.entries(state.on ?? {})) {
      if (CORE_EVENTS.has(event)) fail(`state "${key}" takes the sign-in completion's event "${event}"`)
      for (const target of targetsOf(transition)) {
        const reason = denialReasonOf(target)
        if (typeof reason === 'string' && !DENIAL_REASON.test(reason)) {
          fail(`state "${key}" on "${event}" denies for "${reason}": a reason is lower-case letters, digits and "-"`)
        }
        if (target !== CONTINUE && reason === undefined && !own.includes(target)) {
          fail(`state "${key}" on "${event}" targets "${target}": only its own states, "${CONTINUE}" or "${DENY}"`)
        }
      }
      for (const action of actionsOf(transition)) {
        if (typeof action === 'string') {
          if (!Object.hasOwn(ownActions, action)) fail(`state "${key}" on "${event}" names the action "${action}", which is not its own`)
          continue
        }
        const problem = assignProblem(action, ownFields)
        if (problem) fail(`state "${key}" on "${event}": its action ${problem}`)
      }
    }
  }
  for (const [name, action] of Object.entries(ownActions)) {
    const problem = assignProblem(action, ownFields)
    if (problem) fail(`action "${name}" ${problem}`)
  }
  for (const name of [...Object.keys(extension.guards ?? {}), ...Object.keys(extension.actions ?? {})]) {
    if (name in guards || name in actions) fail(`"${name}" would replace a guard or action of the sign-in completion`)
  }
  for (const field of [...Object.keys(extension.context?.schema ?? {}), ...Object.keys(extension.context?.initial ?? {})]) {
    if (CORE_CONTEXT_FIELDS.has(field)) fail(`context field "${field}" would replace one of the sign-in completion`)
  }
}

/**
 * Checks that no two extensions share an id, a guard, an action, a context field, an effect or an
 * event: one would silently take the other's place (guards, actions and fields are merged by name,
 * and a step's event would reach the other extension's state).
 *
 * @throws {ExtensionError} naming both extensions and the name they share.
 */
function checkNamesApart(extensions: readonly CompletionExtension[]): void {
  const owners = new Map<string, string>()
  const ids = new Set<string>()
  for (const extension of extensions) {
    if (ids.has(extension.id)) throw new ExtensionError(`two extensions have the id "${extension.id}"`)
    ids.add(extension.id)
    const names = new Set<string>()
    for (const name of Object.keys(extension.guards ?? {})) names.add(`guard "${name}"`)
    for (const name of Object.keys(extension.actions ?? {})) names.add(`action "${name}"`)
    for (const name of Object.keys(extension.context?.schema ?? {})) names.add(`context field "${name}"`)
    for (const state of Object.values(extension.states)) {
      const tags: string[] = typeof state.tags === 'string' ? [state.tags] : (state.tags ?? [])
      for (const tag of tags) if (tag.startsWith('effect.')) names.add(`effect "${tag.slice('effect.'.length)}"`)
      for (const event of Object.keys(state.on ?? {})) names.add(`event "${event}"`)
    }
    for (const name of names) {
      const owner = owners.get(name)
      if (owner !== undefined) throw new ExtensionError(`extensions "${owner}" and "${extension.id}" both name the ${name}`)
      owners.set(name, extension.id)
    }
  }
}

/** Rewrites an extension's transitions: {@link CONTINUE} to the next step, {@link DENY} to `denied`. */
function wireExtension(
  extension: CompletionExtension,
  next: readonly AnyStateConfig[],
): Record<string, AnyStateConfig> {
  const rewrite = (candidate: unknown): AnyStateConfig[] => {
    const transition = typeof candidate === 'string' ? { target: candidate } : { ...(candidate as object) }
    const { target, actions: own, ...rest } = transition as { target?: string; actions?: unknown }
    const ownActions = own === undefined ? [] : Array.isArray(own) ? own : [own]
    const reason = target === undefined ? undefined : denialReasonOf(target)
    if (reason !== undefined) {
      const denial = reason === null ? 'recordStepDenial' : { type: 'recordStepDenial', params: { code: `${extension.id}.${reason}` } }
      return [{ ...rest, target: 'denied', actions: [...ownActions, denial] }]
    }
    if (target === CONTINUE) {
      // The next step is a single state unless it begins with a guarded choice (first sign-in).
      return next.map((step) => ({ ...rest, ...step, actions: [...ownActions, ...(step.actions ?? [])] }))
    }
    return [transition]
  }
  const states: Record<string, AnyStateConfig> = {}
  for (const [key, state] of Object.entries(extension.states)) {
    const on: Record<string, AnyStateConfig[]> = {}
    for (const [event, transition] of Object.entries(state.on ?? {})) {
      on[event] = (Array.isArray(transition) ? transition : [transition]).flatMap(rewrite)
    }
    const waiting = state.tags === AWAITS_REQUEST || (Array.isArray(state.tags) && state.tags.includes(AWAITS_REQUEST))
    states[key] = { ...state, ...(waiting ? { meta: { ...state.meta, outcome: toStepPage } } : {}), on }
  }
  return states
}

/**
 * Builds the sign-in completion with the application's extensions inserted at their points. With
 * none, it is the built-in chart.
 *
 * @throws {ExtensionError} when an extension is unsafe (see {@link validateExtension}) or two
 *   extensions claim the same point or state names.
 */
export function buildSignInCompletion(extensions: readonly CompletionExtension[] = []) {
  const byPoint = new Map<ExtensionPoint, CompletionExtension[]>()
  const seenStates = new Set<string>()
  for (const extension of extensions) {
    validateExtension(extension, CORE_STATE_KEYS)
    for (const key of Object.keys(extension.states)) {
      if (seenStates.has(key)) throw new ExtensionError(`extension "${extension.id}": state "${key}" is defined twice`)
      seenStates.add(key)
    }
    byPoint.set(extension.at, [...(byPoint.get(extension.at) ?? []), extension])
  }
  checkNamesApart(extensions)
  const at = (point: ExtensionPoint) => byPoint.get(point) ?? []

  /**
   * The extensions at one point, chained in array order: each one's CONTINUE enters the next, the
   * last one's the step after the point. Returns their states and how the point is entered.
   */
  const chain = (point: ExtensionPoint, next: readonly AnyStateConfig[]) => {
    let states: Record<string, AnyStateConfig> = {}
    let entry = next
    for (const extension of [...at(point)].reverse()) {
      states = { ...wireExtension(extension, entry), ...states }
      entry = [{ target: extension.initial }]
    }
    return { states, entry }
  }

  // The first transitions of each step, from the session backwards.
  const toPrepare = [{ target: 'preparingSession' }]
  const beforeSession = chain('beforeSession', toPrepare)
  const toBeforeSession = beforeSession.entry
  // A step after the first sign-in runs until the user has completed it once at its version, not
  // while the user row is new: one declined or abandoned is asked again, on any way of signing in.
  // Each step has its own check and record; the context names the step they are about.
  let firstSignInStates: Record<string, AnyStateConfig> = {}
  let toAfterFirstSignIn: readonly AnyStateConfig[] = toBeforeSession
  const firstSignInSteps = at('afterFirstSignIn')
  for (const [index, step] of [...firstSignInSteps.entries()].reverse()) {
    const suffix = index === 0 ? '' : `-${step.id}`
    const check = `${FIRST_SIGN_IN_STEP_CHECK}${suffix}`
    const record = `${FIRST_SIGN_IN_STEP_RECORD}${suffix}`
    if (seenStates.has(check) || seenStates.has(record)) {
      throw new ExtensionError(`extension "${step.id}": the states "${check}" and "${record}" are the sign-in completion's`)
    }
    firstSignInStates = {
      [check]: {
        tags: 'effect.findCompletedStep',
        description: `Looks up whether the user has completed "${step.id}" at its current version.`,
        on: {
          'findCompletedStep.done': [{ guard: 'isFirstSignInStepPending', target: step.initial }, ...toAfterFirstSignIn],
          'findCompletedStep.failed': { target: 'failed', actions: 'recordDenial' },
        },
      },
      [record]: {
        tags: 'effect.recordCompletedStep',
        description: `Records that the user completed "${step.id}" at its current version.`,
        on: {
          'recordCompletedStep.done': toAfterFirstSignIn,
          'recordCompletedStep.failed': { target: 'failed', actions: 'recordDenial' },
        },
      },
      ...wireExtension(step, [{ target: record }]),
      ...firstSignInStates,
    }
    const select = firstSignInSteps.length > 1 ? [{ type: 'selectFirstSignInStep', params: { step: step.id } }] : []
    toAfterFirstSignIn = [{ target: check, ...(select.length > 0 ? { actions: select } : {}) }]
  }
  const toGate = [{ target: SECOND_FACTOR_GATE }]
  const afterFirstFactor = chain('afterFirstFactor', toGate)
  const toAfterFirstFactor = afterFirstFactor.entry
  // The step's own actions run first, then those of the way in (which step is selected).
  const withActions = (steps: readonly AnyStateConfig[], ...names: string[]) =>
    steps.map((step) => ({ ...step, actions: [...names, ...(step.actions ?? [])] }))

  const extensionStates = {
    ...afterFirstFactor.states,
    ...firstSignInStates,
    ...beforeSession.states,
  }
  const version = [SIGN_IN_COMPLETION_VERSION, ...extensions.map((e) => `${e.id}@${e.version}`)].join('+')
  const extraContext = Object.assign({}, ...extensions.map((e) => e.context?.initial ?? {}))

  return setup({
    types: {} as {
      context: SignInCompletionContext & Record<string, unknown>
      events: SignInCompletionEvent
    },
    guards: { ...guards, ...Object.assign({}, ...extensions.map((e) => e.guards ?? {})) },
    actions: { ...actions, ...Object.assign({}, ...extensions.map((e) => e.actions ?? {})) },
  }).createMachine({
    id: SIGN_IN_COMPLETION,
    version,
    description: 'Completes every sign-in: the signIn callback, the stored user, the second factor, the session, the events.',
    initial: 'idle',
    context: { ...initialContext, ...extraContext },
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
            ...withActions(toAfterFirstFactor, 'forgetCredentials'),
          ],
          'checkSignIn.failed': { target: 'denied', actions: 'recordDenial' },
        },
      },
      storingUser: {
        tags: 'effect.storeUser',
        description: 'Signs in the linked user, links the account, or creates the user (per first factor).',
        on: {
          'storeUser.done': withActions(toAfterFirstFactor, 'rememberStoredUser'),
          'storeUser.failed': [
            { guard: 'isNotLinked', target: 'notLinked', actions: 'recordDenial' },
            { target: 'failed', actions: 'recordDenial' },
          ],
        },
      },
      ...extensionStates,
      [SECOND_FACTOR_GATE]: {
        tags: 'effect.findSecondFactor',
        description: 'The second-factor gate: opens a challenge when the user has an enrolled factor.',
        on: {
          'findSecondFactor.done': [
            { guard: 'isEnrolled', target: 'awaitingSecondFactor', actions: 'rememberChallenge' },
            ...toAfterFirstSignIn,
          ],
          'findSecondFactor.failed': { target: 'failed', actions: 'recordDenial' },
        },
      },
      awaitingSecondFactor: {
        tags: 'awaitsRequest',
        description: 'Waits for a code from the authenticator app or a backup code (POST /step/signin-completion).',
        meta: {
          outcome: toStepPage,
          step: { page: 'second-factor', events: { 'secondFactor.submit': SecondFactorInput } },
        },
        on: { 'secondFactor.submit': { target: 'verifyingSecondFactor' } },
      },
      verifyingSecondFactor: {
        tags: 'effect.verifySecondFactor',
        description:
          'Checks the code; codes are counted on the server, per sign-in and per user (past the user\'s limit, one a minute).',
        on: {
          'verifySecondFactor.done': withActions(toAfterFirstSignIn, 'rememberSecondFactor'),
          'verifySecondFactor.failed': [
            { guard: 'isCodeWrong', target: 'awaitingSecondFactor', actions: 'recordWrongCode' },
            { guard: 'isUserLocked', target: 'awaitingSecondFactor', actions: 'recordLockedOut' },
            { guard: 'isCodeLimitReached', target: 'denied', actions: 'recordDenial' },
            { target: 'failed', actions: 'recordDenial' },
          ],
        },
      },
      preparingSession: {
        tags: 'effect.prepareSession',
        description: 'Decides what the session records: how the user signed in (amr) and its assurance level.',
        on: { 'prepareSession.done': toSessionIssue('rememberPreparedSession') },
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
        description: 'Refused: the `signIn` callback, too many wrong codes, or an application step (AccessDenied).',
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
  } as never) as unknown as AnyStateMachine
}

/** The states of the built-in chart: extensions may not reuse their names. */
const CORE_STATE_KEYS = [
  'idle',
  'checkingSignIn',
  'storingUser',
  SECOND_FACTOR_GATE,
  'awaitingSecondFactor',
  'verifyingSecondFactor',
  'preparingSession',
  FIRST_SIGN_IN_STEP_CHECK,
  FIRST_SIGN_IN_STEP_RECORD,
  ...SESSION_ISSUING_STATES,
  'announcingSignIn',
  'signedIn',
  'welcomedNewUser',
  'redirectedBySignIn',
  'denied',
  'notLinked',
  'failed',
]

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

/**
 * The built-in sign-in completion machine. Marked pure so that a bundle whose code never reads
 * it (the engine builds its own on the first sign-in) does not build it at start-up.
 */
export const signInCompletionMachine = /* @__PURE__ */ buildSignInCompletion()
