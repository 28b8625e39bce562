import type { AnyStateMachine } from 'xstate'
import { EFFECT_TAG_PREFIX } from '../../machines/shared/events.js'
import { listStateNodes } from './transitions.js'
import type { EffectImplementation, FlowDefinition } from './types.js'

export type { EffectImplementation, FlowDefinition }

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
