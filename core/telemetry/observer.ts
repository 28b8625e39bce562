/**
 * OpenTelemetry as an observer: a span per request (its flow, chart version and outcome, from the
 * same record the audit trail keeps), a child span per effect, and the metrics.
 *
 * @module
 */
import { assert, func, optional, type } from 'superstruct'
import { AuditRecord, eventsOf, RECORD_ONLY } from '../audit/record.js'
import { OBSERVER } from '../observe/brand.js'
import type { Observer, ObserverSettings, ObserverValue } from '../observe/types.js'
import { effectHookOf, endRequest, loadTelemetry, noteEvents, startRequest, type Telemetry } from './index.js'
import type { TelemetryOptions } from './types.js'

/** The schema of the options (a tracer, a meter, the API module: by the methods used). */
const TelemetryOptionsStruct = type({
  tracer: optional(type({ startSpan: func() })),
  meter: optional(type({ createCounter: func(), createHistogram: func() })),
  api: optional(type({ trace: type({}), metrics: type({}), context: type({}) })),
})

/**
 * The `telemetry` option: spans and metrics through the global OpenTelemetry API, or through the
 * tracer and meter (or the `@opentelemetry/api` module) given. `@opentelemetry/api` is an optional
 * peer dependency, imported on the first request when no `api` is given.
 *
 * @example
 * ```ts
 * import { openTelemetry } from 'authchart/telemetry'
 *
 * Auth(request, { ...config, telemetry: openTelemetry() })
 * ```
 */
export function openTelemetry(options: TelemetryOptions = {}): ObserverValue<'telemetry'> {
  return Object.freeze({
    [OBSERVER]: 'telemetry' as const,
    resolve: (settings: ObserverSettings) => {
      assert(options, TelemetryOptionsStruct)
      return telemetryObserver(Object.freeze({ ...options }), settings)
    },
  })
}

function telemetryObserver(options: TelemetryOptions, settings: ObserverSettings): Observer {
  const record = new AuditRecord()
  const recordSettings = { audit: RECORD_ONLY, secrets: settings.secrets, logger: settings.logger }
  let loaded: Telemetry | Promise<Telemetry> | undefined
  // Loaded once (the first request waits for the import); a failed load is tried again next time.
  const telemetry = (): Telemetry | Promise<Telemetry> => {
    if (loaded === undefined) {
      const loading = loadTelemetry(options).then((ready) => (loaded = ready))
      loading.catch(() => (loaded = undefined))
      loaded = loading
    }
    return loaded
  }
  return Object.freeze({
    kind: 'telemetry',
    // Telemetry that cannot load (the API is not installed) is logged and the request goes on without a span.
    onRequestStart: async (request, route, provider) => {
      const current = telemetry()
      startRequest(current instanceof Promise ? await current : current, request, route, provider)
    },
    effectHook: (request) => effectHookOf(request),
    onFlowStep: (request, trace) => record.noteTrace(request, trace),
    onFlowRun: (request, flow, providerId, run) => record.noteRun(request, flow, providerId, run),
    onOutcome: async (request, source, answered) => {
      noteEvents(request, await eventsOf(recordSettings, record, request, source, answered, new Date()))
    },
    onRequestEnd: (request, status, error) => endRequest(request, status, error),
  } satisfies Observer)
}
