/**
 * The audit trail, derived from the engine's runs: what a request's flows passed through and how
 * they ended is noted as the engine runs them, lifecycle changes as the engine emits them, and
 * one event per request (plus one per lifecycle change) goes to the sinks when it is answered.
 * Nothing here runs without an `audit` (or `telemetry`) option: each keeps its own record, through
 * the observer hooks the engine calls only for a configuration that has one.
 *
 * @module
 */
import type { FlowRun } from '../engine/advance.js'
import type { FlowTrace } from '../engine/trace.js'
import type { ParsedRequest } from '../http/request.js'
import type { Logger } from '../logger.js'
import { escapeControl } from '../logger.js'
import { hashedAddress, userAgentFamily } from './client.js'
import type { AuthStore } from '../store/types.js'
import { webhookSink } from './webhook.js'
import type { Answered, LifecycleSubject, ObservedSource } from '../observe/types.js'
import {
  AUDIT_SCHEMA_VERSION,
  type AuditEvent,
  type AuditOptions,
  type AuditOutcome,
  type AuditSinkFunction,
  type AuditStore,
  type LifecycleKind,
  type ResolvedAudit,
} from './types.js'

export type { ResolvedAudit }


/** The default wait for sinks, in milliseconds: a sign-in is never slower by more. */
export const DEFAULT_AUDIT_TIMEOUT = 50

const isStore = (sink: unknown): sink is AuditStore =>
  typeof sink === 'object' && sink !== null && typeof (sink as AuditStore).write === 'function'

/**
 * Resolves the `audit` option; the `'logger'` sink writes to `logger.debug` as `audit`. A webhook
 * queues its deliveries in `sharedStore` (the config's own, shared by the instances) when it keeps sets.
 */
export function resolveAudit(options: AuditOptions, logger: Logger, sharedStore?: AuthStore): ResolvedAudit {
  const given = options.sink === undefined ? [] : Array.isArray(options.sink) ? options.sink : [options.sink]
  const sinks = given.map((sink): AuditSinkFunction => {
    if (sink === 'logger') return (event) => logger.debug('audit', event as unknown as Record<string, unknown>)
    if (isStore(sink)) return (event) => sink.write(event)
    return sink
  })
  if (options.webhook) sinks.push(webhookSink(options.webhook, logger, sharedStore))
  const store = given.find(isStore)
  return Object.freeze({
    sinks: Object.freeze(sinks),
    ...(store ? { store } : {}),
    clientAddress: options.clientAddress ?? 'hmac',
    timeout: options.timeout ?? DEFAULT_AUDIT_TIMEOUT,
  })
}

interface NotedRun {
  flow: string
  version: string
  states: string[]
}

/** What a request's runs and emitted events told the audit so far. */
interface RequestAudit {
  runs: NotedRun[]
  userId?: string
  provider?: string
  amr?: string[]
  outcome?: AuditOutcome
  /** A re-authentication completed: the action that asked (the factor is in `amr`). */
  reauthenticated?: { action: string }
  lifecycle: ({ kind: LifecycleKind } & LifecycleSubject)[]
}

/**
 * One observer's record of the requests it sees, keyed by the parsed request: one per request,
 * gone with it.
 */
export class AuditRecord {
  readonly #audits = new WeakMap<ParsedRequest, RequestAudit>()

  /** The request's record so far, made on first use. */
  of(request: ParsedRequest): RequestAudit {
    let audit = this.#audits.get(request)
    if (audit === undefined) {
      audit = { runs: [], lifecycle: [] }
      this.#audits.set(request, audit)
    }
    return audit
  }

  /** Takes the request's record out (once it is answered); `undefined` when nothing was noted. */
  take(request: ParsedRequest): RequestAudit | undefined {
    const audit = this.#audits.get(request)
    this.#audits.delete(request)
    return audit
  }

  /** Notes the states a flow run passed (the engine reports every run's trace, failed ones too). */
  noteTrace(request: ParsedRequest, trace: FlowTrace): void {
    if (UNRECORDED_FLOWS.has(trace.flow)) return
    const states = trace.steps.length > 0 ? [trace.steps[0]!.from, ...trace.steps.map((step) => step.to)] : []
    this.of(request).runs.push({ flow: trace.flow, version: trace.version, states })
  }

