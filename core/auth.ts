/**
 * `Auth(request, config)`: a web `Request` and a config in, a web `Response` out. Every failure
 * becomes a status or a redirect with a logged reason; nothing escapes as an exception (except to
 * `raw` callers, who receive AuthErrors as Auth.js throws them).
 *
 * @module
 */
import { JSON_ACTIONS, PAGE_ACTIONS } from './actions.js'
import { resolveConfig, type ResolvedConfig } from './config/resolve-config.js'
import { isTrustedHost, unlistedHostMessage } from './config/trusted-hosts.js'
import {
  AuthError,
  ErrorPageLoop,
  FlowExpired,
  FlowStateError,
  errorOfType,
  RequestError,
  UntrustedHost,
  type ServiceUnavailable,
} from './errors.js'
import {
  Answer,
  answerOf,
  answerOfResponse,
  HeaderMap,
  isPlainBody,
  jsonAnswer,
  prepareAnswer,
  redirectAnswer,
  responseOf,
  toAnswer,
} from './http/answer.js'
import { dispatch, encodeLocation, errorRedirectUrl, routeFor, signInAgainUrl, type Dispatched } from './http/dispatch.js'
import { loadFlowModules } from './flows/kinds.js'
import { readyExtendedCompletion } from './flows/signin-completion/flow.js'
import { HTML_NO_STORE_HEADERS, JSON_NO_STORE_HEADERS } from './http/handlers.js'
import { parseActionPath, parseSource, webRequestSource, type ParsedRequest, type RequestSource } from './http/request.js'
import { routingTable, type Route } from './http/routes.js'
import type { Logger } from './logger.js'
import { renderErrorPage } from './pages/index.js'
import { renderUnavailablePage } from './pages/notices.js'
import { outageOf, wasReported } from './outage.js'
import type { raw } from './symbols.js'
import type { AuthConfig, ResponseInternal } from './types.js'
import { endObserved, finishObserved, observerPage, startObserved } from './observe/notify.js'

const CONFIGURATION_MESSAGE =
  'There was a problem with the server configuration. Check the server logs for more information.'

const DEFAULT_THEME = { colorScheme: 'auto', logo: '', brandColor: '', buttonText: '' } as const

