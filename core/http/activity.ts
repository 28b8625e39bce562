/**
 * `GET {basePath}/audit`: the signed-in user's recent security activity, served by the audit
 * trail when it has a store that lists events (`authchart/audit`). Read-only, so no CSRF token; the
 * user is the one the session names (the one authority for who is signed in).
 *
 * @module
 */
import { renderCardPage } from '../pages/steps.js'
import { signedInUser } from '../session/current.js'
import type { ResponseInternal } from '../types.js'
import type { RequestContext } from './context.js'
import { HTML_NO_STORE_HEADERS, JSON_NO_STORE_HEADERS } from './handlers.js'
import { wantsPage } from './sessions-page.js'

/** The most events the activity page and its JSON list. */
export const ACTIVITY_LIMIT = 50

/**
 * The page's headers: never cached; never framed either (it shows where the user signed in from),
 * by the page policy every HTML answer gets in `http/answer.ts`.
 */
export const ACTIVITY_PAGE_HEADERS = Object.freeze({
  ...HTML_NO_STORE_HEADERS,
})

/** A JSON answer of the route, never cached. */
export const activityJson = (body: unknown, status?: number): ResponseInternal => ({
  ...(status !== undefined ? { status } : {}),
  headers: JSON_NO_STORE_HEADERS,
  body,
})

/** `GET /audit`: the user's own events, newest first; 401 `null` without a session. */
export async function respondActivity(ctx: RequestContext): Promise<ResponseInternal> {
  const page = wantsPage(ctx)
  const user = await signedInUser(ctx)
  if (!user) {
    if (!page) return activityJson(null, 401)
    const back = new URLSearchParams({ callbackUrl: `${ctx.authUrl}/audit` })
    return { redirect: `${ctx.authUrl}/signin?${back}`, cookies: ctx.setCookies }
  }
  const observers = ctx.config.observers
  const serving = observers.length > 0 ? observers.find((observer) => observer.activity !== undefined) : undefined
  if (serving) return serving.activity!(ctx, user, page)
  ctx.logger.error(
    new TypeError("GET /audit needs an audit sink that can list events (`audit: auditTrail({ sink: store })` from 'authchart/audit')"),
  )
  if (!page) return activityJson(null, 400)
  const unavailable = renderCardPage('Recent activity', ctx.config.theme, '<h1>Recent activity</h1><p>This site keeps no activity to show.</p>', 400)
  return { status: unavailable.status, headers: ACTIVITY_PAGE_HEADERS, body: unavailable.html, cookies: ctx.setCookies }
}
