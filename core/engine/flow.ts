/**
 * A flow: a pure machine, the superstruct shape of its context (checked whenever a sealed flow is
 * reopened), and the implementations of the effects its chart names.
 *
 * @module
 */
import type { Struct } from 'superstruct'
import type { AnyStateMachine, ContextFrom, EventObject, StateValue } from 'xstate'
import { EFFECT_TAG_PREFIX } from '../../machines/shared/events.js'
import { listStateNodes } from './transitions.js'

/**
 * Runs one effect. Expected failures are returned as `<name>.failed` events, never thrown; a throw
 * means a bug or an outage and ends the request with the Configuration error. An effect with
 * nothing to wait for may answer synchronously: the engine then takes the event without a
 * microtask hop (a session read runs four effects, each awaiting nothing on its common path).
 */
export type EffectImplementation<Context, Env> = (
  context: Context,
  env: Env,
  trigger: EventObject,
) => EventObject | Promise<EventObject>

/** A flow at rest as its envelope holds it: the state it waits in and its (sealed) context. */
export interface SealedFlowState {
  value: StateValue
  context: unknown
}

/**
 * Carries a flow sealed by an earlier version of a chart over to the current one: the state and
 * context it rested with, as the current chart names them; `null` when it cannot continue (the
 * user starts again). The result is checked like any sealed flow (context shape, a waiting state).
 */
export type FlowMigration = (sealed: SealedFlowState) => SealedFlowState | null

/** A flow definition. */
export interface FlowDefinition<TMachine extends AnyStateMachine = AnyStateMachine, Env = unknown> {
  readonly machine: TMachine
  /** Shape of the context; a sealed flow whose context does not fit is refused. */
  readonly context: Struct<ContextFrom<TMachine>, unknown>
  readonly effects: Readonly<Record<string, EffectImplementation<ContextFrom<TMachine>, Env>>>
  /**
   * What of the context is sealed while the flow rests; all of it by default. The resting answer is
   * computed first, so what only that answer needs (options already handed to the browser) does
   * not travel back and forth in the cookie. The result must still fit `context`.
   */
  readonly sealed?: (context: ContextFrom<TMachine>) => ContextFrom<TMachine>
  /**
   * Migrations of flows in flight across a deploy, keyed by the chart version that sealed them. A
   * flow sealed by a version with no migration here is not resumed: the user is shown a page that
   * says so and starts again (the callback URL kept). Bump `machine.version` whenever the chart
   * changes (a test compares each chart with its committed fingerprint); add a migration when
   * flows resting in the old chart can go on in the new one.
   */
  readonly migrations?: Readonly<Record<string, FlowMigration>>
}

/** The effect names a machine's states are tagged with. */
export function effectNames(machine: AnyStateMachine): Set<string> {
  const names = new Set<string>()
  for (const node of listStateNodes(machine)) {
    for (const tag of node.tags) {
      if (tag.startsWith(EFFECT_TAG_PREFIX)) names.add(tag.slice(EFFECT_TAG_PREFIX.length))
    }
  }
  return names
}

/**
 * Checks a flow definition once, when it is created: the machine has an id and a version (both
 * bound into sealed envelopes) and every effect the chart names has an implementation.
 *
 * @throws {TypeError} `ERR_INVALID_ARG_VALUE` when the definition is incomplete.
 */
export function defineFlow<TMachine extends AnyStateMachine, Env>(
  flow: FlowDefinition<TMachine, Env>,
): FlowDefinition<TMachine, Env> {
  const { machine } = flow
  const invalid = (message: string) =>
    Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_VALUE' })
  if (!machine.id || machine.id === '(machine)') throw invalid('a flow machine needs an explicit id')
  if (!machine.version) throw invalid(`flow "${machine.id}" needs a version`)
  const missing = [...effectNames(machine)].filter((name) => !(name in flow.effects))
  if (missing.length > 0) {
    throw invalid(`flow "${machine.id}" has no implementation for effect(s): ${missing.join(', ')}`)
  }
  if (flow.migrations && Object.hasOwn(flow.migrations, machine.version)) {
    throw invalid(`flow "${machine.id}" declares a migration from its own version ${machine.version}`)
  }
  return Object.freeze({
    ...flow,
    effects: Object.freeze({ ...flow.effects }),
    ...(flow.migrations ? { migrations: Object.freeze({ ...flow.migrations }) } : {}),
  })
}
