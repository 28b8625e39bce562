/**
 * The live flow inspector, for development only: `{basePath}/__flows` shows every configured flow's
 * chart with the transitions recent requests took (highlighted, with counts) and the last traces
 * (request → events → effects → outcome).
 *
 * Nothing secret can reach it: traces hold event types and state names, never payloads or context
 * (see `core/engine/trace.ts`), and a request is recorded as its method and route only, never its
 * query, body, headers or cookies. Still, it shows every user's routes and outcomes and costs tens
 * of milliseconds to render: it is off unless `inspector: flowInspector()` is configured, runs only when `NODE_ENV` is
 * `development` or `test`, answers only loopback clients unless configured otherwise, and renders
 * at most once per second.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import { flowGraph, type FlowGraph } from '../../visualizations/graph.js'
import { flowSvg } from '../../visualizations/render.js'
import type { ResolvedConfig } from '../config/types.js'
import { loadedFlows } from '../flows/loaded.js'
import { clientAddressOf } from '../http/request.js'
import type { WarningCode } from '../logger.js'
import { CHART_CONTROLS, CHART_SCRIPT, CHART_STYLES, chartScriptSource, PAGE_SCRIPT, pageScriptSource } from './chart-script.js'
import { isDevelopment, nodeEnv, type InspectorState, type InspectorStore, type Recorded } from './recorder.js'

export { DEFAULT_INSPECTOR_TRACES, INSPECTOR_PATH } from './recorder.js'

/**
 * Whether `host` (a hostname, `[::1]`, or a socket address such as `::ffff:127.0.0.1`) is this
 * machine's loopback interface.
 */
export function isLoopbackHost(host: string): boolean {
  const address = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (address === 'localhost' || address.endsWith('.localhost')) return true
  if (address === '::1' || address === '0:0:0:0:0:0:0:1') return true
  const ipv4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address
  return /^127(\.\d{1,3}){3}$/.test(ipv4)
}

/**
 * Why the inspector must not answer this request, if it must not: outside development, or (unless
 * configured for any client) to a client that is not on this machine. The client is the address
 * the integration gave; without one, the request URL's host must be loopback.
 */
function refusal(inspector: InspectorState, request: Request): WarningCode | undefined {
  const env = nodeEnv()
  if (env === 'production') return 'inspector-refused-in-production'
  if (!isDevelopment(env)) return 'inspector-refused-outside-development'
  if (inspector.clients === 'any') return undefined
  const client = clientAddressOf(request) ?? new URL(request.url).hostname
  return isLoopbackHost(client) ? undefined : 'inspector-refused-remote-client'
}

const warned = new WeakMap<ResolvedConfig, Set<WarningCode>>()

/** Warns once per config and reason: refused requests must not flood the log. */
function warnOnce(config: ResolvedConfig, code: WarningCode): void {
  let codes = warned.get(config)
  if (!codes) warned.set(config, (codes = new Set()))
  if (codes.has(code)) return
  codes.add(code)
  config.logger.warn(code)
}

/** The flows this configuration runs (the sign-in completion as it runs it: with the extensions), their code loaded. */
async function configuredMachines(config: ResolvedConfig): Promise<AnyStateMachine[]> {
  const running = await loadedFlows(config.flows.filter((flow) => flow.runs(config)))
  return running.map((flow) => flow.flow.machine)
}

const graphs = new WeakMap<AnyStateMachine, FlowGraph>()
function graphOf(machine: AnyStateMachine): FlowGraph {
  let graph = graphs.get(machine)
  if (!graph) graphs.set(machine, (graph = flowGraph(machine)))
  return graph
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function traceRow(record: Recorded, graph: FlowGraph | undefined): string {
  const { trace } = record
  const effects = new Map((graph?.states ?? []).filter((s) => s.effect).map((s) => [s.id, s.effect!]))
  const events = trace.steps.map((s) => s.event).filter((e) => !effects.has(e) && !e.endsWith('.done') && !e.endsWith('.failed'))
  const ran = trace.steps.map((s) => effects.get(s.to)).filter((e): e is string => e !== undefined)
  const outcome = trace.outcome ?? trace.errorCode ?? trace.status
  const cells = [
    new Date(record.at * 1000).toISOString().slice(11, 19),
    record.request,
    `${trace.flow}${trace.resumed ? ' (resumed)' : ''}`,
    events.join(' → '),
    ran.join(' → '),
    `${trace.steps.at(-1)?.to ?? ''} · ${outcome}`,
  ]
  return `<tr class="trace" data-flow="${escapeHtml(trace.flow)}" data-outcome="${escapeHtml(String(outcome))}">${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`
}

/** Strips the XML prolog and doctype so the SVG can be inlined. */
const inlineSvg = (svg: string) => svg.slice(svg.indexOf('<svg'))

/** The inspector page is rendered at most this often; requests in between get the last one. */
export const INSPECTOR_RENDER_INTERVAL_MS = 1_000

const renders = new WeakMap<ResolvedConfig, { at: number; html: Promise<string> }>()

/** The rendered page, from the cache while it is younger than {@link INSPECTOR_RENDER_INTERVAL_MS}. */
function renderedPage(config: ResolvedConfig, store: InspectorStore): Promise<string> {
  const now = Date.now()
  let rendered = renders.get(config)
  if (!rendered || now - rendered.at >= INSPECTOR_RENDER_INTERVAL_MS) {
    rendered = { at: now, html: renderPage(config, store) }
    const current = rendered
    // A failed render is not cached.
    current.html.catch(() => renders.get(config) === current && renders.delete(config))
    renders.set(config, rendered)
  }
  return rendered.html
}

/**
 * Answers `GET {basePath}/__flows`: the page, or 404 (warned once per reason) outside development
 * or to a client that is not on this machine.
 */
export async function respondInspector(config: ResolvedConfig, request: Request, inspector: InspectorState): Promise<Response> {
  const refused = refusal(inspector, request)
  if (refused) {
    warnOnce(config, refused)
    return new Response(null, { status: 404 })
  }
  return new Response(await renderedPage(config, inspector.store), {
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      // The scripts allowed are the chart pan/zoom script and the page's own, by their hashes.
      'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src ${await chartScriptSource()} ${await pageScriptSource()}; frame-ancestors 'none'`,
      'X-Frame-Options': 'DENY',
      'X-Robots-Tag': 'noindex',
    },
  })
}

