/**
 * Applications extend the sign-in with their own states: a terms page, an extra check, a profile
 * step for new users. An extension inserts states at one of the sign-in completion's extension
 * points, with its own effects (I/O, tagged states) and its own pages (states that wait for the
 * user). It is checked when the config is loaded: it cannot skip the second factor, issue a
 * session, run without CSRF protection or replace anything of the core.
 *
 * @module
 */
import { object, type Infer, type Struct } from 'superstruct'
import type { AnyStateMachine } from 'xstate'
import {
  CONTINUE,
  DENY,
  ExtensionError,
  type ContextSchema,
  type ExtensionPoint,
} from '../machines/signin-completion.logic.js'
import { AWAITS_REQUEST, EFFECT_TAG_PREFIX } from '../machines/shared/events.js'
import type { EffectImplementation } from './engine/types.js'
import { effects, fail, isFailure, type EffectEnv, type Failure } from './flows/effect.js'
import type { ExtendedContext, ExtensionEnv, FlowExtension, StepPage } from './types.js'
import { isThenable } from './thenable.js'

export { CONTINUE, DENY, denyBecause, EXTENSION_POINTS, ExtensionError, toStepPage } from '../machines/signin-completion.logic.js'
export type { CompletionExtension, ContextSchema, ExtensionPoint } from '../machines/signin-completion.logic.js'
export { fail, type Failure } from './flows/effect.js'
export type { ExtendedContext, ExtensionEffect, ExtensionEnv, FlowExtension, StepPage, StepView } from './types.js'

/**
 * The sentence an extension gave for the denial `code` (`<extension id>.<reason>`, as the error
 * redirect carries it), if any.
 */
export function denialSentence(extensions: readonly FlowExtension[], code: string | undefined): string | undefined {
  if (code === undefined) return undefined
  const dot = code.indexOf('.')
  const extension = extensions.find((e) => e.id === code.slice(0, dot))
  const reason = code.slice(dot + 1)
  // Stryker disable next-line EqualityOperator: eq#extensions-empty-id
  return dot > 0 && extension?.denials && Object.hasOwn(extension.denials, reason) ? extension.denials[reason] : undefined
}

/** Where an extension's transition may go: one of its states, on ({@link CONTINUE}), or a refusal. */
export type ExtensionTarget<State extends string> = State | typeof CONTINUE | typeof DENY | `${typeof DENY}:${string}`

/** An action written inline (an `assign`). */
type InlineAction = (...args: never) => unknown
/** The event an extension's guard or action reads (its payload as the step or the effect sent it). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ExtensionEvent = { type: string; output?: any; reason?: any; [key: string]: any }

/** One transition of an extension's state. */
export interface ExtensionTransition<State extends string, Guard extends string = string, Action extends string = string> {
  target: ExtensionTarget<State>
  guard?: Guard | InlineAction
  actions?: Action | InlineAction | readonly (Action | InlineAction)[]
  description?: string
}

/** What a state does on an event: a target, a transition, or guarded transitions tried in order. */
export type ExtensionTransitions<State extends string, Guard extends string = string, Action extends string = string> =
  | ExtensionTarget<State>
  | ExtensionTransition<State, Guard, Action>
  | readonly (ExtensionTarget<State> | ExtensionTransition<State, Guard, Action>)[]

/** A tag of an extension's state: it waits for the user, or runs one of its effects. */
export type ExtensionTag<Effect extends string> = typeof AWAITS_REQUEST | `effect.${Effect}`

/** A state of an extension, in xstate's config form (write it with {@link runs} and {@link waitsFor}). */
export interface ExtensionState<
  State extends string = string,
  Effect extends string = string,
  Guard extends string = string,
  Action extends string = string,
> {
  tags?: ExtensionTag<Effect> | readonly ExtensionTag<Effect>[]
  description?: string
  meta?: {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    step?: { page: string; events: Record<string, Struct<any, any>> }
    outcome?: unknown
    [key: string]: unknown
  }
  on?: Record<string, ExtensionTransitions<State, Guard, Action>>
}

/** The context an extension with the fields `Fields` sees: the completion's, and its own, typed. */
export type ContextOf<Fields extends ContextSchema> = ExtendedContext & { [Field in keyof Fields]: Infer<Fields[Field]> }

