/**
 * The credentials form on the built-in sign-in page, in Auth.js's markup: one input per configured
 * credential, with its attributes.
 *
 * @module
 */
import { submitButtonId } from '../../pages/fields.js'
import { attributes, escapeHtml, hiddenCsrf } from '../../pages/html.js'
import { inlineScript } from '../../pages/policy.js'
import type { SignInForm, SignInFormProvider } from '../types.js'

/** Input name → attributes (`label`, `type`, `placeholder`, …), as the provider configures them. */
type CredentialInputs = Record<string, Record<string, unknown>>

const CREDENTIAL_RESERVED = new Set(['label', 'name', 'id', 'type', 'placeholder', 'value'])

const inputsOf = (provider: SignInFormProvider) => (provider.config.credentials ?? {}) as CredentialInputs

/** The label of a credentials field without one: its key, capitalised (`username` → `Username`). */
function readableLabel(key: string): string {
  return key.charAt(0).toUpperCase() + key.slice(1)
}

const credentialLabel = (key: string, input: Record<string, unknown>) =>
  typeof input.label === 'string' ? input.label : readableLabel(key)

/**
 * After a wrong password the sign-in page comes back with `?error=CredentialsSignin`: the browser
 * keeps what was typed in a credentials form (never a password field) in this tab's
 * sessionStorage on submit and puts it back then, so only the password is typed again. Nothing
 * reaches the URL or the server.
 */
const KEEP_TYPED_FIELDS = inlineScript(`(function () {
  'use strict'
  var KEY = 'authchart.signin.typed'
  var saved = null
  try { saved = JSON.parse(sessionStorage.getItem(KEY) || 'null'); sessionStorage.removeItem(KEY) } catch (e) { saved = null }
  var failed = new URLSearchParams(location.search).get('error') === 'CredentialsSignin'
  var keep = function (input) { return ['text', 'email', 'tel', 'url', 'search'].indexOf(input.type) !== -1 }
  Array.prototype.forEach.call(document.querySelectorAll('form[data-credentials]'), function (form) {
    var inputs = Array.prototype.filter.call(form.querySelectorAll('input[name]'), keep)
    form.addEventListener('submit', function () {
      var values = {}
      inputs.forEach(function (input) { values[input.name] = input.value })
      try { sessionStorage.setItem(KEY, JSON.stringify({ provider: form.getAttribute('data-credentials'), values: values })) } catch (e) {}
    })
    if (!failed || !saved || saved.provider !== form.getAttribute('data-credentials')) return
    inputs.forEach(function (input) {
      if (typeof saved.values[input.name] === 'string') input.value = saved.values[input.name]
    })
    var empty = Array.prototype.filter.call(form.querySelectorAll('input[name]:not([type=hidden])'), function (input) { return !input.value })[0]
    if (empty) empty.focus()
  })
})()`)

/** The form of a credentials provider that configures its inputs (one without has none on the page). */
export const credentialsSignInForm: SignInForm = {
  shows: (provider) => Boolean(provider.config.credentials),
  typed: true,
  fields: (provider) => Object.entries(inputsOf(provider)).map(([key, input]) => ({ field: key, label: credentialLabel(key, input) })),
  draw(provider, page) {
    const { fields } = page
    let inputs = ''
    for (const [key, input] of Object.entries(inputsOf(provider))) {
      const inputId = `input-${escapeHtml(key)}-for-${escapeHtml(provider.id)}-provider`
      const type = typeof input.type === 'string' ? input.type : 'text'
      const placeholder = typeof input.placeholder === 'string' ? input.placeholder : ''
      inputs +=
        `<div><label class="section-header" for="${inputId}">${escapeHtml(fields.label(provider.id, key, credentialLabel(key, input)))}</label>` +
        `<input name="${escapeHtml(key)}" id="${fields.id(inputId, inputId)}" type="${escapeHtml(type)}" placeholder="${escapeHtml(placeholder)}"${fields.autofocus(type)}${attributes(input, CREDENTIAL_RESERVED)}></div>`
    }
    return (
      `<form action="${escapeHtml(provider.callbackUrl)}" method="POST" data-credentials="${escapeHtml(provider.id)}">${hiddenCsrf(page.csrfToken)}${inputs}` +
      `<button id="${submitButtonId(provider.id, fields)}" type="submit">Sign in with ${escapeHtml(provider.name)}</button></form>`
    )
  },
  scripts: () => `<script>${KEEP_TYPED_FIELDS}</script>`,
}
