/**
 * The routing table: (method, action, provider type) → what serves it. A route either binds a flow
 * (params struct → request event → machine) or is a plain handler for a page or a JSON document.
 * Cross-cutting protections are flags on the route, applied by `dispatch` before the route runs,
 * so a new route cannot quietly skip the CSRF check.
 *
 * @module
 */
import { optional, record, string, type, unknown, type Struct } from 'superstruct'
import type { AnyStateMachine, EventObject } from 'xstate'
import type { FlowDefinition } from '../engine/flow.js'
import { credentialsSignInFlow } from '../flows/credentials.js'
import { sessionFlow } from '../flows/session.js'
import type { AuthAction, ProviderType, ResponseInternal } from '../types.js'
import type { RequestContext } from './context.js'
import {
  respondCsrf,
  respondErrorPage,
  respondProviders,
  respondSignInPage,
  respondSignOutPage,
  respondVerifyRequestPage,
  redirectToSignInPage,
} from './handlers.js'

/** A route served by a flow. */
export interface FlowBinding<Params = unknown> {
  flow: FlowDefinition<AnyStateMachine, RequestContext>
  /** Shape of the request input (`body` for POST, `query` for GET); a mismatch is a 400. */
  params: Struct<Params, unknown>
  /** Builds the request event from the validated input. */
  toEvent: (ctx: RequestContext, params: Params) => EventObject & { at: number }
  /** Continue the flow sealed in the flow cookie instead of starting a new one. */
  resumes?: boolean
}

/** A plain handler. */
export type Handler = (ctx: RequestContext) => Promise<ResponseInternal> | ResponseInternal

/** One entry of the routing table. */
export interface Route {
  method: 'GET' | 'POST'
  action: AuthAction
  /** `none`: the path has no provider segment; otherwise the provider's type. */
  provider: 'none' | ProviderType
  /** Require the double-submit CSRF token in the body. */
  csrf?: boolean
  /** The handler hands a CSRF token to the client; a cookie is minted when missing. */
  csrfToken?: boolean
  /** Resolve `callbackUrl` (body, query, then cookie) through the `redirect` callback. */
  callbackUrl?: boolean
  /** Errors answer 400 with a JSON `null` body instead of redirecting (an API route). */
  failure?: 'json-null'
  serve: FlowBinding<never> | Handler
}

const route = <P>(
  entry: Omit<Route, 'serve'> & { serve: FlowBinding<P> | Handler },
): Route => entry as Route

const SessionUpdateBody = type({ data: optional(unknown()) })
const AnyBody = record(string(), unknown())
const NoInput = optional(unknown())

const sessionPolicy = (ctx: RequestContext) => ({
  strategy: ctx.config.session.strategy,
  maxAge: ctx.config.session.maxAge,
  updateAge: ctx.config.session.updateAge,
})

/** Every route the handler serves. */
export const routes: readonly Route[] = [
  route({ method: 'GET', action: 'providers', provider: 'none', serve: respondProviders }),
  route({ method: 'GET', action: 'csrf', provider: 'none', csrfToken: true, serve: respondCsrf }),
  route({
    method: 'GET',
    action: 'session',
    provider: 'none',
    serve: {
      flow: sessionFlow,
      params: NoInput,
      toEvent: (ctx) => ({ type: 'session.read', at: ctx.at, policy: sessionPolicy(ctx) }),
    },
  }),
  route({
    method: 'POST',
    action: 'session',
    provider: 'none',
    csrf: true,
    failure: 'json-null',
    serve: {
      flow: sessionFlow,
      params: SessionUpdateBody,
      toEvent: (ctx, body) => ({
        type: 'session.update',
        at: ctx.at,
        policy: sessionPolicy(ctx),
        data: body.data,
      }),
    },
  }),
  route({
    method: 'GET',
    action: 'signin',
    provider: 'none',
    csrfToken: true,
    callbackUrl: true,
    serve: respondSignInPage,
  }),
  route({
    method: 'POST',
    action: 'signin',
    provider: 'none',
    csrf: true,
    callbackUrl: true,
    serve: redirectToSignInPage,
  }),
  route({
    method: 'POST',
    action: 'signin',
    provider: 'credentials',
    csrf: true,
    callbackUrl: true,
    serve: redirectToSignInPage,
  }),
  route({ method: 'GET', action: 'signout', provider: 'none', csrfToken: true, serve: respondSignOutPage }),
  route({
    method: 'POST',
    action: 'signout',
    provider: 'none',
    csrf: true,
    callbackUrl: true,
    serve: {
      flow: sessionFlow,
      params: NoInput,
      toEvent: (ctx) => ({
        type: 'session.signOut',
        at: ctx.at,
        policy: sessionPolicy(ctx),
        callbackUrl: ctx.callbackUrl,
      }),
    },
  }),
  route({
    method: 'POST',
    action: 'callback',
    provider: 'credentials',
    csrf: true,
    callbackUrl: true,
    serve: {
      flow: credentialsSignInFlow,
      params: AnyBody,
      toEvent: (ctx, body) => ({
        type: 'credentials.submit',
        at: ctx.at,
        providerId: ctx.provider!.id,
        credentials: body,
        callbackUrl: ctx.callbackUrl,
        policy: { strategy: ctx.config.session.strategy, maxAge: ctx.config.session.maxAge },
      }),
    },
  }),
  route({ method: 'GET', action: 'error', provider: 'none', serve: respondErrorPage }),
  route({ method: 'GET', action: 'verify-request', provider: 'none', serve: respondVerifyRequestPage }),
]

/** Finds the route for a request; `undefined` when none serves it. */
export function matchRoute(
  table: readonly Route[],
  method: string,
  action: AuthAction,
  providerType: ProviderType | undefined,
): Route | undefined {
  const wanted = providerType ?? 'none'
  return table.find((r) => r.method === method && r.action === action && r.provider === wanted)
}
