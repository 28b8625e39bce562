/**
 * `Auth(request, config)`: a web `Request` and a config in, a web `Response` out. Every failure
 * becomes a status or a redirect with a logged reason; nothing escapes as an exception (except to
 * `raw` callers, who receive AuthErrors as Auth.js throws them).
 *
 * @module
 */
import { PAGE_ACTIONS } from './actions.js'
import { resolveConfig, type ResolvedConfig } from './config/resolve-config.js'
import { serializeCookie } from './cookies.js'
import {
  AuthError,
  ErrorPageLoop,
  errorOfType,
  RequestError,
  UntrustedHost,
} from './errors.js'
import { dispatch, encodeLocation, errorRedirectUrl, routeFor } from './http/dispatch.js'
import { parseRequest, type ParsedRequest } from './http/request.js'
import { routes, type Route } from './http/routes.js'
import type { Logger } from './logger.js'
import { renderErrorPage } from './pages/index.js'
import type { raw } from './symbols.js'
import type { AuthConfig, ResponseInternal } from './types.js'
import { INSPECTOR_PATH, respondInspector } from './inspector/index.js'

const CONFIGURATION_MESSAGE =
  'There was a problem with the server configuration. Check the server logs for more information.'

const DEFAULT_THEME = { colorScheme: 'auto', logo: '', brandColor: '', buttonText: '' } as const

/** Converts an internal response to a web `Response` (cookies serialised, JSON encoded). */
export function toResponse(internal: ResponseInternal): Response {
  const headers = new Headers(internal.headers)
  for (const cookie of internal.cookies ?? []) headers.append('Set-Cookie', serializeCookie(cookie))
  let body: BodyInit | null | undefined = internal.body as BodyInit | null | undefined
  const contentType = headers.get('content-type')
  if (contentType === 'application/json') body = JSON.stringify(internal.body)
  else if (contentType === 'application/x-www-form-urlencoded') {
    body = new URLSearchParams(internal.body as Record<string, string>).toString()
  }
  if (internal.redirect) headers.set('Location', encodeLocation(internal.redirect))
  return new Response(body ?? null, {
    headers,
    status: internal.redirect ? 302 : (internal.status ?? 200),
  })
}

function redirect(url: string): Response {
  return new Response(null, { status: 302, headers: { Location: encodeLocation(url) } })
}

function fallbackBasePath(config: AuthConfig): string {
  const basePath = config?.basePath
  return typeof basePath === 'string' && basePath.startsWith('/')
    ? basePath.replace(/(.)\/+$/, '$1')
    : '/auth'
}

/** The answer to every request while the configuration is broken (reference §0 step 3). */
function configurationFailure(
  request: ParsedRequest,
  error: Error,
  logger: Logger,
  source: AuthConfig,
): Response {
  logger.error(error)
  if (request.method !== 'GET' || !PAGE_ACTIONS.has(request.action)) {
    return Response.json({ message: CONFIGURATION_MESSAGE }, { status: 500 })
  }
  const errorPage = typeof source?.pages?.error === 'string' ? source.pages.error : undefined
  const loops = errorPage !== undefined && request.query.callbackUrl?.startsWith(errorPage)
  if (errorPage !== undefined && !loops) {
    return redirect(`${request.url.origin}${errorPage}?error=Configuration`)
  }
  if (loops) {
    logger.error(new ErrorPageLoop(`The error page ${errorPage} should not require authentication`))
  }
  const basePath = fallbackBasePath(source)
  const page = renderErrorPage({
    theme: DEFAULT_THEME,
    error: 'Configuration',
    url: request.url,
    signInUrl: `${request.url.origin}${basePath}/signin`,
  })
  return new Response(page.html, { status: page.status, headers: { 'Content-Type': 'text/html' } })
}

