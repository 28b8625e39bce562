/**
 * The OAuth and OpenID Connect sign-in as one module. Its code comes with its providers
 * (`../kinds.ts`): this declaration reaches it through the loaded module only, so a configuration
 * without such a provider never loads `oauth4webapi`.
 *
 * @module
 */
import type { FlowStateError } from '../../errors.js'
import { InvalidCheck } from '../../errors.js'
import type { RequestContext } from '../../config/types.js'
import { AnyBody, route, StringParams } from '../../http/params.js'
import type { FlowBinding } from '../../http/types.js'
import { flowModule, lazyFlow, loadFlowModule } from '../kinds.js'
import type { Account } from '../../types.js'
import type { FlowModule } from '../types.js'
import { REAUTHENTICATE, waitingReauthentication } from '../reauthenticate/flow.js'
import { flowCookieName } from '../../http/resting.js'
import { oauthSignInForm } from './page.js'

const oauth = () => flowModule('oauth')
const oauthSignInFlow = lazyFlow('oauth', (module) => module.oauthSignInFlow)

const oauthPolicy = (ctx: RequestContext) => ({ hasAdapter: ctx.config.adapter !== undefined })

/** The query of the sign-in request: extra authorization parameters (`prompt`, `login_hint`, …). */
const stringQuery = (ctx: RequestContext): Record<string, string> => ({ ...ctx.request.query })

const oauthStart = {
  flow: oauthSignInFlow,
  params: AnyBody,
  envelopeCookie: (ctx: RequestContext) => oauth().oauthEnvelopeCookie(ctx),
  intercept: (ctx: RequestContext) => oauth().refuseForeignCallbackUrl(ctx),
  toEvent: (ctx: RequestContext) => ({
    type: 'oauth.start',
    at: ctx.at,
    providerId: ctx.provider!.id,
    callbackUrl: ctx.callbackUrl,
    params: stringQuery(ctx),
    policy: oauthPolicy(ctx),
  }),
} satisfies FlowBinding<Record<string, unknown>>

/** The provider's answer: GET with a query, or POST (`response_mode=form_post`) with a form. */
const oauthCallback = {
  flow: oauthSignInFlow,
  params: StringParams,
  resumes: true,
  envelopeCookie: (ctx: RequestContext) => oauth().oauthEnvelopeCookie(ctx),
  intercept: (ctx: RequestContext, params: Record<string, string>) => oauth().forwardProxiedCallback(ctx, params),
  // The registered callback also brings back a re-authentication's answer: its sealed state, not
  // the query, says so.
  divert: (ctx: RequestContext, params: Record<string, string>) => waitingReauthentication(ctx, params),
  // Auth.js reports a missing or unreadable state/PKCE/nonce cookie as InvalidCheck, and
  // applications filter their logs by that type.
  refused: (ctx: RequestContext, error: Error) =>
    new InvalidCheck(`The OAuth flow could not be resumed: ${error.message}`, { provider: ctx.provider!.id, err: error as FlowStateError }),
  toEvent: (ctx: RequestContext, params: Record<string, string>) => ({
    type: 'oauth.callback',
    at: ctx.at,
    params,
  }),
} satisfies FlowBinding<Record<string, string>>

/** Whether a re-authentication is sealed in this browser (whether its answer may come to this callback). */
const mayResumeReauthentication = (ctx: RequestContext) => ctx.request.cookies[flowCookieName(ctx, REAUTHENTICATE)] !== undefined

const servesOAuth = (config: { providers: readonly { type: string }[] }) =>
  config.providers.some((provider) => provider.type === 'oauth' || provider.type === 'oidc')

/** The OAuth and OpenID Connect sign-in. */
export const oauthModule: FlowModule = {
  id: 'oauth-signin',
  flow: oauthSignInFlow,
  load: () => loadFlowModule('oauth'),
  runs: servesOAuth,
  routes: (['oauth', 'oidc'] as const).flatMap((provider) => [
    // Signed in, the sign-in links the provider's account to the user: a sensitive action, asked
    // for a recent proof before the provider is even asked (signed out, the gate lets it through).
    route({ method: 'POST', action: 'signin', provider, csrf: true, callbackUrl: true, actsForUser: true, stepUp: () => 'link-account', serve: oauthStart }),
    // No CSRF token on callbacks: the provider, not our form, sends them; the sealed flow and
    // its state/PKCE/nonce checks are what bind the callback to this browser. A new account is
    // linked to the signed-in user.
    // A re-authentication's answer ends on the page that posts the resumed action's form: it
    // needs a CSRF token (minted only when such a flow may be waiting in this browser).
    route({ method: 'GET', action: 'callback', provider, actsForUser: true, csrfToken: mayResumeReauthentication, serve: oauthCallback }),
    route({ method: 'POST', action: 'callback', provider, actsForUser: true, csrfToken: mayResumeReauthentication, serve: oauthCallback }),
  ]),
  firstFactor: {
    providerTypes: ['oauth', 'oidc'],
    amr: 'fed',
    signInForm: oauthSignInForm,
    // Loaded with its providers: only a configured first factor reaches its store.
    storeUser: (ctx, context) => oauth().storeOAuthUser(ctx, context),
    // An OpenID Connect provider may end the sessions a sign-in through it started.
    providerSessions: {
      of: (account) => oauth().providerSessionOf(account as unknown as Account),
      claims: (session) => oauth().providerSessionClaims(session),
      record: (ctx, session, issued) => oauth().recordProviderSession(ctx, session, issued),
    },
  },
}
