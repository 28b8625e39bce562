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
import { assign, setup, type AnyStateMachine } from 'xstate'
import { AWAITS_REQUEST } from './shared/events.js'
import {
  assignments,
  CONTINUE,
  CORE_CONTEXT_FIELDS,
  CORE_EFFECTS,
  DENY,
  EXTENSION_POINTS,
  ExtensionError,
  guards,
  initialContext,
  outputs,
  SECOND_FACTOR_GATE,
  SECOND_FACTOR_STEP,
  SecondFactorInput,
  SESSION_ISSUING_STATES,
  SIGN_IN_COMPLETION,
  SIGN_IN_COMPLETION_VERSION,
  type CompletionExtension,
  type ExtensionPoint,
  type SignInCompletionContext,
  type SignInCompletionEvent,
} from './signin-completion.logic.js'

export {
  CONTINUE,
  CORE_CONTEXT_FIELDS,
  CORE_EFFECTS,
  DENY,
  denyBecause,
  EXTENSION_POINTS,
  ExtensionError,
  SECOND_FACTOR_GATE,
  SecondFactorInput,
  SESSION_ISSUING_STATES,
  SIGN_IN_COMPLETION,
  SIGN_IN_COMPLETION_VERSION,
  signInCompletionContext,
  SignInCompletionContext,
  SignInPolicy,
  toStepPage,
  type CompletionExtension,
  type ContextSchema,
  type ExtensionPoint,
  type SignInCompletionEvent,
  type SignInCompletionTag,
} from './signin-completion.logic.js'

type AnyStateConfig = CompletionExtension['states'][string]

const DENIAL_REASON = /^[a-z][a-z0-9-]{0,31}$/

/** The reason of a {@link denyBecause} target; `null` for a plain {@link DENY}, `undefined` for neither. */
function denialReasonOf(target: string): string | null | undefined {
  if (target === DENY) return null
  if (target.startsWith(`${DENY}:`)) return target.slice(DENY.length + 1)
  return undefined
}

/** With a step at `afterFirstSignIn`: the states that decide whether it runs, and record it ran. */
const FIRST_SIGN_IN_STEP_CHECK = 'checkingFirstSignInStep'
const FIRST_SIGN_IN_STEP_RECORD = 'recordingFirstSignInStep'

/** The events of the built-in chart: an extension's states may not take them. */
const CORE_EVENTS: ReadonlySet<string> = new Set([
  'signin.verified',
  'secondFactor.submit',
  ...CORE_EFFECTS.flatMap((effect) => [`${effect}.done`, `${effect}.failed`]),
])

/** Where a verified user goes once everything before the session is done. */
const toSessionIssue = <A extends string>(actions: A) =>
  [
    { guard: 'isDatabaseStrategy', target: 'creatingDatabaseSession', actions },
    { target: 'issuingSession', actions },
  ] as const

/** The core actions, by name: the logic module's assignments. */
const actions = {
  rememberIdentity: assign(assignments.rememberIdentity),
  forgetCredentials: assign(assignments.forgetCredentials),
  rememberSignInRedirect: assign(assignments.rememberSignInRedirect),
  rememberStoredUser: assign(assignments.rememberStoredUser),
  rememberChallenge: assign(assignments.rememberChallenge),
  recordWrongCode: assign(assignments.recordWrongCode),
  recordCodeUsed: assign(assignments.recordCodeUsed),
  recordLockedOut: assign(assignments.recordLockedOut),
  rememberSecondFactor: assign(assignments.rememberSecondFactor),
  rememberPreparedSession: assign(assignments.rememberPreparedSession),
  rememberIssuedSession: assign(assignments.rememberIssuedSession),
  recordDenial: assign(assignments.recordDenial),
  selectFirstSignInStep: assign(assignments.selectFirstSignInStep),
  recordStepDenial: assign(assignments.recordStepDenial),
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
      if (state.meta.outcome !== outputs.toStepPage) {
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
    states[key] = { ...state, ...(waiting ? { meta: { ...state.meta, outcome: outputs.toStepPage } } : {}), on }
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
    // The built-in chart's context is the logic module's own (the compiled table names it).
    context: extensions.length === 0 ? initialContext : { ...initialContext, ...extraContext },
    output: outputs.finalStateOutcome,
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
          outcome: outputs.toStepPage,
          step: SECOND_FACTOR_STEP,
        },
        on: { 'secondFactor.submit': { target: 'verifyingSecondFactor' } },
      },
      verifyingSecondFactor: {
        tags: 'effect.verifySecondFactor',
        description:
          'Checks the code; codes are counted on the server, per sign-in, per client and per user (a known device on its own).',
        on: {
          'verifySecondFactor.done': withActions(toAfterFirstSignIn, 'rememberSecondFactor'),
          'verifySecondFactor.failed': [
            { guard: 'isCodeWrong', target: 'awaitingSecondFactor', actions: 'recordWrongCode' },
            { guard: 'isCodeUsed', target: 'awaitingSecondFactor', actions: 'recordCodeUsed' },
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
        output: outputs.toSignedIn,
      },
      welcomedNewUser: {
        type: 'final',
        description: 'A first sign-in: redirect to `pages.newUser` with the callback URL.',
        output: outputs.toNewUserPage,
      },
      redirectedBySignIn: {
        type: 'final',
        description: 'The `signIn` callback returned a URL: redirect there without a session.',
        output: outputs.toSignInRedirect,
      },
      denied: {
        type: 'final',
        description: 'Refused: the `signIn` callback, too many wrong codes, or an application step (AccessDenied).',
        output: outputs.toDenial,
      },
      notLinked: {
        type: 'final',
        description: 'The account or its e-mail belongs to another user: `OAuthAccountNotLinked` (`AccountNotLinked`).',
        output: outputs.toDenial,
      },
      failed: {
        type: 'final',
        description: 'Storing the user or issuing the session failed: the Configuration error (reason logged).',
        output: outputs.toDenial,
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

/**
 * The built-in sign-in completion machine. Marked pure so that a bundle whose code never reads
 * it (the engine builds its own on the first sign-in) does not build it at start-up.
 */
export const signInCompletionMachine = /* @__PURE__ */ buildSignInCompletion()