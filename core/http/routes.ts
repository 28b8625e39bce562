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
import { define, enums, optional, record, string, type, unknown, type Struct } from 'superstruct'
import type { AnyStateMachine, EventObject } from 'xstate'
import type { VerifiedIdentity } from '../../machines/shared/outcome.js'
import { SIGN_IN_COMPLETION } from '../../machines/signin-completion.machine.js'
import type { CookieOption } from '../cookies.js'
import { InvalidCheck, Verification, type FlowStateError } from '../errors.js'
import type { FlowDefinition } from '../engine/flow.js'
import { credentialsSignInFlow } from '../flows/credentials.js'
import { flowModule, lazyFlow } from '../flows/kinds.js'
import { sessionFlow } from '../flows/session.js'
import { totpEnrolmentFlow } from '../flows/totp-enrolment.js'
import { respondSessionsOrPage, revokeSessionsOrPage, wantsPage } from './sessions-page.js'
import { respondActivity } from '../audit/activity.js'
import { respondStepPage, respondTwoFactorPage, stepFlowOf, twoFactorAction } from './steps.js'
import type { RoutedAction } from '../actions.js'
import type { ProviderType, ResponseInternal } from '../types.js'
import type { RequestContext } from './context.js'
import { mediaTypeOf } from './request.js'
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
  /** The flow, or how to find it for this request (an application's extended flow). */
  flow: FlowDefinition<AnyStateMachine, RequestContext> | ((ctx: RequestContext) => FlowDefinition<AnyStateMachine, RequestContext>)
  /** Shape of the request input (`body` for POST, `query` for GET); a mismatch is a 400. */
  params: Struct<Params, unknown>
  /**
   * A cheaper check that accepts exactly what `params` accepts without coercion, tried first
   * (superstruct's walk is measurable on the sign-in path). When it fails, `params` decides.
   */
  accepts?: (input: unknown) => input is Params
  /** Builds the request event from the validated input. */
  toEvent: (ctx: RequestContext, params: Params) => EventObject & { at: number }
  /** Continue the flow sealed in the flow cookie instead of starting a new one (or say per request). */
  resumes?: boolean | ((ctx: RequestContext, params: Params) => boolean)
  /**
   * A step: the request event is read from the body against the events the waiting state
   * declares (`meta.step.events`), once the flow is reopened; `toEvent` is not used.
   */
  step?: boolean
  /** The cookie carrying the flow at rest; by default `<flowState name>.<machine id>`. */
  envelopeCookie?: (ctx: RequestContext) => CookieOption
  /** The error a refused envelope (missing, tampered, foreign, spent) is reported as; by default the {@link FlowStateError}. */
  refused?: (ctx: RequestContext, error: FlowStateError) => Error
  /** Runs before the flow; a response here answers the request instead (a redirect proxy hop). */
  intercept?: (ctx: RequestContext, params: Params) => Promise<ResponseInternal | undefined>
}

/** A plain handler. */
export type Handler = (ctx: RequestContext) => Promise<ResponseInternal> | ResponseInternal

/** One entry of the routing table. */
export interface Route {
  method: 'GET' | 'POST'
  action: RoutedAction
  /** `none`: the path has no provider segment; otherwise the provider's type. */
  provider: 'none' | ProviderType
  /** Require the double-submit CSRF token in the body. */
  csrf?: boolean
  /**
   * The handler hands a CSRF token to the client; a cookie is minted when missing. A function
   * decides per request (a page that shows a form only sometimes).
   */
  csrfToken?: boolean | ((ctx: RequestContext) => boolean)
  /** Resolve `callbackUrl` (body, query, then cookie) through the `redirect` callback. */
  callbackUrl?: boolean
  /** Errors answer 400 with a JSON `null` body instead of redirecting (an API route). */
  failure?: 'json-null'
  /**
   * The route acts for the signed-in user (reads who is signed in: to answer with their session,
   * link an account or passkey to them, manage their sessions or second factors). It asks the one
   * authority, `core/session/current.ts`, and with a session that has ended it acts exactly as
   * for someone signed out. A test runs every flagged route with dead sessions, and every other
   * route must not read the session at all.
   */
  actsForUser?: true
  /** Sign-out: ends whatever session the cookie names, live or not, and acts for no one. */
  endsSession?: true
  serve: FlowBinding<never> | Handler
}

const route = <P>(
  entry: Omit<Route, 'serve'> & { serve: FlowBinding<P> | Handler },
): Route => entry as Route

