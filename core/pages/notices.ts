/**
 * The two pages that tell a user to try again without anything having gone wrong on their side: a
 * part of the service is down for a moment (503), or a deploy changed the flow they were half-way
 * through (409). Both link back to the sign-in page with the callback URL kept, so trying again
 * lands where the first try would have.
 *
 * @module
 */
import { escapeHtml } from './html.js'
import { logo, shell, themeStyles } from './index.js'

type PageTheme = Parameters<typeof shell>[1]

/** The sentences about codes every flow's pages share (see `./messages.ts`). */
export { CODE_MESSAGES } from './messages.js'

/** A rendered notice: its status and HTML. */
export interface RenderedNotice {
  status: number
  html: string
}

function notice(theme: PageTheme, title: string, heading: string, message: string, signInUrl: string): string {
  const again = `<a class="button" href="${escapeHtml(signInUrl)}">Try again</a>`
  return shell(
    title,
    theme,
    `<div class="error">${themeStyles(theme)}<div class="card">${logo(theme)}<h1>${heading}</h1><div class="message"><div>${message}</div></div>${again}</div></div>`,
  )
}

/** The 503 page: signing in is unavailable for a moment (the database or the store is down). */
export function renderUnavailablePage(p: { theme: PageTheme; retryAfter: number; signInUrl: string }): RenderedNotice {
  const seconds = `${p.retryAfter} second${p.retryAfter === 1 ? '' : 's'}`
  return {
    status: 503,
    html: notice(
      p.theme,
      'Service unavailable',
      'Service unavailable',
      `<p>Signing in is unavailable for a moment.</p><p>Try again in ${escapeHtml(seconds)}.</p>`,
      p.signInUrl,
    ),
  }
}

/** The 409 page: the sign-in was started before an update that changed it, and starts again. */
export function renderRestartPage(p: { theme: PageTheme; signInUrl: string }): RenderedNotice {
  return {
    status: 409,
    html: notice(
      p.theme,
      'Sign in again',
      'Please sign in again',
      '<p>This sign-in was started before the site was updated, and cannot be finished.</p><p>Nothing was changed: start again to sign in.</p>',
      p.signInUrl,
    ),
  }
}
