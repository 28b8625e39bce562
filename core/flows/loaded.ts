/**
 * Flows with their notation loaded: the xstate charts beside the compiled tables, which the
 * diagrams, the inspector, the test kit and the gate check walk. Only those import this module,
 * so a request never loads xstate.
 *
 * @module
 */
import { BUILT_IN_NOTATIONS } from '../../machines/notations.js'
import { loadNotation as loadRegisteredNotation, registerNotations, type FlowDefinition } from '../engine/flow.js'
import { builtInFlows } from './registry.js'
import type { FlowModule } from './types.js'

registerNotations(BUILT_IN_NOTATIONS)

/**
 * Loads the notation of a compiled flow once (see `core/engine/flow.ts`), the built-in charts'
 * included, so that `flow.machine` can be read.
 */
export function loadNotation(flow: Pick<FlowDefinition, 'chart' | 'notation'>): Promise<void> {
  return loadRegisteredNotation(flow)
}

/**
 * The flows of `modules` with their code loaded, so that each one's chart can be read (the
 * diagrams, the test kit and the gate check draw or walk every chart, configured or not).
 */
export async function loadedFlows(modules: readonly FlowModule[] = builtInFlows): Promise<readonly FlowModule[]> {
  await Promise.all(modules.map((module) => module.load?.()))
  // Compiled charts: their xstate notation too, which the diagrams, the test kit and the gate check walk.
  await Promise.all(modules.map((module) => loadNotation(module.flow)))
  return modules
}
