/**
 * A compiled stepper for simple charts. xstate's `transition()` is general (hierarchy, parallel
 * regions, history, spawned actors) and costs about 17 µs per step on these machines; a request
 * takes several steps. Our flow machines use a small subset: atomic states, optionally grouped in
 * compound states (phases), final states at the root, no entry/exit actions, no eventless or
 * delayed transitions, guards and `assign` actions by name. For such a machine this module
 * precomputes, per (atomic state, event type), the candidate transitions with their guard and
 * assignments, and steps through them directly, with exactly xstate's semantics for that subset:
 * the first enabled candidate, the atomic state's own before its ancestors' (each in document
 * order), assignments applied in order, a target that names a compound state entering its initial
 * atomic descendant, a final state's `output` passed through the machine's `output`.
 *
 * A machine using anything else is not compiled, and the engine falls back to xstate. The
 * model-based tests check every step the engine takes against xstate's own answer, and
 * `test/core/compiled.test.ts` compares the two steppers event by event.
 *
 * @module
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition, EventObject } from 'xstate'
import { AWAITS_REQUEST, EFFECT_TAG_PREFIX } from '../../machines/shared/events.js'
import { transitionId } from './transitions.js'

type Context = Record<string, unknown>
type StateValue = string | { [key: string]: StateValue }
type Guard = (args: { context: Context; event: EventObject }, params: undefined) => boolean
type Assignment = (args: { context: Context; event: EventObject }, params: undefined) => Context

interface CompiledTransition {
  id: string
  guard?: Guard
  assignments: Assignment[]
  /** `undefined`: the transition stays in its state. */
  target?: string
}

/** What the engine needs to know about an atomic or final state. */
export interface CompiledState {
  /** The state's path from the root, dotted (`jwt.decoding`), as `stateLabel` writes a value. */
  key: string
  /** The state value xstate gives this state: the key itself at the root, nested objects below. */
  value: StateValue
  final: boolean
  awaitsRequest: boolean
  effect?: string
  /** Final states: the outcome from the context (their `output`, through the machine's). */
  output?: (context: Context, event: EventObject) => unknown
  /** Waiting states: `meta.outcome`. */
  outcome?: (context: Context) => unknown
  transitions: ReadonlyMap<string, readonly CompiledTransition[]>
}

/** A compiled machine. */
export interface CompiledMachine {
  /** Every atomic and final state, by {@link CompiledState.key}. */
  states: ReadonlyMap<string, CompiledState>
}

/** A step's result: the next state and context, and the transition taken. */
export interface CompiledStep {
  state: CompiledState
  context: Context
  transition: string
}

const compiled = new WeakMap<AnyStateMachine, CompiledMachine | null>()

function guardOf(machine: AnyStateMachine, guard: unknown): Guard | undefined | null {
  if (guard === undefined) return undefined
  if (typeof guard === 'string') {
    const implementation = (machine.implementations.guards as Record<string, unknown>)[guard]
    return typeof implementation === 'function' ? (implementation as Guard) : null
  }
  // Inline functions are fine; guard objects (params, and/or/not) are left to xstate.
  return typeof guard === 'function' && !('check' in guard) ? (guard as Guard) : null
}

function assignmentOf(machine: AnyStateMachine, action: unknown): Assignment | null {
  const resolved =
    typeof action === 'string' ? (machine.implementations.actions as Record<string, unknown>)[action] : action
  if (typeof resolved !== 'function') return null
  const { type, assignment } = resolved as { type?: unknown; assignment?: unknown }
  if (type !== 'xstate.assign') return null
  if (typeof assignment === 'function') return assignment as Assignment
  if (!assignment || typeof assignment !== 'object') return null
  // The property-map form, `assign({ key: value | (args) => value })`, as xstate resolves it.
  const properties = Object.entries(assignment as Record<string, unknown>)
  // Indexed, not destructured per entry: this runs on every step of every request.
  const keys = properties.map(([key]) => key)
  const values = properties.map(([, value]) => value)
  return (args, params) => {
    const partial: Context = {}
    for (let i = 0; i < keys.length; i++) {
      const value = values[i]
      partial[keys[i]!] = typeof value === 'function' ? (value as Assignment)(args, params) : value
    }
    return partial
  }
}

function compileTransition(
  machine: AnyStateMachine,
  transition: AnyTransitionDefinition,
): CompiledTransition | null {
  const targets = transition.target ?? []
  if (targets.length > 1) return null
  const named = targets[0] as AnyStateNode | undefined
  const target = named && initialAtomic(named)
  if (target === null) return null
  const guard = guardOf(machine, transition.guard)
  if (guard === null) return null
  const assignments: Assignment[] = []
  for (const action of transition.actions) {
    const assignment = assignmentOf(machine, action)
    if (assignment === null) return null
    assignments.push(assignment)
  }
  return {
    id: transitionId(transition),
    ...(guard ? { guard } : {}),
    assignments,
    ...(target ? { target: pathOf(target) } : {}),
  }
}

/** The dotted path of a state node from the root (the root's children are their own key). */
function pathOf(node: AnyStateNode): string {
  return node.path.join('.')
}

/** The state value of an atomic state: `a`, `{ a: 'b' }`, `{ a: { b: 'c' } }`. */
function valueOf(node: AnyStateNode): StateValue {
  const path = node.path as string[]
  let value: StateValue = path[path.length - 1]!
  for (let i = path.length - 2; i >= 0; i--) value = { [path[i]!]: value }
  return value
}

