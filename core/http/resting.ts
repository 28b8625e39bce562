/**
 * Where flows rest between requests: the cookie that carries a sealed flow and the options it is
 * sealed and opened with (its binding, and the store that spends it once).
 *
 * @module
 */
import type { CookieOption } from '../cookies.js'
import type { OpenOptions } from '../engine/envelope.js'
import type { RequestContext } from './context.js'

/** Where a flow rests: its envelope cookie and what the envelope is bound to. */
export interface Resting {
  cookie: CookieOption
  binding?: string
}

/** The name of the cookie that carries a flow at rest: `<flowState name>.<machine id>`. */
export function flowCookieName(ctx: RequestContext, flowId: string): string {
  return `${ctx.cookies.flowState.name}.${flowId}`
}

/** The default resting place of a flow: its own flow-state cookie, unbound. */
export function defaultResting(ctx: RequestContext, flowId: string): Resting {
  return { cookie: { ...ctx.cookies.flowState, name: flowCookieName(ctx, flowId) } }
}

/** How envelopes in `cookieName` are sealed and opened for this request. */
export function sealingFor(ctx: RequestContext, cookieName: string, binding: string | undefined): OpenOptions {
  const { store } = ctx.config
  return {
    secrets: ctx.config.secrets,
    cookieName,
    at: ctx.at,
    ...(binding !== undefined ? { binding } : {}),
    // Spent through the store: single use holds across every instance that shares it.
    claim: (jti, ttl) => store.claim(`envelope:${jti}`, ttl),
  }
}
