/**
 * The built-in pages (sign in, sign out, verify request, error), rendered as strings. Markup,
 * texts and statuses follow Auth.js so that applications and their tests see the same pages; the
 * stylesheet is our own and nothing is loaded from third-party hosts.
 *
 * @module
 */
import { attributes, cssValue, escapeHtml, isSafeImageUrl } from './html.js'
import { css } from './styles.js'
import { flowModule } from '../flows/kinds.js'
import { distinctLabels, PageFields, passkeyFieldLabel, type LabelledField } from './fields.js'
import type { PagePasskeyProvider } from './webauthn.js'

/** The theme of the pages (spec §2.9), with defaults applied. */
export interface PageTheme {
  colorScheme: 'auto' | 'dark' | 'light'
  logo: string
  brandColor: string
  buttonText: string
}

/** A provider as the sign-in page shows it. */
export interface PageProvider {
  id: string
  name: string
  type: 'oauth' | 'oidc' | 'email' | 'credentials' | 'webauthn'
  signinUrl: string
  callbackUrl: string
  /** Credentials providers: input name → attributes (`label`, `type`, `placeholder`, …). */
  credentials?: Record<string, Record<string, unknown>>
  /** OAuth providers: button look. */
  style?: { logo?: string; bg?: string; brandColor?: string; text?: string }
  /** WebAuthn providers: input name → attributes of the passkey form. */
  formFields?: Record<string, Record<string, unknown>>
  /** WebAuthn providers: offer passkeys in the autofill of the form's fields. */
  enableConditionalUI?: boolean
  /** A registered flow's provider: its block, drawn by the flow's module (`firstFactor.signInBlock`). */
  block?: (csrfToken: string, callbackUrl: string | undefined) => string
}

/** A rendered page and its HTTP status. */
export interface RenderedPage {
  status: number
  html: string
}