async function renderPage(config: ResolvedConfig, store: InspectorStore): Promise<string> {
  const machines = await configuredMachines(config)
  const sections: string[] = []
  for (const machine of machines) {
    const graph = graphOf(machine)
    const taken = store.taken.get(machine.id) ?? new Map<string, number>()
    const total = [...taken.values()].reduce((a, b) => a + b, 0)
    const svg = await flowSvg(graph, { taken })
    sections.push(`<section class="flow" id="flow-${escapeHtml(machine.id)}" data-flow="${escapeHtml(machine.id)}">
<h2>${escapeHtml(machine.id)} <small>v${escapeHtml(graph.version)} · ${graph.states.length} states · ${graph.transitions.length} transitions · ${taken.size} taken (${total} times)</small></h2>
${graph.description ? `<p>${escapeHtml(graph.description)}</p>` : ''}
<div class="chart" data-chart tabindex="0">${CHART_CONTROLS}${inlineSvg(svg)}</div></section>`)
  }
  const byFlow = new Map(machines.map((m) => [m.id, graphOf(m)]))
  const rows = store.recent.map((r) => traceRow(r, byFlow.get(r.trace.flow))).join('\n')
  const option = (value: string, text = value) => `<option value="${escapeHtml(value)}">${escapeHtml(text)}</option>`
  const chartChoice = machines.map((m) => option(m.id, `${m.id} (${byFlow.get(m.id)!.states.length} states)`)).join('')
  const traceFlows = [...new Set(store.recent.map((r) => r.trace.flow))].sort()
  const traceOutcomes = [...new Set(store.recent.map((r) => String(r.trace.outcome ?? r.trace.errorCode ?? r.trace.status)))].sort()
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>authchart flows</title>
<style>body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#222}h1{margin:0 0 .25rem}
h2 small{font-weight:normal;color:#666;font-size:.8em}${CHART_STYLES}
.legend span{display:inline-block;padding:0 .5rem;margin-right:.5rem;border-radius:.25rem;border:1px solid}
.choice{padding:.5rem 0;margin-bottom:.5rem}.muted{color:#666;font-size:12px}select{font:inherit}
.filters label{margin-left:.5rem}.filters label:first-child{margin-left:0}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.25rem .5rem;text-align:left;vertical-align:top;font-size:12px}</style></head>
<body><h1>authchart flows</h1>
<p>Development only. Charts are generated from the machines; red transitions were taken by recent requests (with counts).
Traces show event types and states only: no payloads, tokens, cookies or query strings are recorded.</p>
<p class="legend"><span style="background:#eef3ff;border-color:#346df1">effect</span><span style="background:#fff7e6;border-color:#d48806">awaits a request</span><span style="background:#f0f0f0;border-color:#555">final</span></p>
<nav class="choice"><label for="chart-choice">Chart</label> <select id="chart-choice" data-chart-choice>${chartChoice}</select>
<span class="muted">one chart at a time (its address is the page's <code>#flow-…</code> fragment)</span></nav>
${sections.join('\n')}
<section id="traces"><h2>Last ${store.limit} traces</h2>
<p class="filters"><label for="trace-flow">Flow</label> <select id="trace-flow" data-trace-filter="flow">${option('', 'every flow')}${traceFlows.map((f) => option(f)).join('')}</select>
<label for="trace-outcome">Outcome</label> <select id="trace-outcome" data-trace-filter="outcome">${option('', 'every outcome')}${traceOutcomes.map((o) => option(o)).join('')}</select>
<span data-trace-count></span></p>
<table><thead><tr><th>time (UTC)</th><th>request</th><th>flow</th><th>events</th><th>effects</th><th>outcome</th></tr></thead>
<tbody>${rows || '<tr><td colspan="6">No requests yet.</td></tr>'}</tbody></table></section>
<script>${CHART_SCRIPT}</script><script>${PAGE_SCRIPT}</script></body></html>`
}