const SessionUpdateBody = type({ data: optional(unknown()) })
const isObjectBody = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Any object body (the credentials are the application's to check); no per-field walk. */
const AnyBody = define<Record<string, unknown>>('AnyBody', isObjectBody)
const NoInput = optional(unknown())
/** What {@link NoInput} accepts: anything (so superstruct need not walk the query). */
const anyInput = (_input: unknown): _input is unknown => true
const StringParams = record(string(), string())

const oauthPolicy = (ctx: RequestContext) => ({ hasAdapter: ctx.config.adapter !== undefined })

const signInPolicy = (ctx: RequestContext) => ({
  strategy: ctx.config.session.strategy,
  maxAge: ctx.config.session.maxAge,
  newUserUrl: ctx.config.pages.newUser ?? null,
})

/** The query of the sign-in request: extra authorization parameters (`prompt`, `login_hint`, …). */
const stringQuery = (ctx: RequestContext): Record<string, string> => ({ ...ctx.request.query })

// The OAuth, e-mail and WebAuthn flows come with their providers (./flows/kinds.ts): these routes
// reach them through the loaded module, so a configuration without such a provider never loads one.
const oauth = () => flowModule('oauth')
const email = () => flowModule('email')
const webauthn = () => flowModule('webauthn')
const oauthSignInFlow = lazyFlow('oauth', (module) => module.oauthSignInFlow)
const logoutFlow = lazyFlow('oauth', (module) => module.logoutFlow)
const emailSignInFlow = lazyFlow('email', (module) => module.emailSignInFlow)
const webauthnSignInFlow = lazyFlow('webauthn', (module) => module.webauthnSignInFlow)

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
  // Auth.js reports a missing or unreadable state/PKCE/nonce cookie as InvalidCheck, and
  // applications filter their logs by that type.
  refused: (ctx: RequestContext, error: FlowStateError) =>
    new InvalidCheck(`The OAuth flow could not be resumed: ${error.message}`, { provider: ctx.provider!.id, err: error }),
  toEvent: (ctx: RequestContext, params: Record<string, string>) => ({
    type: 'oauth.callback',
    at: ctx.at,
    params,
  }),
} satisfies FlowBinding<Record<string, string>>

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

/** An address posted to POST /signin/:provider starts an e-mail sign-in. */
const emailRequest = {
  flow: emailSignInFlow,
  params: AnyBody,
  accepts: isObjectBody,
  envelopeCookie: (ctx: RequestContext) => email().emailEnvelopeCookie(ctx),
  toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
    type: 'email.request',
    at: ctx.at,
    providerId: ctx.provider!.id,
    callbackUrl: ctx.callbackUrl,
    email: typeof body.email === 'string' ? body.email : null,
  }),
} satisfies FlowBinding<Record<string, unknown>>

const toLinkEvent = (ctx: RequestContext, input: Record<string, unknown>) => ({
  type: 'email.verifyLink',
  at: ctx.at,
  providerId: ctx.provider!.id,
  callbackUrl: ctx.callbackUrl,
  token: typeof input.token === 'string' ? input.token : '',
  email: typeof input.email === 'string' ? input.email : null,
})

/** GET on a sign-in link: the confirmation page, or (`link: 'direct'`) the sign-in itself. */
const emailLink = {
  flow: emailSignInFlow,
  params: StringParams,
  intercept: (ctx: RequestContext, params: Record<string, string>) => email().confirmLinkPage(ctx, params),
  toEvent: toLinkEvent,
} satisfies FlowBinding<Record<string, string>>

const hasCode = (_ctx: RequestContext, body: Record<string, unknown>) => typeof body.code === 'string'

/** POST from the confirmation page (`token`) or the verify-request page (`code`, resumes the flow). */
const emailVerification = {
  flow: emailSignInFlow,
  params: AnyBody,
  accepts: isObjectBody,
  envelopeCookie: (ctx: RequestContext) => email().emailEnvelopeCookie(ctx),
  resumes: hasCode,
  refused: (ctx: RequestContext, error: FlowStateError) => email().refusedCode(ctx, error),
  toEvent: (ctx: RequestContext, body: Record<string, unknown>) =>
    hasCode(ctx, body) ? { type: 'email.submitCode', at: ctx.at, code: body.code as string } : toLinkEvent(ctx, body),
} satisfies FlowBinding<Record<string, unknown>>
/**
 * The options request: `action` (register, authenticate, or none) and what `getUserInfo` reads.
 * A non-string `action` (a posted list) is no action the rules know: "Invalid action".
 */
