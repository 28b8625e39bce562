/**
 * Next.js integration (`authchart/next`, App Router, Next 15 and 16) with next-auth v5's surface:
 * switching is a change of import.
 *
 * ```ts
 * // auth.ts
 * import NextAuth from 'authchart/next'
 * export const { handlers, auth, signIn, signOut } = NextAuth(config)
 * // app/api/auth/[...nextauth]/route.ts
 * export { GET, POST } from '@/auth' // (handlers)
 * // proxy.ts (middleware.ts before Next 16)
 * export { auth as proxy } from '@/auth'
 * // app/settings/page.tsx: a sensitive page asks for a recent proof (step-up)
 * await requireRecentAuth({ returnTo: '/settings', maxAge: 300 })
 * ```
 *
 * Where it differs from next-auth: the origin of every URL is `AUTH_URL`'s, else the request's
 * `Host` (never Next's own request URL, which names `localhost` on a self-hosted `next start`, and
 * `X-Forwarded-Host` only with `AUTH_TRUST_PROXY=true`); server actions keep the CSRF check and
 * refuse a request from another origin.
 *
 * @module
 */
import type { NextRequest } from 'next/server.js'
import { Auth } from '../../core/auth.js'
import { RequestError } from '../../core/errors.js'
import { createLogger } from '../../core/logger.js'
import type { Awaitable, Session } from '../../core/types.js'
import { requestUrl } from '../shared/request-url.js'
import {
  signIn,
  signOut,
  update,
  type SignInAuthorizationParams,
  type SignInOptions,
  type SignOutOptions,
} from './actions.js'
import { originOf, prepareFor, type NextAuthConfig } from './config.js'
import { initAuth, type AuthFunction } from './session.js'
import { initRequireRecentAuth, type RequireRecentAuth } from './recent-auth.js'

export { AuthError, CredentialsSignin } from '../../core/errors.js'
export { customFetch } from '../../core/symbols.js'
export type { Account, DefaultSession, Profile, Session, User } from '../../core/types.js'
export type { NextAuthConfig } from './config.js'
export type { AppRouteHandlerFn, AuthFunction, NextAuthMiddleware, NextAuthRequest } from './session.js'
export type { SignInAuthorizationParams, SignInOptions, SignOutOptions } from './actions.js'
export type { RecentAuth, RecentAuthOptions, RequireRecentAuth, StepUpPolicy } from './recent-auth.js'

/** What {@link NextAuth} returns (next-auth v5's `NextAuthResult`). */
export interface NextAuthResult {
  /** The route handlers: `export const { GET, POST } = handlers` in `app/api/auth/[...nextauth]/route.ts`. */
  handlers: { GET: (request: NextRequest) => Promise<Response>; POST: (request: NextRequest) => Promise<Response> }
  /** The session, the middleware, or a wrapper giving `req.auth` (see {@link AuthFunction}). */
  auth: AuthFunction
  /**
   * Signs in from a server action and redirects (Next's `redirect`); with `redirect: false`,
   * returns the URL instead.
   *
   * @throws the `AuthError` the sign-in ended in (`CredentialsSignin` with `code`…).
   */
  signIn: <R extends boolean = true>(
    provider?: string,
    options?: FormData | SignInOptions<R>,
    authorizationParams?: SignInAuthorizationParams,
  ) => Promise<R extends false ? any : never>
  /** Signs out from a server action and redirects; with `redirect: false`, returns the answer. */
  signOut: <R extends boolean = true>(options?: SignOutOptions<R>) => Promise<R extends false ? any : never>
  /** Updates the session from the server; returns the new session. */
  unstable_update: (data: Partial<Session | { user: Partial<Session['user']> }>) => Promise<Session | null>
  /**
   * Step-up: lets a request through only when its user proved a factor recently enough. With the
   * request (route handler, `proxy.ts`, the `auth` wrapper, `authorized`): the answer to send when
   * not (303 for a page, 401 for a fetch). In a server component or action, with `{ returnTo }`:
   * Next's `redirect()` to the re-authentication page when not.
   */
  requireRecentAuth: RequireRecentAuth
}

/** The route handler: the core's routes under the request's origin (see the module doc). */
async function handle(source: Parameters<typeof NextAuth>[0], request: NextRequest): Promise<Response> {
  const prepared = await prepareFor(source, request)
  let url: URL
  try {
    url = requestUrl(request.url, prepared.origin, () => originOf(prepared, request.headers))
  } catch (error) {
    if (!(error instanceof RequestError)) throw error
    createLogger(prepared.config).error(error)
    return new Response(JSON.stringify('Bad request.'), { status: error.status, headers: { 'content-type': 'application/json' } })
  }
  if (url.href === request.url) return Auth(request, prepared.config)
  const body = request.method === 'POST' ? await request.arrayBuffer() : undefined
  return Auth(new Request(url, { method: request.method, headers: request.headers, body }), prepared.config)
}

/**
 * Sets up authentication for a Next.js app. `config` may be a function of the request (called
 * with `undefined` in server components and actions), for configuration read at request time.
 * The environment (`AUTH_SECRET`, `AUTH_URL`, `AUTH_TRUST_HOST`, `AUTH_<PROVIDER>_ID`/`_SECRET`…)
 * is read at the first request, never while `next build` imports the module.
 *
 * @see reference §10 (next-auth v5)
 */
export default function NextAuth(
  config: NextAuthConfig | ((request: NextRequest | undefined) => Awaitable<NextAuthConfig>),
): NextAuthResult {
  const handler = (request: NextRequest) => handle(config, request)
  return {
    handlers: { GET: handler, POST: handler },
    auth: initAuth(config),
    signIn: async (provider, options, authorizationParams) =>
      signIn(await prepareFor(config, undefined), provider, options, authorizationParams),
    signOut: async (options) => signOut(await prepareFor(config, undefined), options),
    unstable_update: async (data) => update(await prepareFor(config, undefined), data),
    requireRecentAuth: initRequireRecentAuth(config),
  }
}
