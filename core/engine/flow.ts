/**
 * A flow: a pure machine, the superstruct shape of its context (checked whenever a sealed flow is
 * reopened), and the implementations of the effects its chart names.
 *
 * @module
 */
import type { Struct } from 'superstruct'
import type { AnyStateMachine, ContextFrom, EventObject } from 'xstate'
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
  return Object.freeze({ ...flow, effects: Object.freeze({ ...flow.effects }) })
}
