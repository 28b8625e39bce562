/**
 * The routing table: (method, action, provider type) → what serves it. A route either binds a flow
 * (params struct → request event → machine) or is a plain handler for a page or a JSON document.
 * Cross-cutting protections are flags on the route, applied by `dispatch` before the route runs,
 * so a new route cannot quietly skip the CSRF check. `actsForUser` marks the routes that act for
 * the signed-in user: they read the session only through the one authority
 * (`core/session/current.ts`), and test/core/authority-routes.test.ts holds every route to its flag.
 *
 * @module
 */
import type { AnyStateMachine, EventObject } from 'xstate'
import type { VerifiedIdentity } from '../../machines/shared/outcome.js'
import { SIGN_IN_COMPLETION } from '../../machines/signin-completion.logic.js'
import type { FlowDefinition } from '../engine/flow.js'
import { builtInFlows } from '../flows/registry.js'
import type { FlowModule } from '../flows/types.js'
import { respondSessionsOrPage, revokeSessionsOrPage, wantsPage } from './sessions-page.js'
import { respondActivity } from './activity.js'
import { refusedStep, respondStepPage, stepFlowOf } from './steps.js'
import type { RoutedAction } from '../actions.js'
import type { ProviderType } from '../types.js'
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
import { AnyBody, isObjectBody, route } from './params.js'
import type { FlowBinding, Handler, Route } from './types.js'

export type { FlowBinding, Handler, Route }

/**
 * The routes that serve no flow of their own: the providers list, CSRF, the built-in pages, errors,
 * the step pages of any flow, a user's sessions and activity. Each flow's routes are declared in
 * its module (`core/flows/<id>/index.ts`).
 */
