/**
 * Graphviz DOT for a flow, the source of its SVG. Effect states are blue, resting states amber,
 * final states double-bordered; with `taken` counts, the transitions recent requests took are drawn
 * thick and red with their count (the live inspector's view).
 *
 * @module
 */
import type { FlowGraph, GraphState } from './graph.js'

/** Options of {@link toDot}. */
export interface DotOptions {
  /** Times each transition (by id) was taken. */
  taken?: ReadonlyMap<string, number>
}

const quote = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
const html = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** Wraps text at about `width` characters for node labels. */
function wrap(value: string, width = 42): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of value.replace(/`/g, '').split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line)
      line = word
    } else {
      line = line ? `${line} ${word}` : word
    }
  }
  if (line) lines.push(line)
  return lines
}

const STYLE: Record<GraphState['kind'], { fill: string; stroke: string; badge: (s: GraphState) => string }> = {
  effect: { fill: '#eef3ff', stroke: '#346df1', badge: (s) => `effect: ${s.effect}` },
  resting: { fill: '#fff7e6', stroke: '#d48806', badge: () => 'awaits a request' },
  final: { fill: '#f0f0f0', stroke: '#555555', badge: () => 'final' },
  state: { fill: '#ffffff', stroke: '#555555', badge: () => '' },
}

/** The SVG element id of a state's node. */
export const stateElementId = (flow: string, state: string) => `state:${flow}:${state}`

/** Renders a flow's chart as DOT. */
export function toDot(graph: FlowGraph, options: DotOptions = {}): string {
  const taken = options.taken ?? new Map<string, number>()
  const visited = new Set<string>()
  for (const t of graph.transitions) {
    if ((taken.get(t.id) ?? 0) > 0) {
      visited.add(t.source)
      if (t.target) visited.add(t.target)
    }
  }
  const out = [
    `digraph ${quote(graph.id)} {`,
    '  graph [rankdir=TB, fontname="Helvetica", nodesep=0.35, ranksep=0.45];',
    '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, margin="0.12,0.06"];',
    '  edge [fontname="Helvetica", fontsize=9, color="#888888", arrowsize=0.7];',
    `  ${quote(`${graph.id}:start`)} [shape=circle, width=0.15, label="", style=filled, fillcolor="#333333", id=${quote(`start:${graph.id}`)}];`,
  ]
  for (const state of graph.states) {
    const style = STYLE[state.kind]
    const rows = [`<B>${html(state.id)}</B>`]
    const badge = style.badge(state)
    if (badge) rows.push(`<FONT POINT-SIZE="8" COLOR="${style.stroke}">${html(badge)}</FONT>`)
    for (const line of state.description ? wrap(state.description) : []) {
      rows.push(`<FONT POINT-SIZE="8">${html(line)}</FONT>`)
    }
    const attributes = [
      `label=<${rows.join('<BR/>')}>`,
      `fillcolor=${quote(style.fill)}`,
      `color=${quote(visited.has(state.id) ? '#d4380d' : style.stroke)}`,
      `penwidth=${visited.has(state.id) ? 2 : 1}`,
      `id=${quote(stateElementId(graph.id, state.id))}`,
      ...(state.kind === 'final' ? ['peripheries=2'] : []),
    ]
    out.push(`  ${quote(state.id)} [${attributes.join(', ')}];`)
    if (state.initial) out.push(`  ${quote(`${graph.id}:start`)} -> ${quote(state.id)};`)
  }
  for (const t of graph.transitions) {
    const count = taken.get(t.id) ?? 0
    const label = `${t.event}${t.guard ? `\n[${t.guard}]` : ''}${count > 0 ? `\n×${count}` : ''}`
    const attributes = [
      `label=${quote(label)}`,
      `id=${quote(`transition:${graph.id}:${t.id}`)}`,
      ...(count > 0 ? ['color="#d4380d"', 'fontcolor="#d4380d"', `penwidth=${Math.min(1.5 + Math.log2(count + 1), 5).toFixed(1)}`] : []),
    ]
    out.push(`  ${quote(t.source)} -> ${quote(t.target ?? t.source)} [${attributes.join(', ')}];`)
  }
  out.push('}')
  return `${out.join('\n')}\n`
}