/**
 * An extension's effect: its I/O. It answers with its output (the `<name>.done` event), or
 * {@link fail}`(reason)` (`<name>.failed`); a throw is `<name>.failed` with reason `threw` and the
 * error logged. The result event's type and time are written by the engine. (An effect that
 * answers with the whole event, `{ type: '<name>.done', output, at }`, works too.)
 */
export type ExtensionEffectOf<Context> = (
  context: Context,
  env: ExtensionEnv,
  trigger: ExtensionEvent,
) => unknown

/** An extension as {@link defineExtension} checks it: names of states, effects, guards and actions known. */
export interface TypedExtension<
  State extends string,
  Fields extends ContextSchema,
  Effect extends string,
  Guard extends string,
  Action extends string,
> {
  /** Names the extension in versions and errors: letters, digits and `-`. */
  id: string
  /** Bump it when the states change: flows sealed by another version are refused cleanly. */
  version: string
  /** At `afterFirstSignIn`: the version a user's completion is recorded under (default `version`). */
  stepVersion?: string
  at: ExtensionPoint
  /** The first state entered at the extension point: one of `states`. */
  initial: NoInfer<State>
  states: Record<State, ExtensionState<NoInfer<State>, NoInfer<Effect>, NoInfer<Guard>, NoInfer<Action>>>
  /** Context fields the extension keeps, with their initial values (plain JSON: they are sealed). */
  context?: { schema: Fields; initial: { [Field in keyof Fields]: Infer<Fields[Field]> } }
  guards?: Record<Guard, (args: { context: ContextOf<Fields>; event: ExtensionEvent }) => boolean>
  /** Only `assign` actions, in the property form: charts stay pure. */
  actions?: Record<Action, InlineAction>
  /** The effects its states run, by name. */
  effects?: Record<Effect, ExtensionEffectOf<ContextOf<Fields>>>
  /** The pages its waiting states name, by name. */
  pages?: Record<string, StepPage>
  /** What the error page says for a `denyBecause(reason)`, by reason. */
  denials?: Record<string, string>
}


/**
 * A state that runs the effect `name`: its tag (`effect.<name>`) and its result events
 * (`<name>.done`, `<name>.failed`) are written from the one name.
 *
 * @example
 * ```ts
 * savingName: runs('saveName', { done: CONTINUE, failed: DENY }),
 * ```
 */
export function runs<
  const Name extends string,
  const Done extends ExtensionTransitions<string>,
  const Failed extends ExtensionTransitions<string> = never,
>(
  name: Name,
  next: { done: Done; failed?: Failed },
  description?: string,
): {
  tags: `effect.${Name}`
  description?: string
  on: { [K in `${Name}.done`]: Done } & ([Failed] extends [never] ? unknown : { [K in `${Name}.failed`]: Failed })
} {
  return {
    tags: `${EFFECT_TAG_PREFIX}${name}` as `effect.${Name}`,
    ...(description !== undefined ? { description } : {}),
    on: {
      [`${name}.done`]: next.done,
      ...(next.failed !== undefined ? { [`${name}.failed`]: next.failed } : {}),
    } as never,
  }
}

/** One answer a waiting state takes: what it carries (a struct, default none) and where it goes. */
export type StepAnswer<Transition> = Transition & {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  input?: Struct<any, any>
}

/**
 * A state that waits for the user on the step page `page`: each answer is written once, with what
 * it carries and where it goes (the step's events and the state's transitions are written from it).
 *
 * @example
 * ```ts
 * askingName: waitsFor('choose-name', {
 *   'name.submit': { input: object({ name: string() }), target: 'savingName', actions: 'rememberName' },
 * }),
 * ```
 */
export function waitsFor<const Answers extends Record<string, StepAnswer<object>>>(
  page: string,
  answers: Answers,
  description?: string,
): {
  tags: typeof AWAITS_REQUEST
  description?: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  meta: { step: { page: string; events: Record<string, Struct<any, any>> } }
  on: { [Event in keyof Answers]: Omit<Answers[Event], 'input'> }
} {
  const events: Record<string, Struct<unknown, unknown>> = {}
  const on: Record<string, object> = {}
  for (const [event, { input, ...transition }] of Object.entries(answers)) {
    events[event] = (input ?? object()) as Struct<unknown, unknown>
    on[event] = transition
  }
  return {
    tags: AWAITS_REQUEST,
    ...(description !== undefined ? { description } : {}),
    meta: { step: { page, events } },
    on: on as never,
  }
}

