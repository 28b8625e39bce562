/**
 * Effects, written once each. A flow's effects are plain functions of the context and the request
 * that answer with their output (or an expected failure, `fail(reason)`); `effects(machine, …)`
 * turns each into the implementation the engine runs for the chart's `effect.<name>` state:
 *
 * - the output becomes `<name>.done`, a `fail(reason, …)` becomes `<name>.failed`, both stamped
 *   with the request time `at`;
 * - a throw (a bug, an outage) becomes `<name>.failed` with reason `threw` and the error reported
 *   (logged as Auth.js logs it, its type told to the user: the Configuration error page), when the
 *   chart takes that event; an effect whose chart has no failure for it lets the throw through;
 * - an answer that needs nothing to wait for stays synchronous (the session read runs four effects
 *   and awaits none of them on its common path).
 *
 * @module
 */
import type { AnyStateMachine, ContextFrom, EventFrom, EventObject } from 'xstate'
import { AuthError, CallbackRouteError, type ErrorType } from '../errors.js'
import type { CompiledChart, EffectImplementation } from '../engine/types.js'
import type { Logger } from '../shapes.js'
import { isThenable } from '../thenable.js'

const FAILED: unique symbol = Symbol('authchart.effect-failed')

/** What a failure tells the user: an error type (spec §7) and, for credentials, its code. */
export interface Told {
  error?: ErrorType
  code?: string
  /** Seconds until a rate limit lets the attempt through again. */
  retryAfter?: number
}

/** An expected failure an effect answers with: what the chart branches on, and what the user is told. */
export interface Failure<Reason extends string = string> extends Told {
  readonly [FAILED]: true
  readonly reason: Reason
}

/** An expected failure of an effect: `<name>.failed` with `reason` (and what the user is told). */
export function fail<Reason extends string>(reason: Reason, told: Told = {}): Failure<Reason> {
  return { [FAILED]: true, reason, ...told }
}

/** Whether an effect's answer is a failure (to pass one effect's failure on as another's). */
export const isFailure = (value: unknown): value is Failure =>
  typeof value === 'object' && value !== null && (value as { [FAILED]?: unknown })[FAILED] === true

/** What every effect's environment has: the request time and a logger. */
export interface EffectEnv {
  readonly at: number
  readonly logger: Logger
}

/** The output of `<Name>.done` in the event union `E`. */
type DoneOutput<E, Name extends string> = E extends { type: `${Name}.done`; output: infer O } ? O : never
/** The reasons of `<Name>.failed` in the event union `E`. */
type FailReason<E, Name extends string> = E extends { type: `${Name}.failed`; reason: infer R extends string } ? R : never
/** The effect names of the event union `E`: every `<name>.done`. */
type EffectName<E> = E extends { type: `${infer Name}.done` } ? Name : never

/** An effect as written: the output of `<name>.done`, or a failure, at once or later. */
export type EffectBody<Context, Env, Output, Reason extends string> = (
  context: Context,
  env: Env,
  trigger: EventObject,
) => Output | Failure<Reason> | PromiseLike<Output | Failure<Reason>>

/** The effects of a chart with context `C` and events `E`, as written. */
export type EffectBodies<C, E, Env> = {
  [Name in EffectName<E>]?: EffectBody<C, Env, DoneOutput<E, Name>, FailReason<E, Name>>
}

/** How a throw is reported: logs it and returns the error type the user is told, if any. */
export type ThrowReport<Env, C> = (env: Env, error: unknown, context: C) => ErrorType | undefined

/** Logs an unexpected failure as Auth.js does (AuthErrors as they are, others wrapped) and tells its type. */
export function reportFailure(env: EffectEnv, error: unknown): ErrorType {
  const reported = error instanceof AuthError ? error : new CallbackRouteError(error as Error)
  env.logger.error(reported)
  return reported.type
}

/** The event types some state of `machine` (or of a compiled chart) takes. */
function acceptedEvents(machine: AnyStateMachine | CompiledChart): Set<string> {
  const accepted = new Set<string>()
  if (!('root' in machine)) {
    for (const state of Object.values(machine.states)) for (const type of Object.keys(state.transitions)) accepted.add(type)
    return accepted
  }
  const walk = (node: AnyStateMachine['root']) => {
    for (const type of node.transitions.keys()) accepted.add(type)
    for (const child of Object.values(node.states)) walk(child as AnyStateMachine['root'])
  }
  walk(machine.root)
  return accepted
}

/**
 * One effect: stamps its answer with `at`, and reports a throw as `<name>.failed` (reason
 * `threw`) when `failsOnThrow`, else lets it through.
 */
export function effect<C, Env extends EffectEnv>(
  name: string,
  body: EffectBody<C, Env, unknown, string>,
  report: ThrowReport<Env, C> = reportFailure,
  failsOnThrow = true,
): EffectImplementation<C, Env> {
  const done = `${name}.done`
  const failed = `${name}.failed`
  const answer = (env: Env, value: unknown): EventObject => {
    if (!isFailure(value)) return { type: done, output: value, at: env.at } as EventObject
    const { reason, error, code, retryAfter } = value
    return {
      type: failed,
      reason,
      ...(error !== undefined ? { error } : {}),
      ...(code !== undefined ? { code } : {}),
      ...(retryAfter !== undefined ? { retryAfter } : {}),
      at: env.at,
    } as EventObject
  }
  const threw = (env: Env, context: C, error: unknown): EventObject => {
    if (!failsOnThrow) throw error
    const told = report(env, error, context)
    return { type: failed, reason: 'threw', ...(told !== undefined ? { error: told } : {}), at: env.at } as EventObject
  }
  return (context, env, trigger) => {
    let value: unknown
    try {
      value = body(context, env, trigger)
    } catch (error) {
      return threw(env, context, error)
    }
    if (!isThenable(value)) return answer(env, value)
    return Promise.resolve(value).then(
      (resolved) => answer(env, resolved),
      (error: unknown) => threw(env, context, error),
    )
  }
}

/**
 * The effects of `machine`, each written once under its name (see the module). `report` logs an
 * unexpected throw and says what the user is told: by default {@link reportFailure}.
 */
export function effects<M extends AnyStateMachine, Env extends EffectEnv>(
  machine: M | CompiledChart<ContextFrom<M>>,
  bodies: EffectBodies<ContextFrom<M>, EventFrom<M>, Env>,
  report?: ThrowReport<Env, ContextFrom<M>>,
): Record<string, EffectImplementation<ContextFrom<M>, Env>>
export function effects<C, E, Env extends EffectEnv>(
  machine: AnyStateMachine | CompiledChart<C>,
  bodies: EffectBodies<C, E, Env>,
  report?: ThrowReport<Env, C>,
): Record<string, EffectImplementation<C, Env>>
export function effects<C, Env extends EffectEnv>(
  machine: AnyStateMachine | CompiledChart<C>,
  bodies: Record<string, EffectBody<C, Env, unknown, string> | undefined>,
  report: ThrowReport<Env, C> = reportFailure,
): Record<string, EffectImplementation<C, Env>> {
  const accepted = acceptedEvents(machine)
  const implementations: Record<string, EffectImplementation<C, Env>> = {}
  for (const [name, body] of Object.entries(bodies)) {
    if (body) implementations[name] = effect(name, body, report, accepted.has(`${name}.failed`))
  }
  return implementations
}
