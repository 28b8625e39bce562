/**
 * The password provider's form on the built-in sign-in page: the credentials form (address and
 * password), and the ways to the provider's own pages, sign-up and the forgotten password.
 *
 * @module
 */
import { escapeHtml } from '../../pages/html.js'
import { credentialsSignInForm } from '../credentials/page.js'
import type { SignInForm, SignInFormProvider, SignInPage } from '../types.js'

/** The GET page of an intent, keeping the `callbackUrl` the sign-in page was opened with. */
function intentPage(provider: SignInFormProvider, page: SignInPage, intent: 'signup' | 'forgot'): string {
  const url = new URL(provider.callbackUrl)
  url.searchParams.set('intent', intent)
  if (page.callbackUrl) url.searchParams.set('callbackUrl', page.callbackUrl)
  return url.href
}

/** The password sign-in form, with links to create an account and to reset a forgotten password. */
export const passwordSignInForm: SignInForm = {
  ...credentialsSignInForm,
  draw: (provider, page) =>
    credentialsSignInForm.draw(provider, page) +
    `<p class="password-links"><a href="${escapeHtml(intentPage(provider, page, 'signup'))}">Create an account</a>` +
    ` · <a href="${escapeHtml(intentPage(provider, page, 'forgot'))}">Forgot your password?</a></p>`,
}
