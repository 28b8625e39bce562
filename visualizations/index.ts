/**
 * Diagrams of the flow machines, generated, never drawn: the chart as data, Mermaid, Graphviz DOT
 * and SVG.
 *
 * @module
 */
export { flowGraph, type FlowGraph, type GraphState, type GraphTransition, type StateKind } from './graph.js'
export { toMermaid } from './mermaid.js'
export { toDot, stateElementId, type DotOptions } from './dot.js'
export { flowSvg, renderSvg } from './render.js'
export { builtInMachines, diagram, diagramFiles, EXTENSIONS, type DiagramFormat } from './flows.js'
