/**
 * OpenTelemetry spans and metrics, from the same two places the audit trail comes from: the
 * engine's effects (a child span and a latency point each) and the request's audit record (the
 * request span's flow, chart version and outcome; the sign-in, failure and rate-limit counters).
 * Nothing here is imported unless the application imports `authchart/telemetry`, and
 * `@opentelemetry/api` is imported only when its `openTelemetry()` is configured, on the first request.
 *
 * What is recorded is what the audit record holds (states, error types, provider ids) plus the
 * method, path and status of the request: never a query string, a header, a cookie or an error's
 * message (which may carry input); an exception is recorded by its type's name alone.
 *
 * @module
 */
import type { EventObject } from 'xstate'
import type { AuditEvent } from '../audit/types.js'
import type { EffectHook } from '../engine/advance.js'
import type { ParsedRequest } from '../engine/types.js'
import type {
  TelemetryApi,
  TelemetryAttributes,
  TelemetryMeter,
  TelemetryOptions,
  TelemetrySpan,
  TelemetryTracer,
} from './types.js'

export type { TelemetryOptions }

/** The instrumentation scope's name, as tracers and meters are asked for. */
export const INSTRUMENTATION_NAME = 'authchart'

/** Metric names (see the telemetry table of docs/guides/telemetry.md). */
export const METRICS = {
  signIns: 'authchart.sign_ins',
  signInFailures: 'authchart.sign_in.failures',
  sessionReads: 'authchart.session.reads',
  rateLimitRefusals: 'authchart.rate_limit.refusals',
  effectDuration: 'authchart.effect.duration',
  requestDuration: 'http.server.request.duration',
} as const

/** `SpanKind.SERVER` and `SpanKind.INTERNAL`, `SpanStatusCode.ERROR` of the API. */
const SERVER = 1
const INTERNAL = 0
const STATUS_ERROR = 2

/** Buckets of the duration histograms, in seconds (OpenTelemetry's advice for HTTP servers). */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

/**
 * What an effect does, for `authchart.effect.kind`: a call to the provider, to the adapter, a
 * message sent, a secret checked against its hash; everything else is work inside the process.
 */
const EFFECT_KINDS: Readonly<Record<string, 'provider' | 'adapter' | 'send' | 'hash'>> = {
  exchangeCode: 'provider',
  fetchProfile: 'provider',
  refreshAccessToken: 'provider',
  refreshAccountTokens: 'provider',
  createAuthorizationRequest: 'provider',
  endProviderSessions: 'provider',
  sendCode: 'send',
  sendVerificationRequest: 'send',
  checkCode: 'hash',
  verifySecondFactor: 'hash',
  confirmTotp: 'hash',
  authorize: 'hash',
  consumeToken: 'adapter',
  spendToken: 'adapter',
  voidToken: 'adapter',
  findUser: 'adapter',
  lookUpUser: 'adapter',
  findAccount: 'adapter',
  lookUpAccount: 'adapter',
  storeUser: 'adapter',
  findAuthenticator: 'adapter',
  updateCounter: 'adapter',
  findSecondFactor: 'adapter',
  createDatabaseSession: 'adapter',
  deleteSession: 'adapter',
  deleteExpiredSession: 'adapter',
  extendSession: 'adapter',
}

/** The kind of the effect `name` (a `get…` effect reads through the adapter). */
export const effectKind = (name: string): string => EFFECT_KINDS[name] ?? (/^get[A-Z]/.test(name) ? 'adapter' : 'internal')

interface Instruments {
  signIns: ReturnType<TelemetryMeter['createCounter']>
  signInFailures: ReturnType<TelemetryMeter['createCounter']>
  sessionReads: ReturnType<TelemetryMeter['createCounter']>
  rateLimitRefusals: ReturnType<TelemetryMeter['createCounter']>
  effectDuration: ReturnType<TelemetryMeter['createHistogram']>
  requestDuration: ReturnType<TelemetryMeter['createHistogram']>
}

/** A loaded telemetry: the API, the tracer and the instruments. */
export interface Telemetry {
  readonly api: TelemetryApi
  readonly tracer: TelemetryTracer
  readonly instruments: Instruments
}

