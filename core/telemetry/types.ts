/**
 * The `telemetry` option and the parts of the OpenTelemetry API it uses, written out structurally
 * so that the package's types never name `@opentelemetry/api` (an optional peer): a `Tracer`,
 * `Meter` or the API module itself fits these shapes.
 *
 * @module
 */

/** Attribute values as OpenTelemetry takes them (only strings and numbers are ever set). */
export type TelemetryAttributes = Record<string, string | number | boolean | string[]>

/** The part of an OpenTelemetry `Span` that is used. */
export interface TelemetrySpan {
  setAttribute(key: string, value: string | number | boolean | string[]): unknown
  setStatus(status: { code: number }): unknown
  recordException(exception: { name: string }, time?: number): void
  end(endTime?: number): void
}

/** The part of an OpenTelemetry `Tracer` that is used. */
export interface TelemetryTracer {
  startSpan(name: string, options?: { kind?: number; attributes?: TelemetryAttributes }, context?: never): TelemetrySpan
}

/** The part of an OpenTelemetry `Meter` that is used. */
export interface TelemetryMeter {
  createCounter(name: string, options?: { description?: string; unit?: string }): { add(value: number, attributes?: TelemetryAttributes): void }
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): { record(value: number, attributes?: TelemetryAttributes): void }
}

/** The part of the `@opentelemetry/api` module that is used (context propagation, globals). */
export interface TelemetryApi {
  trace: {
    getTracer(name: string, version?: string): TelemetryTracer
    setSpan(context: never, span: never): unknown
  }
  metrics: { getMeter(name: string, version?: string): TelemetryMeter }
  context: {
    active(): unknown
    with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: never, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F>
  }
}

/**
 * The options of `openTelemetry()`: none to use the global OpenTelemetry API (its registered tracer
 * and meter providers), or the tracer and meter to use. `api` is the `@opentelemetry/api` module,
 * for bundled applications (an edge worker): without it the module is imported on the first request.
 */
export interface TelemetryOptions {
  tracer?: TelemetryTracer | undefined
  meter?: TelemetryMeter | undefined
  api?: TelemetryApi | undefined
}
