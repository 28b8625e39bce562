/**
 * The chart compiler's walk over an xstate machine, and the transitional run-time compiler. A
 * machine is turned into the {@link CompiledChart} table the engine steps (`chart.ts`): built-in
 * charts at build time (`scripts/compile-charts.ts` writes `core/charts/`), and at run time here
 * the charts that have no logic module yet, the charts an application extends (`extensions`) or
 * defines itself (`flows`), which load xstate with their machine. This module imports only xstate's
 * types: it reads the machine object it is given.
 *
 * The subset: atomic states, optionally grouped in compound states that only group (phases),
 * final states at the root, no entry/exit actions, no eventless or delayed transitions, no
 * invocations, guards and `assign` actions, one target per transition. A chart beyond it is
 * refused with a {@link ChartCompileError} naming the chart and the state.
 *
 * @module
 */
import type { AnyActorScope, AnyMachineSnapshot, AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate'
import { AWAITS_REQUEST, EFFECT_TAG_PREFIX } from '../../machines/shared/events.js'
import { transitionId } from './transitions.js'
import type { ChartAssignment, ChartGuard, ChartOutcome, ChartOutput, ChartState, ChartTransition, CompiledChart } from './types.js'

type Context = Record<string, unknown>
type StateValue = string | { [key: string]: StateValue }

/**
 * A chart the compiler cannot turn into a table: it uses a feature beyond the subset, or (at build
 * time) a function its logic module does not name.
 */
export class ChartCompileError extends Error {
  override name = 'ChartCompileError'
  /** The chart, and the state (dotted path) where the compiler stopped, if any. */
  constructor(
    readonly chart: string,
    readonly state: string | undefined,
    reason: string,
  ) {
    super(`chart "${chart}"${state === undefined ? '' : `, state "${state}"`}: ${reason}`)
  }
}

type Implementation = (args: { context: Context; event: unknown }, params: unknown) => unknown

/** Binds static `params` (an action or guard object's) to an implementation. */
function withParams<T>(implementation: Implementation, params: unknown): T {
  return (params === undefined ? implementation : (args: { context: Context; event: unknown }) => implementation(args, params)) as T
}

/** The function a transition's guard runs. */
function guardOf(machine: AnyStateMachine, state: string, guard: unknown): ChartGuard | undefined {
  if (guard === undefined) return undefined
  const refuse = (what: string) => new ChartCompileError(machine.id, state, `guard ${what} is beyond the compiled subset`)
  if (typeof guard === 'function') {
    // Inline functions are fine; combinators (and/or/not) carry a `check` and are not.
    if ('check' in guard) throw refuse(`"${String((guard as { type?: unknown }).type ?? guard.name)}" (a combinator)`)
    return guard as ChartGuard
  }
  const { type, params } =
    typeof guard === 'string' ? { type: guard, params: undefined } : (guard as { type?: unknown; params?: unknown })
  const implementation = typeof type === 'string' ? (machine.implementations.guards as Record<string, unknown>)[type] : undefined
  if (typeof implementation !== 'function') throw refuse(`"${String(type)}" (no implementation)`)
  if ('check' in implementation) throw refuse(`"${String(type)}" (a combinator)`)
  if (typeof params === 'function') throw refuse(`"${String(type)}" (dynamic params)`)
  return withParams<ChartGuard>(implementation as Implementation, params)
}

/** The function an `assign` action runs. */
function assignmentOf(machine: AnyStateMachine, state: string, action: unknown): ChartAssignment {
  const object = typeof action === 'object' && action !== null ? (action as { type?: unknown; params?: unknown }) : undefined
  const name = typeof action === 'string' ? action : object?.type
  const params = object?.params
  const resolved =
    typeof action === 'function' ? action : typeof name === 'string' ? (machine.implementations.actions as Record<string, unknown>)[name] : undefined
  const label = typeof name === 'string' ? `"${name}"` : 'an inline action'
  const refuse = (why: string) => new ChartCompileError(machine.id, state, `action ${label} ${why}`)
  if (typeof resolved !== 'function') throw refuse('has no implementation')
  const { type, assignment } = resolved as { type?: unknown; assignment?: unknown }
  if (type !== 'xstate.assign') throw refuse('is not an `assign` (the engine performs every effect)')
  if (typeof params === 'function') throw refuse('has dynamic params')
  if (typeof assignment === 'function') return withParams<ChartAssignment>(assignment as Implementation, params)
  if (!assignment || typeof assignment !== 'object') throw refuse('assigns nothing')
  // The property-map form, `assign({ key: value | (args) => value })`, as xstate resolves it.
  const properties = Object.entries(assignment as Record<string, unknown>)
  // Indexed, not destructured per entry: this runs on every step of every request.
  const keys = properties.map(([key]) => key)
  const values = properties.map(([, value]) => value)
  return ((args: { context: Context; event: unknown }) => {
    const partial: Context = {}
    for (let i = 0; i < keys.length; i++) {
      const value = values[i]
      partial[keys[i]!] = typeof value === 'function' ? (value as Implementation)(args, params) : value
    }
    return partial
  }) as ChartAssignment
}

function compileTransition(machine: AnyStateMachine, state: string, transition: AnyTransitionDefinition): ChartTransition {
  const targets = transition.target ?? []
  if (targets.length > 1) throw new ChartCompileError(machine.id, state, `"${transition.eventType}" has several targets`)
  const named = targets[0] as AnyStateNode | undefined
  const target = named && initialAtomic(machine, named)
  const guard = guardOf(machine, state, transition.guard)
  const assignments = transition.actions.map((action: unknown) => assignmentOf(machine, state, action))
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

/** The atomic state entered when `node` is entered. */
function initialAtomic(machine: AnyStateMachine, node: AnyStateNode): AnyStateNode {
  let current = node
  while (current.type === 'compound') {
    const initial = current.initial?.target
    if (!initial || initial.length !== 1 || current.initial.actions.length > 0) {
      throw new ChartCompileError(machine.id, pathOf(current), 'its initial transition is beyond the compiled subset')
    }
    current = initial[0] as AnyStateNode
  }
  if (current.type !== 'atomic' && current.type !== 'final') {
    throw new ChartCompileError(machine.id, pathOf(current), `a ${current.type} state is beyond the compiled subset`)
  }
  return current
}

/** What a state does beyond the subset, if anything. */
function beyondSubset(node: AnyStateNode): string | undefined {
  if (node.entry.length > 0) return 'entry actions'
  if (node.exit.length > 0) return 'exit actions'
  if (node.always?.length) return 'eventless transitions'
  if (node.after.length > 0) return 'delayed transitions'
  if (node.invoke.length > 0) return 'invocations'
  return undefined
}

function compileState(machine: AnyStateMachine, node: AnyStateNode): ChartState {
  const key = pathOf(node)
  const refuse = (why: string) => new ChartCompileError(machine.id, key, `${why} are beyond the compiled subset`)
  // A final state below the root ends only its phase in xstate (`onDone`), not the flow.
  if (node.type === 'final' && node.parent !== machine.root) throw refuse('final states inside a phase')
  const beyond = beyondSubset(node)
  if (beyond) throw refuse(beyond)
  // The state's own transitions first, then each ancestor's: xstate takes the first enabled one.
  const transitions: Record<string, ChartTransition[]> = {}
  for (let source: AnyStateNode | undefined = node; source; source = source.parent) {
    for (const [eventType, candidates] of source.transitions) {
      if (eventType === '*' || eventType.endsWith('.*')) throw refuse(`wildcard transitions ("${eventType}")`)
      const list = Object.hasOwn(transitions, eventType) ? transitions[eventType]! : (transitions[eventType] = [])
      for (const candidate of candidates) list.push(compileTransition(machine, key, candidate))
    }
  }
  const effect = node.tags.find((tag: string) => tag.startsWith(EFFECT_TAG_PREFIX))
  const meta = node.meta as { outcome?: unknown; step?: unknown } | undefined
  const output = node.output as unknown
  return {
    key,
    value: valueOf(node),
    ...(node.type === 'final' ? { final: true as const } : {}),
    ...(node.tags.includes(AWAITS_REQUEST) ? { awaitsRequest: true as const } : {}),
    ...(effect ? { effect: effect.slice(EFFECT_TAG_PREFIX.length) } : {}),
    ...(node.type === 'final' && output !== undefined
      ? { output: (typeof output === 'function' ? output : () => output) as ChartOutput }
      : {}),
    ...(typeof meta?.outcome === 'function' ? { outcome: meta.outcome as ChartOutcome } : {}),
    ...(meta?.step !== undefined ? { step: meta.step } : {}),
    transitions,
  }
}

/** Every atomic and final state below `node`, through compound states that only group. */
function leavesOf(machine: AnyStateMachine, node: AnyStateNode): AnyStateNode[] {
  const leaves: AnyStateNode[] = []
  for (const child of Object.values(node.states) as AnyStateNode[]) {
    if (child.type === 'atomic' || child.type === 'final') {
      leaves.push(child)
      continue
    }
    const refuse = (why: string) => new ChartCompileError(machine.id, pathOf(child), `${why} is beyond the compiled subset`)
    if (child.type !== 'compound') throw refuse(`a ${child.type} state`)
    const beyond = beyondSubset(child)
    if (beyond) throw refuse(beyond)
    if (child.tags.length > 0) throw refuse('a tag on a phase')
    if ((child.meta as { outcome?: unknown } | undefined)?.outcome !== undefined) throw refuse('an outcome on a phase')
    initialAtomic(machine, child)
    leaves.push(...leavesOf(machine, child))
  }
  return leaves
}

/**
 * The table of `machine`, with the machine's own functions: what the engine steps at run time,
 * and what `scripts/compile-charts.ts` writes out by name.
 *
 * @throws {ChartCompileError} when the machine uses more than the subset above.
 */
export function chartOf(machine: AnyStateMachine, initialContext: unknown = (machine.config as { context?: unknown }).context): CompiledChart {
  const root = machine.root
  if (root.type !== 'compound') throw new ChartCompileError(machine.id, undefined, `a ${root.type} root is beyond the compiled subset`)
  const beyond = beyondSubset(root)
  if (beyond) throw new ChartCompileError(machine.id, undefined, `${beyond} on the root are beyond the compiled subset`)
  const states: Record<string, ChartState> = {}
  const effects = new Set<string>()
  for (const node of leavesOf(machine, root)) {
    const state = compileState(machine, node)
    states[state.key] = state
    if (state.effect !== undefined) effects.add(state.effect)
  }
  const initial = pathOf(initialAtomic(machine, root))
  const output = root.output as unknown
  if (output !== undefined && typeof output !== 'function') {
    throw new ChartCompileError(machine.id, undefined, 'a constant machine output is beyond the compiled subset')
  }
  return {
    id: machine.id,
    version: machine.version ?? '',
    initial,
    context: initialContext,
    effects: [...effects],
    ...(output ? { output: output as ChartOutput } : {}),
    states,
  }
}

const compiled = new WeakMap<AnyStateMachine, CompiledChart>()

/**
 * The context xstate starts `machine` with: its `context`, or the factory's result, which xstate
 * computes with an inert scope (our machines spawn nothing).
 */
function initialContextOf(machine: AnyStateMachine): unknown {
  const context = (machine.config as { context?: unknown }).context
  if (typeof context !== 'function') return context
  const noop = () => {}
  const self = { id: '', sessionId: '', send: noop, getSnapshot: noop }
  const system = { _bookId: () => '', _register: noop }
  const scope = { self, id: '', sessionId: '', system, logger: noop, defer: noop, emit: noop, stopChild: noop, actionExecutor: noop }
  const initial = machine.getInitialSnapshot(scope as unknown as AnyActorScope) as AnyMachineSnapshot
  return initial.context
}

/**
 * The chart of `machine`, compiled at run time (once per machine): for the charts that have no
 * generated table, which pay for xstate.
 *
 * @throws {ChartCompileError} when the machine uses more than the subset above.
 */
export function compileAtRunTime(machine: AnyStateMachine): CompiledChart {
  let chart = compiled.get(machine)
  if (!chart) {
    chart = chartOf(machine, initialContextOf(machine))
    compiled.set(machine, chart)
  }
  return chart
}
