/**
 * The built-in pages of the password flows, on the card style of the step pages: the sign-up
 * form, the forgotten-password form, and the pages the e-mailed links open. A link's page changes
 * nothing: its form posts the token back (with the CSRF token), so a mail scanner or a link
 * preview that fetches it spends nothing.
 *
 * @module
 */
import { escapeHtml, hiddenCsrf } from './html.js'
import { renderCardPage } from './steps.js'
import type { RenderedPage } from './index.js'

/** What the password pages show. */
export type PasswordPageKind = 'signup' | 'forgot' | 'verify' | 'reset'

/** What a password page needs: where it posts, its CSRF token, and the link's token. */
export interface PasswordPageParams {
  kind: PasswordPageKind
  theme: Parameters<typeof renderCardPage>[1]
  /** `<authUrl>/callback/<provider id>`. */
  actionUrl: string
  csrfToken: string
  /** The e-mailed link's token (`verify`, `reset`). */
  token?: string
  callbackUrl?: string
}

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`
const field = (name: string, label: string, type: string, autocomplete: string, required = true) =>
  `<div><label class="section-header" for="password-${name}">${escapeHtml(label)}</label>` +
  `<input id="password-${name}" name="${name}" type="${type}" autocomplete="${autocomplete}"${required ? ' required' : ''}></div>`

const PAGES: Record<PasswordPageKind, { title: string; intro: string; fields: string; button: string }> = {
  signup: {
    title: 'Create an account',
    intro: '<p>We will send a link to confirm your address.</p>',
    fields:
      field('email', 'Email', 'email', 'username') +
      field('name', 'Name (optional)', 'text', 'name', false) +
      field('password', 'Password', 'password', 'new-password'),
    button: 'Sign up',
  },
  forgot: {
    title: 'Forgot your password?',
    intro: '<p>Enter your address: if it has an account, we will send a link to choose a new password.</p>',
    fields: field('email', 'Email', 'email', 'username'),
    button: 'Send the link',
  },
  verify: {
    title: 'Confirm your address',
    intro: '<p>Type the password you signed up with to confirm this address.</p>',
    fields: field('password', 'Password', 'password', 'current-password'),
    button: 'Confirm',
  },
  reset: {
    title: 'Choose a new password',
    intro: '<p>Every session signed in to this account will be ended.</p>',
    fields: field('password', 'New password', 'password', 'new-password'),
    button: 'Set the password',
  },
}

/** Renders one password page. */
export function renderPasswordPage(p: PasswordPageParams): RenderedPage {
  const page = PAGES[p.kind]
  const html =
    `<h1>${escapeHtml(page.title)}</h1>${page.intro}` +
    `<form action="${escapeHtml(p.actionUrl)}" method="POST" data-password="${p.kind}">${hiddenCsrf(p.csrfToken)}${hidden('intent', p.kind)}` +
    (p.token !== undefined ? hidden('token', p.token) : '') +
    (p.callbackUrl !== undefined ? hidden('callbackUrl', p.callbackUrl) : '') +
    `${page.fields}<button id="submitButton" type="submit">${escapeHtml(page.button)}</button></form>`
  return renderCardPage(page.title, p.theme, html)
}
