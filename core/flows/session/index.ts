/**
 * The session flow as one module: reading, updating and ending the session, JWT or database.
 *
 * @module
 */
import { optional, type, unknown } from 'superstruct'
import { SESSION } from '../../../machines/session.logic.js'
import type { RequestContext, ResolvedConfig } from '../../config/types.js'
import { anyInput, NoInput, route } from '../../http/params.js'
import { REQUIRED_METHODS } from '../../session/adapter.js'
import type { FlowModule } from '../types.js'
import { sessionFlow } from './flow.js'

const SessionUpdateBody = type({ data: optional(unknown()) })

interface SessionProviderIds {
  refresh: string[]
  logout: string[]
}
const sessionProviderIdsOf = new WeakMap<object, SessionProviderIds>()

/** Ids of the providers whose tokens the session path refreshes, and those it logs out of. */
function sessionProviderIds(config: ResolvedConfig): SessionProviderIds {
  let ids = sessionProviderIdsOf.get(config)
  if (!ids) {
    const { providers } = config
    ids = {
      refresh: providers.filter((p) => p.oauth?.refreshTokens).map((p) => p.id),
      logout: providers.filter((p) => p.oauth?.logout && p.type === 'oidc').map((p) => p.id),
    }
    sessionProviderIdsOf.set(config, ids)
  }
  return ids
}

const sessionPolicy = (ctx: RequestContext) => {
  const ids = sessionProviderIds(ctx.config)
  return {
    strategy: ctx.config.session.strategy,
    maxAge: ctx.config.session.maxAge,
    updateAge: ctx.config.session.updateAge,
    ...(ids.refresh.length > 0 ? { refreshProviders: ids.refresh } : {}),
    ...(ids.logout.length > 0 ? { logoutProviders: ids.logout } : {}),
  }
}

/** The session: every configuration runs it. */
export const sessionModule: FlowModule = {
  id: SESSION,
  flow: sessionFlow,
  runs: () => true,
  adapter: {
    missing: (config) => (config.session.strategy === 'database' ? 'Database session requires an adapter.' : undefined),
    methods: (config) => (config.session.strategy === 'database' ? REQUIRED_METHODS.databaseSessions : []),
  },
  routes: [
    route({
      method: 'GET',
      action: 'session',
      provider: 'none',
      actsForUser: true,
      serve: {
        flow: sessionFlow,
        params: NoInput,
        accepts: anyInput,
        toEvent: (ctx: RequestContext) => ({ type: 'session.read', at: ctx.at, policy: sessionPolicy(ctx) }),
      },
    }),
    route({
      method: 'POST',
      action: 'session',
      provider: 'none',
      csrf: true,
      failure: 'json-null',
      actsForUser: true,
      serve: {
        flow: sessionFlow,
        params: SessionUpdateBody,
        toEvent: (ctx: RequestContext, body: { data?: unknown }) => ({
          type: 'session.update',
          at: ctx.at,
          policy: sessionPolicy(ctx),
          data: body.data,
        }),
      },
    }),
    route({
      method: 'POST',
      action: 'signout',
      provider: 'none',
      csrf: true,
      callbackUrl: true,
      endsSession: true,
      serve: {
        flow: sessionFlow,
        params: NoInput,
        accepts: anyInput,
        toEvent: (ctx: RequestContext) => ({
          type: 'session.signOut',
          at: ctx.at,
          policy: sessionPolicy(ctx),
          callbackUrl: ctx.callbackUrl,
        }),
      },
    }),
  ],
}