/** Answers a request whose handling threw: 400 `null` on API routes, else an error redirect. */
function failure(
  error: unknown,
  request: ParsedRequest,
  config: ResolvedConfig,
  table: readonly Route[],
  wantsJsonRedirect: boolean,
): Response {
  if (error instanceof RequestError) {
    return Response.json('Bad request.', { status: error.status })
  }
  if (routeFor(request, config, table)?.failure === 'json-null') {
    return Response.json(null, { status: 400 })
  }
  const authError = error instanceof AuthError ? error : undefined
  const url = errorRedirectUrl(
    config,
    request.url.origin,
    authError?.type ?? 'Configuration',
    authError?.kind ?? 'error',
    authError && 'code' in authError ? String(authError.code) : undefined,
  )
  return wantsJsonRedirect ? Response.json({ url }) : redirect(url)
}

function isInspectorRequest(request: Request, config: ResolvedConfig): boolean {
  if (request.method !== 'GET') return false
  const base = config.basePath === '/' ? '' : config.basePath
  return new URL(request.url).pathname === `${base}${INSPECTOR_PATH}`
}

/** The signature of {@link Auth}. */
export interface AuthHandler {
  (request: Request, config: AuthConfig & { raw: typeof raw }): Promise<ResponseInternal>
  (request: Request, config: Omit<AuthConfig, 'raw'>): Promise<Response>
}

/**
 * Builds a handler over a routing table. {@link Auth} is the handler over the built-in routes;
 * flow extensions and tests add routes of their own.
 */
export function createHandler(table: readonly Route[]): AuthHandler {
  async function handle(request: Request, config: AuthConfig): Promise<Response | ResponseInternal> {
    const resolution = resolveConfig(config)
    const logger = resolution.ok ? resolution.config.logger : resolution.logger
    if (resolution.ok && resolution.config.inspector && isInspectorRequest(request, resolution.config)) {
      // Flow charts and traces describe the deployment and its users: development and loopback only.
      return respondInspector(resolution.config, request)
    }
    let parsed: ParsedRequest
    try {
      parsed = await parseRequest(
        request,
        resolution.ok ? resolution.config.basePath : fallbackBasePath(config),
      )
    } catch (error) {
      logger.error(error instanceof Error ? error : new Error(String(error)))
      const status = error instanceof RequestError ? error.status : 400
      return Response.json('Bad request.', { status })
    }
    if (!resolution.ok) return configurationFailure(parsed, resolution.error, logger, config)
    const resolved = resolution.config
    if (!resolved.trustHost) {
      const untrusted = new UntrustedHost(`Host must be trusted. URL was: ${request.url}`)
      return configurationFailure(parsed, untrusted, logger, config)
    }

    const wantsJsonRedirect = request.headers.has('X-Auth-Return-Redirect')
    try {
      const { response: internal, failure: reported } = await dispatch(
        request,
        parsed,
        resolved,
        table,
      )
      if (resolved.raw) {
        if (reported && !wantsJsonRedirect) throw errorOfType(reported.type, reported.code)
        return internal.redirect ? { ...internal, redirect: encodeLocation(internal.redirect) } : internal
      }
      const response = toResponse(internal)
      const location = response.headers.get('Location')
      if (!wantsJsonRedirect || !location) return response
      // Errors answer a bare {url}, as Auth.js does (its errors are thrown past the headers).
      if (reported) return Response.json({ url: location })
      return Response.json({ url: location }, { headers: response.headers })
    } catch (error) {
      if (resolved.raw && !wantsJsonRedirect && error instanceof AuthError) throw error
      logger.error(error instanceof Error ? error : new Error(String(error)))
      return failure(error, parsed, resolved, table, wantsJsonRedirect)
    }
  }
  return handle as AuthHandler
}

/**
 * Handles an authentication request: a web `Request` and a config in, a web `Response` out
 * (or the internal response object when `config.raw` is the {@link raw} marker).
 *
 * @example
 * ```ts
 * import { Auth } from 'authchart'
 * import Credentials from 'authchart/providers/credentials'
 *
 * const response = await Auth(request, {
 *   secret: process.env.AUTH_SECRET,
 *   trustHost: true,
 *   providers: [Credentials({ credentials: { password: {} }, authorize: checkPassword })],
 * })
 * ```
 */
export const Auth: AuthHandler = createHandler(routes)
