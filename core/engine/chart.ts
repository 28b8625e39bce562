/**
 * The stepper over a compiled chart (`CompiledChart` in `types.ts`). Our charts use a small subset
 * of statecharts: atomic states, optionally grouped in compound states (phases), final states at
 * the root, no entry/exit actions, no eventless or delayed transitions, guards and assignments by
 * name. The table holds, per (atomic state, event type), the candidate transitions with their guard
 * and assignments; stepping it has exactly xstate's semantics for that subset: the first enabled
 * candidate (the atomic state's own before its ancestors'), assignments applied in order, a final
 * state's `output` passed through the machine's `output`. The model-based tests step xstate beside
 * the generated table on every transition.
 *
 * This module imports no xstate: a request runs only this.
 *
 * @module
 */
import type { AnyMachineSnapshot, StateValue } from 'xstate'
import { AWAITS_REQUEST, EFFECT_TAG_PREFIX } from '../../machines/shared/events.js'
import { stateLabel } from './transitions.js'
import type { ChartState, CompiledChart } from './types.js'

type Context = Record<string, unknown>
type ChartEvent = { type: string }

/** A step's result: the next state and context, and the transition taken. */
export interface ChartStep {
  state: ChartState
  context: Context
  transition: string
}

/**
 * The state of `chart` under `key`; `undefined` for a key it does not have. Own keys only: a key
 * read from a sealed envelope must never reach `Object.prototype`.
 */
export function chartState(chart: CompiledChart, key: string): ChartState | undefined {
  return Object.hasOwn(chart.states, key) ? chart.states[key] : undefined
}

/**
 * Takes `event` in `state` with `context`; `undefined` when no transition is enabled (xstate would
 * return the snapshot unchanged). The caller's context is never written to.
 */
export function stepChart(chart: CompiledChart, state: ChartState, context: Context, event: ChartEvent): ChartStep | undefined {
  // Own keys only: an event type is never looked up on `Object.prototype` (`constructor`, `__proto__`).
  if (!Object.hasOwn(state.transitions, event.type)) return undefined
  const candidates = state.transitions[event.type]!
  const args = { context, event: event as never }
  for (const candidate of candidates) {
    if (candidate.guard && !candidate.guard(args)) continue
    // One copy per step, however many assignments.
    let next = context
    if (candidate.assignments.length > 0) {
      next = { ...context }
      for (const assignment of candidate.assignments) Object.assign(next, assignment({ context: next, event: event as never }))
    }
    const target = candidate.target === undefined ? state : chart.states[candidate.target]!
    return { state: target, context: next, transition: candidate.id }
  }
  return undefined
}

/** A final state's outcome: its `output`, through the chart's. */
export function finalOutput(chart: CompiledChart, state: ChartState, context: Context, event: ChartEvent): unknown {
  const output = state.output?.({ context, event: event as never })
  if (!chart.output) return output
  return chart.output({ context, event: { type: `xstate.done.state.${chart.id}`, output } as never })
}

/** The outcome of `state` at rest: a final state's output, a waiting state's `meta.outcome`. */
export function outcomeAt(chart: CompiledChart, state: ChartState, context: Context, event: ChartEvent): unknown {
  if (state.final) return finalOutput(chart, state, context, event)
  return state.awaitsRequest ? state.outcome?.(context) : undefined
}

/** Whether `label` (a dotted path) is `key` or one of its ancestors. */
const within = (key: string, label: string) => key === label || key.startsWith(`${label}.`)

/**
 * A snapshot of `chart` resting in `state`, with the parts of xstate's the engine and the HTTP
 * layer read (value, context, status, tags, meta, `matches`), without xstate.
 */
export function chartSnapshot(chart: CompiledChart, state: ChartState, context: Context): AnyMachineSnapshot {
  const tags = new Set<string>()
  if (state.awaitsRequest) tags.add(AWAITS_REQUEST)
  if (state.effect !== undefined) tags.add(`${EFFECT_TAG_PREFIX}${state.effect}`)
  const meta = {
    ...(state.outcome ? { outcome: state.outcome } : {}),
    ...(state.step !== undefined ? { step: state.step } : {}),
  }
  const snapshot = {
    value: state.value,
    context,
    status: state.final ? 'done' : 'active',
    tags,
    machine: { id: chart.id },
    hasTag: (tag: string) => tags.has(tag),
    getMeta: () => (Object.keys(meta).length > 0 ? { [`${chart.id}.${state.key}`]: meta } : {}),
    matches: (value: StateValue) => within(state.key, stateLabel(value)),
  }
  return snapshot as unknown as AnyMachineSnapshot
}