/** The atomic state entered when `node` is entered; `null` for what is beyond the subset. */
function initialAtomic(node: AnyStateNode): AnyStateNode | null {
  let current = node
  while (current.type === 'compound') {
    const initial = current.initial?.target
    if (!initial || initial.length !== 1 || current.initial.actions.length > 0) return null
    current = initial[0] as AnyStateNode
  }
  return current.type === 'atomic' || current.type === 'final' ? current : null
}

/** A compound state that only groups: nothing but children and transitions. */
function isGrouping(node: AnyStateNode): boolean {
  return (
    node.type === 'compound' &&
    node.entry.length === 0 &&
    node.exit.length === 0 &&
    !node.always?.length &&
    node.after.length === 0 &&
    node.invoke.length === 0 &&
    node.tags.length === 0 &&
    (node.meta as { outcome?: unknown } | undefined)?.outcome === undefined
  )
}

function compileState(machine: AnyStateMachine, node: AnyStateNode): CompiledState | null {
  if (node.type !== 'atomic' && node.type !== 'final') return null
  // A final state below the root ends only its phase in xstate (`onDone`), not the flow.
  if (node.type === 'final' && node.parent !== machine.root) return null
  if (node.entry.length > 0 || node.exit.length > 0 || node.always?.length || node.after.length > 0) return null
  if (node.invoke.length > 0) return null
  // The state's own transitions first, then each ancestor's: xstate takes the first enabled one.
  const sources: AnyStateNode[] = []
  for (let source: AnyStateNode | undefined = node; source; source = source.parent) sources.push(source)
  const transitions = new Map<string, CompiledTransition[]>()
  for (const source of sources) {
    for (const [eventType, candidates] of source.transitions) {
      if (eventType === '*' || eventType.endsWith('.*')) return null
      const list = transitions.get(eventType) ?? []
      for (const candidate of candidates) {
        const compiledTransition = compileTransition(machine, candidate)
        if (compiledTransition === null) return null
        list.push(compiledTransition)
      }
      transitions.set(eventType, list)
    }
  }
  const effect = node.tags.find((tag: string) => tag.startsWith(EFFECT_TAG_PREFIX))
  const meta = node.meta as { outcome?: unknown } | undefined
  const finalOutput = node.output as unknown
  const machineOutput = machine.root.output as unknown
  return {
    key: pathOf(node),
    value: valueOf(node),
    final: node.type === 'final',
    awaitsRequest: node.tags.includes(AWAITS_REQUEST),
    ...(effect ? { effect: effect.slice(EFFECT_TAG_PREFIX.length) } : {}),
    ...(node.type === 'final'
      ? {
          output: (context: Context, event: EventObject) => {
            const output =
              typeof finalOutput === 'function' ? finalOutput({ context, event }, undefined) : finalOutput
            if (typeof machineOutput !== 'function') return output
            return machineOutput({ context, event: { type: `xstate.done.state.${machine.id}`, output } }, undefined)
          },
        }
      : {}),
    ...(typeof meta?.outcome === 'function' ? { outcome: meta.outcome as (context: Context) => unknown } : {}),
    transitions,
  }
}

/** Every atomic and final state below `node`, or `null` when a grouping state does more than group. */
function leavesOf(node: AnyStateNode): AnyStateNode[] | null {
  const leaves: AnyStateNode[] = []
  for (const child of Object.values(node.states) as AnyStateNode[]) {
    if (child.type === 'atomic' || child.type === 'final') leaves.push(child)
    else if (isGrouping(child) && initialAtomic(child)) {
      const below = leavesOf(child)
      if (below === null) return null
      leaves.push(...below)
    } else return null
  }
  return leaves
}

/** The compiled form of `machine`, or `null` when it uses more than the subset above. */
export function compileMachine(machine: AnyStateMachine): CompiledMachine | null {
  if (compiled.has(machine)) return compiled.get(machine)!
  let result: CompiledMachine | null = null
  const root = machine.root
  const simpleRoot =
    root.entry.length === 0 &&
    root.exit.length === 0 &&
    !root.always?.length &&
    root.after.length === 0 &&
    root.invoke.length === 0 &&
    root.type === 'compound'
  const leaves = simpleRoot ? leavesOf(root) : null
  if (leaves) {
    const states = new Map<string, CompiledState>()
    for (const node of leaves) {
      const state = compileState(machine, node)
      if (state === null) break
      states.set(state.key, state)
    }
    if (states.size === leaves.length) result = { states }
  }
  compiled.set(machine, result)
  return result
}

/**
 * Takes `event` in `state` with `context`; `undefined` when no transition is enabled (xstate would
 * return the snapshot unchanged).
 */
export function compiledStep(
  machine: CompiledMachine,
  state: CompiledState,
  context: Context,
  event: EventObject,
): CompiledStep | undefined {
  const candidates = state.transitions.get(event.type)
  if (!candidates) return undefined
  for (const candidate of candidates) {
    if (candidate.guard && !candidate.guard({ context, event }, undefined)) continue
    // One copy per step, however many assignments: the caller's context is never written to.
    let next = context
    if (candidate.assignments.length > 0) {
      next = { ...context }
      for (const assignment of candidate.assignments) Object.assign(next, assignment({ context: next, event }, undefined))
    }
    const target = candidate.target === undefined ? state : machine.states.get(candidate.target)!
    return { state: target, context: next, transition: candidate.id }
  }
  return undefined
}
