/**
 * What the core knows of the audit trail, OpenTelemetry and the flow inspector: a small set of
 * hooks. Each is brought in by an import (`authchart/audit`, `authchart/telemetry`,
 * `authchart/inspector`) whose value is branded with {@link OBSERVER}; the configuration resolves
 * each into an {@link Observer} once, into `ResolvedConfig.observers`. A request of a
 * configuration without one checks that array's length and nothing else.
 *
 * @module
 */
import type { FlowRun, EffectHook } from '../engine/advance.js'
import type { FlowTrace } from '../engine/trace.js'
import type { RequestContext } from '../http/context.js'
import type { ParsedRequest, RequestSource } from '../http/request.js'
import type { Logger } from '../logger.js'
import type { AuthStore } from '../store/types.js'
import type { ResponseInternal } from '../types.js'
import type { ResolvedConfig } from '../config/types.js'

/**
 * The brand of an observer value: only the modules' factories make one, so a plain object where
 * one is expected (the option's shape before it was an import) is told apart at load.
 */
export const OBSERVER: unique symbol = Symbol.for('authchart.observer')

/** The option an observer value belongs in. */
export type ObserverKind = 'audit' | 'telemetry' | 'inspector'

/** A lifecycle change a request made (signing out, revoking sessions, adding a factor). */
export type LifecycleChange =
  | 'sign-out'
  | 'sign-out-everywhere'
  | 'session-revoked'
  | 'second-factor-enrolled'
  | 'second-factor-removed'
  | 'passkey-added'
  | 'account-linked'
  | 'rate-limited'
  | 'reauthenticated'

/** How a request was answered: the failure its flow reported, or what its handling threw. */
export type Answered = { failure?: { type: string; code?: string } } | { error: unknown }

/** What a value is resolved with, once per configuration. */
export interface ObserverSettings {
  readonly logger: Logger
  readonly secrets: readonly string[]
  /** The application's own store (shared by its instances), when it configured one. */
  readonly sharedStore?: AuthStore | undefined
}

/**
 * The hooks of one observer, each optional; they run only for a configuration that has it. A hook
 * never fails the request: the observers catch their own errors.
 */
export interface Observer {
  /** The option it came from (`inspect`: the trace callback). */
  readonly kind: ObserverKind | 'inspect'
  /** Whether flow runs record the transition ids they take (a lookup per step), now. */
  readonly traceTransitions?: () => boolean
  /** A request is about to be dispatched (`route` is its templated path). */
  readonly onRequestStart?: (request: ParsedRequest, route: string, provider: string | undefined) => void | Promise<void>
  /** Wraps each effect of the request (a span, a timing). */
  readonly effectHook?: (request: ParsedRequest) => EffectHook | undefined
  /** A flow run's trace, when the run ended (at rest, final or failed). */
  readonly onFlowStep?: (request: ParsedRequest, trace: FlowTrace) => void
  /** How a flow run ended (`providerId` of the request's provider, if any). */
  readonly onFlowRun?: (request: ParsedRequest, flow: string, providerId: string | undefined, run: FlowRun) => void
  /** A lifecycle change the request made. */
  readonly onLifecycle?: (request: ParsedRequest, kind: LifecycleChange, who: { userId?: string; provider?: string }) => void
  /** An Auth.js event the request emitted (`signOut`, `linkAccount`, ...). */
  readonly onEmitted?: (request: ParsedRequest, name: string, message: unknown) => void
  /** The request's flows are done: how it was answered. Awaited before the answer is sent. */
  readonly onOutcome?: (request: ParsedRequest, source: RequestSource, answered: Answered) => Promise<void>
  /** The answer is decided: its status, or what was thrown. */
  readonly onRequestEnd?: (request: ParsedRequest, status: number | undefined, error?: unknown) => void
  /** A page served below `basePath` at `path` (GET only), before the request is parsed. */
  readonly page?: {
    readonly path: string
    readonly respond: (config: ResolvedConfig, request: Request) => Promise<Response>
  }
  /** `GET {basePath}/audit` for the signed-in `user`: their own activity. */
  readonly activity?: (ctx: RequestContext, user: { id: string }, page: boolean) => Promise<ResponseInternal>
}

/** A value one of the modules made: the option it goes in, and how it is resolved. */
export interface ObserverValue<K extends ObserverKind> {
  readonly [OBSERVER]: K
  /** Builds the observer of one configuration; throws a superstruct `StructError` for a bad option. */
  readonly resolve: (settings: ObserverSettings) => Observer
}

/** `auditTrail({ sink })` from `authchart/audit`. */
export type AuditTrail = ObserverValue<'audit'>
/** `openTelemetry()` from `authchart/telemetry`. */
export type OpenTelemetry = ObserverValue<'telemetry'>
/** `flowInspector()` from `authchart/inspector`. */
export type FlowInspector = ObserverValue<'inspector'>

/** Whether `value` is an observer value made for the option `kind`. */
export function isObserverValue<K extends ObserverKind>(value: unknown, kind: K): value is ObserverValue<K> {
  return typeof value === 'object' && value !== null && (value as { [OBSERVER]?: unknown })[OBSERVER] === kind
}
