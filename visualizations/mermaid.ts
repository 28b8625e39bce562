/**
 * Mermaid `stateDiagram-v2` text for a flow: effect states, resting states and final states each
 * get their own class; guards appear in brackets after the event.
 *
 * @module
 */
import type { FlowGraph, GraphState } from './graph.js'

/** Mermaid ids cannot contain dots; descriptions cannot contain `:` or `;`. */
const idOf = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_')
const text = (value: string) => value.replace(/[`:;{}]/g, '').replace(/\s+/g, ' ').trim()

function labelLines(state: GraphState): string[] {
  const lines: string[] = []
  if (state.kind === 'effect') lines.push(`effect ${state.effect}`)
  if (state.kind === 'resting') lines.push('awaits a request')
  if (state.kind === 'final') lines.push('final')
  if (state.description) lines.push(text(state.description))
  return lines
}

/** Renders a flow's chart as Mermaid. */
export function toMermaid(graph: FlowGraph): string {
  const out = [
    '---',
    `title: ${graph.id} (v${graph.version})`,
    '---',
    'stateDiagram-v2',
    '  classDef effect fill:#eef3ff,stroke:#346df1',
    '  classDef resting fill:#fff7e6,stroke:#d48806',
    '  classDef final fill:#f0f0f0,stroke:#555,font-weight:bold',
  ]
  for (const state of graph.states) {
    if (state.initial) out.push(`  [*] --> ${idOf(state.id)}`)
  }
  for (const state of graph.states) {
    for (const line of labelLines(state)) out.push(`  ${idOf(state.id)} : ${line}`)
  }
  for (const t of graph.transitions) {
    const label = `${t.event}${t.guard ? ` [${t.guard}]` : ''}`
    out.push(`  ${idOf(t.source)} --> ${idOf(t.target ?? t.source)} : ${text(label)}`)
  }
  for (const state of graph.states) {
    if (state.kind === 'final') out.push(`  ${idOf(state.id)} --> [*]`)
  }
  for (const kind of ['effect', 'resting', 'final'] as const) {
    const ids = graph.states.filter((s) => s.kind === kind).map((s) => idOf(s.id))
    if (ids.length > 0) out.push(`  class ${ids.join(',')} ${kind}`)
  }
  return `${out.join('\n')}\n`
}
