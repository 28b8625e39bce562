/**
 * The interpreter: a small loop of transition → effect → result event until the chart rests,
 * over the flow's compiled chart (`chart.ts`; no xstate on the request path). Charts stay pure (no
 * invoke, no timers); the engine performs every effect and is the only place I/O happens. A flow is
 * persisted only at rest, never mid-effect.
 *
 * @module
 */
import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate'
import { AWAITS_REQUEST, EFFECT_TAG_PREFIX } from '../../machines/shared/events.js'
import type { FlowOutcome } from '../../machines/shared/outcome.js'
import { FlowStateError } from '../errors.js'
import { chartState, outcomeAt, stepChart } from './chart.js'
import type { FlowDefinition } from './flow.js'
import type { FlowTrace, TraceStep } from './trace.js'
import { stateLabel } from './transitions.js'
import type { ChartState } from './types.js'
import { isThenable } from '../thenable.js'

/** The transitions of a step when nobody inspects them: one shared, frozen empty list. */
const NO_TRANSITIONS: readonly string[] = Object.freeze([])

/** The most effects one request may run before the flow is declared stuck. */
export const MAX_EFFECT_HOPS = 32

/** The effect a snapshot asks for, if it is in an effect state. */
export function pendingEffect(snapshot: AnyMachineSnapshot): string | undefined {
  for (const tag of snapshot.tags) {
    if (tag.startsWith(EFFECT_TAG_PREFIX)) return tag.slice(EFFECT_TAG_PREFIX.length)
  }
  return undefined
}

/** The outcome of a snapshot at rest: a final state's output, or a waiting state's `meta.outcome`. */
export function outcomeOf(snapshot: AnyMachineSnapshot): FlowOutcome | undefined {
  if (snapshot.status === 'done') return snapshot.output as FlowOutcome
  if (!snapshot.hasTag(AWAITS_REQUEST)) return undefined
  for (const meta of Object.values(snapshot.getMeta()) as { outcome?: unknown }[]) {
    if (typeof meta?.outcome === 'function') {
      return (meta.outcome as (context: unknown) => FlowOutcome)(snapshot.context)
    }
  }
  return undefined
}

/** The result of running a flow for one request. */
export interface FlowRun {
  snapshot: AnyMachineSnapshot
  outcome: FlowOutcome
  /** True when the flow waits for another request and must be sealed. */
  resting: boolean
  trace: FlowTrace
}

/** Options of {@link advance}. */
export interface AdvanceOptions {
  /** A reopened snapshot to continue; a new flow starts from the initial state otherwise. */
  from?: AnyMachineSnapshot
  /** Record the transition ids taken (costs a lookup per step; only when someone inspects). */
  traceTransitions?: boolean
  /** Receives the trace when the run ends, whether it came to rest or failed. */
  onTrace?: (trace: FlowTrace) => void
  /** Runs each effect (`call`) on the engine's behalf: telemetry times it in a span. */
  effect?: EffectHook
}

/** Wraps the call of the effect `name`, returning what the call returns (or throws). */
export type EffectHook = (
  name: string,
  call: () => EventObject | PromiseLike<EventObject>,
) => EventObject | PromiseLike<EventObject>

/**
 * Sends `event` to the flow and runs effects until the machine is final or waits for a request.
 *
 * @throws {FlowStateError} `ERR_FLOW_EVENT_REJECTED` when a state does not accept the event or an
 *   effect's result, `ERR_FLOW_LOOP` when the flow does not come to rest within
 *   {@link MAX_EFFECT_HOPS} effects.
 */
export async function advance<Env>(
  flow: FlowDefinition<AnyStateMachine, Env>,
  env: Env,
  event: { type: string; at: number; [key: string]: unknown },
  options: AdvanceOptions = {},
): Promise<FlowRun> {
  return advanceNow(flow, env, event, options)
}

/**
 * {@link advance}, synchronously when every effect the run takes answers synchronously; a promise
 * as soon as one does not. A failure throws (or rejects) as in {@link advance}.
 *
 * @throws as {@link advance}.
 */
