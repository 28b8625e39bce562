/**
 * Renders DOT to SVG in-process with Graphviz compiled to WebAssembly (`@viz-js/viz`): no browser,
 * no system Graphviz, the same bytes on every machine.
 *
 * @module
 */
import type { Viz } from '@viz-js/viz'
import { toDot, type DotOptions } from './dot.js'
import type { FlowGraph } from './graph.js'

let viz: Promise<Viz> | undefined

/** Renders `dot` to an SVG document. */
export async function renderSvg(dot: string): Promise<string> {
  viz ??= import('@viz-js/viz').then((module) => module.instance())
  return (await viz).renderString(dot, { format: 'svg' })
}

/** Renders a flow's chart to SVG (with taken transitions highlighted when counts are given). */
export function flowSvg(graph: FlowGraph, options: DotOptions = {}): Promise<string> {
  return renderSvg(toDot(graph, options))
}
