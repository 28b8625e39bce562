/**
 * The pages of step-up re-authentication: "Confirm it's you to <action>" with one form per factor
 * the user can prove, and the page that resumes the action afterwards. Every value is escaped on
 * its way in.
 *
 * @module
 */
import type { StepPage } from '../extensions.js'
import { escapeHtml } from './html.js'
import { inlineScript } from './policy.js'
import { errorBox, hiddenCsrf } from './index.js'
import { flowModule } from '../flows/kinds.js'
import { stepForm } from './steps.js'

/** A field of the credentials form, as the page asks for it. */
export interface CredentialField {
  name: string
  label: string
  type: string
}

const PROOF_ERRORS: Record<string, string> = {
  WrongProof: 'That did not work. Check it and try again.',
  TooManyAttempts: 'Too many wrong codes were entered for this account. Wait a minute, then try again.',
  NotSent: 'The e-mail could not be sent. Try again later, or confirm another way.',
  Throttled: 'Too many e-mails were sent to this address. Wait a few minutes, or confirm another way.',
}

function passwordForm(view: Parameters<StepPage>[0], fields: readonly CredentialField[]): string {
  const inputs = fields
    .map((field, index) => {
      const id = `reauth-${escapeHtml(field.name)}`
      const autocomplete = field.type === 'password' ? 'current-password' : 'username'
      return (
        `<label for="${id}">${escapeHtml(field.label)}</label>` +
        `<input id="${id}" name="${escapeHtml(field.name)}" type="${escapeHtml(field.type)}" autocomplete="${autocomplete}" required${index === 0 ? ' autofocus' : ''}>`
      )
    })
    .join('')
  return stepForm(view, inputs, 'Confirm with your password', 'reauth.password')
}

const codeForm = (view: Parameters<StepPage>[0]) =>
  stepForm(
    view,
    `<label for="reauth-code">Code from your authenticator app, or a backup code</label><input id="reauth-code" name="code" type="text" inputmode="text" autocomplete="one-time-code" required spellcheck="false" maxlength="24">`,
    'Confirm with a code',
    'reauth.code',
  )

function emailForm(view: Parameters<StepPage>[0]): string {
  const to = escapeHtml(String(view.data.maskedEmail ?? 'your e-mail address'))
  const send = stepForm(view, '', view.data.emailSent ? `Send another code to ${String(view.data.maskedEmail ?? 'your e-mail address')}` : `Send a code to ${String(view.data.maskedEmail ?? 'your e-mail address')}`, 'reauth.sendEmailCode', view.data.emailSent ? 'secondary' : 'primary')
  if (!view.data.emailSent) return send
  return (
    `<p>We sent a code to ${to}.</p>` +
    stepForm(
      view,
      `<label for="reauth-email-code">Code from the e-mail</label><input id="reauth-email-code" name="code" type="text" inputmode="text" autocomplete="one-time-code" required spellcheck="false" maxlength="24">`,
      'Confirm with the e-mailed code',
      'reauth.emailCode',
    ) +
    send
  )
}

/**
 * The passkey form's script, plain ES2017: asks this flow for assertion options (a CSRF-checked
 * POST of `reauth.passkeyOptions`), lets the browser ask the authenticator, and posts the answer
 * with the form. Errors reach the user as a sentence, never the browser's own text.
 */
const PASSKEY_CLIENT = inlineScript(`(function () {
  'use strict'
  var W = window.SimpleWebAuthnBrowser
  var form = document.getElementById('reauth-passkey')
  if (!W || !form) return
  var status = document.getElementById('reauth-passkey-status')
  var answer = form.querySelector('input[name=response]')
  function say(text) { status.textContent = text }
  form.addEventListener('submit', function (event) {
    if (answer.value) return
    event.preventDefault()
    say('')
    var body = new URLSearchParams()
    body.append('csrfToken', form.querySelector('input[name=csrfToken]').value)
    body.append('event', 'reauth.passkeyOptions')
    fetch(form.action, { method: 'POST', body: body, credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (res) { return res.ok ? res.json() : null })
      .then(function (asked) {
        if (!asked || !asked.options) throw new Error('options')
        return W.startAuthentication({ optionsJSON: asked.options })
      })
      .then(function (credential) {
        answer.value = JSON.stringify(credential)
        form.submit()
      })
      .catch(function () { say('The passkey could not be used. Try again, or confirm another way.') })
  })
})()`)

/** The passkey form: the script fills in the authenticator's answer and posts it. */
function passkeyForm(view: Parameters<StepPage>[0]): string {
  return (
    `<form id="reauth-passkey" action="${escapeHtml(view.action)}" method="POST">${hiddenCsrf(view.csrfToken)}` +
    `<input type="hidden" name="event" value="reauth.passkey"><input type="hidden" name="response" value="">` +
    `<button type="submit">Confirm with a passkey</button><p id="reauth-passkey-status" role="status"></p></form>` +
    // The browser library comes with the WebAuthn module, loaded whenever a passkey can be offered.
    `<script>${flowModule('webauthn').SIMPLEWEBAUTHN_BROWSER}</script><script>${PASSKEY_CLIENT}</script>`
  )
}

/** "Continue with <Provider>": one form per OpenID provider the user's account is linked to. */
function providerForms(view: Parameters<StepPage>[0]): string[] {
  const providers = (view.data.providers as { id: string; name: string }[] | undefined) ?? []
  return providers.map((provider) =>
    stepForm(view, `<input type="hidden" name="provider" value="${escapeHtml(provider.id)}">`, `Continue with ${provider.name}`, 'reauth.federated', 'secondary'),
  )
}

/** "Confirm it's you to <action>": the factors the user can prove, one form each. */
export const reauthenticatePage: StepPage = (view) => {
  const label = String(view.data.actionLabel ?? 'continue')
  const factors = (view.data.factors as string[] | undefined) ?? []
  const fields = (view.data.credentialFields as CredentialField[] | undefined) ?? []
  const error = view.error ? errorBox(PROOF_ERRORS[view.error] ?? 'That did not work. Try again.') : ''
  const forms = [
    ...(factors.includes('hwk') ? [passkeyForm(view)] : []),
    ...(factors.includes('otp') ? [codeForm(view)] : []),
    ...(factors.includes('email') ? [emailForm(view)] : []),
    ...(factors.includes('pwd') ? [passwordForm(view, fields)] : []),
    ...(factors.includes('fed') ? providerForms(view) : []),
  ]
  return {
    title: `Confirm it's you`,
    html:
      `<h1>Confirm it's you to ${escapeHtml(label)}</h1>${error}` +
      `<p>${view.user?.email ? `Signed in as ${escapeHtml(view.user.email)}. ` : ''}Prove one of these again to go on.</p>` +
      forms.join('<hr>'),
  }
}

const RESUME_SCRIPT = inlineScript("document.getElementById('resume').submit()")

/**
 * The page that resumes a form the proof interrupted: the same form, the fields it carried (never
 * a secret) and a fresh CSRF token, posted once by the browser (or by the button, without script).
 */
export function resumeForm(url: string, fields: Record<string, string>, csrfToken: string, label: string): string {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('')
  return (
    `<h1>Confirmed</h1><p>Going on to ${escapeHtml(label)}…</p>` +
    `<form id="resume" action="${escapeHtml(url)}" method="POST">${hiddenCsrf(csrfToken)}${hidden}<button type="submit">Continue</button></form>` +
    `<script>${RESUME_SCRIPT}</script>`
  )
}
