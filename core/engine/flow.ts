/**
 * Flow definitions: a compiled chart (or a machine compiled when the flow is defined), its effects,
 * its context's shape, what of it is sealed and the migrations of flows in flight. Checked once,
 * when the flow is defined.
 *
 * @module
 */
import type { AnyStateMachine, ContextFrom } from 'xstate'
import { defineCompiledFlow, loadNotation, registerNotations } from './compiled-flow.js'
import { compileAtRunTime } from './runtime-compiler.js'
import type { CompiledChart, EffectImplementation, FlowDefinition, FlowMigration, SealedFlowState } from './types.js'

export type { CompiledChart, EffectImplementation, FlowDefinition, FlowMigration, SealedFlowState }
export { defineCompiledFlow, loadNotation, registerNotations }

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

const invalid = (message: string) => Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_VALUE' })

/**
 * Checks a flow definition once, when it is created: the chart has an id and a version (both
 * bound into sealed envelopes) and every effect the chart names has an implementation. A machine
 * is compiled here (the built-in flows, whose charts are compiled at build time, use
 * {@link defineCompiledFlow} and link no compiler).
 *
 * @throws {TypeError} `ERR_INVALID_ARG_VALUE` when the definition is incomplete.
 * @throws {ChartCompileError} when a machine uses more than the compiled subset.
 */
export function defineFlow<TMachine extends AnyStateMachine, Env>(input: FlowInput<TMachine, Env>): FlowDefinition<TMachine, Env> {
  const { machine } = input as { machine?: TMachine }
  if (!machine) return defineCompiledFlow(input as Parameters<typeof defineCompiledFlow<TMachine, Env>>[0])
  if (!machine.id || machine.id === '(machine)') throw invalid('a flow machine needs an explicit id')
  if (!machine.version) throw invalid(`flow "${machine.id}" needs a version`)
  return defineCompiledFlow({ ...input, chart: compileAtRunTime(machine) } as Parameters<typeof defineCompiledFlow<TMachine, Env>>[0], machine)
}
