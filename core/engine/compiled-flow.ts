/**
 * Flow definitions over charts compiled at build time (`core/charts/`): {@link defineCompiledFlow}
 * checks a definition once, when the flow is defined, without the run-time chart compiler, so that a
 * configuration whose flows are all built in links no compiler. `flow.ts`'s `defineFlow` takes
 * machines too (charts an application extends or defines) and compiles them first.
 *
 * @module
 */
import type { AnyStateMachine, ContextFrom } from 'xstate'
import type { CompiledChart, FlowDefinition } from './types.js'

/** What {@link defineCompiledFlow} takes: the parts of a flow and its chart compiled at build time. */
export type CompiledFlowInput<TMachine extends AnyStateMachine, Env> = Omit<FlowDefinition<TMachine, Env>, 'chart' | 'machine' | 'notation'> & {
  /** The chart compiled at build time (`core/charts/`). */
  readonly chart: CompiledChart<ContextFrom<TMachine>>
  /** Loads the chart's notation, for the diagrams, the inspector and the test kit. */
  readonly notation?: () => Promise<TMachine>
}

const notations = new WeakMap<CompiledChart, AnyStateMachine>()

/** Notation loaders by chart id, for compiled charts whose flow names none itself. */
const notationLoaders = new Map<string, () => Promise<AnyStateMachine>>()

/**
 * Registers where the notation of charts is loaded from, by chart id (the built-in charts':
 * `machines/notations.ts`, registered by `core/flows/loaded.ts`). The request path never does:
 * only what draws, inspects or tests charts.
 */
export function registerNotations(loaders: Readonly<Record<string, () => Promise<AnyStateMachine>>>): void {
  for (const [id, load] of Object.entries(loaders)) notationLoaders.set(id, load)
}

/**
 * Loads the notation of a compiled flow once, so that {@link FlowDefinition.machine} can be read
 * (the diagrams, the inspector and the test kit walk the xstate chart; a request never does).
 */
export async function loadNotation(flow: Pick<FlowDefinition, 'chart' | 'notation'>): Promise<void> {
  const load = flow.notation ?? notationLoaders.get(flow.chart.id)
  if (!load || notations.has(flow.chart)) return
  notations.set(flow.chart, await load())
}

const invalid = (message: string) => Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_VALUE' })

/**
 * Checks a flow definition once, when it is created: the chart has an id and a version (both
 * bound into sealed envelopes) and every effect the chart names has an implementation. With
 * `machine`, the flow carries that machine as its notation (`defineFlow` passes the machine it
 * compiled); otherwise its notation is loaded on demand ({@link loadNotation}).
 *
 * @throws {TypeError} `ERR_INVALID_ARG_VALUE` when the definition is incomplete.
 */
export function defineCompiledFlow<TMachine extends AnyStateMachine, Env>(
  input: CompiledFlowInput<TMachine, Env>,
  machine?: TMachine,
): FlowDefinition<TMachine, Env> {
  const { chart, notation, ...parts } = input as CompiledFlowInput<TMachine, Env> & { machine?: TMachine }
  delete (parts as { machine?: TMachine }).machine
  if (!chart.id) throw invalid('a flow chart needs an explicit id')
  if (!chart.version) throw invalid(`flow "${chart.id}" needs a version`)
  const missing = chart.effects.filter((name) => !(name in parts.effects))
  if (missing.length > 0) {
    throw invalid(`flow "${chart.id}" has no implementation for effect(s): ${missing.join(', ')}`)
  }
  if (parts.migrations && Object.hasOwn(parts.migrations, chart.version)) {
    throw invalid(`flow "${chart.id}" declares a migration from its own version ${chart.version}`)
  }
  const flow = {
    ...parts,
    chart,
    effects: Object.freeze({ ...parts.effects }),
    ...(parts.migrations ? { migrations: Object.freeze({ ...parts.migrations }) } : {}),
    ...(notation ? { notation } : {}),
  }
  if (machine) return Object.freeze({ ...flow, machine, notation: notation ?? (() => Promise.resolve(machine)) }) as unknown as FlowDefinition<TMachine, Env>
  Object.defineProperty(flow, 'machine', {
    enumerable: false,
    get(): TMachine {
      const loaded = notations.get(chart)
      if (!loaded) throw new Error(`flow "${chart.id}": its notation is not loaded (await loadNotation(flow) from core/flows/loaded.ts first)`)
      return loaded as TMachine
    },
  })
  return Object.freeze(flow) as unknown as FlowDefinition<TMachine, Env>
}
