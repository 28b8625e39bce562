/**
 * A flow's chart as plain data, read from the machine with xstate's graph utilities: its states
 * (marked effect, resting, final) and its transitions (event, guard, actions). Every diagram format
 * is rendered from this one model, so they cannot disagree with each other or with the machine.
 *
 * @module
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate'
import { toDirectedGraph, type DirectedGraphNode } from 'xstate/graph'
import { transitionId } from '../core/engine/transitions.js'
import { AWAITS_REQUEST, EFFECT_TAG_PREFIX } from '../machines/shared/events.js'

/** What a state is for; a `group` is a compound state (a phase) drawn around its children. */
export type StateKind = 'effect' | 'resting' | 'final' | 'state' | 'group'

/** A state of the chart. */
export interface GraphState {
  /** Dotted path below the machine, e.g. `awaitingCallback`. */
  id: string
  kind: StateKind
  description?: string
  /** For effect states: the effect's name. */
  effect?: string
  initial: boolean
  /** The id of the group (compound state) the state is drawn in; absent at the top level. */
  parent?: string
  /** Groups: the atomic state the group is entered at (its initial child, followed down). */
  entry?: string
}

/** A transition of the chart. */
export interface GraphTransition {
  /** The engine's transition id (`<source state id>:<event>:<index>`), as traces report it. */
  id: string
  source: string
  /** `null` for a transition that stays (no target). */
  target: string | null
  event: string
  guard?: string
  actions: string[]
}

/** A flow's chart. */
export interface FlowGraph {
  id: string
  version: string
  description?: string
  states: GraphState[]
  transitions: GraphTransition[]
}

function pathOf(node: AnyStateNode): string {
  return node.path.join('.')
}

/** The atomic state a transition naming `node` ends in. */
function entryOf(node: AnyStateNode): AnyStateNode {
  let current = node
  while (current.type === 'compound' && current.initial?.target?.[0]) current = current.initial.target[0] as AnyStateNode
  return current
}

function kindOf(node: AnyStateNode): { kind: StateKind; effect?: string } {
  if (node.type === 'final') return { kind: 'final' }
  if (node.type === 'compound') return { kind: 'group' }
  const effect = [...node.tags].find((tag) => tag.startsWith(EFFECT_TAG_PREFIX))
  if (effect) return { kind: 'effect', effect: effect.slice(EFFECT_TAG_PREFIX.length) }
  if (node.tags.includes(AWAITS_REQUEST)) return { kind: 'resting' }
  return { kind: 'state' }
}

function nameOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (value && typeof value === 'object' && 'type' in value && typeof value.type === 'string') return value.type
  if (typeof value === 'function') return value.name || 'inline'
  return undefined
}

/** Reads a machine's chart. */
export function flowGraph(machine: AnyStateMachine): FlowGraph {
  const states: GraphState[] = []
  const transitions: GraphTransition[] = []
  const initialKeys = new Set<string>()
  const visit = (graphNode: DirectedGraphNode) => {
    const node = graphNode.stateNode
    if (node !== machine.root) {
      const initial = node.parent?.initial?.target?.some((t: AnyStateNode) => t === node) ?? false
      if (initial) initialKeys.add(pathOf(node))
      states.push({
        id: pathOf(node),
        ...kindOf(node),
        ...(node.description ? { description: node.description } : {}),
        initial,
        ...(node.parent && node.parent !== machine.root ? { parent: pathOf(node.parent) } : {}),
        ...(node.type === 'compound' ? { entry: pathOf(entryOf(node)) } : {}),
      })
    }
    for (const edge of graphNode.edges) {
      const { transition } = edge
      const guard = nameOf(transition.guard)
      transitions.push({
        id: transitionId(transition),
        source: pathOf(edge.source),
        target: transition.target?.[0] ? pathOf(transition.target[0]) : null,
        event: transition.eventType,
        ...(guard ? { guard } : {}),
        actions: (transition.actions ?? []).map(nameOf).filter((a): a is string => a !== undefined),
      })
    }
    for (const child of graphNode.children) visit(child)
  }
  visit(toDirectedGraph(machine))
  return {
    id: machine.id,
    version: String(machine.version ?? ''),
    ...(machine.root.description ? { description: machine.root.description } : {}),
    states,
    transitions,
  }
}