function shell(title: string, theme: PageTheme, content: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><meta http-equiv="X-UA-Compatible" content="IE=edge"><meta name="viewport" content="width=device-width, initial-scale=1.0"><style>${css}</style><title>${title}</title></head><body class="__next-auth-theme-${escapeHtml(theme.colorScheme)}"><div class="page">${content}</div></body></html>`
}

function themeStyles(theme: PageTheme): string {
  let out = ''
  if (theme.brandColor) out += `<style>:root{--brand-color:${cssValue(theme.brandColor)}}</style>`
  if (theme.buttonText) out += `<style>:root{--button-text-color:${cssValue(theme.buttonText)}}</style>`
  return out
}

function logo(theme: PageTheme): string {
  return theme.logo && isSafeImageUrl(theme.logo) ? `<img src="${escapeHtml(theme.logo)}" alt="Logo" class="logo">` : ''
}

const hiddenCsrf = (csrfToken: string) =>
  `<input type="hidden" name="csrfToken" value="${escapeHtml(csrfToken)}">`

const SIGNIN_ERRORS: Record<string, string> = {
  Signin: 'Try signing in with a different account.',
  OAuthSignin: 'Try signing in with a different account.',
  // The provider sent the user back with an `error` (RFC 6749 §4.1.2.1), most often because they
  // pressed Cancel there: another account would not help.
  OAuthCallbackError: 'The sign-in was cancelled or refused at the provider. Try again, or choose another way to sign in.',
  OAuthCreateAccount: 'Try signing in with a different account.',
  EmailCreateAccount: 'Try signing in with a different account.',
  Callback: 'Try signing in with a different account.',
  OAuthAccountNotLinked:
    'To confirm your identity, sign in with the same account you used originally.',
  EmailSignin: 'The e-mail could not be sent.',
  CredentialsSignin: 'Sign in failed. Check the details you provided are correct.',
  SessionRequired: 'Please sign in to access this page.',
}

/** The message the sign-in page shows for an `error` query value. */
export function signInErrorMessage(error: string): string {
  return Object.hasOwn(SIGNIN_ERRORS, error) ? SIGNIN_ERRORS[error]! : 'Unable to sign in.'
}

const isFormProvider = (p: PageProvider) =>
  p.type === 'email' || p.type === 'credentials' || p.type === 'webauthn'
const CREDENTIAL_RESERVED = new Set(['label', 'name', 'id', 'type', 'placeholder', 'value'])

function oauthForm(p: PageProvider, csrfToken: string, callbackUrl?: string): string {
  const color = cssValue(p.style?.brandColor ?? p.style?.bg ?? '')
  const style = color ? ` style="--provider-brand-color:${escapeHtml(color)}"` : ''
  const logo = p.style?.logo
  const image = logo && isSafeImageUrl(logo) ? `<img loading="lazy" height="24" src="${escapeHtml(logo)}">` : ''
  return (
    `<form action="${escapeHtml(p.signinUrl)}" method="POST">${hiddenCsrf(csrfToken)}` +
    (callbackUrl ? `<input type="hidden" name="callbackUrl" value="${escapeHtml(callbackUrl)}">` : '') +
    `<button type="submit" class="button"${style}><span>Sign in with ${escapeHtml(p.name)}</span>${image}</button></form>`
  )
}

/** The id of a form provider's submit button: Auth.js's `submitButton` while it is unique. */
const submitButtonId = (p: PageProvider, fields: PageFields) => escapeHtml(fields.id('submitButton', `submitButton-${p.id}`))

function emailForm(p: PageProvider, csrfToken: string, fields: PageFields, email?: string): string {
  const inputId = `input-email-for-${escapeHtml(p.id)}-provider`
  return (
    `<form action="${escapeHtml(p.signinUrl)}" method="POST">${hiddenCsrf(csrfToken)}` +
    `<label class="section-header" for="${inputId}">${escapeHtml(fields.label(p.id, 'email', 'Email'))}</label>` +
    `<input id="${fields.id(inputId, inputId)}"${fields.autofocus('email')} type="email" name="email" value="${escapeHtml(email ?? '')}" placeholder="email@example.com" required>` +
    `<button id="${submitButtonId(p, fields)}" type="submit">Sign in with ${escapeHtml(p.name)}</button></form>`
  )
}

/** The label of a credentials field without one: its key, capitalised (`username` → `Username`). */
export function readableLabel(key: string): string {
  return key.charAt(0).toUpperCase() + key.slice(1)
}

const credentialLabel = (key: string, input: Record<string, unknown>) =>
  typeof input.label === 'string' ? input.label : readableLabel(key)

function credentialsForm(p: PageProvider, csrfToken: string, fields: PageFields): string {
  let inputs = ''
  for (const [key, input] of Object.entries(p.credentials ?? {})) {
    const inputId = `input-${escapeHtml(key)}-for-${escapeHtml(p.id)}-provider`
    const type = typeof input.type === 'string' ? input.type : 'text'
    const placeholder = typeof input.placeholder === 'string' ? input.placeholder : ''
    inputs +=
      `<div><label class="section-header" for="${inputId}">${escapeHtml(fields.label(p.id, key, credentialLabel(key, input)))}</label>` +
      `<input name="${escapeHtml(key)}" id="${fields.id(inputId, inputId)}" type="${escapeHtml(type)}" placeholder="${escapeHtml(placeholder)}"${fields.autofocus(type)}${attributes(input, CREDENTIAL_RESERVED)}></div>`
  }
  return (
    `<form action="${escapeHtml(p.callbackUrl)}" method="POST" data-credentials="${escapeHtml(p.id)}">${hiddenCsrf(csrfToken)}${inputs}` +
    `<button id="${submitButtonId(p, fields)}" type="submit">Sign in with ${escapeHtml(p.name)}</button></form>`
  )
}

/** Every field of the page's forms, with the label it would have on its own. */
function labelledFields(providers: readonly PageProvider[]): LabelledField[] {
  return providers.flatMap((p) => {
    const of = (field: string, label: string) => ({ providerId: p.id, providerName: p.name, providerType: p.type, field, label })
    if (p.type === 'email') return [of('email', 'Email')]
    if (p.type === 'credentials') return Object.entries(p.credentials ?? {}).map(([key, input]) => of(key, credentialLabel(key, input)))
    if (p.type === 'webauthn') return Object.entries(p.formFields ?? {}).map(([key, input]) => of(key, passkeyFieldLabel(key, input)))
    return []
  })
}

/**
 * After a wrong password the sign-in page comes back with `?error=CredentialsSignin`: the browser
 * keeps what was typed in a credentials form (never a password field) in this tab's
 * sessionStorage on submit and puts it back then, so only the password is typed again. Nothing
 * reaches the URL or the server.
 */
const KEEP_TYPED_FIELDS = `(function () {
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
})()`

/** The sign-in page: one block per provider, an error box when `error` is set. */
export function renderSignInPage(p: {
  theme: PageTheme
  providers: PageProvider[]
  csrfToken: string
  callbackUrl?: string
  email?: string
  error?: string
  /** `<origin><basePath>`, where the passkey script asks for options. */
  authUrl?: string
}): RenderedPage {
  const { providers } = p
  const fields = new PageFields(distinctLabels(labelledFields(providers)))
  const passkeys: PagePasskeyProvider[] = []
  let blocks = ''
  providers.forEach((provider, i) => {
    let block = ''
    if (provider.block) block += provider.block(p.csrfToken, p.callbackUrl)
    if (provider.type === 'oauth' || provider.type === 'oidc') {
      block += oauthForm(provider, p.csrfToken, p.callbackUrl)
    }
    const previous = providers[i - 1]
    if (isFormProvider(provider) && previous && !isFormProvider(previous)) block += '<hr>'
    if (provider.type === 'email') block += emailForm(provider, p.csrfToken, fields, p.email)
    if (provider.type === 'credentials') block += credentialsForm(provider, p.csrfToken, fields)
    if (provider.type === 'webauthn') {
      const passkey = {
        id: provider.id,
        name: provider.name,
        callbackUrl: provider.callbackUrl,
        formFields: provider.formFields ?? {},
        enableConditionalUI: provider.enableConditionalUI === true,
      }
      passkeys.push(passkey)
      block += flowModule('webauthn').passkeyForm(passkey, p.csrfToken, fields)
    }
    if (isFormProvider(provider) && i + 1 < providers.length) block += '<hr>'
    blocks += `<div class="provider">${block}</div>`
  })
  const error = p.error ? errorBox(signInErrorMessage(p.error)) : ''
  const keepTyped = providers.some((provider) => provider.type === 'credentials') ? `<script>${KEEP_TYPED_FIELDS}</script>` : ''
  return {
    status: 200,
    html: shell(
      'Sign In',
      p.theme,
      `<div class="signin">${themeStyles(p.theme)}<div class="card">${error}${logo(p.theme)}${blocks}</div></div>` +
        keepTyped +
        (passkeys.length > 0 ? flowModule('webauthn').passkeyScripts(p.authUrl ?? '', passkeys) : ''),
    ),
  }
}

/** The error box of every built-in page: the sign-in page, the code form, the step pages. */
export function errorBox(message: string): string {
  return `<div class="error" role="alert"><p>${escapeHtml(message)}</p></div>`
}

/** The sign-out confirmation page; the form posts back to `actionUrl`. */
export function renderSignOutPage(p: {
  theme: PageTheme
  csrfToken: string
  actionUrl: string
}): RenderedPage {
  return {
    status: 200,
    html: shell(
      'Sign Out',
      p.theme,
      `<div class="signout">${themeStyles(p.theme)}<div class="card">${logo(p.theme)}<h1>Sign out</h1><p>Are you sure you want to sign out?</p><form action="${escapeHtml(p.actionUrl)}" method="POST">${hiddenCsrf(p.csrfToken)}<button id="submitButton" type="submit">Sign out</button></form></div></div>`,
    ),
  }
}

/** The one-time code form of the verify-request page, for e-mail providers that send codes. */
export interface CodeForm {
  /** Where the code is posted: `<basePath>/callback/<provider id>`. */
  actionUrl: string
  csrfToken: string
  length: number
  /** The last code typed was wrong. */
  rejected: boolean
}

function codeForm(form: CodeForm): string {
  const error = form.rejected ? errorBox('That code is not right. Check the e-mail and try again.') : ''
  return (
    `<hr>${error}<form action="${escapeHtml(form.actionUrl)}" method="POST">${hiddenCsrf(form.csrfToken)}` +
    '<label class="section-header" for="input-code">Or enter the code from the e-mail</label>' +
    `<input id="input-code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" minlength="${form.length}" maxlength="${form.length + 2}" required>` +
    '<button id="submitButton" type="submit">Sign in</button></form>'
  )
}

/** The "check your email" page shown after a magic link was sent (with the code form, if any). */
export function renderVerifyRequestPage(p: { theme: PageTheme; url: URL; code?: CodeForm }): RenderedPage {
  return {
    status: 200,
    html: shell(
      'Verify Request',
      p.theme,
      `<div class="verify-request">${themeStyles(p.theme)}<div class="card">${logo(p.theme)}<h1>Check your email</h1><p>A sign in link has been sent to your email address.</p>${p.code ? codeForm(p.code) : ''}<p><a class="site" href="${escapeHtml(p.url.origin)}">${escapeHtml(p.url.host)}</a></p></div></div>`,
    ),
  }
}

/**
 * An e-mail address, escaped, that wraps only before its `@` and its dots when it does not fit on
 * a line (`<wbr>`), instead of between any two letters.
 */
export function breakableAddress(email: string): string {
  return escapeHtml(email).replace(/[@.]/g, '<wbr>$&')
}

/**
 * The page a sign-in link opens: it names the address and signs in only when its button is
 * pressed (a CSRF-checked POST), so a mail scanner that follows the link changes nothing.
 */
export function renderEmailConfirmPage(p: {
  theme: PageTheme
  csrfToken: string
  /** `<basePath>/callback/<provider id>`. */
  actionUrl: string
  email: string
  token: string
  callbackUrl: string
}): RenderedPage {
  const hidden = (name: string, value: string) =>
    `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`
  return {
    status: 200,
    html: shell(
      'Sign In',
      p.theme,
      `<div class="signin">${themeStyles(p.theme)}<div class="card">${logo(p.theme)}<h1>Sign in</h1><p>Continue as <strong class="address">${breakableAddress(p.email)}</strong>?</p>` +
        `<form action="${escapeHtml(p.actionUrl)}" method="POST">${hiddenCsrf(p.csrfToken)}${hidden('token', p.token)}${hidden('email', p.email)}${hidden('callbackUrl', p.callbackUrl)}` +
        `<button id="submitButton" type="submit"><span>Sign in as <span class="address">${breakableAddress(p.email)}</span></span></button></form></div></div>`,
    ),
  }
}

/** The error page: 500 for Configuration, 403 for AccessDenied and Verification, else 200. */
export function renderErrorPage(p: {
  theme: PageTheme
  error?: string
  url: URL
  signInUrl: string
  /** AccessDenied by an application's step: what happened, in the step's words (plain text). */
  denial?: string
}): RenderedPage {
  const signIn = `<a class="button" href="${escapeHtml(p.signInUrl)}">Sign in</a>`
  const site = `<p><a class="site" href="${escapeHtml(p.url.origin)}">${escapeHtml(p.url.host)}</a></p>`
  const views: Record<string, { status: number; heading: string; message: string; after?: string }> = {
    Configuration: {
      status: 500,
      heading: 'Server error',
      message:
        '<div><p>There is a problem with the server configuration.</p><p>Check the server logs for more information.</p></div>',
    },
    AccessDenied:
      p.denial === undefined
        ? { status: 403, heading: 'Access Denied', message: `<div><p>You do not have permission to sign in.</p><p>${signIn}</p></div>` }
        : { status: 403, heading: 'Not signed in', message: `<div><p>${escapeHtml(p.denial)}</p><p>${signIn}</p></div>` },
    Verification: {
      status: 403,
      heading: 'Unable to sign in',
      message:
        '<div><p>The sign in link is no longer valid.</p><p>It may have been used already or it may have expired.</p></div>',
      after: signIn,
    },
  }
  const view =
    p.error !== undefined && Object.hasOwn(views, p.error)
      ? views[p.error]!
      : { status: 200, heading: 'Error', message: site }
  return {
    status: view.status,
    html: shell(
      'Error',
      p.theme,
      `<div class="error">${themeStyles(p.theme)}<div class="card">${logo(p.theme)}<h1>${view.heading}</h1><div class="message">${view.message}</div>${view.after ?? ''}</div></div>`,
    ),
  }
}

/** The page frame and card parts, for pages rendered elsewhere (flow steps). */
export { hiddenCsrf, logo, shell, themeStyles }