const toWebAuthnOptions = (ctx: RequestContext, action: unknown, mayEmail: boolean) => ({
  type: 'webauthn.options',
  at: ctx.at,
  providerId: ctx.provider!.id,
  action: action === undefined ? null : typeof action === 'string' ? action : '',
  verifier: webauthn().signUpVerifier(ctx.config),
  mayEmail,
})

/** Auth.js's options request, a GET: it never sends e-mail, so it cannot start a sign-up to verify. */
const webauthnOptions = {
  flow: webauthnSignInFlow,
  params: StringParams,
  envelopeCookie: (ctx: RequestContext) => webauthn().webauthnEnvelopeCookie(ctx),
  toEvent: (ctx: RequestContext, query: Record<string, string>) => toWebAuthnOptions(ctx, query.action, false),
} satisfies FlowBinding<Record<string, string>>

/**
 * The built-in page's options request, a POST with a CSRF token (so that it may send e-mail): the
 * same decision as the GET, and a sign-up to verify sends its code. A posted `code` resumes the
 * sign-up waiting for it in the challenge cookie.
 */
const webauthnVerification = {
  flow: webauthnSignInFlow,
  params: AnyBody,
  accepts: isObjectBody,
  envelopeCookie: (ctx: RequestContext) => webauthn().webauthnEnvelopeCookie(ctx),
  resumes: hasCode,
  // As the e-mail flow reports a code without a flow to resume; a passkey-only app has no e-mail flow loaded.
  refused: (_ctx: RequestContext, error: FlowStateError) =>
    new Verification(`No sign-in waits for a code in this browser: ${error.message}`),
  toEvent: (ctx: RequestContext, body: Record<string, unknown>) =>
    hasCode(ctx, body)
      ? { type: 'webauthn.code', at: ctx.at, code: body.code as string }
      : toWebAuthnOptions(ctx, body.action, true),
} satisfies FlowBinding<Record<string, unknown>>

/** The browser's answer: `action` and `data`, the JSON of the credential it produced. */
const WebAuthnAnswer = type({ action: enums(['register', 'authenticate']), data: string() })
const webauthnAnswer = {
  flow: webauthnSignInFlow,
  params: WebAuthnAnswer,
  resumes: true,
  envelopeCookie: (ctx: RequestContext) => webauthn().webauthnEnvelopeCookie(ctx),
  toEvent: (ctx: RequestContext, body: { action: 'register' | 'authenticate'; data: string }) => ({
    type: 'webauthn.answer',
    at: ctx.at,
    ceremony: body.action,
    response: body.data,
    callbackUrl: ctx.callbackUrl,
  }),
} satisfies FlowBinding<{ action: 'register' | 'authenticate'; data: string }>

interface SessionProviderIds {
  refresh: string[]
  logout: string[]
}
const sessionProviderIdsOf = new WeakMap<object, SessionProviderIds>()

/** Ids of the providers whose tokens the session path refreshes, and those it logs out of. */
function sessionProviderIds(ctx: RequestContext): SessionProviderIds {
  let ids = sessionProviderIdsOf.get(ctx.config)
  if (!ids) {
    const { providers } = ctx.config
    ids = {
      refresh: providers.filter((p) => p.oauth?.refreshTokens).map((p) => p.id),
      logout: providers.filter((p) => p.oauth?.logout && p.type === 'oidc').map((p) => p.id),
    }
    sessionProviderIdsOf.set(ctx.config, ids)
  }
  return ids
}

const sessionPolicy = (ctx: RequestContext) => {
  const ids = sessionProviderIds(ctx)
  return {
    strategy: ctx.config.session.strategy,
    maxAge: ctx.config.session.maxAge,
    updateAge: ctx.config.session.updateAge,
    ...(ids.refresh.length > 0 ? { refreshProviders: ids.refresh } : {}),
    ...(ids.logout.length > 0 ? { logoutProviders: ids.logout } : {}),
  }
}

