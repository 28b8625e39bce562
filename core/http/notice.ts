/**
 * A one-time notice of what the last button did ("Signed out of 2 sessions"), carried to the page
 * the button's redirect opens in a short-lived cookie that page reads and deletes, so a reload or
 * a bookmarked URL does not repeat it (a query parameter would).
 *
 * @module
 */
import { expiredCookie } from '../cookies.js'
import type { CookieOption } from '../shapes.js'
import type { RequestContext } from './context.js'

/** A notice: how many sessions a button signed out, or `all` after signing out everywhere. */
export type Notice = number | 'all'

const NOTICE_COOKIE = 'authchart.notice'
/** Long enough for the redirect it rides on; a notice never read is gone a minute later. */
const NOTICE_MAX_AGE = 60

function noticeCookie(ctx: RequestContext): CookieOption {
  const { name, options } = ctx.cookies.sessionToken
  const prefix = name.startsWith('__Secure-') || name.startsWith('__Host-') ? '__Secure-' : ''
  return { name: `${prefix}${NOTICE_COOKIE}`, options: { ...options, maxAge: NOTICE_MAX_AGE } }
}

/** Leaves `notice` for the next page this browser opens. */
export function leaveNotice(ctx: RequestContext, cookies: ResponseCookies, notice: Notice): void {
  cookies.push({ ...noticeCookie(ctx), value: String(notice) })
}

type ResponseCookies = RequestContext['setCookies']

/**
 * The notice left for this page, deleted as it is read; `undefined` when none. The cookie is the
 * browser's to set, so only the two shapes a notice has are believed (another site's cookie
 * tossing can at most show "Signed out of 3 sessions").
 */
export function takeNotice(ctx: RequestContext): Notice | undefined {
  const option = noticeCookie(ctx)
  const value = ctx.request.cookies[option.name]
  if (value === undefined) return undefined
  ctx.setCookies.push(expiredCookie(option))
  if (value === 'all') return 'all'
  return /^\d{1,4}$/.test(value) ? Number(value) : undefined
}
