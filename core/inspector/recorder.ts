/**
 * What the flow inspector keeps on the request path: whether it is on, and the traces it records.
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

const stores = new WeakMap<ResolvedConfig, InspectorStore>()

export function storeOf(config: ResolvedConfig): InspectorStore {
  let store = stores.get(config)
  if (!store) stores.set(config, (store = new InspectorStore(config.inspector?.traces ?? DEFAULT_INSPECTOR_TRACES)))
  return store
}

/** Whether the inspector runs (records traces): enabled in the config, and a development `NODE_ENV`. */
export function inspectorEnabled(config: ResolvedConfig): boolean {
  return config.inspector !== undefined && isDevelopment(nodeEnv())
}

export function nodeEnv(): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.NODE_ENV
}

// An unset NODE_ENV is how most servers run in production: only an explicit development or test
// environment turns the inspector on.
export const isDevelopment = (env: string | undefined) => env === 'development' || env === 'test'

/** Records a flow run for the inspector (a no-op unless it is enabled). */
export function recordTrace(config: ResolvedConfig, request: ParsedRequest, trace: FlowTrace): void {
  if (inspectorEnabled(config)) storeOf(config).record(request, trace)
}

/** The part of the page module the handler calls. */
interface InspectorPage {
  respondInspector(config: ResolvedConfig, request: Request): Promise<Response>
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
export async function respondInspector(config: ResolvedConfig, request: Request): Promise<Response> {
  page ??= import(/* webpackIgnore: true */ /* @vite-ignore */ INSPECTOR_PAGE) as Promise<InspectorPage>
  let loaded: InspectorPage
  try {
    loaded = await page
  } catch (error) {
    page = undefined
    config.logger.error(new Error('The flow inspector could not be loaded: it runs from an unbundled install of authchart', { cause: error }))
    return new Response(null, { status: 404 })
  }
  return loaded.respondInspector(config, request)
}
