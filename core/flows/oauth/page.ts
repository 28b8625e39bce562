/**
 * The OAuth and OpenID Connect button on the built-in sign-in page, in Auth.js's markup.
 *
 * @module
 */
import { cssValue, escapeHtml, hiddenCsrf, isSafeImageUrl } from '../../pages/html.js'
import type { SignInForm } from '../types.js'

/** A provider's button look (`style` of Auth.js's OAuth providers). */
interface ButtonStyle {
  logo?: string
  bg?: string
  brandColor?: string
  text?: string
}

/** The button that starts the provider's sign-in, with its brand colour and logo. */
export const oauthSignInForm: SignInForm = {
  draw(provider, page) {
    const look = provider.config.style as ButtonStyle | null | undefined
    const color = cssValue(look?.brandColor ?? look?.bg ?? '')
    const style = color ? ` style="--provider-brand-color:${escapeHtml(color)}"` : ''
    const logo = look?.logo
    const image = logo && isSafeImageUrl(logo) ? `<img loading="lazy" height="24" src="${escapeHtml(logo)}">` : ''
    return (
      `<form action="${escapeHtml(provider.signinUrl)}" method="POST">${hiddenCsrf(page.csrfToken)}` +
      (page.callbackUrl ? `<input type="hidden" name="callbackUrl" value="${escapeHtml(page.callbackUrl)}">` : '') +
      `<button type="submit" class="button"${style}><span>Sign in with ${escapeHtml(provider.name)}</span>${image}</button></form>`
    )
  },
}
