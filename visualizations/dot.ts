/**
 * Graphviz DOT for a flow, the source of its SVG. Effect states are blue, resting states amber,
 * final states double-bordered; with `taken` counts, the transitions recent requests took are drawn
 * thick and red with their count (the live inspector's view).
 *
 * A chart grouped in phases is drawn left to right, so its phases (alternatives entered from one
 * state) stack vertically instead of side by side, with titles set larger, descriptions wrapped
 * narrower and transition labels placed beside their edges (Graphviz's `xlabel`) rather than given
 * room of their own: at the inspector's fit width, a flat-drawn chart of that size shrank its
 * titles to a few pixels.
 *
 * @module
 */
import type { FlowGraph, GraphState } from './graph.js'
import { DIAGRAM_FONT, textWidth } from './text-width.js'

/** Options of {@link toDot}. */
export interface DotOptions {
  /** Times each transition (by id) was taken. */
  taken?: ReadonlyMap<string, number>
}

const quote = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
const html = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** Font sizes, in points. */
const NAME_SIZE = 10
const NOTE_SIZE = 8
const EDGE_SIZE = 9
/** Descriptions wrap at this width, in points. */
const WRAP_WIDTH = 250

/** How a chart is set: a flat chart top to bottom, a chart in phases left to right (see above). */
interface Layout {
  rankdir: 'TB' | 'LR'
  ranksep: number
  nameSize: number
  noteSize: number
  wrapWidth: number
  /** The attribute that places a transition's label: `label` makes room for it, `xlabel` does not. */
  edgeLabel: 'label' | 'xlabel'
}
const FLAT: Layout = { rankdir: 'TB', ranksep: 0.45, nameSize: NAME_SIZE, noteSize: NOTE_SIZE, wrapWidth: WRAP_WIDTH, edgeLabel: 'label' }
const PHASED: Layout = { rankdir: 'LR', ranksep: 0.2, nameSize: 17, noteSize: 11, wrapWidth: 150, edgeLabel: 'xlabel' }

/** Wraps text into lines no wider than `width` points (a longer single word keeps its own line). */
function wrap(value: string, size: number, width = WRAP_WIDTH): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of value.replace(/`/g, '').split(/\s+/).filter(Boolean)) {
    const candidate = line ? `${line} ${word}` : word
    if (line && textWidth(candidate, size) > width) {
      lines.push(line)
      line = word
    } else {
      line = candidate
    }
  }
  if (line) lines.push(line)
  return lines
}

/** One line of a label: its text and how it is set. */
interface LabelLine {
  text: string
  size: number
  bold?: boolean
  color?: string
}

/**
 * An HTML-like label whose lines sit in fixed-size cells as wide as they measure (see
 * `text-width.ts`), so Graphviz reserves the room the browser's text really takes. Graphviz places
 * text by its own (narrower) estimate, so each line is left-aligned in a cell of its own measured
 * width, and that cell is centred in a row as wide as the widest line: text starts where its cell
 * starts and cannot run past the box.
 */
function sizedLabel(lines: readonly LabelLine[]): string {
  const widths = lines.map((l) => Math.ceil(textWidth(l.text, l.size, l.bold)))
  const width = Math.max(...widths)
  const rows = lines.map((l, i) => {
    let content = html(l.text)
    if (l.bold) content = `<B>${content}</B>`
    const font = [`POINT-SIZE="${l.size}"`, ...(l.color ? [`COLOR="${l.color}"`] : [])]
    const height = Math.ceil(l.size * 1.3)
    const cell = `<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0" WIDTH="${widths[i]}" HEIGHT="${height}" FIXEDSIZE="TRUE"><TR><TD WIDTH="${widths[i]}" HEIGHT="${height}" FIXEDSIZE="TRUE" ALIGN="LEFT"><FONT ${font.join(' ')}>${content}</FONT></TD></TR></TABLE>`
    return `<TR><TD WIDTH="${width}" HEIGHT="${height}" FIXEDSIZE="TRUE">${cell}</TD></TR>`
  })
  return `<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0">${rows.join('')}</TABLE>>`
}

const STYLE: Record<GraphState['kind'], { fill: string; stroke: string; badge: (s: GraphState) => string }> = {
  effect: { fill: '#eef3ff', stroke: '#346df1', badge: (s) => `effect: ${s.effect}` },
  resting: { fill: '#fff7e6', stroke: '#d48806', badge: () => 'awaits a request' },
  final: { fill: '#f0f0f0', stroke: '#555555', badge: () => 'final' },
  state: { fill: '#ffffff', stroke: '#555555', badge: () => '' },
  group: { fill: '#fafafa', stroke: '#8c8c8c', badge: () => 'phase' },
}

/** The DOT cluster name of a group. */
const clusterOf = (group: string) => `cluster_${group}`

