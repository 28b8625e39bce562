/**
 * Mermaid `stateDiagram-v2` text for a flow: every state is titled with its own name (`state
 * "awaitingCallback" as awaitingCallback`), then lists its kind ("effect authorize", "awaits a
 * request", "final") and its description; effect states, resting states and final states each get
 * their own class; guards appear in brackets after the event. A phase (compound state) is a
 * composite state around its children, titled with its name (Mermaid gives a composite state no
 * description), with its own start arrow to the child it is entered at.
 *
 * @module
 */
import type { FlowGraph, GraphState } from './graph.js'

/** Mermaid ids cannot contain dots. */
const idOf = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_')

/**
 * Text as Mermaid reads it back unchanged. Its grammar ends a description at `:` or `;`, a title
 * at `"`, starts entity codes with `#`, and gives `<`, `>`, `&`, braces and backticks meanings of
 * their own; each of these is written as a numeric entity code (`#58;`), which Mermaid decodes.
 */
export function mermaidText(value: string): string {
  return value
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[#:;"<>&{}`]/g, (c) => `#${c.charCodeAt(0)};`)
}

/** What a state is for, as its first line under the title. */
function kindLine(state: GraphState): string | undefined {
  if (state.kind === 'effect') return `effect ${state.effect}`
  if (state.kind === 'resting') return 'awaits a request'
  if (state.kind === 'final') return 'final'
  return undefined
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
  const declare = (parent: string | undefined, indent: string) => {
    const children = graph.states.filter((s) => s.parent === parent)
    for (const state of children) {
      if (state.initial) out.push(`${indent}[*] --> ${idOf(state.id)}`)
    }
    for (const state of children) {
      const id = idOf(state.id)
      out.push(`${indent}state "${mermaidText(state.id)}" as ${id}`)
      if (state.kind === 'group') {
        out.push(`${indent}state ${id} {`)
        declare(state.id, `${indent}  `)
        out.push(`${indent}}`)
        continue
      }
      for (const line of [kindLine(state), state.description]) {
        if (line) out.push(`${indent}${id} : ${mermaidText(line)}`)
      }
    }
  }
  declare(undefined, '  ')
  for (const t of graph.transitions) {
    const label = `${t.event}${t.guard ? ` [${t.guard}]` : ''}`
    out.push(`  ${idOf(t.source)} --> ${idOf(t.target ?? t.source)} : ${mermaidText(label)}`)
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
