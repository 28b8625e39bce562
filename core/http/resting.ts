/**
 * Where flows rest between requests: the cookie that carries a sealed flow and the options it is
 * sealed and opened with (its binding, and the store that spends it once).
 *
 * @module
 */
import { serializeCookie, type CookieOption } from '../cookies.js'
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

/** Each flow's own flow-state cookie, per flow-state cookie option (one per config and protocol). */
const flowCookies = new WeakMap<CookieOption, Map<string, CookieOption>>()

/**
 * The default resting place of a flow: its own flow-state cookie, unbound. The cookie option is
 * made once per configuration and flow (frozen: every request shares it), not on every request.
 */
export function defaultResting(ctx: RequestContext, flowId: string): Resting {
  const flowState = ctx.cookies.flowState
  let byFlow = flowCookies.get(flowState)
  if (!byFlow) flowCookies.set(flowState, (byFlow = new Map()))
  let cookie = byFlow.get(flowId)
  if (!cookie) byFlow.set(flowId, (cookie = Object.freeze({ ...flowState, name: flowCookieName(ctx, flowId) })))
  return { cookie }
}

/** The most bytes a browser keeps of one cookie: name, value and attributes. */
export const BROWSER_COOKIE_LIMIT = 4096

/**
 * How envelopes in `cookieName` are sealed and opened for this request. `cookie`, the cookie a
 * sealed envelope is written to, sizes the room its value has.
 */
export function sealingFor(
  ctx: RequestContext,
  cookieName: string,
  binding: string | undefined,
  cookie: CookieOption = { ...ctx.cookies.flowState, name: cookieName },
): OpenOptions {
  const { store } = ctx.config
  return {
    secrets: ctx.config.secrets,
    cookieName,
    at: ctx.at,
    ...(binding !== undefined ? { binding } : {}),
    // Spent through the store: single use holds across every instance that shares it.
    claim: (jti, ttl) => store.claim(`envelope:${jti}`, ttl),
    // A context too large for the cookie waits in the store instead of being dropped by the browser.
    park: {
      room: BROWSER_COOKIE_LIMIT - serializeCookie({ ...cookie, value: '' }).length,
      put: (key, value, ttl) => store.put(key, value, ttl),
      get: (key) => store.get(key),
      forget: (key) => store.reset(key),
    },
  }
}
