/**
 * The passkey (WebAuthn) sign-in and sign-up as one module. Its code, and `@simplewebauthn/server`
 * with it, comes with its providers (`../kinds.ts`): this declaration reaches it through the
 * loaded module only.
 *
 * @module
 */
import { enums, string, type } from 'superstruct'
import type { RequestContext } from '../../config/types.js'
import { Verification } from '../../errors.js'
import { redirectToSignInPage } from '../../http/handlers.js'
import { AnyBody, hasCode, isObjectBody, route, StringParams } from '../../http/params.js'
import type { FlowBinding } from '../../http/types.js'
import { REQUIRED_METHODS } from '../../session/adapter.js'
import { flowModule, lazyFlow, loadFlowModule } from '../kinds.js'
import type { FlowModule } from '../types.js'
import { webauthnSignInForm } from './page.js'

const webauthn = () => flowModule('webauthn')
const webauthnSignInFlow = lazyFlow('webauthn', (module) => module.webauthnSignInFlow)

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
  refused: (_ctx: RequestContext, error: Error) =>
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

/** The passkey sign-in. */
/** A passkey request that registers one: adding a passkey (signed in) or signing up (the gate lets that through). */
const registers = (action: unknown): 'add-passkey' | undefined => (action === 'register' ? 'add-passkey' : undefined)

export const webauthnModule: FlowModule = {
  id: 'webauthn-signin',
  flow: webauthnSignInFlow,
  // The one loader of the WebAuthn flow: this module comes with the provider presets only.
  load: () => loadFlowModule('webauthn', () => import('./flow.js')),
  runs: (config) => config.providers.some((provider) => provider.type === 'webauthn'),
  adapter: { missing: () => 'WebAuthn requires an adapter.', methods: () => REQUIRED_METHODS.webauthn },
  routes: [
    // No sign-in step of its own: back to the sign-in page, as Auth.js.
    route({ method: 'POST', action: 'signin', provider: 'webauthn', csrf: true, callbackUrl: true, serve: redirectToSignInPage }),
    // A signed-in user's options register a passkey for them.
    route({
      method: 'GET',
      action: 'webauthn-options',
      provider: 'webauthn',
      actsForUser: true,
      stepUp: (ctx) => registers(ctx.request.query.action),
      serve: webauthnOptions,
    }),
    route({
      method: 'POST',
      action: 'webauthn-options',
      provider: 'webauthn',
      csrf: true,
      callbackUrl: true,
      actsForUser: true,
      stepUp: (ctx) => (hasCode(ctx, ctx.request.body ?? {}) ? undefined : registers(ctx.request.body?.action)),
      serve: webauthnVerification,
    }),
    // No CSRF token, as in Auth.js: the answer must sign the challenge sealed in this browser's
    // httpOnly cookie, which only this origin's script ever read (a cross-site page can neither read
    // the options nor make an authenticator sign for our RP id), so a forged post cannot sign anyone in.
    route({ method: 'POST', action: 'callback', provider: 'webauthn', callbackUrl: true, actsForUser: true, serve: webauthnAnswer }),
  ],
  firstFactor: {
    providerTypes: ['webauthn'],
    amr: 'hwk',
    storeUser: (ctx, context) => webauthn().storeWebAuthnUser(ctx, context),
    signInForm: webauthnSignInForm,
  },
}
