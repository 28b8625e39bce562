/**
 * The password flows as modules: the sign-in (a first factor), the sign-up with its address
 * verification, and the forgotten-password reset. They come with the `Password` provider, which carries them (`PROVIDER_FLOW`), so an
 * application without one links none of it.
 *
 * Every request is a POST to `/callback/<provider id>` (CSRF-checked), as the credentials
 * sign-in, and its `intent` field says which flow it starts: none (or `signin`) signs in with
 * `email` and `password`; `signup` signs up; `verify` confirms an address with the e-mailed
 * link's `token`; `forgot` asks for a reset link for `email`; `reset` sets `password` with the
 * reset link's `token`. A signed-in user's settings post to `/signin/<provider id>` with `intent`
 * `change`, `set` or `remove` (and `password`, `endOtherSessions`), behind step-up. A GET of the same path with `?intent=…` is that step's page (an e-mailed link
 * opens it, and it spends nothing).
 *
 * @module
 */
import { PASSWORD_SIGN_IN } from '../../../machines/password-signin.logic.js'
import { PASSWORD_CHANGE, PasswordChangeMode } from '../../../machines/password-change.logic.js'
import { PASSWORD_RESET } from '../../../machines/password-reset.logic.js'
import { PASSWORD_SIGN_UP } from '../../../machines/password-signup.logic.js'
import type { RequestContext } from '../../config/types.js'
import { HTML_NO_STORE_HEADERS, redirectToSignInPage } from '../../http/handlers.js'
import { is } from 'superstruct'
import { AnyBody, isObjectBody, route } from '../../http/params.js'
import { renderPasswordPage, type PasswordPageKind } from '../../pages/password.js'
import type { ResponseInternal } from '../../types.js'
import { passwordSignInForm } from './page.js'
import type { FlowModule } from '../types.js'
import { PASSWORD_METHODS } from './adapter.js'
import { PASSWORD_TYPE } from './options.js'
import { passwordSignInFlow, storePasswordUser } from './signin.js'
import { passwordChangeFlow } from './change.js'
import { passwordResetFlow } from './reset.js'
import { passwordSignUpFlow } from './signup.js'

/** A posted field as text: anything else (a list, an object) is no value. */
export const textOf = (value: unknown): string => (typeof value === 'string' ? value : '')

/** The fields the flows read themselves; the rest of a sign-up's body are the application's fields. */
const OWN_FIELDS = new Set(['email', 'password', 'name', 'intent', 'token', 'csrfToken', 'callbackUrl'])

/** What a request to the password callback asks for. */
export const PASSWORD_INTENTS = ['signin', 'signup', 'verify', 'forgot', 'reset'] as const
export type PasswordIntent = (typeof PASSWORD_INTENTS)[number]

/** What a signed-in user's request to `/signin/password` asks (`intent`), if it is a password setting. */
export const changeModeOf = (body: Record<string, unknown> | undefined): PasswordChangeMode | undefined =>
  is(body?.intent, PasswordChangeMode) ? body!.intent as PasswordChangeMode : undefined

/** The intent of a posted body (none: a sign-in). */
export const intentOf = (body: Record<string, unknown> | undefined): PasswordIntent | undefined => {
  const intent = body?.intent ?? 'signin'
  return (PASSWORD_INTENTS as readonly unknown[]).includes(intent) ? (intent as PasswordIntent) : undefined
}

const signInPageUrl = (ctx: RequestContext) => ctx.config.pages.signIn ?? `${ctx.authUrl}/signin`
const checkEmailUrl = (ctx: RequestContext) => `${ctx.authUrl}/verify-request?${new URLSearchParams({ provider: ctx.provider!.id, type: 'email' })}`

/** The flow each intent starts, and its request event. */
const INTENTS = {
  signin: {
    flow: passwordSignInFlow,
    toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
      type: 'password.signin',
      at: ctx.at,
      providerId: ctx.provider!.id,
      email: textOf(body.email),
      password: textOf(body.password),
      callbackUrl: ctx.callbackUrl,
    }),
  },
  signup: {
    flow: passwordSignUpFlow,
    toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
      type: 'password.signup',
      at: ctx.at,
      providerId: ctx.provider!.id,
      email: textOf(body.email),
      password: textOf(body.password),
      name: textOf(body.name) || null,
      fields: Object.fromEntries(Object.entries(body).filter(([key]) => !OWN_FIELDS.has(key))),
      answerUrl: checkEmailUrl(ctx),
    }),
  },
  verify: {
    flow: passwordSignUpFlow,
    toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
      type: 'password.verify',
      at: ctx.at,
      providerId: ctx.provider!.id,
      token: textOf(body.token),
      password: textOf(body.password),
      answerUrl: signInPageUrl(ctx),
    }),
  },
  forgot: {
    flow: passwordResetFlow,
    toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
      type: 'password.forgot',
      at: ctx.at,
      providerId: ctx.provider!.id,
      email: textOf(body.email),
      answerUrl: checkEmailUrl(ctx),
    }),
  },
  reset: {
    flow: passwordResetFlow,
    toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
      type: 'password.reset',
      at: ctx.at,
      providerId: ctx.provider!.id,
      token: textOf(body.token),
      password: textOf(body.password),
      answerUrl: signInPageUrl(ctx),
    }),
  },
} satisfies Record<PasswordIntent, unknown>