export function advanceNow<Env>(
  flow: FlowDefinition<AnyStateMachine, Env>,
  env: Env,
  event: { type: string; at: number; [key: string]: unknown },
  options: AdvanceOptions = {},
): FlowRun | Promise<FlowRun> {
  const { chart } = flow
  const steps: TraceStep[] = []
  const trace: FlowTrace = {
    flow: chart.id,
    version: chart.version,
    at: event.at,
    resumed: options.from !== undefined,
    steps,
    status: 'error',
  }
  const fail = (code: 'ERR_FLOW_EVENT_REJECTED' | 'ERR_FLOW_LOOP', message: string): never => {
    trace.errorCode = code
    throw new FlowStateError(code, `${chart.id}${message}`)
  }
  const rejected = (state: string, input: EventObject) =>
    fail('ERR_FLOW_EVENT_REJECTED', `: state "${state}" does not accept "${input.type}"`)
  const checkHops = (hop: number) => {
    if (hop === MAX_EFFECT_HOPS) fail('ERR_FLOW_LOOP', ` did not settle after ${hop} effects`)
  }
  /** Ends the run in `state` with its outcome (or refuses a state that neither ends nor waits). */
  const settle = (snapshot: AnyMachineSnapshot, state: string, outcome: FlowOutcome | undefined, resting: boolean) => {
    if (outcome === undefined) {
      return fail('ERR_FLOW_LOOP', ` stopped in "${state}", which is neither final nor awaiting a request`)
    }
    trace.status = resting ? 'resting' : 'done'
    trace.outcome = outcome.type === 'error' ? `error:${outcome.error}` : outcome.type
    return { snapshot, outcome, resting, trace }
  }

  let running: FlowRun | Promise<FlowRun>
  try {
    running = runChart()
  } catch (error) {
    options.onTrace?.(trace)
    throw error
  }
  // The trace is reported once the run ends, whether it came to rest or failed.
  if (!(running instanceof Promise)) {
    options.onTrace?.(trace)
    return running
  }
  return running.then(
    (ran) => {
      options.onTrace?.(trace)
      return ran
    },
    (error: unknown) => {
      options.onTrace?.(trace)
      throw error
    },
  )

  /** The loop over the compiled chart (see `chart.ts`): no xstate on the request path. */
  function runChart(): FlowRun | Promise<FlowRun> {
    const start = options.from
    const startKey = start ? stateLabel(start.value) : chart.initial
    let state: ChartState | undefined = chartState(chart, startKey)
    if (!state) return fail('ERR_FLOW_EVENT_REJECTED', `: unknown state "${startKey}"`)
    let context = (start ? start.context : chart.context) as Record<string, unknown>
    let last: EventObject = event
    const take = (input: EventObject) => {
      const result = stepChart(chart, state!, context, input) ?? rejected(state!.key, input)
      steps.push({
        event: input.type,
        from: state!.key,
        to: result.state.key,
        transitions: options.traceTransitions ? [result.transition] : NO_TRANSITIONS,
      })
      state = result.state
      context = result.context
      last = input
    }
    take(event)
    /** Runs effects from hop `first` on; it continues asynchronously only past a pending effect. */
    const proceed = (first: number): FlowRun | Promise<FlowRun> => {
      for (let hop = first; state!.effect !== undefined; hop++) {
        checkHops(hop)
        const name = state!.effect
        const effect = flow.effects[name]!
        const input = context
        const result = options.effect ? options.effect(name, () => effect(input as never, env, event)) : effect(input as never, env, event)
        if (isThenable<EventObject>(result)) {
          return Promise.resolve(result).then((next) => {
            take(next)
            return proceed(hop + 1)
          })
        }
        take(result)
      }
      return finish(state!)
    }
    return proceed(0)

    function finish(state: ChartState): FlowRun {
      const outcome = outcomeAt(chart, state, context, last) as FlowOutcome | undefined
      // Only the value and context of a snapshot are ever read after a run (to seal it).
      const snapshot = { value: state.value, context, status: state.final ? 'done' : 'active' } as unknown as AnyMachineSnapshot
      return settle(snapshot, state.key, outcome, !state.final)
    }
  }
}
