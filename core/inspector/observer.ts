/**
 * The flow inspector as an observer: under a development `NODE_ENV`, flow runs record the
 * transitions they take and the last traces are kept for the `{basePath}/__flows` page.
 *
 * @module
 */
import { assert, enums, integer, object, optional, size } from 'superstruct'
import { OBSERVER } from '../observe/brand.js'
import type { Observer, ObserverValue } from '../observe/types.js'
import { DEFAULT_INSPECTOR_TRACES, INSPECTOR_PATH, InspectorStore, inspectorRuns, respondInspector, type InspectorState } from './recorder.js'

/** The options of {@link flowInspector}. */
export interface FlowInspectorOptions {
  /** Traces kept for the page (1 to 1000, default 50). */
  traces?: number | undefined
  /** Who may see the page: this machine only (default), or any client (still development only). */
  clients?: 'loopback' | 'any' | undefined
}

const FlowInspectorOptionsStruct = object({
  traces: optional(size(integer(), 1, 1000)),
  clients: optional(enums(['loopback', 'any'])),
})

/**
 * The `inspector` option, for development only: `{basePath}/__flows` shows each configured flow's
 * chart with the transitions recent requests took, and the last traces. It runs only when
 * `NODE_ENV` is `development` or `test`, and answers only loopback clients unless `clients: 'any'`.
 *
 * @example
 * ```ts
 * import { flowInspector } from 'authchart/inspector'
 *
 * Auth(request, { ...config, inspector: flowInspector() })
 * ```
 */
export function flowInspector(options: FlowInspectorOptions = {}): ObserverValue<'inspector'> {
  return Object.freeze({
    [OBSERVER]: 'inspector' as const,
    resolve: () => {
      assert(options, FlowInspectorOptionsStruct)
      return inspectorObserver({
        clients: options.clients ?? 'loopback',
        store: new InspectorStore(options.traces ?? DEFAULT_INSPECTOR_TRACES),
      })
    },
  })
}

function inspectorObserver(inspector: InspectorState): Observer {
  return Object.freeze({
    kind: 'inspector',
    traceTransitions: inspectorRuns,
    onFlowStep: (request, trace) => {
      if (inspectorRuns()) inspector.store.record(request, trace)
    },
    // Flow charts and traces describe the deployment and its users: development and loopback only.
    page: Object.freeze({ path: INSPECTOR_PATH, respond: (config, request) => respondInspector(config, request, inspector) }),
  } satisfies Observer)
}
