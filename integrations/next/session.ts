/**
 * `auth()` of the Next.js integration, in each of next-auth v5's shapes: no argument (server
 * components, route handlers, server actions), a request (middleware / `proxy.ts`), a function to
 * wrap (`auth((req) => …)`, with `req.auth`), and the Pages Router's `(req, res)` / context.
 *
 * @module
 */
import { cookies as nextCookies, headers as nextHeaders } from 'next/headers.js'
import { NextRequest } from 'next/server.js'
import { serializeCookie } from '../../core/cookies.js'
import { RequestError } from '../../core/errors.js'
import { createLogger } from '../../core/logger.js'
import type { Cookie, Session } from '../../core/types.js'
import { readSession, type SessionRead } from '../shared/auth.js'
import { baseOf, originOf, prepareFor, type NextAuthConfigSource, type NextPrepared } from './config.js'

/** A `NextRequest` carrying the session, as `auth((req) => …)` passes it. */
export type NextAuthRequest = NextRequest & { auth: Session | null }

/** A middleware (or `proxy.ts` function) wrapped by `auth`, receiving `req.auth`. */
export type NextAuthMiddleware = (
  request: NextAuthRequest,
  event: import('next/server.js').NextFetchEvent,
) => Response | null | undefined | void | Promise<Response | null | undefined | void>

/** A route handler wrapped by `auth`, receiving `req.auth`. */
export type AppRouteHandlerFn = (
  request: NextAuthRequest,
  context: { params: Promise<any> },
) => void | Response | Promise<void | Response>

/** A Node request/response pair of the Pages Router (`NextApiRequest`, `getServerSideProps`). */
interface NodeRequestLike {
  headers: Record<string, string | string[] | undefined>
}
interface NodeResponseLike {
  appendHeader?(name: string, value: string | string[]): unknown
  setHeader?(name: string, value: string | string[]): unknown
  getHeader?(name: string): unknown
  headers?: Headers
}

/** The shapes of `auth` (next-auth v5's `NextAuthResult['auth']`). */
export interface AuthFunction {
  // The wrappers come first: a function argument takes its parameter types from the first
  // signature it is checked against.
  /** Wraps a route handler, which gets `req.auth`. */
  (handler: AppRouteHandlerFn): (request: NextRequest, context: { params: Promise<any> }) => Promise<Response>
  /** Wraps a middleware or a `proxy.ts` function, which gets `req.auth`. */
  (handler: NextAuthMiddleware): (request: NextRequest, event: import('next/server.js').NextFetchEvent) => Promise<Response>
  /** The session in a server component, route handler or server action (read from `headers()`). */
  (): Promise<Session | null>
  /** Middleware / `proxy.ts`: `export { auth as middleware }`; applies the `authorized` callback. */
  (request: NextRequest, event?: unknown): Promise<Response>
  /** Pages Router API route: `auth(req, res)`. */
  (request: NodeRequestLike, response: NodeResponseLike): Promise<Session | null>
  /** Pages Router `getServerSideProps`: `auth(context)`. */
  (context: { req: NodeRequestLike; res: NodeResponseLike }): Promise<Session | null>
}

/**
 * The session for `origin`, or `null` when there is none or it cannot be read: a configuration
 * error, an untrusted host (logged, so a broken deployment fails closed, as next-auth does).
 */
async function sessionOrNull(
  prepared: NextPrepared,
  origin: () => string,
  cookie: string | null,
  headers: Headers | (() => Headers),
): Promise<SessionRead> {
  try {
    return await readSession({ origin: origin(), cookie, headers }, prepared.config)
  } catch (error) {
    createLogger(prepared.config).error(error instanceof Error ? error : new Error(String(error)))
    return { session: null, cookies: [] }
  }
}

/**
 * Sets the cookies a session read produced (a refreshed session) where Next allows it: in route
 * handlers and server actions. A server component cannot set cookies; the next request that can
 * (middleware, an action, the client's session fetch) refreshes them instead.
 */
async function setCookiesIfAllowed(cookies: readonly Cookie[]): Promise<void> {
  if (cookies.length === 0) return
  const jar = await nextCookies()
  try {
    for (const { name, value, options } of cookies) jar.set(name, value, options as Parameters<typeof jar.set>[2])
  } catch {
    // A server component: cookies are read-only there.
  }
}

async function serverComponentSession(prepared: NextPrepared): Promise<Session | null> {
  const headers = await nextHeaders()
  // The cookies as they are now: a server action that just updated the session re-renders the
  // page in the same request, whose `Cookie` header still holds the old one (next-auth reads it).
  const cookie = (await nextCookies()).toString()
  const { session, cookies } = await sessionOrNull(prepared, () => originOf(prepared, headers), cookie || null, headers)
  await setCookiesIfAllowed(cookies)
  return session
}

