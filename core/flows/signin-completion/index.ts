/**
 * The sign-in completion as one module: every first factor hands its verified user to it; it alone
 * runs the `signIn` callback, the second-factor gate and the application's steps, and issues the
 * session. Its pages are the steps its waiting states declare.
 *
 * @module
 */
import { SIGN_IN_COMPLETION, SignInCompletionContext } from '../../../machines/signin-completion.logic.js'
import { secondFactorPage } from '../../pages/steps.js'
import type { FlowModule } from '../types.js'
import { signInCompletionFlow } from './flow.js'

const CORE_FIELDS = new Set(Object.keys(SignInCompletionContext.schema))

/**
 * The sign-in completion as built in; a configuration runs it with the application's extensions
 * (`config.flows` holds that one, built once when the config is loaded).
 */
export const signInCompletionModule: FlowModule = {
  id: SIGN_IN_COMPLETION,
  flow: signInCompletionFlow,
  runs: (config) => config.providers.length > 0,
  steps: {
    pages: { 'second-factor': secondFactorPage },
    // An extension's page sees the extension's own fields, never the core's (tokens, claims).
    view: (_ctx, context) => Object.fromEntries(Object.entries(context).filter(([key]) => !CORE_FIELDS.has(key))),
  },
}
