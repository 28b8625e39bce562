/**
 * `{basePath}/sessions` for a person in a browser: the same routes as the JSON API, answered with
 * the sessions page when the request asks for HTML (a navigation or a form post does; `fetch`
 * does not unless told). The JSON handlers decide who is signed in and what is revoked; this only
 * renders their answer, so the page and the API cannot disagree.
 *
 * @module
 */
import { renderSessionsPage, renderSessionsUnavailablePage, type ListedSession } from '../pages/sessions.js'
import { respondSessions, revokeSessions } from '../session/manage.js'
import type { ResponseInternal } from '../types.js'
import type { RequestContext } from './context.js'
import { HTML_NO_STORE_HEADERS } from './handlers.js'
import { leaveNotice, takeNotice, type Notice } from './notice.js'

/** Whether the request asks for a page: its `Accept` names `text/html`. */
export function wantsPage(ctx: RequestContext): boolean {
  return /\btext\/html\b/i.test(ctx.request.headers.get('accept') ?? '')
}

const sessionsUrl = (ctx: RequestContext) => `${ctx.authUrl}/sessions`

/**
 * The page's headers: never cached, and never framed (the page policy every HTML answer gets in
 * `http/answer.ts`). Its buttons sign sessions out; a page of the same site (whose requests carry
 * the SameSite=Lax session cookie) could otherwise frame it under a decoy and have them clicked.
 */
const SESSIONS_PAGE_HEADERS = Object.freeze({
  ...HTML_NO_STORE_HEADERS,
} as const)

/** A signed-out browser signs in first, and comes back to its sessions. */
function signInFirst(ctx: RequestContext): ResponseInternal {
  const back = new URLSearchParams({ callbackUrl: sessionsUrl(ctx) })
  return { redirect: `${ctx.authUrl}/signin?${back}`, cookies: ctx.setCookies }
}

/** `GET /sessions`: the page for a browser, the JSON list otherwise. */
export async function respondSessionsOrPage(ctx: RequestContext): Promise<ResponseInternal> {
  const answer = await respondSessions(ctx)
  if (!wantsPage(ctx)) return answer
  if (answer.status === 401) return signInFirst(ctx)
  const sessions = answer.body as ListedSession[] | null
  const page = sessions
    ? renderSessionsPage(ctx.config.theme, {
        sessions,
        action: sessionsUrl(ctx),
        csrfToken: ctx.csrf?.token ?? '',
        canRevokeOne: ctx.config.session.strategy === 'database',
        canRevokeAll: ctx.config.session.strategy === 'database' || ctx.config.sharedStore,
        ...revokedCount(takeNotice(ctx)),
      })
    : renderSessionsUnavailablePage(ctx.config.theme)
  return { status: page.status, headers: SESSIONS_PAGE_HEADERS, body: page.html, cookies: ctx.setCookies }
}

function revokedCount(notice: Notice | undefined): { revoked?: number } {
  return typeof notice === 'number' ? { revoked: notice } : {}
}

/**
 * `POST /sessions`: for a browser's form, back to the page with what was signed out (or to the
 * sign-in page after signing out everywhere); the JSON answer otherwise.
 */
export async function revokeSessionsOrPage(ctx: RequestContext): Promise<ResponseInternal> {
  const answer = await revokeSessions(ctx)
  if (!wantsPage(ctx)) return answer
  if (answer.status === 401) return signInFirst(ctx)
  const revoked = (answer.body as { revoked?: unknown } | null)?.revoked
  if (revoked === 'all') {
    const cookies = answer.cookies ?? ctx.setCookies
    leaveNotice(ctx, cookies, 'all')
    return { redirect: `${ctx.authUrl}/signin`, cookies }
  }
  if (typeof revoked === 'number') leaveNotice(ctx, ctx.setCookies, revoked)
  return { redirect: sessionsUrl(ctx), cookies: ctx.setCookies }
}
