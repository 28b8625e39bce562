/**
 * The written form of a chart compiled at build time (`core/charts/*.ts`): what the engine's
 * {@link CompiledChart} holds, without what the table itself says. A state's key is its property
 * name, its value follows from the key, a transition's id from its state, event and position, and
 * an absent list of assignments is empty. Every chart ships in every bundle that has its flow, so
 * what can be derived once at load is not written out (about a tenth of the charts' bytes).
 *
 * @module
 */
import type { StateValue } from 'xstate'
import type { ChartAssignment, ChartGuard, ChartState, ChartTransition, CompiledChart } from './types.js'

/** One candidate transition as written: {@link ChartTransition} without what is derived. */
export interface TransitionEntry<Context = any> {
  /** Written only where it differs from `<chart id>.<state key>:<event type>:<index>`. */
  readonly id?: string
  readonly guard?: ChartGuard<Context>
  readonly assignments?: readonly ChartAssignment<Context>[]
  readonly target?: string
}

/** One state as written: {@link ChartState} without its key, and its value only where it differs. */
export interface StateEntry<Context = any> extends Omit<ChartState<Context>, 'key' | 'value' | 'transitions'> {
  readonly value?: StateValue
  readonly transitions?: Readonly<Record<string, readonly TransitionEntry<Context>[]>>
}

/** A chart as written: {@link CompiledChart} with its states as {@link StateEntry}. */
export interface ChartTable<Context = any> extends Omit<CompiledChart<Context>, 'states'> {
  readonly states: Readonly<Record<string, StateEntry<Context>>>
}

const NO_ASSIGNMENTS: readonly ChartAssignment[] = Object.freeze([])

/** The state value of the state at dotted `key`: the key at the root, nested objects below. */
export function valueOfKey(key: string): StateValue {
  const parts = key.split('.')
  let value: StateValue = parts.pop()!
  while (parts.length > 0) value = { [parts.pop()!]: value }
  return value
}

/** The id of a transition: `<chart id>.<state key>:<event type>:<index>`, as xstate's source ids read. */
export function transitionId(chartId: string, key: string, event: string, index: number): string {
  return `${chartId}.${key}:${event}:${index}`
}

/** The chart the engine steps, from its written table. */
export function compiledChart<Context>(table: ChartTable<Context>): CompiledChart<Context> {
  const states: Record<string, ChartState<Context>> = {}
  for (const [key, { value, transitions = {}, ...rest }] of Object.entries(table.states)) {
    const expanded: Record<string, ChartTransition<Context>[]> = {}
    for (const [event, candidates] of Object.entries(transitions)) {
      expanded[event] = candidates.map((candidate, index) => ({
        ...candidate,
        id: candidate.id ?? transitionId(table.id, key, event, index),
        assignments: candidate.assignments ?? NO_ASSIGNMENTS,
      }))
    }
    states[key] = { key, value: value ?? valueOfKey(key), ...rest, transitions: expanded }
  }
  return { ...table, states }
}
