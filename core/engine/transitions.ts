/**
 * Names for a machine's transitions, so that runs can be traced and coverage counted: a transition
 * is `<source state id>:<event type>:<index among that event's candidates>`.
 *
 * @module
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate'

/** The id of a transition definition. */
export function transitionId(transition: AnyTransitionDefinition): string {
  const candidates = transition.source.transitions.get(transition.eventType) ?? []
  return `${transition.source.id}:${transition.eventType}:${candidates.indexOf(transition)}`
}

function* stateNodes(node: AnyStateNode): Generator<AnyStateNode> {
  yield node
  for (const child of Object.values(node.states) as AnyStateNode[]) yield* stateNodes(child)
}

/** Every state node of a machine, the root first, in document order. */
export function listStateNodes(machine: AnyStateMachine): AnyStateNode[] {
  return [...stateNodes(machine.root)]
}

/** Every transition of a machine, by id. */
export function listTransitions(machine: AnyStateMachine): Map<string, AnyTransitionDefinition> {
  const all = new Map<string, AnyTransitionDefinition>()
  for (const node of listStateNodes(machine)) {
    for (const candidates of node.transitions.values()) {
      for (const transition of candidates) all.set(transitionId(transition), transition)
    }
  }
  return all
}

/** A state value as a dotted path (`a.b`), parallel regions joined with `,`. */
export function stateLabel(value: unknown): string {
  if (typeof value === 'string') return value
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([key, child]) => `${key}.${stateLabel(child)}`)
      .join(',')
  }
  return String(value)
}
