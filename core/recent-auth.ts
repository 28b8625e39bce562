/**
 * A server guard for the application's own sensitive routes: `requireRecentAuth` lets a request
 * through only when its user proved a factor recently enough (step-up). A page request that is not
 * is sent to prove a factor again (303, back to where it was going afterwards); a `fetch`/JSON request
 * gets 401 with the detail in `WWW-Authenticate` (RFC 9470's `insufficient_user_authentication`,
 * `max_age`) and the URL to open.
 *
 * @module
 */
import { readFreshness, reauthenticationUrl, signInUrl, type ServerRequest } from './server.js'
import type { Freshness, StepUpPolicy } from './session/freshness.js'
import type { AuthConfig } from './types.js'
import { recentAuthChallenge, wantsPage } from './flows/reauthenticate/challenge.js'

export { recentAuthChallenge, wantsPage }

export type { StepUpPolicy } from './session/freshness.js'

/** A request {@link requireRecentAuth} let through. */
export interface RecentAuth {
  ok: true
  /** When the accepted factor was last proven (epoch seconds). */
  verifiedAt: number
}

/** The answer to a request that is not fresh enough: the redirect for a page, the 401 for data. */
export function recentAuthRequired(
  verdict: Exclude<Freshness, { fresh: true }>,
  headers: Pick<Headers, 'get'>,
  url: string,
): Response {
  if (wantsPage(headers)) return new Response(null, { status: 303, headers: { location: url } })
  const error = verdict.reason === 'signedOut' ? 'login_required' : 'insufficient_user_authentication'
  const { body, header } = recentAuthChallenge(error, verdict.maxAge, verdict.factors, url)
  return Response.json(body, { status: 401, headers: { 'www-authenticate': header, 'cache-control': 'no-store' } })
}

/** The application's request as the in-process session read takes it. */
function serverRequestOf(request: Request): ServerRequest {
  return { origin: new URL(request.url).origin, cookie: request.headers.get('cookie'), headers: request.headers }
}

/**
 * {@link requireRecentAuth} for an integration: the framework's request as the in-process session
 * read takes it, its headers, and the path (with query) to come back to.
 *
 * @throws as {@link requireRecentAuth}.
 */
export async function checkRecentAuth(
  request: ServerRequest,
  headers: Pick<Headers, 'get'>,
  returnTo: string,
  config: Omit<AuthConfig, 'raw'>,
  policy: StepUpPolicy = {},
): Promise<RecentAuth | Response> {
  const verdict = await readFreshness(request, config, policy)
  if (verdict.fresh) return { ok: true, verifiedAt: verdict.verifiedAt }
  // Without the step-up module there is no re-authentication page: a fresh sign-in is the proof.
  const url =
    verdict.reason === 'signedOut' || config.stepUp === undefined
      ? signInUrl(request, config, returnTo)
      : reauthenticationUrl(request, config, returnTo, verdict.factors)
  return recentAuthRequired(verdict, headers, url)
}

/**
 * Lets `request` through when its signed-in user proved an accepted factor within `policy.maxAge`
 * seconds (default 600); otherwise answers it: a page request with a 303 to the re-authentication
 * page (`{basePath}/reauthenticate`, with `stepUp: stepUp()` configured: the user proves a factor
 * again, and comes back to the request's path; without it, the sign-in page), a `fetch`/JSON request with 401, `WWW-Authenticate` and the URL to open. A
 * signed-out request is answered the same way, with the sign-in page's URL.
 *
 * @example
 * const recent = await requireRecentAuth(request, authConfig, { maxAge: 300, aal: 2 })
 * if (recent instanceof Response) return recent
 *
 * @throws the configuration's error, or `UntrustedHost`, as `readSession`.
 */
export async function requireRecentAuth(
  request: Request,
  config: Omit<AuthConfig, 'raw'>,
  policy: StepUpPolicy = {},
): Promise<RecentAuth | Response> {
  const here = new URL(request.url)
  return checkRecentAuth(serverRequestOf(request), request.headers, `${here.pathname}${here.search}`, config, policy)
}
