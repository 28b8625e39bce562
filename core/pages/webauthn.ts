/**
 * The passkey block of the built-in sign-in page: Auth.js's form (its ids, fields and the
 * `action`/`data` it posts), the code field a sign-up fills in when an e-mail provider verifies
 * its address, a button for a signed-in user to add a passkey, and the browser script that runs
 * the ceremonies with `@simplewebauthn/browser`, served inline from our own bundle.
 *
 * @module
 */
import { attributes, escapeHtml } from './html.js'
import type { SignInPageFields } from '../config/types.js'
import { PageFields, passkeyFieldLabel } from './fields.js'
import { CODE_MESSAGES } from './messages.js'
import { inlineScript } from './policy.js'
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
 * registration options explicitly (and, once registered, stays on the page and says so). Both ask
 * with a GET, which never sends e-mail. Errors reach the user as sentences, never the browser's own
 * text (which names the spec, not the problem).
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
  // The server's refusals of an options request or a code, as sentences.
  function serverSentence(error) {
    if (error === 'Invalid code') return ${JSON.stringify(CODE_MESSAGES.wrongCode)}
    if (error === 'The code is no longer valid') return 'That code is no longer valid. Enter your e-mail address again for a new one.'
    if (error === 'The e-mail could not be sent') return 'The e-mail could not be sent. Try again later, or sign in another way.'
    if (error === 'Email verification required') return 'Enter the code we sent to your e-mail address.'
    return 'Passkeys are not available right now. Try again, or sign in another way.'
  }
  // What went wrong, as a sentence: the browser's own text names the spec, not the problem.
  function sentence(error) {
    var name = error && error.name
    var code = error && error.code
    if (name === 'OptionsUnavailable') return serverSentence(error.serverError)
    if (code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED' || name === 'InvalidStateError') {
      return 'This device already has a passkey for your account.'
    }
    if (name === 'NotAllowedError') return 'The passkey request was cancelled or timed out. Try again when you are ready.'
    if (name === 'SecurityError' || code === 'ERROR_INVALID_DOMAIN' || code === 'ERROR_INVALID_RP_ID') {
      return 'Passkeys do not work at this address. Open the site at its usual address and try again.'
    }
    if (name === 'NotSupportedError' || name === 'ConstraintError') {
      return 'This device cannot make the kind of passkey this site needs. Try another device, or sign in another way.'
    }
    return 'The passkey could not be used. Try again, or sign in another way.'
  }
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
        say(body.error ? serverSentence(body.error) : 'We sent a code to your e-mail address. Enter it to continue.')
        return null
      }
      // Refused on the server's error page (an expired sign-up, a missing CSRF token): show it.
      if (!body && res.redirected) { window.location.assign(res.url); return null }
      // Adding a passkey with an old proof: confirm it is you first, then back here to add it.
      if (res.status === 401 && body && body.error === 'insufficient_user_authentication' && body.url) {
        window.location.assign(body.url)
        return null
      }
      if (!res.ok || !body || !body.options) {
        awaitCode(false)
        var unavailable = new Error('Passkey options are unavailable')
        unavailable.name = 'OptionsUnavailable'
        unavailable.serverError = body && body.error
        throw unavailable
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
  // A signed-in user adding a passkey stays on the page and is told it worked: the answer is
  // posted from the script (the redirect comes back as JSON); an error or a further step opens its page.
  function addPasskey(body) {
    return W.startRegistration({ optionsJSON: body.options }).then(function (answer) {
      var answerFields = new URLSearchParams()
      Array.prototype.forEach.call(form.querySelectorAll('input[type=hidden]'), function (input) { answerFields.append(input.name, input.value) })
      answerFields.set('action', 'register')
      answerFields.set('data', JSON.stringify(answer))
      return fetch(form.action, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Auth-Return-Redirect': '1' },
        body: answerFields,
      })
    }).then(function (res) {
      return res.json().catch(function () { return null }).then(function (answer) {
        var next = answer && typeof answer.url === 'string' ? new URL(answer.url, location.href) : null
        if (!res.ok || !next) throw new Error('The passkey answer was not accepted')
        if (next.searchParams.has('error') || next.pathname.indexOf('/step/') !== -1) { location.assign(next.href); return }
        say('Passkey added. You can sign in with it from now on.')
      })
    })
  }
  function fail(error) {
    // A newer ceremony (the button after autofill began) aborts the older one: not a failure.
    if (error && (error.name === 'AbortError' || error.code === 'ERROR_CEREMONY_ABORTED')) return
    say(sentence(error))
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
      options('register').then(function (body) { if (body) return addPasskey(body) }).catch(fail)
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

/** The passkey form of one WebAuthn provider (Auth.js's markup, plus our code field, add button and status line). */
export function passkeyForm(p: PagePasskeyProvider, csrfToken: string, fields: SignInPageFields = new PageFields()): string {
  const id = escapeHtml(p.id)
  let inputs = ''
  for (const [key, input] of Object.entries(p.formFields)) {
    const inputId = `input-${escapeHtml(key)}-for-${id}-provider`
    const type = typeof input.type === 'string' ? input.type : 'text'
    const placeholder = typeof input.placeholder === 'string' ? input.placeholder : ''
    inputs +=
      `<div><label class="section-header" for="${inputId}">${escapeHtml(fields.label(p.id, key, passkeyFieldLabel(key, input)))}</label>` +
      `<input name="${escapeHtml(key)}" data-form-field id="${fields.id(inputId, inputId)}" type="${escapeHtml(type)}" placeholder="${escapeHtml(placeholder)}"${fields.autofocus(type)}${attributes(input, FIELD_RESERVED)}></div>`
  }
  return (
    `<form action="${escapeHtml(p.callbackUrl)}" method="POST" id="${fields.id(`${id}-form`, `${id}-form`)}">` +
    `<input type="hidden" name="csrfToken" value="${escapeHtml(csrfToken)}">${inputs}` +
    `<div id="${fields.id(`${id}-verify`, `${id}-verify`)}" hidden><label class="section-header" for="${id}-code">Code from the e-mail</label>` +
    `<input id="${fields.id(`${id}-code`, `${id}-code`)}" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" disabled></div>` +
    `<button id="${fields.id(`submitButton-${id}`, `submitButton-${id}`)}" type="submit">Sign in with ${escapeHtml(p.name)}</button>` +
    `<button id="${fields.id(`${id}-add`, `${id}-add`)}" type="button" hidden>Add a passkey to your account</button>` +
    `<p id="${fields.id(`${id}-status`, `${id}-status`)}" class="webauthn-status" role="status"></p></form>`
  )
}

/** The id of the data block that tells {@link CLIENTS} which providers to run for. */
const CLIENTS_DATA_ID = 'authchart-passkey-clients'

/**
 * The clients, one script for every page: it runs {@link CLIENT} for each `[authUrl, provider id,
 * conditional UI]` of the page's data block. The script is a constant so that the page policy
 * allows it by one hash; what varies per page is data, which the browser never runs.
 */
const CLIENTS = inlineScript(
  `(function () { var data = document.getElementById('${CLIENTS_DATA_ID}'); if (!data) return; JSON.parse(data.textContent).forEach(function (client) { (${CLIENT})(client[0], client[1], client[2] === true) }) })()`,
)
const BROWSER_LIBRARY = inlineScript(SIMPLEWEBAUTHN_BROWSER)

/** The scripts: the vendored browser library once, then the clients over one data block per page. */
export function passkeyScripts(authUrl: string, providers: readonly PagePasskeyProvider[]): string {
  if (providers.length === 0) return ''
  const clients = providers.map((p) => [authUrl, p.id, p.enableConditionalUI === true])
  return (
    `<script type="application/json" id="${CLIENTS_DATA_ID}">${scriptJson(clients)}</script>` +
    `<script>${BROWSER_LIBRARY}</script><script>${CLIENTS}</script>`
  )
}