  /** Notes how a flow run ended: the user and factors it knows, its outcome, its lifecycle changes. */
  noteRun(request: ParsedRequest, flow: string, providerId: string | undefined, run: FlowRun): void {
    if (!UNRECORDED_FLOWS.has(flow)) noteRunIn(this.of(request), flow, providerId, run)
  }

  /** Notes a lifecycle change the request made. */
  noteLifecycle(request: ParsedRequest, kind: LifecycleKind, who: LifecycleSubject): void {
    this.of(request).lifecycle.push({ kind, ...who })
  }

  /** Notes the Auth.js events that are lifecycle changes (`signOut`, `linkAccount`). */
  noteEmitted(request: ParsedRequest, name: string, message: unknown): void {
    noteEmittedIn(this.of(request), name, message)
  }
}

/** Session reads and sign-outs run the session flow; they are lifecycle events or metrics, not steps. */
const UNRECORDED_FLOWS: ReadonlySet<string> = new Set(['session'])

const idOf = (value: unknown): string | undefined =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : undefined

/**
 * Lifecycle changes a run shows by the states it ended in: the charts name them, so no effect
 * reports them by hand.
 */
const LIFECYCLE_OF_RUN: readonly ((flow: string, run: FlowRun) => LifecycleKind | undefined)[] = [
  (flow, run) => (flow === 'totp-enrolment' && String(run.snapshot.value) === 'enrolled' ? 'second-factor-enrolled' : undefined),
  (flow, run) =>
    flow === 'signin-completion' &&
    (run.snapshot.context as { enrolment?: unknown }).enrolment &&
    run.trace.steps.some((step) => step.event === 'storeUser.done')
      ? 'passkey-added'
      : undefined,
  (_flow, run) => (run.outcome.type === 'error' && run.outcome.retryAfter !== undefined ? 'rate-limited' : undefined),
]

/**
 * A re-authentication run that recorded its proof in the session (its `markVerified` effect
 * succeeded): the factor proven and the action that asked, else `undefined`. It issues no new
 * session, so it is never recorded as a sign-in.
 */
function completedReauthentication(flow: string, run: FlowRun): { factor: string; action: string } | undefined {
  if (flow !== 'reauthenticate' || !run.trace.steps.some((step) => step.event === 'markVerified.done')) return undefined
  const { proven, action } = run.snapshot.context as { proven?: unknown; action?: unknown }
  return { factor: idOf(proven) ?? 'unknown', action: idOf(action) ?? 'unknown' }
}

function noteRunIn(audit: RequestAudit, flow: string, providerId: string | undefined, run: FlowRun): void {
  const context = run.snapshot.context as {
    user?: { id?: unknown } | null
    userId?: unknown
    identity?: { providerId?: unknown } | null
    amr?: unknown
  }
  const userId = idOf(context.user?.id) ?? idOf(context.userId)
  if (userId !== undefined) audit.userId = userId
  const provider = providerId ?? idOf(context.identity?.providerId)
  if (provider !== undefined) audit.provider = provider
  if (Array.isArray(context.amr) && context.amr.length > 0) audit.amr = context.amr.map(String)
  const { outcome } = run
  const state = String(run.snapshot.value)
  if (outcome.type === 'handoff') return
  const reauthenticated = completedReauthentication(flow, run)
  if (reauthenticated) {
    audit.outcome = { type: 'reauthenticated' }
    audit.amr = [reauthenticated.factor]
    audit.reauthenticated = { action: reauthenticated.action }
  } else if (outcome.session?.op === 'set') audit.outcome = { type: 'signed-in' }
  else if (outcome.type === 'error') {
    audit.outcome = { type: 'refused', error: outcome.error, ...(outcome.code ? { cause: outcome.code } : {}) }
  } else if (run.resting) audit.outcome = refusedStep(run, state) ?? { type: 'step', state }
  else audit.outcome = { type: 'answered', state }
  for (const derive of LIFECYCLE_OF_RUN) {
    const kind = derive(flow, run)
    if (kind) audit.lifecycle.push({ kind, ...(audit.userId ? { userId: audit.userId } : {}), ...(audit.provider ? { provider: audit.provider } : {}) })
  }
}