export const coreRoutes: readonly Route[] = [
  route({ method: 'GET', action: 'providers', provider: 'none', serve: respondProviders }),
  route({ method: 'GET', action: 'csrf', provider: 'none', csrfToken: true, serve: respondCsrf }),
  route({
    method: 'GET',
    action: 'signin',
    provider: 'none',
    csrfToken: true,
    callbackUrl: true,
    actsForUser: true,
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
  route({ method: 'GET', action: 'signout', provider: 'none', csrfToken: true, actsForUser: true, serve: respondSignOutPage }),
  // A flow waiting for the user: its page, and the answer (CSRF-checked like every posted step;
  // an application's extension cannot opt out). A second factor's enrolment is a step that acts for
  // the enrolling user: its page shows the key, and its answer stores the factor, only to them.
  route({ method: 'GET', action: 'step', provider: 'none', csrfToken: true, actsForUser: true, serve: respondStepPage }),
  route({
    method: 'POST',
    action: 'step',
    provider: 'none',
    csrf: true,
    actsForUser: true,
    serve: {
      flow: (ctx: RequestContext) => stepFlowOf(ctx),
      params: AnyBody,
      accepts: isObjectBody,
      resumes: true,
      step: true,
      refused: refusedStep,
      toEvent: () => {
        throw new TypeError('a step reads its event from the waiting state')
      },
    },
  }),
  // A signed-in user's sessions: the list, and revocation (CSRF-checked like every POST); a
  // browser asking for HTML gets the page, whose forms carry the token.
  route({ method: 'GET', action: 'sessions', provider: 'none', csrfToken: wantsPage, actsForUser: true, serve: respondSessionsOrPage }),
  route({
    method: 'POST',
    action: 'sessions',
    provider: 'none',
    csrf: true,
    failure: 'json-null',
    actsForUser: true,
    stepUp: () => 'revoke-sessions',
    serve: revokeSessionsOrPage,
  }),
  // A signed-in user's own security events (read-only: no CSRF token).
  route({ method: 'GET', action: 'audit', provider: 'none', actsForUser: true, serve: respondActivity }),
  route({ method: 'GET', action: 'error', provider: 'none', serve: respondErrorPage }),
  route({
    method: 'GET',
    action: 'verify-request',
    provider: 'none',
    // Only the built-in page of a provider that sends codes has a form (the code's) to protect.
    csrfToken: (ctx) =>
      !ctx.config.pages.verifyRequest && ctx.config.providerById.get(ctx.request.query.provider ?? '')?.email?.code !== undefined,
    serve: respondVerifyRequestPage,
  }),
]

/**
 * The routing table of `flows`: the core routes and each flow's own.
 *
 * @throws {TypeError} when two routes serve the same method, action and provider type.
 */
export function routesOf(flows: readonly FlowModule[], featureRoutes: readonly Route[] = []): readonly Route[] {
  const table = [...coreRoutes, ...flows.flatMap((flow) => flow.routes ?? []), ...featureRoutes]
  const seen = new Set<string>()
  for (const entry of table) {
    const key = `${entry.method} ${entry.action} ${entry.provider}`
    if (seen.has(key)) throw new TypeError(`two routes serve ${key}`)
    seen.add(key)
  }
  return Object.freeze(table)
}

/** Every route of the built-in flows (a configuration's own table is {@link routingTable}). */
export const routes: readonly Route[] = routesOf(builtInFlows)

const tables = new WeakMap<readonly FlowModule[], readonly Route[]>()

/** The tables of configurations whose feature modules bring routes of their own (organisations, API keys). */
const featureTables = new WeakMap<readonly FlowModule[], { organizations: unknown; apiKeys: unknown; device: unknown; table: readonly Route[] }>()

/**
 * The routing table of a configuration: the core routes, those of its flows and those of its
 * feature modules whose routes run their own handlers (`organizations()`, `apiKeys()`,
 * `deviceAuthorization()`), built once.
 */
export function routingTable(config: {
  readonly flows: readonly FlowModule[]
  readonly organizations?: { readonly routes: readonly Route[] } | undefined
  readonly apiKeys?: { readonly routes: readonly Route[] } | undefined
  readonly deviceAuthorization?: { readonly routes: readonly Route[] } | undefined
}): readonly Route[] {
  const organizations = config.organizations?.routes
  const apiKeys = config.apiKeys?.routes
  const device = config.deviceAuthorization?.routes
  if (organizations !== undefined || apiKeys !== undefined || device !== undefined) {
    const built = featureTables.get(config.flows)
    if (built && built.organizations === organizations && built.apiKeys === apiKeys && built.device === device) return built.table
    const table = routesOf(config.flows, [...(organizations ?? []), ...(apiKeys ?? []), ...(device ?? [])])
    featureTables.set(config.flows, { organizations, apiKeys, device, table })
    return table
  }
  let table = tables.get(config.flows)
  if (!table) tables.set(config.flows, (table = routesOf(config.flows)))
  return table
}

const signInPolicy = (ctx: RequestContext) => ({
  strategy: ctx.config.session.strategy,
  maxAge: ctx.config.session.maxAge,
  newUserUrl: ctx.config.pages.newUser ?? null,
})

/** A flow that another flow hands a request over to, and the event that starts it. */
export interface Handoff {
  flow: (ctx: RequestContext) => FlowDefinition<AnyStateMachine, RequestContext>
  toEvent: (ctx: RequestContext, identity: VerifiedIdentity) => EventObject & { at: number }
}

/**
 * The flows a request may be handed over to, by id. Every first factor ends in the sign-in
 * completion: it alone runs the `signIn` callback and issues sessions.
 */
export const handoffs: Readonly<Record<string, Handoff>> = {
  [SIGN_IN_COMPLETION]: {
    // The application's extensions are part of it: every first factor reaches them.
    flow: (ctx) => ctx.config.completion,
    toEvent: (ctx, identity) => ({ type: 'signin.verified', at: ctx.at, identity, policy: signInPolicy(ctx) }),
  },
}

/** Finds the route for a request; `undefined` when none serves it. */
export function matchRoute(
  table: readonly Route[],
  method: string,
  action: RoutedAction,
  providerType: ProviderType | string | undefined,
): Route | undefined {
  return indexOf(table).get(`${method} ${action} ${providerType ?? 'none'}`)
}

/** Each routing table's routes by method, action and provider: the first of each, as a scan finds it. */
const indexes = new WeakMap<readonly Route[], Map<string, Route>>()

function indexOf(table: readonly Route[]): Map<string, Route> {
  let index = indexes.get(table)
  if (!index) {
    index = new Map()
    for (const route of table) {
      const key = `${route.method} ${route.action} ${route.provider}`
      if (!index.has(key)) index.set(key, route)
    }
    indexes.set(table, index)
  }
  return index
}
