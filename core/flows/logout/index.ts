/**
 * OpenID Connect logout (back- and front-channel) as one module: the provider ends the sessions a
 * sign-in through it started. Its code comes with the OAuth flow (`../kinds.ts`).
 *
 * @module
 */
import type { RequestContext } from '../../config/types.js'
import { anyInput, NoInput, route, StringParams } from '../../http/params.js'
import { mediaTypeOf } from '../../http/request.js'
import type { FlowBinding } from '../../http/types.js'
import { lazyFlow, loadFlowModule } from '../kinds.js'
import type { FlowModule } from '../types.js'

const logoutFlow = lazyFlow('oauth', (module) => module.logoutFlow)

/**
 * OpenID Connect Back-Channel Logout: the provider posts `logout_token` (a form); the flow checks
 * the media type itself, so a refusal is the flow's JSON error rather than a generic 400.
 */
const backchannelLogout = {
  flow: logoutFlow,
  params: NoInput,
  accepts: anyInput,
  toEvent: (ctx: RequestContext) => {
    const token = ctx.request.body?.logout_token
    return {
      type: 'logout.backchannel',
      at: ctx.at,
      providerId: ctx.provider!.id,
      logoutToken: typeof token === 'string' ? token : null,
      mediaType: mediaTypeOf(ctx.request.headers.get('content-type')),
    }
  },
} satisfies FlowBinding<unknown>

/** OpenID Connect Front-Channel Logout: the provider's page frames this with `iss` and `sid`. */
const frontchannelLogout = {
  flow: logoutFlow,
  params: StringParams,
  toEvent: (ctx: RequestContext, query: Record<string, string>) => ({
    type: 'logout.frontchannel',
    at: ctx.at,
    providerId: ctx.provider!.id,
    iss: query.iss ?? null,
    sid: query.sid ?? null,
  }),
} satisfies FlowBinding<Record<string, string>>

/** OpenID Connect logout: run with an OpenID Connect provider. */
export const logoutModule: FlowModule = {
  id: 'logout',
  flow: logoutFlow,
  load: () => loadFlowModule('oauth'),
  runs: (config) => config.providers.some((provider) => provider.type === 'oidc'),
  routes: [
    // No CSRF token: the back-channel request comes from the provider's server and proves itself
    // with its signed Logout Token; the front-channel page ends a session only when it names the
    // provider session (`sid`) that session was signed in through, and reads that session through
    // the authority: a dead one is no one's, and nothing ends.
    route({ method: 'POST', action: 'backchannel-logout', provider: 'oidc', serve: backchannelLogout }),
    route({ method: 'GET', action: 'frontchannel-logout', provider: 'oidc', actsForUser: true, serve: frontchannelLogout }),
  ],
}
