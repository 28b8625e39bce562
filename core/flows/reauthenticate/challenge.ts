/**
 * How a request that is not fresh enough is answered, shared by the built-in gate and
 * `requireRecentAuth`: a page for a browser's navigation, 401 with the detail for data.
 *
 * @module
 */
import type { RequestContext } from '../../config/types.js'
import type { StepUpDemand } from '../../modules.js'
import type { ResponseInternal } from '../../types.js'

/**
 * Whether a request wants a page rather than data: a browser navigation (`Sec-Fetch-Mode:
 * navigate`), else an `Accept` that names HTML (a browser's `fetch()` sends `*\/*`).
 */
export function wantsPage(headers: Pick<Headers, 'get'>): boolean {
  if (headers.get('sec-fetch-mode') === 'navigate') return true
  return /\btext\/html\b/.test(headers.get('accept') ?? '')
}

/**
 * The 401 detail for a request that is not fresh enough: the JSON body and the `WWW-Authenticate`
 * challenge (RFC 9470's error and `max_age`, the accepted factors, the URL to open).
 */
export function recentAuthChallenge(
  error: 'login_required' | 'insufficient_user_authentication',
  maxAge: number,
  factors: readonly string[],
  url: string,
): { body: { error: string; maxAge: number; factors: readonly string[]; url: string }; header: string } {
  return {
    body: { error, maxAge, factors, url },
    header: `Bearer error="${error}", max_age=${maxAge}, factors="${factors.join(' ')}", url="${url}"`,
  }
}


/**
 * The answer to a sensitive request that was stopped for `demand`: 303 to `url` for a browser, 401
 * with the same URL and the challenge for a fetch (a page's script cannot follow a redirect into a
 * form). `url` is the re-authentication page with step-up, a fresh sign-in without it.
 */
export function stoppedRequestAnswer(ctx: RequestContext, demand: StepUpDemand, url: string): ResponseInternal {
  if (wantsPage(ctx.request.headers)) return { status: 303, headers: { Location: url, 'Cache-Control': 'no-store' }, cookies: ctx.setCookies }
  const { body, header } = recentAuthChallenge('insufficient_user_authentication', demand.policy.maxAge, demand.policy.factors, url)
  return {
    status: 401,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'WWW-Authenticate': header },
    body,
    cookies: ctx.setCookies,
  }
}
