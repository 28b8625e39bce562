/**
 * The core's side of the observer hooks: each function hands one thing a request did to every
 * configured observer. Callers check `config.observers.length` first, so a configuration without
 * observers never reaches here.
 *
 * @module
 */
import type { AdvanceOptions, FlowRun } from '../engine/advance.js'
import type { FlowTrace } from '../engine/trace.js'
import type { RequestContext } from '../http/context.js'
import type { ParsedRequest, RequestSource } from '../http/request.js'
import type { ResolvedConfig } from '../config/types.js'
import type { Answered, LifecycleChange, LifecycleSubject, ObservedSource, Observer } from './types.js'

/** The advance options of a run observed by `config.observers`. */
export function observedRunOptions(ctx: RequestContext): AdvanceOptions {
  const { observers } = ctx.config
  const { request } = ctx
  let effect: AdvanceOptions['effect']
  let transitions = false
  for (const observer of observers) {
    effect ??= observer.effectHook?.(request)
    transitions ||= observer.traceTransitions?.() === true
  }
  return {
    traceTransitions: transitions,
    onTrace: (trace: FlowTrace) => {
      for (const observer of observers) observer.onFlowStep?.(request, trace)
    },
    ...(effect ? { effect } : {}),
  }
}

/**
 * The `inspect` callback as an observer: every trace, with its transitions; a callback that throws
 * is ignored.
 */
export function inspectObserver(inspect: (trace: FlowTrace) => void): Observer {
  return Object.freeze({
    kind: 'inspect',
    traceTransitions: () => true,
    onFlowStep: (_request: ParsedRequest, trace: FlowTrace) => {
      try {
        inspect(trace)
      } catch {
        // An inspector must never break authentication.
      }
    },
  })
}

/** A flow run ended. */
export function notifyRun(ctx: RequestContext, flow: string, run: FlowRun): void {
  for (const observer of ctx.config.observers) observer.onFlowRun?.(ctx.request, flow, ctx.provider?.id, run)
}

/** The request made a lifecycle change. */
export function notifyLifecycle(ctx: RequestContext, kind: LifecycleChange, who: LifecycleSubject): void {
  for (const observer of ctx.config.observers) observer.onLifecycle?.(ctx.request, kind, who)
}

/** A lifecycle change outside a request to `Auth`: delivered at once; an observer that fails is logged. */
export async function notifyStandalone(
  config: ResolvedConfig,
  source: ObservedSource,
  kind: LifecycleChange,
  who: LifecycleSubject,
  outcome?: { error: string },
): Promise<void> {
  for (const observer of config.observers) {
    if (!observer.onStandalone) continue
    try {
      await observer.onStandalone(source, kind, who, outcome)
    } catch (error) {
      logged(config, error)
    }
  }
}

/** The request emitted an Auth.js event. */
export function notifyEmitted(ctx: RequestContext, name: string, message: unknown): void {
  for (const observer of ctx.config.observers) observer.onEmitted?.(ctx.request, name, message)
}

/** The observer that serves a page at `pathname` (below `basePath`), if any. */
export function observerPage(config: ResolvedConfig, method: string, pathname: string): Observer['page'] {
  if (method !== 'GET') return undefined
  const base = config.basePath === '/' ? '' : config.basePath
  for (const observer of config.observers) {
    if (observer.page && pathname === `${base}${observer.page.path}`) return observer.page
  }
  return undefined
}

/** Logs a failed hook: an observer never fails the request. */
function logged(config: ResolvedConfig, error: unknown): void {
  config.logger.error(error instanceof Error ? error : new Error(String(error)))
}

/** A request is about to be dispatched; waits for observers that load something first. */
export async function startObserved(config: ResolvedConfig, request: ParsedRequest): Promise<void> {
  const { providerId } = request
  const base = config.basePath === '/' ? '' : config.basePath
  const route = `${base}/${request.action}${providerId !== undefined ? '/{provider}' : ''}`
  const provider = providerId !== undefined && config.providerById.has(providerId) ? providerId : undefined
  for (const observer of config.observers) {
    try {
      await observer.onRequestStart?.(request, route, provider)
    } catch (error) {
      logged(config, error)
    }
  }
}

/** The request's flows are done. */
export async function finishObserved(config: ResolvedConfig, request: ParsedRequest, source: RequestSource, answered: Answered): Promise<void> {
  for (const observer of config.observers) {
    if (!observer.onOutcome) continue
    try {
      await observer.onOutcome(request, source, answered)
    } catch (error) {
      logged(config, error)
    }
  }
}

/** The answer is decided. */
export function endObserved(config: ResolvedConfig, request: ParsedRequest, status: number | undefined, error?: unknown): void {
  for (const observer of config.observers) {
    try {
      observer.onRequestEnd?.(request, status, error)
    } catch (thrown) {
      logged(config, thrown)
    }
  }
}
