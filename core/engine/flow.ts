/**
 * Flow definitions: a compiled chart (or a machine compiled when the flow is defined), its effects,
 * its context's shape, what of it is sealed and the migrations of flows in flight. Checked once,
 * when the flow is defined.
 *
 * @module
 */
import type { AnyStateMachine, ContextFrom } from 'xstate'
import { compileAtRunTime } from './runtime-compiler.js'
import type { CompiledChart, EffectImplementation, FlowDefinition, FlowMigration, SealedFlowState } from './types.js'

export type { CompiledChart, EffectImplementation, FlowDefinition, FlowMigration, SealedFlowState }

/**
 * What {@link defineFlow} takes: the parts of a flow, with a compiled chart, or a machine compiled
 * when the flow is defined (`runtime-compiler.ts`: charts an application extends or defines, and
 * charts with no logic module yet). Given both (a definition spread into another), the machine is
 * compiled: it is what the caller named last.
 */
export type FlowInput<TMachine extends AnyStateMachine, Env> = Omit<FlowDefinition<TMachine, Env>, 'chart' | 'machine' | 'notation'> & {
  /** Loads the chart's notation, for the diagrams, the inspector and the test kit. */
  readonly notation?: () => Promise<TMachine>
} & (
    | {
        /** The chart compiled at build time (`core/charts/`). */
        readonly chart: CompiledChart<ContextFrom<TMachine>>
        readonly machine?: TMachine
      }
    | {
        /** An xstate machine, compiled when the flow is defined. */
        readonly machine: TMachine
        readonly chart?: CompiledChart<ContextFrom<TMachine>>
      }
  )

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
 * bound into sealed envelopes) and every effect the chart names has an implementation. A machine
 * is compiled here.
 *
 * @throws {TypeError} `ERR_INVALID_ARG_VALUE` when the definition is incomplete.
 * @throws {ChartCompileError} when a machine uses more than the compiled subset.
 */
export function defineFlow<TMachine extends AnyStateMachine, Env>(input: FlowInput<TMachine, Env>): FlowDefinition<TMachine, Env> {
  const { chart: given, machine, notation, ...parts } = input as FlowInput<TMachine, Env> & {
    chart?: CompiledChart
    machine?: TMachine
    notation?: () => Promise<TMachine>
  }
  if (machine && (!machine.id || machine.id === '(machine)')) throw invalid('a flow machine needs an explicit id')
  if (machine && !machine.version) throw invalid(`flow "${machine.id}" needs a version`)
  const chart = machine ? compileAtRunTime(machine) : given!
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