/** Every route the handler serves. */
export const routes: readonly Route[] = [
  route({ method: 'GET', action: 'providers', provider: 'none', serve: respondProviders }),
  route({ method: 'GET', action: 'csrf', provider: 'none', csrfToken: true, serve: respondCsrf }),
  route({
    method: 'GET',
    action: 'session',
    provider: 'none',
    actsForUser: true,
    serve: {
      flow: sessionFlow,
      params: NoInput,
      accepts: anyInput,
      toEvent: (ctx) => ({ type: 'session.read', at: ctx.at, policy: sessionPolicy(ctx) }),
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
  // Providers without a sign-in step of their own: back to the sign-in page, as Auth.js.
  ...(['credentials', 'webauthn'] as const).map((provider) =>
    route({ method: 'POST', action: 'signin', provider, csrf: true, callbackUrl: true, serve: redirectToSignInPage }),
  ),
  route({ method: 'GET', action: 'signout', provider: 'none', csrfToken: true, serve: respondSignOutPage }),
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
      accepts: isObjectBody,
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
  ...(['oauth', 'oidc'] as const).flatMap((provider) => [
    route({ method: 'POST', action: 'signin', provider, csrf: true, callbackUrl: true, serve: oauthStart }),
    // No CSRF token on callbacks: the provider, not our form, sends them; the sealed flow and
    // its state/PKCE/nonce checks are what bind the callback to this browser. A new account is
    // linked to the signed-in user.
    route({ method: 'GET', action: 'callback', provider, actsForUser: true, serve: oauthCallback }),
    route({ method: 'POST', action: 'callback', provider, actsForUser: true, serve: oauthCallback }),
  ]),
  // Logout by an OpenID Connect provider. No CSRF token: the back-channel request comes from the
  // provider's server and proves itself with its signed Logout Token; the front-channel page ends a
  // session only when it names the provider session (`sid`) that session was signed in through, and
  // reads that session through the authority: a dead one is no one's, and nothing ends.
  route({ method: 'POST', action: 'backchannel-logout', provider: 'oidc', serve: backchannelLogout }),
  route({ method: 'GET', action: 'frontchannel-logout', provider: 'oidc', actsForUser: true, serve: frontchannelLogout }),
  route({ method: 'POST', action: 'signin', provider: 'email', csrf: true, callbackUrl: true, serve: emailRequest }),
  // The link's page hands out a CSRF token; only its CSRF-checked POST spends the link. Signing in
  // as someone else ends the signed-in user's database session.
  route({ method: 'GET', action: 'callback', provider: 'email', csrfToken: true, callbackUrl: true, actsForUser: true, serve: emailLink }),
  route({ method: 'POST', action: 'callback', provider: 'email', csrf: true, callbackUrl: true, actsForUser: true, serve: emailVerification }),
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
      flow: (ctx) => stepFlowOf(ctx),
      params: AnyBody,
      accepts: isObjectBody,
      resumes: true,
      step: true,
      toEvent: () => {
        throw new TypeError('a step reads its event from the waiting state')
      },
    },
  }),
  route({ method: 'GET', action: 'two-factor', provider: 'none', csrfToken: true, actsForUser: true, serve: respondTwoFactorPage }),
  route({
    method: 'POST',
    action: 'two-factor',
    provider: 'none',
    csrf: true,
    callbackUrl: true,
    actsForUser: true,
    serve: {
      flow: totpEnrolmentFlow as never,
      params: AnyBody,
      accepts: isObjectBody,
      intercept: twoFactorAction,
      toEvent: (ctx: RequestContext) => ({ type: 'enrolment.start', at: ctx.at, callbackUrl: ctx.callbackUrl }),
    },
  }),
  // A signed-in user's sessions: the list, and revocation (CSRF-checked like every POST); a
  // browser asking for HTML gets the page, whose forms carry the token.
  route({ method: 'GET', action: 'sessions', provider: 'none', csrfToken: wantsPage, actsForUser: true, serve: respondSessionsOrPage }),
  route({ method: 'POST', action: 'sessions', provider: 'none', csrf: true, failure: 'json-null', actsForUser: true, serve: revokeSessionsOrPage }),
  // A signed-in user's own security events (read-only: no CSRF token).
  route({ method: 'GET', action: 'audit', provider: 'none', actsForUser: true, serve: respondActivity }),
  // A signed-in user's options register a passkey for them.
  route({ method: 'GET', action: 'webauthn-options', provider: 'webauthn', actsForUser: true, serve: webauthnOptions }),
  route({
    method: 'POST',
    action: 'webauthn-options',
    provider: 'webauthn',
    csrf: true,
    callbackUrl: true,
    actsForUser: true,
    serve: webauthnVerification,
  }),
  // No CSRF token, as in Auth.js: the answer must sign the challenge sealed in this browser's
  // httpOnly cookie, which only this origin's script ever read (a cross-site page can neither read
  // the options nor make an authenticator sign for our RP id), so a forged post cannot sign anyone in.
  route({ method: 'POST', action: 'callback', provider: 'webauthn', callbackUrl: true, actsForUser: true, serve: webauthnAnswer }),
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
  providerType: ProviderType | undefined,
): Route | undefined {
  const wanted = providerType ?? 'none'
  return table.find((r) => r.method === method && r.action === action && r.provider === wanted)
}
