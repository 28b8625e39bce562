/**
 * The passkey block of the built-in sign-in page: Auth.js's form (its ids, fields and the
 * `action`/`data` it posts), the code field a sign-up fills in when an e-mail provider verifies
 * its address, a button for a signed-in user to add a passkey, and the browser script that runs
 * the ceremonies with `@simplewebauthn/browser`, served inline from our own bundle.
 *
 * @module
 */
import { attributes, escapeHtml } from './html.js'
import { SIMPLEWEBAUTHN_BROWSER } from './simplewebauthn-browser.js'

/** A WebAuthn provider as the sign-in page shows it. */
export interface PagePasskeyProvider {
  id: string
  name: string
  callbackUrl: string
  formFields: Record<string, Record<string, unknown>>
  enableConditionalUI: boolean
}

const FIELD_RESERVED = new Set(['label', 'name', 'id', 'type', 'placeholder', 'value', 'data-form-field'])

/**
 * The browser side, plain ES2017 (it runs as written, untranspiled). On submit it posts the form's
 * fields with its CSRF token for options (Auth.js's rules pick register or authenticate), runs the
 * ceremony and posts `action` and `data` with the form. A sign-up whose address must be verified
 * is answered `verify-email` instead: the code field appears, and the next submit posts the code,
 * whose answer is the registration options. With conditional UI it starts an autofill assertion
 * on load; a signed-in user (per `GET /session`) sees the add-a-passkey button, which asks for
 * registration options explicitly. Both ask with a GET, which never sends e-mail.
 */
const CLIENT = `function (authUrl, providerId, conditional) {
  'use strict'
  var W = window.SimpleWebAuthnBrowser
  var form = document.getElementById(providerId + '-form')
  if (!W || !form) return
  var status = document.getElementById(providerId + '-status')
  var add = document.getElementById(providerId + '-add')
  var verify = document.getElementById(providerId + '-verify')
  var code = document.getElementById(providerId + '-code')
  var optionsUrl = authUrl + '/webauthn-options/' + encodeURIComponent(providerId)
  function say(text) { if (status) status.textContent = text }
  function fields() { return Array.prototype.slice.call(form.querySelectorAll('input[data-form-field]')) }
  function awaitCode(waiting) {
    // Disabled while hidden: the code never travels with the form's other posts.
    verify.hidden = !waiting
    code.disabled = !waiting
    if (waiting) { code.value = ''; code.focus() }
  }
  function read(res) {
    return res.json().catch(function () { return null }).then(function (body) {
      if (body && body.action === 'verify-email') {
        awaitCode(true)
        say(body.error ? body.error + ': try again.' : 'We sent a code to your e-mail address. Enter it to continue.')
        return null
      }
      // Refused on the server's error page (an expired sign-up, a missing CSRF token): show it.
      if (!body && res.redirected) { window.location.assign(res.url); return null }
      if (!res.ok || !body || !body.options) {
        awaitCode(false)
        throw new Error((body && body.error) || 'Passkey options are unavailable')
      }
      awaitCode(false)
      return body
    })
  }
  function options(action) {
    var url = new URL(optionsUrl)
    if (action) url.searchParams.set('action', action)
    return fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } }).then(read)
  }
  function posted(pairs) {
    var body = new URLSearchParams()
    body.set('csrfToken', form.elements.csrfToken.value)
    pairs.forEach(function (pair) { body.append(pair[0], pair[1]) })
    return fetch(optionsUrl, { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json' }, body: body }).then(read)
  }
  function post(action, data) {
    [['action', action], ['data', JSON.stringify(data)]].forEach(function (pair) {
      var input = document.createElement('input')
      input.type = 'hidden'
      input.name = pair[0]
      input.value = pair[1]
      form.appendChild(input)
    })
    form.submit()
  }
  function ceremony(body, autofill) {
    if (body.action === 'authenticate') {
      return W.startAuthentication({ optionsJSON: body.options, useBrowserAutofill: autofill }).then(function (answer) { post('authenticate', answer) })
    }
    return W.startRegistration({ optionsJSON: body.options }).then(function (answer) { post('register', answer) })
  }
  function fail(error) {
    // A newer ceremony (the button after autofill began) aborts the older one: not a failure.
    if (error && (error.name === 'AbortError' || error.code === 'ERROR_CEREMONY_ABORTED')) return
    say(error && error.message ? error.message : String(error))
  }
  if (!W.browserSupportsWebAuthn()) { form.style.display = 'none'; return }
  form.addEventListener('submit', function (event) {
    event.preventDefault()
    say('')
    var asked = code.disabled
      ? posted(fields().map(function (f) { return [f.name, f.value] }))
      : posted([['code', code.value.trim()]])
    asked.then(function (body) { if (body) return ceremony(body, false) }).catch(fail)
  })
  if (add) {
    fetch(authUrl + '/session', { credentials: 'same-origin' })
      .then(function (res) { return res.json() })
      .then(function (session) { if (session && session.user) add.hidden = false })
      .catch(function () {})
    add.addEventListener('click', function () {
      say('')
      options('register').then(function (body) { if (body) return ceremony(body, false) }).catch(fail)
    })
  }
  if (conditional) {
    W.browserSupportsWebAuthnAutofill().then(function (supported) {
      if (supported) return options('authenticate').then(function (body) { if (body) return ceremony(body, true) })
    }).catch(fail)
  }
}`

/** JSON for a `<script>` element: nothing in it can close the element or start a comment. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

/** The passkey form of one WebAuthn provider (Auth.js's markup, plus our add button and status line). */
export function passkeyForm(p: PagePasskeyProvider, csrfToken: string): string {
  const id = escapeHtml(p.id)
  let inputs = ''
  for (const [key, input] of Object.entries(p.formFields)) {
    const inputId = `input-${escapeHtml(key)}-for-${id}-provider`
    const label = typeof input.label === 'string' ? input.label : key
    const type = typeof input.type === 'string' ? input.type : 'text'
    const placeholder = typeof input.placeholder === 'string' ? input.placeholder : ''
    inputs +=
      `<div><label class="section-header" for="${inputId}">${escapeHtml(label)}</label>` +
      `<input name="${escapeHtml(key)}" data-form-field id="${inputId}" type="${escapeHtml(type)}" placeholder="${escapeHtml(placeholder)}"${attributes(input, FIELD_RESERVED)}></div>`
  }
  return (
    `<form action="${escapeHtml(p.callbackUrl)}" method="POST" id="${id}-form">` +
    `<input type="hidden" name="csrfToken" value="${escapeHtml(csrfToken)}">${inputs}` +
    `<div id="${id}-verify" hidden><label class="section-header" for="${id}-code">Code from the e-mail</label>` +
    `<input id="${id}-code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" disabled></div>` +
    `<button id="submitButton-${id}" type="submit">Sign in with ${escapeHtml(p.name)}</button>` +
    `<button id="${id}-add" type="button" hidden>Add a passkey to your account</button>` +
    `<p id="${id}-status" class="webauthn-status" role="status"></p></form>`
  )
}

/** The scripts: the vendored browser library once, then one client per WebAuthn provider. */
export function passkeyScripts(authUrl: string, providers: readonly PagePasskeyProvider[]): string {
  if (providers.length === 0) return ''
  const clients = providers
    .map((p) => `(${CLIENT})(${scriptJson(authUrl)}, ${scriptJson(p.id)}, ${p.enableConditionalUI === true});`)
    .join('\n')
  return `<script>${SIMPLEWEBAUTHN_BROWSER}</script><script>${clients}</script>`
}
