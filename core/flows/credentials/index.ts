/**
 * The credentials flow as one module: the application's `authorize` checks what the user typed.
 *
 * @module
 */
import { CREDENTIALS_SIGN_IN } from '../../../machines/credentials-signin.logic.js'
import { redirectToSignInPage } from '../../http/handlers.js'
import { AnyBody, isObjectBody, route } from '../../http/params.js'
import type { RequestContext } from '../../config/types.js'
import { REQUIRED_METHODS } from '../../session/adapter.js'
import type { FlowModule } from '../types.js'
import { credentialsSignInFlow, storeCredentialsUser } from './flow.js'
import { credentialsSignInForm } from './page.js'

const servesCredentials = (config: { providers: readonly { type: string }[] }) =>
  config.providers.some((provider) => provider.type === 'credentials')

/** The credentials sign-in. */
export const credentialsModule: FlowModule = {
  id: CREDENTIALS_SIGN_IN,
  flow: credentialsSignInFlow,
  runs: servesCredentials,
  adapter: {
    // A database session finds (or creates and links) the user through the credentials account.
    methods: (config) => (config.session.strategy === 'database' ? REQUIRED_METHODS.credentialsDatabaseSessions : []),
  },
  routes: [
    // No sign-in step of its own: back to the sign-in page, as Auth.js.
    route({ method: 'POST', action: 'signin', provider: 'credentials', csrf: true, callbackUrl: true, serve: redirectToSignInPage }),
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
        toEvent: (ctx: RequestContext, body: Record<string, unknown>) => ({
          type: 'credentials.submit',
          at: ctx.at,
          providerId: ctx.provider!.id,
          credentials: body,
          callbackUrl: ctx.callbackUrl,
          policy: { strategy: ctx.config.session.strategy, maxAge: ctx.config.session.maxAge },
        }),
      },
    }),
  ],
  firstFactor: { providerTypes: ['credentials'], amr: 'pwd', storeUser: storeCredentialsUser, signInForm: credentialsSignInForm },
}
