/**
 * The password flows as modules: the sign-in (a first factor). They come with the `Password`
 * provider, which carries them (`PROVIDER_FLOW`), so an application without one links none of it.
 *
 * Every request is a POST to `/callback/<provider id>` (CSRF-checked), as the credentials
 * sign-in: the body's `email` and `password` sign in.
 *
 * @module
 */
import { PASSWORD_SIGN_IN } from '../../../machines/password-signin.logic.js'
import type { RequestContext } from '../../config/types.js'
import { redirectToSignInPage } from '../../http/handlers.js'
import { AnyBody, isObjectBody, route } from '../../http/params.js'
import { credentialsSignInForm } from '../credentials/page.js'
import type { FlowModule } from '../types.js'
import { PASSWORD_METHODS } from './adapter.js'
import { PASSWORD_TYPE } from './options.js'
import { passwordSignInFlow, storePasswordUser } from './signin.js'

/** A posted field as text: anything else (a list, an object) is no value. */
export const textOf = (value: unknown): string => (typeof value === 'string' ? value : '')

const servesPasswords = (config: { providers: readonly { type: string }[] }) =>
  config.providers.some((provider) => provider.type === PASSWORD_TYPE)

/** What every password flow needs of the adapter. */
const passwordAdapterNeeds = {
  missing: () => 'The password provider requires an adapter.',
  methods: () => PASSWORD_METHODS,
}

/** The password sign-in. */
export const passwordSignInModule: FlowModule = {
  id: PASSWORD_SIGN_IN,
  flow: passwordSignInFlow,
  runs: servesPasswords,
  adapter: passwordAdapterNeeds,
  routes: [
    // No sign-in step of its own: back to the sign-in page, as the credentials provider.
    route({ method: 'POST', action: 'signin', provider: PASSWORD_TYPE, csrf: true, callbackUrl: true, serve: redirectToSignInPage }),
    route({
      method: 'POST',
      action: 'callback',
      provider: PASSWORD_TYPE,
      csrf: true,
      callbackUrl: true,
      serve: {
        flow: passwordSignInFlow,
        params: AnyBody,
        accepts: isObjectBody,
        toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
          type: 'password.signin',
          at: ctx.at,
          providerId: ctx.provider!.id,
          email: textOf(body.email),
          password: textOf(body.password),
          callbackUrl: ctx.callbackUrl,
        }),
      },
    }),
  ],
  firstFactor: { providerTypes: [PASSWORD_TYPE], amr: 'pwd', storeUser: storePasswordUser, signInForm: credentialsSignInForm },
}

/** Every password flow, as the provider carries them. */
export const passwordModules: readonly FlowModule[] = Object.freeze([passwordSignInModule])