/**
 * A flow that waits again because a check failed (a wrong code): effects answer an expected
 * failure with `<effect>.failed`, and the waiting state's answer names the error it shows.
 */
function refusedStep(run: FlowRun, state: string): AuditOutcome | undefined {
  const failed = run.trace.steps.findLast((step) => step.event.endsWith('.failed'))
  if (failed === undefined) return undefined
  const { outcome } = run
  const shown = outcome.type === 'redirect' ? errorParamOf(outcome.url) : undefined
  return { type: 'refused', error: shown ?? 'Refused', cause: failed.event.slice(0, -'.failed'.length), state }
}

function errorParamOf(url: string): string | undefined {
  const query = url.indexOf('?')
  if (query === -1) return undefined
  const error = new URLSearchParams(url.slice(query + 1)).get('error')
  // Only an error type's name: never free text from a URL.
  return error !== null && /^[A-Za-z]{1,64}$/.test(error) ? error : undefined
}

function noteEmittedIn(audit: RequestAudit, name: string, message: unknown): void {
  const fields = message as {
    token?: { sub?: unknown } | null
    session?: { userId?: unknown } | null
    user?: { id?: unknown }
    account?: { provider?: unknown }
  }
  if (name === 'signOut') {
    const userId = idOf(fields.token?.sub) ?? idOf(fields.session?.userId)
    audit.lifecycle.push({ kind: 'sign-out', ...(userId !== undefined ? { userId } : {}) })
  } else if (name === 'linkAccount') {
    const userId = idOf(fields.user?.id)
    const provider = idOf(fields.account?.provider)
    audit.lifecycle.push({ kind: 'account-linked', ...(userId ? { userId } : {}), ...(provider ? { provider } : {}) })
  }
}

/** A request id as received, when it is a plain token; anything else is replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export type { Answered }

/** Settings and secrets the events are built with. */
export interface AuditSettings {
  readonly audit: ResolvedAudit
  readonly secrets: readonly string[]
  readonly logger: Logger
}

/** The events of a request, from what its runs noted; none when no flow ran and nothing changed. */
export async function eventsOf(
  settings: AuditSettings,
  record: AuditRecord,
  request: ParsedRequest,
  source: ObservedSource,
  answered: Answered,
  at: Date,
): Promise<AuditEvent[]> {
  const audit = record.take(request)
  if (audit === undefined) return []
  if ('error' in answered) {
    // The run threw (a refused sealed flow, an outage): the error's type and internal code.
    const error = answered.error as { type?: unknown; code?: unknown; name?: unknown }
    audit.outcome = {
      type: 'refused',
      error: typeof error?.type === 'string' ? error.type : 'Configuration',
      ...(typeof error?.code === 'string' ? { cause: error.code } : {}),
    }
  }
  const given = source.header('x-request-id')
  const requestId = given !== null && REQUEST_ID.test(given) ? given : crypto.randomUUID()
  const client = await clientOf(settings, source)
  const base = { v: AUDIT_SCHEMA_VERSION, time: at.toISOString(), requestId, client } as const
  const events: AuditEvent[] = []
  const [first] = audit.runs
  if (first !== undefined && audit.outcome !== undefined) {
    const { reauthenticated } = audit
    events.push({
      ...base,
      id: crypto.randomUUID(),
      kind: reauthenticated && audit.outcome.type === 'reauthenticated' ? 'reauthenticated' : 'flow',
      ...(audit.userId !== undefined ? { userId: audit.userId } : {}),
      ...(audit.provider !== undefined ? { provider: audit.provider } : {}),
      ...(audit.amr !== undefined && (audit.outcome.type === 'signed-in' || audit.outcome.type === 'reauthenticated')
        ? { amr: audit.amr }
        : {}),
      ...(reauthenticated && audit.outcome.type === 'reauthenticated' ? { action: reauthenticated.action } : {}),
      flow: first.flow,
      chartVersion: first.version,
      states: audit.runs.flatMap((run) => run.states.map((state) => `${run.flow}:${state}`)),
      outcome: audit.outcome,
    })
  }
  for (const change of audit.lifecycle) {
    events.push({ ...base, id: crypto.randomUUID(), kind: change.kind, ...withoutUndefined(change), client })
  }
  return events
}

