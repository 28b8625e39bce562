/**
 * `requireRecentAuth` for Next.js: a sensitive page, route or action asks for a factor proven
 * recently (step-up). Where the request is known (a route handler, `proxy.ts`/middleware, the
 * `auth((req) => …)` wrapper, the `authorized` callback) it answers as the other integrations do:
 * a page gets a 303 to the re-authentication page with the path to come back to, a `fetch` gets
 * 401 with `WWW-Authenticate` and the URL to open. A server component or server action does not
 * know its URL: the caller names the path to come back to (`{ returnTo: '/settings' }`), and a
 * request that is not fresh enough is sent on with Next's `redirect()`.
 *
 * @module
 */
import { cookies as nextCookies, headers as nextHeaders } from 'next/headers.js'
import { redirect as nextRedirect } from 'next/dist/client/components/navigation.react-server.js'
import { checkRecentAuth, type RecentAuth, type StepUpPolicy } from '../../core/recent-auth.js'
import { readFreshness, reauthenticationUrl, signInUrl, type ServerRequest } from '../../core/server.js'
import { originOf, prepareFor, type NextAuthConfigSource } from './config.js'

export type { RecentAuth, StepUpPolicy } from '../../core/recent-auth.js'

/** The options of {@link RequireRecentAuth} in a server component or action: the policy and where to come back to. */
export interface RecentAuthOptions extends StepUpPolicy {
  /**
   * The path (with its query) to come back to after the proof: relative to this site, as a
   * `callbackUrl` must be (`/settings/security`, never `//host/…` or `https://…`).
   */
  returnTo: string
}

/** `requireRecentAuth` of {@link NextAuth}'s result, in each of its two shapes. */
export interface RequireRecentAuth {
  /**
   * In a route handler, `proxy.ts`/middleware or the `auth((req) => …)` wrapper: lets `request`
   * through (`{ ok: true, verifiedAt }`) or gives the answer to send (a 303 for a page, a 401 for
   * a fetch; a signed-out request is sent to sign in).
   */
  (request: Request, policy?: StepUpPolicy): Promise<RecentAuth | Response>
  /**
   * In a server component or server action: lets the request through, or redirects (Next's
   * `redirect()`) to the re-authentication page, back to `returnTo` afterwards (to sign in, when
   * signed out).
   *
   * @throws {TypeError} when `returnTo` is not a path of this site.
   */
  (options: RecentAuthOptions): Promise<RecentAuth>
}

/**
 * Whether `path` is a path of this site: it starts with `/`, and resolved against any origin
 * stays on it (a `//host` or `/\host`, with or without tabs and newlines inside, leaves it).
 */
export function isSitePath(path: unknown): path is string {
  if (typeof path !== 'string' || !path.startsWith('/')) return false
  const base = 'http://site.invalid'
  try {
    return new URL(path, base).origin === base
  } catch {
    return false
  }
}

/** Builds `requireRecentAuth` over a configuration source. */
export function initRequireRecentAuth<R>(source: NextAuthConfigSource<R>): RequireRecentAuth {
  async function inRequest(request: Request, policy: StepUpPolicy = {}): Promise<RecentAuth | Response> {
    const prepared = await prepareFor(source, request as R)
    const server: ServerRequest = { origin: originOf(prepared, request.headers), cookie: request.headers.get('cookie'), headers: request.headers }
    const { pathname, search } = new URL(request.url)
    return checkRecentAuth(server, request.headers, `${pathname}${search}`, prepared.config, policy)
  }

  async function inServerComponent({ returnTo, ...policy }: RecentAuthOptions): Promise<RecentAuth> {
    // Checked before anything is read: a path from the request would make this an open redirect.
    if (!isSitePath(returnTo)) throw new TypeError('requireRecentAuth: returnTo must be a path of this site, such as "/settings"')
    const prepared = await prepareFor(source, undefined)
    const headers = await nextHeaders()
    const cookie = (await nextCookies()).toString()
    const server: ServerRequest = { origin: originOf(prepared, headers), cookie: cookie || null, headers }
    const verdict = await readFreshness(server, prepared.config, policy)
    if (verdict.fresh) return { ok: true, verifiedAt: verdict.verifiedAt }
    const url =
      verdict.reason === 'signedOut'
        ? signInUrl(server, prepared.config, returnTo)
        : reauthenticationUrl(server, prepared.config, returnTo, verdict.factors)
    return nextRedirect(url)
  }

  return ((first: Request | RecentAuthOptions, policy?: StepUpPolicy) =>
    first instanceof Request ? inRequest(first, policy) : inServerComponent(first)) as RequireRecentAuth
}