/** The node an edge from or to a group is drawn at: the atomic state the group is entered at. */
function anchorOf(graph: FlowGraph, id: string): { node: string; cluster?: string } {
  const group = graph.states.find((s) => s.id === id && s.kind === 'group')
  return group ? { node: group.entry!, cluster: clusterOf(group.id) } : { node: id }
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
  const grouped = graph.states.some((s) => s.kind === 'group')
  const layout = grouped ? PHASED : FLAT
  const out = [
    `digraph ${quote(graph.id)} {`,
    // The pad keeps edge labels on the outer edges inside the image.
    `  graph [rankdir=${layout.rankdir}, fontname=${quote(DIAGRAM_FONT)}, nodesep=0.35, ranksep=${layout.ranksep}, pad=0.3];`,
    `  node [shape=box, style="rounded,filled", fontname=${quote(DIAGRAM_FONT)}, fontsize=${layout.nameSize}, margin="0.12,0.06"];`,
    `  edge [fontname=${quote(DIAGRAM_FONT)}, fontsize=${EDGE_SIZE}, color="#888888", arrowsize=0.7];`,
    `  ${quote(`${graph.id}:start`)} [shape=circle, width=0.15, label="", style=filled, fillcolor="#333333", id=${quote(`start:${graph.id}`)}];`,
  ]
  // Edges from and to a phase are drawn at its border (Graphviz clusters need `compound`).
  if (grouped) out.push('  compound=true;')
  const stateLines = (parent: string | undefined, indent: string): string[] => {
    const lines: string[] = []
    for (const state of graph.states.filter((s) => s.parent === parent)) {
      const style = STYLE[state.kind]
      // Inside a phase, a state is titled by its own name: the phase's box names the phase.
      const title = state.parent === undefined ? state.id : state.id.slice(state.parent.length + 1)
      const label: LabelLine[] = [{ text: title, size: layout.nameSize, bold: true }]
      const badge = style.badge(state)
      if (badge) label.push({ text: badge, size: layout.noteSize, color: style.stroke })
      for (const line of state.description ? wrap(state.description, layout.noteSize, layout.wrapWidth) : []) {
        label.push({ text: line, size: layout.noteSize })
      }
      if (state.kind === 'group') {
        lines.push(
          `${indent}subgraph ${quote(clusterOf(state.id))} {`,
          `${indent}  label=${sizedLabel(label)}; labeljust=l; style="rounded,filled"; fillcolor=${quote(style.fill)}; color=${quote(style.stroke)}; id=${quote(stateElementId(graph.id, state.id))};`,
          ...stateLines(state.id, `${indent}  `),
          `${indent}}`,
        )
        continue
      }
      const attributes = [
        `label=${sizedLabel(label)}`,
        `fillcolor=${quote(style.fill)}`,
        `color=${quote(visited.has(state.id) ? '#d4380d' : style.stroke)}`,
        `penwidth=${visited.has(state.id) ? 2 : 1}`,
        `id=${quote(stateElementId(graph.id, state.id))}`,
        ...(state.kind === 'final' ? ['peripheries=2'] : []),
      ]
      lines.push(`${indent}${quote(state.id)} [${attributes.join(', ')}];`)
      // Only the chart's own start: a phase's initial child is where edges into the phase point.
      if (state.initial && parent === undefined) lines.push(`${indent}${quote(`${graph.id}:start`)} -> ${quote(state.id)};`)
    }
    return lines
  }
  out.push(...stateLines(undefined, '  '))
  for (const state of graph.states) {
    if (state.initial && state.parent === undefined && state.kind === 'group') {
      out.push(`  ${quote(`${graph.id}:start`)} -> ${quote(state.entry!)} [lhead=${quote(clusterOf(state.id))}];`)
    }
  }
  for (const t of graph.transitions) {
    const count = taken.get(t.id) ?? 0
    const lines = [t.event, ...(t.guard ? [`[${t.guard}]`] : []), ...(count > 0 ? [`×${count}`] : [])].map(
      (text): LabelLine => ({ text, size: EDGE_SIZE, ...(count > 0 ? { color: '#d4380d' } : {}) }),
    )
    const from = anchorOf(graph, t.source)
    const to = anchorOf(graph, t.target ?? t.source)
    const attributes = [
      `${layout.edgeLabel}=${sizedLabel(lines)}`,
      `id=${quote(`transition:${graph.id}:${t.id}`)}`,
      ...(from.cluster ? [`ltail=${quote(from.cluster)}`] : []),
      ...(to.cluster && to.cluster !== from.cluster ? [`lhead=${quote(to.cluster)}`] : []),
      ...(count > 0 ? ['color="#d4380d"', `penwidth=${Math.min(1.5 + Math.log2(count + 1), 5).toFixed(1)}`] : []),
    ]
    out.push(`  ${quote(from.node)} -> ${quote(to.node)} [${attributes.join(', ')}];`)
  }
  out.push('}')
  return `${out.join('\n')}\n`
}