function withoutUndefined(change: LifecycleSubject) {
  return {
    ...(change.userId !== undefined ? { userId: change.userId } : {}),
    ...(change.provider !== undefined ? { provider: change.provider } : {}),
    ...(change.apiKey !== undefined ? { apiKey: change.apiKey } : {}),
  }
}

/**
 * The event of a lifecycle change outside a request to `Auth` (an API key refused in the
 * application's own route): its own request id, the client as the source shows it.
 */
export async function standaloneEvent(
  settings: AuditSettings,
  source: ObservedSource,
  kind: LifecycleKind,
  who: LifecycleSubject,
  outcome: { error: string } | undefined,
  at: Date,
): Promise<AuditEvent> {
  const given = source.header('x-request-id')
  return {
    v: AUDIT_SCHEMA_VERSION,
    id: crypto.randomUUID(),
    time: at.toISOString(),
    requestId: given !== null && REQUEST_ID.test(given) ? given : crypto.randomUUID(),
    kind,
    ...withoutUndefined(who),
    client: await clientOf(settings, source),
    ...(outcome !== undefined ? { outcome: { type: 'refused' as const, error: outcome.error } } : {}),
  }
}

async function clientOf(settings: AuditSettings, source: ObservedSource): Promise<AuditEvent['client']> {
  const family = userAgentFamily(source.header('user-agent'))
  const raw = source.clientAddress
  let address: string | undefined
  if (raw !== undefined && settings.audit.clientAddress === 'raw') address = raw
  else if (raw !== undefined && settings.audit.clientAddress === 'hmac') address = await hashedAddress(raw, settings.secrets[0]!)
  return { ...(address !== undefined ? { address } : {}), ...(family !== undefined ? { userAgent: family } : {}) }
}

/** Why a sink's event was not delivered, as the log shows it (escaped: a sink's message is foreign text). */
function sinkFailure(reason: string): Error {
  const error = new Error(escapeControl(reason))
  error.name = 'AuditSinkError'
  return error
}

/**
 * Hands `events` to every sink and waits at most the configured timeout: a sink that throws is
 * logged, one that hangs is left to finish on its own (logged too). Never throws.
 */
export async function deliver(settings: AuditSettings, events: readonly AuditEvent[]): Promise<void> {
  const { audit, logger } = settings
  if (events.length === 0 || audit.sinks.length === 0) return
  const calls = events.flatMap((event) =>
    audit.sinks.map(async (sink) => {
      try {
        await sink(event)
      } catch (error) {
        logger.error(sinkFailure(`an audit sink failed: ${error instanceof Error ? error.message : String(error)}`))
      }
    }),
  )
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, audit.timeout, 'late')
  })
  const settled = await Promise.race([Promise.all(calls), late])
  clearTimeout(timer)
  if (settled === 'late') {
    logger.error(sinkFailure(`an audit sink took longer than ${audit.timeout} ms; the request went on without it`))
  }
}

/**
 * The audit settings when only telemetry reads the record: no sink, no client address (a span
 * never holds one).
 */
export const RECORD_ONLY: ResolvedAudit = Object.freeze({ sinks: Object.freeze([]), clientAddress: 'none', timeout: DEFAULT_AUDIT_TIMEOUT })

/**
 * Builds and delivers the request's events, and gives them back (for the request's span); an
 * audit failure never fails the request.
 */
export async function finishAudit(
  settings: AuditSettings,
  record: AuditRecord,
  request: ParsedRequest,
  source: ObservedSource,
  answered: Answered,
): Promise<AuditEvent[]> {
  try {
    const events = await eventsOf(settings, record, request, source, answered, new Date())
    await deliver(settings, events)
    return events
  } catch (error) {
    settings.logger.error(sinkFailure(`audit events were not built: ${error instanceof Error ? error.message : String(error)}`))
    return []
  }
}