/** Converts an internal response to a web `Response` (cookies serialised, JSON encoded). */
export function toResponse(internal: ResponseInternal): Response {
  const { status, headers, body } = prepareAnswer(internal)
  if (isPlainBody(body)) return responseOf(answerOf(status, headers, body) as Answer)
  // A stream, blob or form: the web Response reads it itself.
  return new Response(body as BodyInit, { status, headers: headers.list() })
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
): Answer | Promise<Answer> {
  logger.error(error)
  if (request.method !== 'GET' || !PAGE_ACTIONS.has(request.action)) {
    return jsonAnswer({ message: CONFIGURATION_MESSAGE }, 500)
  }
  const errorPage = typeof source?.pages?.error === 'string' ? source.pages.error : undefined
  const loops = errorPage !== undefined && request.query.callbackUrl?.startsWith(errorPage)
  if (errorPage !== undefined && !loops) {
    return redirectAnswer(`${request.url.origin}${errorPage}?error=Configuration`)
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
  const headers = new HeaderMap()
  headers.set('content-type', 'text/html')
  return answerOf(page.status, headers, page.html)
}

/**
 * A back-channel logout request refused before its flow ran (a body too large or not UTF-8, a
 * provider that is not an OpenID Connect one): 400 with the JSON error OpenID Connect Back-Channel
 * Logout §2.8 asks for, never the generic answer, since the provider reads it.
 */
function logoutRequestRefused(description: string, status = 400, allow?: string): Answer | Promise<Answer> {
  const headers = HeaderMap.of(JSON_NO_STORE_HEADERS)
  if (allow !== undefined) headers.set('allow', allow)
  return jsonAnswer({ error: 'invalid_request', error_description: description }, status, headers)
}

/**
 * The refusal of a back-channel logout request that reached no flow, in the words its provider's
 * operator needs: an id that names no OpenID Connect provider (400), else a method other than
 * POST (405, `Allow: POST`), else what the request parser said.
 */
function backchannelRefusal(config: ResolvedConfig, method: string, providerId: string | undefined, error: unknown): Answer | Promise<Answer> {
  const provider = providerId === undefined ? undefined : config.providerById.get(providerId)
  if (provider === undefined) {
    return logoutRequestRefused(`no OpenID Connect provider with the id ${JSON.stringify(providerId ?? '')} is configured`)
  }
  if (provider.type !== 'oidc') {
    return logoutRequestRefused(`${JSON.stringify(providerId)} is not an OpenID Connect provider: it has no back-channel logout`)
  }
  if (method !== 'POST') {
    return logoutRequestRefused(
      `backchannel-logout accepts only POST (a form post of logout_token, OpenID Connect Back-Channel Logout 1.0 §2.5), not ${method}`,
      405,
      'POST',
    )
  }
  return logoutRequestRefused(error instanceof RequestError ? error.message : 'bad request')
}

/** The provider id of `source`'s path, if it has one. */
function providerIdOf(source: RequestSource, basePath: string): string | undefined {
  try {
    const url = typeof source.url === 'string' ? new URL(source.url) : source.url
    return parseActionPath(url.pathname, basePath).providerId
  } catch {
    return undefined
  }
}

/** Whether `source` asks for the back-channel logout route (whatever else is wrong with it). */
function isBackchannelLogout(source: RequestSource, basePath: string): boolean {
  try {
    const url = typeof source.url === 'string' ? new URL(source.url) : source.url
    return parseActionPath(url.pathname, basePath).action === 'backchannel-logout'
  } catch {
    return false
  }
}

/** A browser's request for a path under the base path that names nothing: a page saying so, 404. */
function notFoundPage(request: ParsedRequest, config: ResolvedConfig): Answer | Promise<Answer> {
  const page = renderErrorPage({
    theme: config.theme,
    error: 'NotFound',
    url: request.url,
    signInUrl: `${request.url.origin}${config.basePath}/signin`,
  })
  return toAnswer({ status: page.status, headers: HTML_NO_STORE_HEADERS, body: page.html })
}

/** Answers a request whose handling threw: 400 `null` on API routes, else an error redirect. */
function failure(
  error: unknown,
  request: ParsedRequest,
  config: ResolvedConfig,
  table: readonly Route[],
  wantsJsonRedirect: boolean,
): Answer | Promise<Answer> {
  if (request.action === 'backchannel-logout') {
    return backchannelRefusal(config, request.method, request.providerId, error)
  }
  if (error instanceof RequestError) {
    if (error.status === 404 && /\btext\/html\b/i.test(request.headers.get('accept') ?? '')) return notFoundPage(request, config)
    return jsonAnswer(error.status === 404 ? 'Not found.' : 'Bad request.', error.status)
  }
  if (routeFor(request, config, table)?.failure === 'json-null') {
    return jsonAnswer(null, 400)
  }
  const authError = isFlowGone(error) ? new FlowExpired() : error instanceof AuthError ? error : undefined
  const url = errorRedirectUrl(
    config,
    request.url.origin,
    authError?.type ?? 'Configuration',
    authError?.kind ?? 'error',
    authError && 'code' in authError ? String(authError.code) : undefined,
  )
  return wantsJsonRedirect ? jsonAnswer({ url }) : redirectAnswer(url)
}

/**
 * Whether a step or callback failed only because its flow is gone (its cookie missing or expired),
 * directly or as the cause a flow's own error carries: the user starts again, nothing is wrong
 * with the server. A tampered or foreign envelope is not this: it stays the flow's own error.
 */
function isFlowGone(error: unknown): boolean {
  let current = error
  for (let depth = 0; current instanceof Error && depth < 3; depth++) {
    if (current instanceof FlowStateError) return current.code === 'ERR_FLOW_STATE_MISSING' || current.code === 'ERR_FLOW_STATE_STALE'
    // An AuthError keeps what it wraps as Auth.js does, in `cause.err`.
    const cause: unknown = current.cause
    current = cause instanceof Error ? cause : (cause as { err?: unknown } | undefined)?.err
  }
  return false
}

/** Waits for a dispatch, then tells the observers how the request's flows ended. */
async function observed(
  config: ResolvedConfig,
  request: ParsedRequest,
  source: RequestSource,
  dispatching: Promise<Dispatched>,
): Promise<Dispatched> {
  try {
    const dispatched = await dispatching
    await finishObserved(config, request, source, dispatched.failure ? { failure: dispatched.failure } : {})
    return dispatched
  } catch (error) {
    await finishObserved(config, request, source, { error })
    throw error
  }
}

/** Whether a request wants JSON back rather than a page (an API client's fetch). */
function prefersJson(request: ParsedRequest): boolean {
  const accept = request.headers.get('accept') ?? ''
  return accept.includes('application/json') && !accept.includes('text/html')
}

/**
 * The answer while a part the request needs is down: 503 with `Retry-After`, never cached. An API
 * route (or a client that asked for JSON) gets `{ message }`; a client that asked for the redirect
 * as JSON (`X-Auth-Return-Redirect`) gets the sign-in page with `?error=ServiceUnavailable` as its
 * `url`; a browser gets a page that says so and links back to the sign-in page, callback URL kept.
 * No cookie changes: the session cookie and any flow cookie stay as they were, so the same request
 * can be made again.
 */
function unavailable(
  outage: ServiceUnavailable,
  request: ParsedRequest,
  config: ResolvedConfig,
  table: readonly Route[],
  wantsJsonRedirect: boolean,
): Answer | Promise<Answer> {
  const headers = new HeaderMap()
  headers.set('retry-after', String(outage.retryAfter))
  headers.set('cache-control', 'no-store')
  const signInUrl = signInAgainUrl(config, request)
  if (wantsJsonRedirect) {
    const url = new URL(signInUrl)
    url.searchParams.set('error', 'ServiceUnavailable')
    return jsonAnswer({ url: url.href }, 503, headers)
  }
  if (JSON_ACTIONS.has(request.action) || routeFor(request, config, table)?.failure === 'json-null' || prefersJson(request)) {
    return jsonAnswer({ message: 'Service unavailable. Try again later.' }, 503, headers)
  }
  const page = renderUnavailablePage({ theme: config.theme, retryAfter: outage.retryAfter, signInUrl })
  headers.set('content-type', 'text/html')
  return answerOf(page.status, headers, page.html)
}

/** The page an observer serves at the request's path (the flow inspector's), if any. */
function observerPageOf(source: RequestSource, config: ResolvedConfig) {
  const url = typeof source.url === 'string' ? new URL(source.url) : source.url
  return observerPage(config, source.method, url.pathname)
}

/** Whether `source`'s path, trailing slashes aside, is `{basePath}` followed by one of `routes`. */
function isRouteOf(source: RequestSource, basePath: string, routes: readonly string[]): boolean {
  const url = typeof source.url === 'string' ? new URL(source.url) : source.url
  const base = basePath === '/' ? '' : basePath
  const path = url.pathname.replace(/\/+$/, '')
  return path.startsWith(base) && routes.includes(path.slice(base.length))
}

/** The routes of `serviceAccounts()`. */
const SERVICE_ACCOUNT_ROUTES = ['/oauth/token', '/jwks']
/** The routes of `deviceAuthorization()` (the token endpoint is shared with service accounts). */
const DEVICE_ROUTES = ['/device_authorization', '/oauth/token']

/** The signature of {@link Auth}. */
export interface AuthHandler {
  (request: Request, config: AuthConfig & { raw: typeof raw }): Promise<ResponseInternal>
  (request: Request, config: Omit<AuthConfig, 'raw'>): Promise<Response>
}

/**
 * Answers a request from any source: a web `Response` only for the inspector's page and the routes
 * of `serviceAccounts()` (the token endpoint and key set), the internal
 * response for `raw` configs, an {@link Answer} otherwise.
 */
type SourceHandler = (source: RequestSource, config: AuthConfig) => Promise<Answer | Response | ResponseInternal>

function createSourceHandler(table?: readonly Route[]): SourceHandler {
  return async function handle(source, config) {
    const resolution = resolveConfig(config)
    const logger = resolution.ok ? resolution.config.logger : resolution.logger
    if (resolution.ok && resolution.config.observers.length > 0) {
      const page = observerPageOf(source, resolution.config)
      if (page) return page.respond(resolution.config, source.request())
    }
    // One token endpoint for both features: the device code grant is the device module's, any other grant the service accounts'.
    if (resolution.ok && resolution.config.deviceAuthorization && isRouteOf(source, resolution.config.basePath, DEVICE_ROUTES)) {
      const served = await resolution.config.deviceAuthorization.serve(source.request(), config)
      if (served) return served
    }
    if (resolution.ok && resolution.config.serviceAccounts && isRouteOf(source, resolution.config.basePath, SERVICE_ACCOUNT_ROUTES)) {
      const served = await resolution.config.serviceAccounts.serve(source.request(), config)
      if (served) return served
    }
    let parsed: ParsedRequest
    try {
      const parsing = parseSource(source, resolution.ok ? resolution.config.basePath : fallbackBasePath(config))
      parsed = parsing instanceof Promise ? await parsing : parsing
    } catch (error) {
      logger.error(error instanceof Error ? error : new Error(String(error)))
      const basePath = resolution.ok ? resolution.config.basePath : fallbackBasePath(config)
      if (resolution.ok && isBackchannelLogout(source, basePath)) {
        return backchannelRefusal(resolution.config, source.method === 'HEAD' ? 'GET' : source.method, providerIdOf(source, basePath), error)
      }
      const status = error instanceof RequestError ? error.status : 400
      return jsonAnswer(status === 404 ? 'Not found.' : 'Bad request.', status)
    }
    if (!resolution.ok) return configurationFailure(parsed, resolution.error, logger, config)
    const resolved = resolution.config
    const routed = table ?? routingTable(resolved)
    if (!resolved.trustHost) {
      const href = typeof source.url === 'string' ? source.url : source.url.href
      const untrusted = new UntrustedHost(`Host must be trusted. URL was: ${href}`)
      return configurationFailure(parsed, untrusted, logger, config)
    }
    if (resolved.trustedHosts) {
      // A forged Host is refused before any route can put it in a link, a redirect or a cookie.
      if (!isTrustedHost(resolved.trustedHosts, parsed.url)) {
        logger.error(new UntrustedHost(unlistedHostMessage(parsed.url)))
        return jsonAnswer('Bad request.', 400)
      }
    }

    // The first request of a configuration with an OAuth, e-mail or WebAuthn provider loads its flow.
    const loadingFlows = loadFlowModules(resolved.providers)
    if (loadingFlows) {
      try {
        await loadingFlows
      } catch (error) {
        return configurationFailure(parsed, error as Error, logger, config)
      }
    }
    // A configuration with extensions composes its completion (with xstate) before its first request.
    if (resolved.extensions.length > 0) {
      try {
        await readyExtendedCompletion(resolved)
      } catch (error) {
        return configurationFailure(parsed, error as Error, logger, config)
      }
    }

    const wantsJsonRedirect = source.header('x-auth-return-redirect') !== null
    if (resolved.observers.length === 0) return answerResolved(source, parsed, resolved, routed, wantsJsonRedirect)
    return answerObserved(source, parsed, resolved, routed, wantsJsonRedirect)
  }
}

/** Answers a parsed request under a resolved config, with the routing table it was routed by. */
type AnswerRequest = (
  source: RequestSource,
  parsed: ParsedRequest,
  resolved: ResolvedConfig,
  table: readonly Route[],
  wantsJsonRedirect: boolean,
) => Promise<Answer | ResponseInternal>

/** {@link answerResolved} told to the observers: its start, and its status or what it threw. */
const answerObserved: AnswerRequest = async (source, parsed, resolved, table, wantsJsonRedirect) => {
  await startObserved(resolved, parsed)
  try {
    const answered = await answerResolved(source, parsed, resolved, table, wantsJsonRedirect)
    endObserved(resolved, parsed, answered instanceof Answer ? answered.status : (answered.status ?? (answered.redirect ? 302 : 200)))
    return answered
  } catch (error) {
    endObserved(resolved, parsed, undefined, error)
    throw error
  }
}

/** Dispatches a parsed request under a resolved config and turns every failure into an answer. */
const answerResolved: AnswerRequest = async (source, parsed, resolved, table, wantsJsonRedirect) => {
  const { logger } = resolved
  const guard = { base: parsed.url.origin, logger }
  try {
    const dispatching = dispatch(source, parsed, resolved, table)
    const { response: internal, failure: reported } = await (resolved.observers.length > 0 ? observed(resolved, parsed, source, dispatching) : dispatching)
    if (resolved.raw) {
      if (reported && !wantsJsonRedirect) throw errorOfType(reported.type, reported.code)
      return internal.redirect ? { ...internal, redirect: encodeLocation(internal.redirect, guard) } : internal
    }
    const converted = toAnswer(internal, guard)
    const answer = converted instanceof Answer ? converted : await converted
    if (!wantsJsonRedirect) return answer
    const location = answer.headers.find(([name]) => name === 'location')?.[1]
    if (!location) return answer
    // Errors answer a bare {url}, as Auth.js does (its errors are thrown past the headers).
    if (reported) return await jsonAnswer({ url: location })
    return await jsonAnswer({ url: location }, 200, HeaderMap.of(answer.headers as [string, string][]))
  } catch (error) {
    const outage = outageOf(error)
    if (outage) {
      // Logged once: by the adapter wrapper, or by the effect that met it, or here.
      if (!wasReported(outage)) logger.error(outage)
      // A raw caller (a server-side session read) learns of it as an exception, never as "no session".
      if (resolved.raw && !wantsJsonRedirect) throw outage
      return unavailable(outage, parsed, resolved, table, wantsJsonRedirect)
    }
    if (resolved.raw && !wantsJsonRedirect && error instanceof AuthError) throw error
    logger.error(error instanceof Error ? error : new Error(String(error)))
    return failure(error, parsed, resolved, table, wantsJsonRedirect)
  }
}

/**
 * Builds a handler over a routing table. {@link Auth} is the handler over each configuration's own
 * table (the core routes and those of its flows); tests add routes of their own.
 */
export function createHandler(table?: readonly Route[]): AuthHandler {
  const handle = createSourceHandler(table)
  async function handleRequest(request: Request, config: AuthConfig): Promise<Response | ResponseInternal> {
    const answered = await handle(webRequestSource(request), config)
    return answered instanceof Answer ? responseOf(answered) : answered
  }
  return handleRequest as AuthHandler
}

const answerBuiltIn = createSourceHandler()

/**
 * Answers a request without web `Request`/`Response` objects, for server integrations that can
 * write an {@link Answer} to their own reply. The same routing table, checks and bytes as
 * {@link Auth}, which goes through it too.
 *
 * @throws {TypeError} for a `raw` configuration (only {@link Auth} returns internal responses).
 */
export async function answerRequest(source: RequestSource, config: Omit<AuthConfig, 'raw'>): Promise<Answer> {
  const answered = await answerBuiltIn(source, config as AuthConfig)
  if (answered instanceof Answer) return answered
  if (answered instanceof Response) return answerOfResponse(answered)
  throw new TypeError('answerRequest does not take a raw configuration')
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
export const Auth: AuthHandler = createHandler()
