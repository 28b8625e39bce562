/**
 * The charts authchart ships, by flow id, and the files `npm run diagrams` writes for each.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import { everyFlowLoaded } from '../core/flows/catalogue.js'
import { flowGraph } from './graph.js'
import { toMermaid } from './mermaid.js'
import { flowSvg } from './render.js'

/** The charts of the built-in flows, in the registry's order (every flow's code loaded to read them). */
export const builtInMachines: readonly AnyStateMachine[] = (await everyFlowLoaded()).map((module) => module.flow.machine)

/** A diagram format. */
export type DiagramFormat = 'svg' | 'mermaid' | 'json'

/** File extension per format. */
export const EXTENSIONS: Record<DiagramFormat, string> = { svg: 'svg', mermaid: 'mmd', json: 'json' }

/** Renders one machine's diagram in `format`. */
export async function diagram(machine: AnyStateMachine, format: DiagramFormat): Promise<string> {
  const graph = flowGraph(machine)
  if (format === 'mermaid') return toMermaid(graph)
  if (format === 'json') return `${JSON.stringify(graph, null, 2)}\n`
  return flowSvg(graph)
}

/** Every file of the diagrams of `machines`: name → content. */
export async function diagramFiles(machines: readonly AnyStateMachine[]): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  for (const machine of machines) {
    for (const format of Object.keys(EXTENSIONS) as DiagramFormat[]) {
      files.set(`${machine.id}.${EXTENSIONS[format]}`, await diagram(machine, format))
    }
  }
  return files
}
