/**
 * The OpenTelemetry SDK with in-memory exporters: what a test's sign-ins recorded, as spans and
 * metric points.
 */
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { openTelemetry } from '../../core/telemetry.js'

/** A reader collected on demand. */
class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** A metric point: its instrument, attributes and value (a sum, or a histogram's count and sum). */
export interface Point {
  name: string
  attributes: Record<string, unknown>
  value: number | { count: number; sum: number }
}

export function otelSdk() {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new OnDemandReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  return {
    tracerProvider,
    meterProvider,
    telemetry: openTelemetry({ tracer: tracerProvider.getTracer('authchart'), meter: meterProvider.getMeter('authchart') }),
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async points(): Promise<Point[]> {
      const { resourceMetrics } = await reader.collect()
      return resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.flatMap((metric) =>
          (metric.dataPoints as DataPoint<number | Histogram>[]).map((point) => ({
            name: metric.descriptor.name,
            attributes: point.attributes,
            value: typeof point.value === 'number' ? point.value : { count: point.value.count, sum: point.value.sum ?? 0 },
          })),
        ),
      )
    },
  }
}

/** The spans of one request: its server span and the effect spans under it. */
export function requestTree(spans: readonly ReadableSpan[], request: ReadableSpan) {
  const id = request.spanContext().spanId
  return spans.filter((span) => span.parentSpanContext?.spanId === id)
}

/** A span's duration in milliseconds. */
export const durationMs = (span: ReadableSpan) => span.duration[0] * 1000 + span.duration[1] / 1e6