/** The name of the module: a variable, so that a bundler leaves the optional peer out. */
const API_MODULE = '@opentelemetry/api'

async function importApi(): Promise<TelemetryApi> {
  const api = (await import(/* webpackIgnore: true */ /* @vite-ignore */ API_MODULE)) as TelemetryApi & { default?: TelemetryApi }
  return api.trace ? api : api.default!
}

function instrumentsOf(meter: TelemetryMeter): Instruments {
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS } }
  return {
    signIns: meter.createCounter(METRICS.signIns, { description: 'Sessions issued by a sign-in' }),
    signInFailures: meter.createCounter(METRICS.signInFailures, { description: 'Sign-in steps refused' }),
    sessionReads: meter.createCounter(METRICS.sessionReads, { description: 'Session reads' }),
    rateLimitRefusals: meter.createCounter(METRICS.rateLimitRefusals, { description: 'Attempts refused by a rate limit' }),
    effectDuration: meter.createHistogram(METRICS.effectDuration, { description: 'Duration of a flow effect', ...seconds }),
    requestDuration: meter.createHistogram(METRICS.requestDuration, { description: 'Duration of HTTP server requests', ...seconds }),
  }
}

/** Builds the telemetry of `options`, importing the API when the options do not give it. */
export async function loadTelemetry(given: TelemetryOptions): Promise<Telemetry> {
  const api = given.api ?? (await importApi())
  const tracer = given.tracer ?? api.trace.getTracer(INSTRUMENTATION_NAME)
  const meter = given.meter ?? api.metrics.getMeter(INSTRUMENTATION_NAME)
  return Object.freeze({ api, tracer, instruments: instrumentsOf(meter) })
}

/** The span of a request being answered, and what its flows told the audit record. */
interface RequestTelemetry {
  telemetry: Telemetry
  span: TelemetrySpan
  /** The OpenTelemetry context with the request span active: effects' spans are its children. */
  context: unknown
  started: number
  attributes: TelemetryAttributes
  events: readonly AuditEvent[]
  hook?: EffectHook
}

const requests = new WeakMap<ParsedRequest, RequestTelemetry>()

/**
 * The error's type as a span may show it: an AuthError's `type`, else its class name; never its
 * message, which may quote the input that caused it.
 */
export function errorTypeOf(error: unknown): string {
  const named = error as { type?: unknown; name?: unknown } | null
  if (typeof named?.type === 'string' && /^[A-Za-z]{1,64}$/.test(named.type)) return named.type
  if (typeof named?.name === 'string' && /^[A-Za-z]{1,64}$/.test(named.name)) return named.name
  return 'Error'
}

/** Starts the span of a request (under the application's active span, if any). */
export function startRequest(
  telemetry: Telemetry,
  request: ParsedRequest,
  route: string,
  provider: string | undefined,
): void {
  const { api, tracer } = telemetry
  const attributes: TelemetryAttributes = {
    'http.request.method': request.method,
    'url.path': request.url.pathname,
    'url.scheme': request.url.protocol.replace(/:$/, ''),
    'http.route': route,
    'authchart.action': request.action,
    ...(provider !== undefined ? { 'authchart.provider': provider } : {}),
  }
  const parent = api.context.active()
  const span = tracer.startSpan(`${request.method} ${route}`, { kind: SERVER, attributes }, parent as never)
  requests.set(request, {
    telemetry,
    span,
    context: api.trace.setSpan(parent as never, span as never),
    started: performance.now(),
    attributes: { 'http.request.method': request.method, 'http.route': route },
    events: [],
  })
}

/** Hands the request's audit events to its span (the flow, chart version and outcome). */
export function noteEvents(request: ParsedRequest, events: readonly AuditEvent[]): void {
  const record = requests.get(request)
  if (record) record.events = events
}

/**
 * Runs each effect of the request in a child span (`authchart.effect <name>`), timed into the
 * effect histogram; `undefined` when the request has no span (telemetry off).
 */
export function effectHookOf(request: ParsedRequest): EffectHook | undefined {
  const record = requests.get(request)
  if (record === undefined) return undefined
  record.hook ??= (name, call) => runEffect(record, name, call)
  return record.hook
}

