/**
 * The e-mail sign-in (a link or a one-time code) as one module. Its code comes with its providers
 * (`../kinds.ts`): this declaration reaches it through the loaded module only.
 *
 * @module
 */
import type { FlowStateError } from '../../errors.js'
import type { RequestContext } from '../../config/types.js'
import { AnyBody, hasCode, isObjectBody, route, StringParams } from '../../http/params.js'
import type { FlowBinding } from '../../http/types.js'
import { REQUIRED_METHODS } from '../../session/adapter.js'
import { flowModule, lazyFlow, loadFlowModule } from '../kinds.js'
import type { FlowModule } from '../types.js'
import { emailSignInForm } from './page.js'

const email = () => flowModule('email')
const emailSignInFlow = lazyFlow('email', (module) => module.emailSignInFlow)

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

/** POST from the confirmation page (`token`) or the verify-request page (`code`, resumes the flow). */
const emailVerification = {
  flow: emailSignInFlow,
  params: AnyBody,
  accepts: isObjectBody,
  envelopeCookie: (ctx: RequestContext) => email().emailEnvelopeCookie(ctx),
  resumes: hasCode,
  refused: (ctx: RequestContext, error: Error) => email().refusedCode(ctx, error as FlowStateError),
  toEvent: (ctx: RequestContext, body: Record<string, unknown>) =>
    hasCode(ctx, body) ? { type: 'email.submitCode', at: ctx.at, code: body.code as string } : toLinkEvent(ctx, body),
} satisfies FlowBinding<Record<string, unknown>>
/** The e-mail sign-in. */
export const emailModule: FlowModule = {
  id: 'email-signin',
  flow: emailSignInFlow,
  load: () => loadFlowModule('email'),
  runs: (config) => config.providers.some((provider) => provider.type === 'email'),
  adapter: { missing: () => 'Email login requires an adapter.', methods: () => REQUIRED_METHODS.emailSignIn },
  routes: [
    route({ method: 'POST', action: 'signin', provider: 'email', csrf: true, callbackUrl: true, serve: emailRequest }),
    // The link's page hands out a CSRF token; only its CSRF-checked POST spends the link. Signing in
    // as someone else ends the signed-in user's database session.
    route({ method: 'GET', action: 'callback', provider: 'email', csrfToken: true, callbackUrl: true, actsForUser: true, serve: emailLink }),
    route({ method: 'POST', action: 'callback', provider: 'email', csrf: true, callbackUrl: true, actsForUser: true, serve: emailVerification }),
  ],
  firstFactor: {
    providerTypes: ['email'],
    amr: 'email',
    storeUser: (ctx, context) => email().storeEmailUser(ctx, context),
    signInForm: emailSignInForm,
  },
}
