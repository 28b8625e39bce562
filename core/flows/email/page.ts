/**
 * The e-mail form on the built-in sign-in page, in Auth.js's markup.
 *
 * @module
 */
import { submitButtonId } from '../../pages/fields.js'
import { escapeHtml, hiddenCsrf } from '../../pages/html.js'
import type { SignInForm } from '../types.js'

/** The address field and its button; the address the page was opened with is filled in. */
export const emailSignInForm: SignInForm = {
  typed: true,
  // Beside a passkey form's "Email", the e-mail provider's field is the one that keeps the plain label.
  fields: () => [{ field: 'email', label: 'Email', keepsLabel: true }],
  draw(provider, page) {
    const { fields } = page
    const inputId = `input-email-for-${escapeHtml(provider.id)}-provider`
    return (
      `<form action="${escapeHtml(provider.signinUrl)}" method="POST">${hiddenCsrf(page.csrfToken)}` +
      `<label class="section-header" for="${inputId}">${escapeHtml(fields.label(provider.id, 'email', 'Email'))}</label>` +
      `<input id="${fields.id(inputId, inputId)}"${fields.autofocus('email')} type="email" name="email" value="${escapeHtml(page.email ?? '')}" placeholder="email@example.com" required>` +
      `<button id="${submitButtonId(provider.id, fields)}" type="submit">Sign in with ${escapeHtml(provider.name)}</button></form>`
    )
  },
}