function runEffect(
  record: RequestTelemetry,
  name: string,
  call: () => EventObject | PromiseLike<EventObject>,
): EventObject | PromiseLike<EventObject> {
  const { api, tracer, instruments } = record.telemetry
  const kind = effectKind(name)
  const attributes = { 'authchart.effect.name': name, 'authchart.effect.kind': kind }
  const span = tracer.startSpan(`authchart.effect ${name}`, { kind: INTERNAL, attributes }, record.context as never)
  const started = performance.now()
  const done = (event: EventObject) => {
    const failed = event.type.endsWith('.failed')
    span.setAttribute('authchart.effect.result', failed ? 'failed' : 'done')
    span.end()
    instruments.effectDuration.record((performance.now() - started) / 1000, { ...attributes, 'authchart.effect.result': failed ? 'failed' : 'done' })
    return event
  }
  const threw = (error: unknown): never => {
    const type = errorTypeOf(error)
    span.recordException({ name: type })
    span.setAttribute('error.type', type)
    span.setStatus({ code: STATUS_ERROR })
    span.end()
    instruments.effectDuration.record((performance.now() - started) / 1000, { ...attributes, 'error.type': type })
    throw error
  }
  let result: EventObject | PromiseLike<EventObject>
  try {
    result = api.context.with(api.trace.setSpan(record.context as never, span as never) as never, call)
  } catch (error) {
    return threw(error)
  }
  if (typeof (result as PromiseLike<EventObject>)?.then === 'function') return Promise.resolve(result).then(done, threw)
  return done(result as EventObject)
}

/** Ends the request's span with its status and outcome, and counts what it did. */
export function endRequest(request: ParsedRequest, status: number | undefined, error?: unknown): void {
  const record = requests.get(request)
  if (record === undefined) return
  requests.delete(request)
  const { span, telemetry, events } = record
  const { instruments } = telemetry
  // The event that carries the request's flow run: a `flow` event, or a completed re-authentication.
  const flow = events.find((event) => event.flow !== undefined)
  if (status !== undefined) span.setAttribute('http.response.status_code', status)
  if (flow) {
    span.setAttribute('authchart.flow', flow.flow!)
    span.setAttribute('authchart.chart_version', flow.chartVersion!)
    span.setAttribute('authchart.outcome', flow.outcome!.type)
    span.setAttribute('authchart.states', flow.states!)
    if (flow.provider !== undefined) span.setAttribute('authchart.provider', flow.provider)
    const counted = { 'authchart.flow': flow.flow!, ...(flow.provider !== undefined ? { 'authchart.provider': flow.provider } : {}) }
    const { outcome } = flow
    if (outcome!.type === 'signed-in') instruments.signIns.add(1, counted)
    if (outcome!.type === 'refused') {
      span.setAttribute('error.type', outcome!.error)
      if (outcome!.cause !== undefined) span.setAttribute('authchart.refusal.cause', outcome!.cause)
      instruments.signInFailures.add(1, {
        ...counted,
        'error.type': outcome!.error,
        ...(outcome!.cause !== undefined ? { 'authchart.refusal.cause': outcome!.cause } : {}),
      })
    }
  }
  for (const event of events) {
    if (event.kind !== 'rate-limited') continue
    instruments.rateLimitRefusals.add(1, {
      ...(flow ? { 'authchart.flow': flow.flow! } : {}),
      ...(event.provider !== undefined ? { 'authchart.provider': event.provider } : {}),
    })
  }
  if (request.action === 'session' && request.method === 'GET') instruments.sessionReads.add(1)
  const failed = error !== undefined || (status !== undefined && status >= 500)
  if (error !== undefined) span.recordException({ name: errorTypeOf(error) })
  if (failed) {
    const type = error !== undefined ? errorTypeOf(error) : String(status)
    span.setAttribute('error.type', type)
    span.setStatus({ code: STATUS_ERROR })
  }
  span.end()
  instruments.requestDuration.record((performance.now() - record.started) / 1000, {
    ...record.attributes,
    ...(status !== undefined ? { 'http.response.status_code': status } : {}),
    ...(failed ? { 'error.type': error !== undefined ? errorTypeOf(error) : String(status) } : {}),
  })
}
