/**
 * `authchart/telemetry`: OpenTelemetry spans and metrics, brought in by an import
 * (`telemetry: openTelemetry()`), and the names it records under.
 *
 * @module
 */
export { openTelemetry } from './telemetry/observer.js'
export { INSTRUMENTATION_NAME, METRICS } from './telemetry/index.js'
export type { TelemetryApi, TelemetryMeter, TelemetryOptions, TelemetryTracer } from './telemetry/types.js'
export type { OpenTelemetry } from './observe/types.js'
