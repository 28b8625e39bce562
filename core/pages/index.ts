/**
 * The built-in pages (sign in, sign out, verify request, error), rendered as strings. Markup,
 * texts and statuses follow Auth.js so that applications and their tests see the same pages; the
 * stylesheet is our own and nothing is loaded from third-party hosts.
 *
 * @module
 */
import type { SignInForm, SignInFormProvider, SignInPage } from '../config/types.js'
import { cssValue, escapeHtml, hiddenCsrf, isSafeImageUrl } from './html.js'
import { css } from './styles.js'
import { distinctLabels, PageFields, type LabelledField } from './fields.js'
import { CODE_MESSAGES } from './messages.js'

/** The theme of the pages (spec §2.9), with defaults applied. */
export interface PageTheme {
  colorScheme: 'auto' | 'dark' | 'light'
  logo: string
  brandColor: string
  buttonText: string
}

/** A provider on the sign-in page, with the form its flow draws for it (`firstFactor.signInForm`). */
export interface PageProvider extends SignInFormProvider {
  readonly form: SignInForm
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

/** Every field of the page's forms, with the label it would have on its own. */
function labelledFields(providers: readonly PageProvider[]): LabelledField[] {
  return providers.flatMap((provider) =>
    (provider.form.fields?.(provider) ?? []).map((field) => ({ ...field, providerId: provider.id, providerName: provider.name })),
  )
}

/** What follows the cards: each form's script once, for its providers on the page, in the order of `forms`. */
function formScripts(providers: readonly PageProvider[], forms: readonly SignInForm[], page: SignInPage): string {
  let scripts = ''
  for (const form of forms) {
    const drawn = providers.filter((provider) => provider.form === form)
    if (form.scripts && drawn.length > 0) scripts += form.scripts(drawn, page)
  }
  return scripts
}

/**
 * The sign-in page: one block per provider, drawn by its flow's form, and an error box when `error`
 * is set. Forms the user types into are set apart from the buttons by a rule, as in Auth.js.
 */
export function renderSignInPage(p: {
  theme: PageTheme
  providers: readonly PageProvider[]
  csrfToken: string
  callbackUrl?: string
  email?: string
  error?: string
  /** `<origin><basePath>`, where a form's script sends its requests (the passkey options). */
  authUrl?: string
  /** The forms in the registry's order, which their scripts follow; by default the providers' order. */
  forms?: readonly SignInForm[]
  /** Who this browser is signed in as already (their address or name), said above the forms. */
  signedInAs?: string
  /** Where "Back" leads: the page the user came from, or the site. */
  backUrl?: string
  /** The user has just signed out of every session (the sessions page's last button). */
  signedOutEverywhere?: boolean
}): RenderedPage {
  const { providers } = p
  const page: SignInPage = {
    csrfToken: p.csrfToken,
    callbackUrl: p.callbackUrl,
    email: p.email,
    authUrl: p.authUrl ?? '',
    fields: new PageFields(distinctLabels(labelledFields(providers))),
  }
  let blocks = ''
  providers.forEach((provider, i) => {
    const typed = provider.form.typed === true
    const previous = providers[i - 1]
    let block = typed && previous && previous.form.typed !== true ? '<hr>' : ''
    block += provider.form.draw(provider, page)
    if (typed && i + 1 < providers.length) block += '<hr>'
    blocks += `<div class="provider">${block}</div>`
  })
  const error = p.error ? errorBox(signInErrorMessage(p.error)) : ''
  const signedIn = p.signedInAs
    ? `<p class="muted">You are signed in as <strong class="address">${breakableAddress(p.signedInAs)}</strong>. Signing in again switches account.</p>`
    : ''
  const notice = p.signedOutEverywhere ? '<p class="notice" role="status">You are signed out of every session, this browser too.</p>' : ''
  const forms = p.forms ?? [...new Set(providers.map((provider) => provider.form))]
  return {
    status: 200,
    html: shell(
      'Sign In',
      p.theme,
      `<div class="signin">${themeStyles(p.theme)}<div class="card">${logo(p.theme)}<h1>Sign in</h1>${notice}${error}${signedIn}${blocks}${backLink(p.backUrl)}</div></div>` +
        formScripts(providers, forms, page),
    ),
  }
}

/** The error box of every built-in page: the sign-in page, the code form, the step pages. */
export function errorBox(message: string): string {
  return `<div class="error" role="alert"><p>${escapeHtml(message)}</p></div>`
}

/** "Back" to where the user came from, under a page's last button; nothing without a target. */
function backLink(url: string | undefined): string {
  return url ? `<p class="back"><a href="${escapeHtml(url)}">Back</a></p>` : ''
}

/**
 * The sign-out confirmation page; the form posts back to `actionUrl`. With `signedOut` (nobody is
 * signed in in this browser) it says so instead of asking.
 */
export function renderSignOutPage(p: {
  theme: PageTheme
  csrfToken: string
  actionUrl: string
  signedOut?: boolean
  /** Where "Back" (or "Cancel") leads: the page the user came from, or the site. */
  backUrl?: string
}): RenderedPage {
  const content = p.signedOut
    ? `<h1>Sign out</h1><p>You are not signed in.</p>${backLink(p.backUrl)}`
    : `<h1>Sign out</h1><p>Are you sure you want to sign out?</p><form action="${escapeHtml(p.actionUrl)}" method="POST">${hiddenCsrf(p.csrfToken)}<button id="submitButton" type="submit">Sign out</button></form>` +
      (p.backUrl ? `<p class="back"><a href="${escapeHtml(p.backUrl)}">Cancel</a></p>` : '')
  return {
    status: 200,
    html: shell('Sign Out', p.theme, `<div class="signout">${themeStyles(p.theme)}<div class="card">${logo(p.theme)}${content}</div></div>`),
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
  const error = form.rejected ? errorBox(CODE_MESSAGES.wrongCode) : ''
  return (
    `<hr>${error}<form action="${escapeHtml(form.actionUrl)}" method="POST">${hiddenCsrf(form.csrfToken)}` +
    '<label class="section-header" for="input-code">Or enter the code from the e-mail</label>' +
    `<input id="input-code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" minlength="${form.length}" maxlength="${form.length + 2}" autofocus required>` +
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

/**
 * A card of the built-in pages' look (theme, logo) around `content` (markup the caller escaped):
 * the pages of optional features use it without a renderer of their own in the core.
 */
export function renderCard(title: string, theme: PageTheme, content: string): string {
  return shell(title, theme, `<div class="signin">${themeStyles(theme)}<div class="card">${logo(theme)}${content}</div></div>`)
}

/**
 * The error page: 500 for Configuration, 403 for AccessDenied, Verification and a refused passkey
 * (WebAuthnVerificationError), 404 for UnknownProvider and NotFound (a path under the base path that
 * names nothing), 400 for FlowExpired, else 200.
 */
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
    UnknownProvider: {
      status: 404,
      heading: 'Sign-in option not found',
      message: '<div><p>This way of signing in does not exist here.</p><p>The link may be mistyped or out of date.</p></div>',
      after: signIn,
    },
    NotFound: {
      status: 404,
      heading: 'Page not found',
      message: '<div><p>There is no page at this address.</p><p>The link may be mistyped or out of date.</p></div>',
      after: signIn,
    },
    FlowExpired: {
      status: 400,
      heading: 'Please start again',
      message:
        '<div><p>This sign-in could not be continued.</p><p>It may have taken too long, or been started in another browser or tab.</p></div>',
      after: signIn,
    },
    WebAuthnVerificationError: {
      status: 403,
      heading: 'Unable to sign in',
      message: '<div><p>This passkey could not be verified.</p><p>Try it again, or choose another way to sign in.</p></div>',
      after: signIn,
    },
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