/** `NextResponse.next()`, without loading `next/server`'s response class. */
const nextResponse = () => new Response(null, { headers: { 'x-middleware-next': '1' } })

const badRequest = () =>
  new Response(JSON.stringify('Bad request.'), { status: 400, headers: { 'content-type': 'application/json' } })

/** The request as the application sees it: under `AUTH_URL`'s origin when one is set (as next-auth). */
function withConfiguredOrigin(request: NextRequest, prepared: NextPrepared): NextRequest {
  if (!prepared.origin) return request
  const url = new URL(request.url)
  if (url.origin === prepared.origin) return request
  return new NextRequest(`${prepared.origin}${url.pathname}${url.search}`, request)
}

/**
 * The middleware: reads the session, asks `authorized`, then lets the request through, runs the
 * wrapped function with `req.auth`, or redirects to the sign-in page. The sign-in page's
 * `callbackUrl` is the requested page on the origin the browser asked for, so signing in lands
 * back on it (next-auth writes Next's own URL there, `http://localhost:3000/…` on a self-hosted
 * `next start`, which the redirect callback then refuses as another site).
 */
async function handleAuth(
  prepared: NextPrepared,
  request: NextRequest,
  event: unknown,
  wrapped?: NextAuthMiddleware | AppRouteHandlerFn,
): Promise<Response> {
  let origin: string
  try {
    origin = originOf(prepared, request.headers)
  } catch (error) {
    if (!(error instanceof RequestError)) throw error
    createLogger(prepared.config).error(error)
    return badRequest()
  }
  const { session, cookies } = await sessionOrNull(prepared, () => origin, request.headers.get('cookie'), request.headers)
  const seen = withConfiguredOrigin(request, prepared)
  const authorized = (await prepared.config.callbacks?.authorized?.({ request: seen, auth: session })) ?? true

  let response: Response | undefined = nextResponse()
  if (authorized instanceof Response) {
    response = authorized
  } else if (wrapped) {
    const augmented = seen as NextAuthRequest
    augmented.auth = session
    response = ((await wrapped(augmented, event as never)) as Response | undefined) ?? nextResponse()
  } else if (!authorized) {
    const signInPage = prepared.config.pages?.signIn ?? `${baseOf(prepared.config)}/signin`
    const { pathname, search } = new URL(request.url)
    if (pathname !== signInPage) {
      const location = new URL(`${signInPage}${search}`, origin)
      location.searchParams.set('callbackUrl', `${origin}${pathname}${search}`)
      response = new Response(null, { status: 307, headers: { location: location.href } })
    }
  }
  const final = new Response(response.body, response)
  for (const cookie of cookies) final.headers.append('set-cookie', serializeCookie(cookie))
  return final
}

function headersOfNode(request: NodeRequestLike): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name.startsWith(':')) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
  }
  return headers
}

async function pagesRouterSession(prepared: NextPrepared, request: NodeRequestLike, response: NodeResponseLike) {
  const headers = headersOfNode(request)
  const { session, cookies } = await sessionOrNull(prepared, () => originOf(prepared, headers), headers.get('cookie'), headers)
  for (const cookie of cookies) {
    const value = serializeCookie(cookie)
    if (response.headers instanceof Headers) response.headers.append('set-cookie', value)
    else response.appendHeader?.('set-cookie', value)
  }
  return session
}

/** Builds `auth` over a configuration source (see {@link AuthFunction}). */
export function initAuth<R>(source: NextAuthConfigSource<R>): AuthFunction {
  return ((...args: unknown[]) => {
    const [first, second] = args
    if (args.length === 0) return prepareFor(source, undefined).then(serverComponentSession)
    if (first instanceof Request) {
      return prepareFor(source, first as R).then((prepared) => handleAuth(prepared, first as NextRequest, second))
    }
    if (typeof first === 'function') {
      const wrapped = first as NextAuthMiddleware | AppRouteHandlerFn
      return async (request: NextRequest, context: unknown) =>
        handleAuth(await prepareFor(source, request as R), request, context, wrapped)
    }
    const pair = first as { req?: NodeRequestLike; res?: NodeResponseLike }
    const request = pair.req ?? (first as NodeRequestLike)
    const response = pair.res ?? (second as NodeResponseLike)
    return prepareFor(source, request as R).then((prepared) => pagesRouterSession(prepared, request, response))
  }) as AuthFunction
}
