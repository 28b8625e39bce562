/**
 * What the flow inspector keeps on the request path of a configuration that has one: whether it
 * runs, and the traces it records.
 * The page itself (charts rendered with Graphviz compiled to WebAssembly, megabytes) lives in
 * `./index.ts` and is loaded only when the inspector is on and its page is asked for, through a
 * specifier bundlers do not follow, so a production bundle never carries it.
 *
 * @module
 */
import type { ResolvedConfig } from '../config/types.js'
import type { FlowTrace } from '../engine/trace.js'
import type { ParsedRequest } from '../http/request.js'

/** The path of the inspector below `basePath`. */
export const INSPECTOR_PATH = '/__flows'

/** Traces kept by default. */
export const DEFAULT_INSPECTOR_TRACES = 50

/** A recorded request: only what is safe to show. */
export interface Recorded {
  at: number
  request: string
  trace: FlowTrace
}

export class InspectorStore {
  readonly recent: Recorded[] = []
  readonly taken = new Map<string, Map<string, number>>()
  constructor(readonly limit: number) {}

  record(request: ParsedRequest, trace: FlowTrace): void {
    const route = `${request.method} /${request.action}${request.providerId ? `/${request.providerId}` : ''}`
    this.recent.unshift({ at: trace.at, request: route, trace })
    this.recent.length = Math.min(this.recent.length, this.limit)
    let counts = this.taken.get(trace.flow)
    if (!counts) this.taken.set(trace.flow, (counts = new Map()))
    for (const step of trace.steps) {
      for (const id of step.transitions) counts.set(id, (counts.get(id) ?? 0) + 1)
    }
  }
}

/** The inspector of one configuration: its settings and the traces it recorded. */
export interface InspectorState {
  readonly clients: 'loopback' | 'any'
  readonly store: InspectorStore
}

/** Whether the inspector runs (records traces) now: only under a development `NODE_ENV`. */
export const inspectorRuns = (): boolean => isDevelopment(nodeEnv())

export function nodeEnv(): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.NODE_ENV
}

// An unset NODE_ENV is how most servers run in production: only an explicit development or test
// environment turns the inspector on.
export const isDevelopment = (env: string | undefined) => env === 'development' || env === 'test'

/** The part of the page module the handler calls. */
interface InspectorPage {
  respondInspector(config: ResolvedConfig, request: Request, inspector: InspectorState): Promise<Response>
}

// A specifier in a variable: bundlers leave the import to the runtime, so an application that never
// turns the inspector on never bundles the renderer. The comments keep webpack and Vite from warning.
const INSPECTOR_PAGE = './index.js'
let page: Promise<InspectorPage> | undefined

/**
 * Answers `GET {basePath}/__flows` through the page module, loaded on the first such request. Where
 * it cannot be loaded (an application bundled without it) the answer is a 404 and the reason is
 * logged once.
 */
export async function respondInspector(config: ResolvedConfig, request: Request, inspector: InspectorState): Promise<Response> {
  page ??= import(/* webpackIgnore: true */ /* @vite-ignore */ INSPECTOR_PAGE) as Promise<InspectorPage>
  let loaded: InspectorPage
  try {
    loaded = await page
  } catch (error) {
    page = undefined
    config.logger.error(new Error('The flow inspector could not be loaded: it runs from an unbundled install of authchart', { cause: error }))
    return new Response(null, { status: 404 })
  }
  return loaded.respondInspector(config, request, inspector)
}
