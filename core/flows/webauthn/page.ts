/**
 * The passkey form on the built-in sign-in page. Its markup and the browser script (with
 * `@simplewebauthn/browser`) come with the WebAuthn flow's code, loaded only when a passkey provider
 * is configured (`../kinds.ts`): this declaration reaches them through the loaded module.
 *
 * @module
 */
import { passkeyFieldLabel } from '../../pages/fields.js'
import type { PagePasskeyProvider } from '../../pages/webauthn.js'
import { flowModule } from '../kinds.js'
import type { SignInForm, SignInFormProvider } from '../types.js'

/** Input name → attributes of the passkey form, as the provider configures them. */
type FormFields = Record<string, Record<string, unknown>>

const passkeyOf = (provider: SignInFormProvider): PagePasskeyProvider => ({
  id: provider.id,
  name: provider.name,
  callbackUrl: provider.callbackUrl,
  formFields: (provider.config.formFields ?? {}) as FormFields,
  enableConditionalUI: provider.config.enableConditionalUI === true,
})

/** The passkey form of a WebAuthn provider that configures its fields (one without has none on the page). */
export const webauthnSignInForm: SignInForm = {
  shows: (provider) => Boolean(provider.config.formFields),
  typed: true,
  fields: (provider) =>
    Object.entries((provider.config.formFields ?? {}) as FormFields).map(([key, input]) => ({ field: key, label: passkeyFieldLabel(key, input) })),
  draw: (provider, page) => flowModule('webauthn').passkeyForm(passkeyOf(provider), page.csrfToken, page.fields),
  scripts: (providers, page) => flowModule('webauthn').passkeyScripts(page.authUrl, providers.map(passkeyOf)),
}