/** The intent of the request (an unknown one signs in, and fails there as a wrong password would not: it is refused). */
const intentFor = (ctx: RequestContext) => INTENTS[intentOf(ctx.request?.body) ?? 'signin']

/** GET on the callback: the page of the step `?intent=` names (an e-mailed link opens one). */
async function passwordPage(ctx: RequestContext): Promise<ResponseInternal> {
  const { intent, token } = ctx.request.query
  const kind: PasswordPageKind = intent === 'verify' || intent === 'reset' || intent === 'forgot' ? intent : 'signup'
  const page = renderPasswordPage({
    kind,
    theme: ctx.config.theme,
    actionUrl: `${ctx.authUrl}/callback/${ctx.provider!.id}`,
    csrfToken: ctx.csrf!.token,
    ...(token !== undefined && (kind === 'verify' || kind === 'reset') ? { token } : {}),
    callbackUrl: ctx.callbackUrl,
  })
  return {
    status: page.status,
    // A link's page holds its token in the URL: out of caches and out of any Referer header.
    headers: { ...HTML_NO_STORE_HEADERS, 'Referrer-Policy': 'no-referrer' },
    body: page.html,
    cookies: ctx.setCookies,
  }
}

const servesPasswords = (config: { providers: readonly { type: string }[] }) =>
  config.providers.some((provider) => provider.type === PASSWORD_TYPE)

/** What every password flow needs of the adapter. */
const passwordAdapterNeeds = {
  missing: () => 'The password provider requires an adapter.',
  methods: () => PASSWORD_METHODS,
}

/** The password sign-in, and the routes of every password flow. */
export const passwordSignInModule: FlowModule = {
  id: PASSWORD_SIGN_IN,
  flow: passwordSignInFlow,
  runs: servesPasswords,
  adapter: passwordAdapterNeeds,
  routes: [
    // A signed-in user's password settings (`intent` change, set or remove), behind step-up;
    // anything else has no sign-in step of its own: back to the sign-in page, as the credentials provider.
    route({
      method: 'POST',
      action: 'signin',
      provider: PASSWORD_TYPE,
      csrf: true,
      callbackUrl: true,
      actsForUser: true,
      stepUp: (ctx) => (changeModeOf(ctx.request.body) ? 'change-password' : undefined),
      serve: {
        flow: passwordChangeFlow,
        params: AnyBody,
        accepts: isObjectBody,
        intercept: async (ctx: RequestContext, body: Record<string, unknown>) => (changeModeOf(body) ? undefined : redirectToSignInPage(ctx)),
        toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
          type: 'password.change',
          at: ctx.at,
          providerId: ctx.provider!.id,
          mode: changeModeOf(body)!,
          password: textOf(body.password),
          // On unless the form says otherwise.
          endOtherSessions: body.endOtherSessions !== 'false' && body.endOtherSessions !== false,
          answerUrl: ctx.callbackUrl,
        }),
      },
    }),
    route({ method: 'GET', action: 'callback', provider: PASSWORD_TYPE, csrfToken: true, callbackUrl: true, serve: passwordPage }),
    route({
      method: 'POST',
      action: 'callback',
      provider: PASSWORD_TYPE,
      csrf: true,
      callbackUrl: true,
      serve: {
        flow: (ctx: RequestContext) => intentFor(ctx).flow,
        params: AnyBody,
        accepts: isObjectBody,
        toEvent: (ctx: RequestContext, body: Record<string, unknown>) => intentFor(ctx).toEvent(ctx, body),
      },
    }),
  ],
  firstFactor: { providerTypes: [PASSWORD_TYPE], amr: 'pwd', storeUser: storePasswordUser, signInForm: passwordSignInForm },
}

/** The password sign-up and address verification (started through the sign-in module's route). */
export const passwordSignUpModule: FlowModule = {
  id: PASSWORD_SIGN_UP,
  flow: passwordSignUpFlow,
  runs: servesPasswords,
  adapter: passwordAdapterNeeds,
}

/** The forgotten-password reset (started through the sign-in module's route). */
export const passwordResetModule: FlowModule = {
  id: PASSWORD_RESET,
  flow: passwordResetFlow,
  runs: servesPasswords,
  adapter: {
    ...passwordAdapterNeeds,
    // A reset ends every database session of the user.
    methods: (config) => [...PASSWORD_METHODS, ...(config.session.strategy === 'database' ? (['listSessions', 'deleteSession'] as const) : [])],
  },
}

/** A signed-in user's password: change, set, remove (started through the sign-in module's `/signin` route). */
export const passwordChangeModule: FlowModule = {
  id: PASSWORD_CHANGE,
  flow: passwordChangeFlow,
  runs: servesPasswords,
  adapter: passwordResetModule.adapter!,
}

/** Every password flow, as the provider carries them. */
export const passwordModules: readonly FlowModule[] = Object.freeze([passwordSignInModule, passwordSignUpModule, passwordResetModule, passwordChangeModule])
