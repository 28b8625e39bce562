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
  const run = new ChartRun(flow, env, event, options)
  let running: FlowRun | Promise<FlowRun>
  try {
    running = run.start()
  } catch (error) {
    options.onTrace?.(run.trace)
    throw error
  }
  // The trace is reported once the run ends, whether it came to rest or failed.
  if (!(running instanceof Promise)) {
    options.onTrace?.(run.trace)
    return running
  }
  return running.then(
    (ran) => {
      options.onTrace?.(run.trace)
      return ran
    },
    (error: unknown) => {
      options.onTrace?.(run.trace)
      throw error
    },
  )
}

/**
 * One run of the loop over the compiled chart (see `chart.ts`): no xstate on the request path. A
 * class rather than closures, so that a run allocates one object for its state.
 */
class ChartRun<Env> {
  readonly steps: TraceStep[] = []
  readonly trace: FlowTrace
  private state!: ChartState
  private context!: Record<string, unknown>
  private last: EventObject

  constructor(
    private readonly flow: FlowDefinition<AnyStateMachine, Env>,
    private readonly env: Env,
    private readonly event: { type: string; at: number; [key: string]: unknown },
    private readonly options: AdvanceOptions,
  ) {
    this.trace = {
      flow: flow.chart.id,
      version: flow.chart.version,
      at: event.at,
      resumed: options.from !== undefined,
      steps: this.steps,
      status: 'error',
    }
    this.last = event
  }

  private fail(code: 'ERR_FLOW_EVENT_REJECTED' | 'ERR_FLOW_LOOP', message: string): never {
    this.trace.errorCode = code
    throw new FlowStateError(code, `${this.flow.chart.id}${message}`)
  }

  start(): FlowRun | Promise<FlowRun> {
    const { chart } = this.flow
    const from = this.options.from
    const startKey = from ? stateLabel(from.value) : chart.initial
    const state = chartState(chart, startKey)
    if (!state) return this.fail('ERR_FLOW_EVENT_REJECTED', `: unknown state "${startKey}"`)
    this.state = state
    this.context = (from ? from.context : chart.context) as Record<string, unknown>
    this.take(this.event)
    return this.proceed(0)
  }

  private take(input: EventObject): void {
    const state = this.state
    const result =
      stepChart(this.flow.chart, state, this.context, input) ??
      this.fail('ERR_FLOW_EVENT_REJECTED', `: state "${state.key}" does not accept "${input.type}"`)
    this.steps.push({
      event: input.type,
      from: state.key,
      to: result.state.key,
      transitions: this.options.traceTransitions ? [result.transition] : NO_TRANSITIONS,
    })
    this.state = result.state
    this.context = result.context
    this.last = input
  }

  /** Runs effects from hop `first` on; it continues asynchronously only past a pending effect. */
  private proceed(first: number): FlowRun | Promise<FlowRun> {
    const { flow, env, event, options } = this
    for (let hop = first; this.state.effect !== undefined; hop++) {
      if (hop === MAX_EFFECT_HOPS) this.fail('ERR_FLOW_LOOP', ` did not settle after ${hop} effects`)
      const name = this.state.effect
      const effect = flow.effects[name]!
      const input = this.context
      const result = options.effect ? options.effect(name, () => effect(input as never, env, event)) : effect(input as never, env, event)
      if (isThenable<EventObject>(result)) {
        return Promise.resolve(result).then((next) => {
          this.take(next)
          return this.proceed(hop + 1)
        })
      }
      this.take(result)
    }
    return this.finish()
  }

  /** Ends the run in its state with its outcome (or refuses a state that neither ends nor waits). */
  private finish(): FlowRun {
    const { state, context } = this
    const outcome = outcomeAt(this.flow.chart, state, context, this.last) as FlowOutcome | undefined
    // Only the value and context of a snapshot are ever read after a run (to seal it).
    const snapshot = { value: state.value, context, status: state.final ? 'done' : 'active' } as unknown as AnyMachineSnapshot
    if (outcome === undefined) {
      return this.fail('ERR_FLOW_LOOP', ` stopped in "${state.key}", which is neither final nor awaiting a request`)
    }
    const resting = !state.final
    this.trace.status = resting ? 'resting' : 'done'
    this.trace.outcome = outcome.type === 'error' ? `error:${outcome.error}` : outcome.type
    return { snapshot, outcome, resting, trace: this.trace }
  }
}
