/**
 * The session and sign-in for the application's own server code (a page, a form action, a server
 * action), in process: each runs the logic of the route that serves it over HTTP (`GET /session`,
 * `POST /callback/<credentials>`, `POST /signin/<provider>`, `POST /signout`, `POST /session`),
 * with the same routing table, flows, callbacks and cookies, on the request the application is
 * answering. No web `Request` is sent to the handler and no CSRF token is fetched.
 *
 * What replaces the double-submit token for the actions is the request's origin: the application's
 * route that calls {@link signIn}, {@link signOut} or {@link updateSession} answers a request a
 * browser sent, and a cross-site form must not sign that browser in (login CSRF) or out. Each of
 * them refuses a request whose `Origin` (else `Sec-Fetch-Site`) names another site, as
 * `MissingCSRF`, the error the double-submit check reports.
 *
 * @module
 */
import { assertTrustedOrigin } from './config/trusted-hosts.js'
import { resolveConfig, type ResolvedConfig } from './config/resolve-config.js'
import { parseCookieHeader, type RequestCookies } from './cookies.js'
import {
  AuthError,
  errorOfType,
  kindOfType,
  MissingCSRF,
  RequestError,
  type ErrorType,
} from './errors.js'
import { loadFlowModules } from './flows/kinds.js'
import { readyExtendedCompletion } from './flows/signin-completion/flow.js'
import { outageOf, wasReported } from './outage.js'
import { dispatch, encodeLocation, errorRedirectUrl } from './http/dispatch.js'
import type { ParsedRequest, RequestSource } from './http/request.js'
import { routingTable, type Route } from './http/routes.js'
import type { RoutedAction } from './actions.js'
import type { AuthConfig, Cookie, Session } from './types.js'
import type { RequestContext } from './http/context.js'
import { requestFreshness, type Freshness, type StepUpPolicy } from './session/freshness.js'

/** The request the application's server code is answering, as the in-process calls read it. */
export interface ServerRequest {
  /** The origin it is answered for: the integration's URL rule applied (`AUTH_URL`'s, else detected). */
  readonly origin: string
  /** Its `Cookie` header (for a server action: the cookies as the action has left them so far). */
  readonly cookie: string | null | undefined
  /**
   * Its headers: the actions' origin check reads `Origin` and `Sec-Fetch-Site`; callbacks that
   * take a request (`authorize`, `sendVerificationRequest`) and database sessions (`User-Agent`)
   * read the rest. A function is called only if something reads them.
   */
  readonly headers: Headers | (() => Headers)
  /** The client's address as the framework reports it (its proxy trust applied), for rate limits. */
  readonly clientAddress?: string | undefined
  /**
   * Origins besides {@link origin} that a form of this application may be posted from (the
   * framework's own idea of the request's origin when `AUTH_URL` pins another).
   */
  readonly origins?: readonly (string | undefined)[]
}

/** The result of {@link readSession}. */
export interface SessionRead {
  session: Session | null
  /** Cookies the session read set (a refreshed session, a rotated token). */
  cookies: Cookie[]
}

/** The answer of a sign-in or sign-out: where the browser goes next, and the cookies to set. */
export interface ActionAnswer {
  /** The flow's redirect; after a failure, the page that reports it (`?error=`). */
  redirect: string
  cookies: Cookie[]
  /**
   * The error the action ended in, as `Auth` with a `raw` config throws it (`CredentialsSignin`
   * with its `code`, `MissingCSRF` for a cross-site request…); absent on success.
   */
  error?: AuthError
}

/** What {@link signIn} asks for. */
export interface SignInInput {
  /** The provider to sign in with; without a configured one, the answer is the sign-in page. */
  providerId?: string | undefined
  /** Where the user lands afterwards (`callbackUrl`, through the `redirect` callback). */
  redirectTo: string
  /** Form fields for the provider (credentials, the e-mail address…). */
  fields?: Readonly<Record<string, string>> | undefined
  /** Extra authorization parameters for an OAuth provider. */
  authorizationParams?: Readonly<Record<string, string>> | undefined
}

/** The result of {@link updateSession}. */
export interface SessionUpdate extends SessionRead {
  /** The error the update ended in, as {@link ActionAnswer.error}. */
  error?: AuthError
}

/**
 * Whether a state-changing request comes from one of `origins`, by its `Origin` header, else by
 * `Sec-Fetch-Site`. A request with neither is not from a browser that could be abused for login
 * CSRF, and passes.
 */
export function isSameOrigin(headers: Pick<Headers, 'get'>, origins: readonly (string | undefined)[]): boolean {
  const origin = headers.get('origin')
  if (origin !== null) return origins.includes(origin)
  const site = headers.get('sec-fetch-site')
  return site === null || site === 'same-origin' || site === 'none'
}

/**
 * A configuration's routes as server code reaches them: the same, but no double-submit token to
 * repeat, since {@link isSameOrigin} stands in for it (see the module doc).
 */
const originChecked = new WeakMap<readonly Route[], readonly Route[]>()
function originCheckedRoutes(table: readonly Route[]): readonly Route[] {
  let checked = originChecked.get(table)
  if (!checked) originChecked.set(table, (checked = table.map((route) => (route.csrf ? { ...route, csrf: false } : route))))
  return checked
}

// Body headers of the application's request describe its body, not the in-process one.
const BODY_HEADERS = ['content-length', 'content-type', 'transfer-encoding', 'x-auth-return-redirect']

/** What one in-process call runs: the route's method, action, provider and input. */
interface Target {
  readonly method: 'GET' | 'POST'
  readonly action: RoutedAction
  readonly providerId?: string | undefined
  readonly query?: Readonly<Record<string, string>> | undefined
  readonly body?: Readonly<Record<string, unknown>> | undefined
  /** The body as the HTTP client would send it: JSON, else a form. */
  readonly json?: boolean
}

/**
 * The request the route sees: the application's request under the route's URL, with its cookies
 * and headers and the call's input as the body. Its `headers` are built only if something reads
 * them.
 */
class InProcessRequest implements ParsedRequest {
  readonly method: 'GET' | 'POST'
  readonly action: RoutedAction
  readonly providerId: string | undefined
  readonly cookies: RequestCookies
  readonly query: Readonly<Record<string, string>>
  readonly body: Readonly<Record<string, unknown>> | undefined
  private built: Headers | undefined

  constructor(
    /** The application's request. */
    readonly from: ServerRequest,
    readonly url: URL,
    readonly target: Target,
  ) {
    this.method = target.method
    this.action = target.action
    this.providerId = target.providerId
    this.cookies = parseCookieHeader(from.cookie ?? null)
    this.query = target.query ?? EMPTY
    this.body = target.body
  }

  get headers(): Headers {
    if (this.built) return this.built
    const given = this.from.headers
    const headers = new Headers(typeof given === 'function' ? given() : given)
    for (const name of BODY_HEADERS) headers.delete(name)
    if (this.from.cookie) headers.set('cookie', this.from.cookie)
    else headers.delete('cookie')
    if (this.body) headers.set('content-type', this.target.json ? 'application/json' : 'application/x-www-form-urlencoded')
    return (this.built = headers)
  }

  /** The body's bytes as the content type says. */
  encodedBody(): string | undefined {
    const { body } = this
    if (!body) return undefined
    if (this.target.json) return JSON.stringify(body)
    return new URLSearchParams(body as Record<string, string>).toString()
  }
}

const EMPTY: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>)

/** The same request as the handler's {@link RequestSource}: a web `Request` only if a callback asks for one. */
class InProcessSource implements RequestSource {
  readonly method: string
  readonly url: URL
  readonly clientAddress: string | undefined
  private web: Request | undefined

  constructor(private readonly parsed: InProcessRequest) {
    this.method = parsed.method
    this.url = parsed.url
    this.clientAddress = parsed.from.clientAddress ? parsed.from.clientAddress : undefined
  }

  header(name: string): string | null {
    return this.parsed.headers.get(name)
  }

  headers(): Headers {
    return this.parsed.headers
  }

  async bytes(): Promise<Uint8Array> {
    return new TextEncoder().encode(this.parsed.encodedBody() ?? '')
  }

  request(): Request {
    const body = this.parsed.encodedBody()
    return (this.web ??= new Request(this.url, {
      method: this.method,
      headers: this.parsed.headers,
      ...(body !== undefined ? { body } : {}),
    }))
  }
}

/**
 * The configuration, ready to serve `request`: resolved, its host trusted, the flows of its
 * providers loaded.
 *
 * @throws the configuration's error (`MissingSecret`, `ConfigError`…), or `UntrustedHost`.
 */
function readyConfig(config: Omit<AuthConfig, 'raw'>, request: ServerRequest): ResolvedConfig | Promise<ResolvedConfig> {
  const resolution = resolveConfig(config as AuthConfig)
  if (!resolution.ok) throw resolution.error
  const resolved = resolution.config
  assertTrustedOrigin(resolved, request.origin)
  const loading = loadFlowModules(resolved.providers)
  const extended = resolved.extensions.length > 0 ? readyExtendedCompletion(resolved) : undefined
  if (!loading && !extended) return resolved
  return Promise.all([loading, extended]).then(() => resolved)
}

const basePathOf = (config: ResolvedConfig) => (config.basePath === '/' ? '' : config.basePath)

/** The URL of the route `target` under `origin`. */
function routeUrl(config: ResolvedConfig, origin: string, target: Target): URL {
  const provider = target.providerId === undefined ? '' : `/${encodeURIComponent(target.providerId)}`
  const query = target.query && Object.keys(target.query).length > 0 ? `?${new URLSearchParams(target.query)}` : ''
  return new URL(`${origin}${basePathOf(config)}/${target.action}${provider}${query}`)
}

/** What serving a target produced: the route's internal response, and the error it reports. */
interface Served {
  redirect: string | undefined
  body: unknown
  cookies: Cookie[]
  error?: AuthError
}

/** The page that reports `type` (the sign-in page or the error page, with `?error=`). */
const errorPageOf = (config: ResolvedConfig, origin: string, type: ErrorType, code?: string) =>
  errorRedirectUrl(config, origin, type, kindOfType(type), code)

/**
 * Runs the route for `target` on `request` with the route table `table`. A failure is answered as
 * over HTTP (the page that reports it) and returned as the error `Auth` would throw for a `raw`
 * config; whatever was thrown is logged, as over HTTP.
 *
 * @throws {RequestError} for input the route refuses (a `callbackUrl` that is not an http(s) URL);
 *   `ServiceUnavailable` when the adapter or store it needs is unavailable.
 */
async function serve(
  config: ResolvedConfig,
  request: ServerRequest,
  target: Target,
  table: readonly Route[],
): Promise<Served> {
  const parsed = new InProcessRequest(request, routeUrl(config, request.origin, target), target)
  try {
    const { response, failure } = await dispatch(new InProcessSource(parsed), parsed, config, table)
    return {
      redirect: response.redirect === undefined ? undefined : encodeLocation(response.redirect),
      body: response.body,
      cookies: response.cookies ?? [],
      ...(failure ? { error: errorOfType(failure.type, failure.code) } : {}),
    }
  } catch (error) {
    // An unavailable part is thrown as ServiceUnavailable (logged once, where it was met): the
    // application answers 503, never "signed out" nor the Configuration error.
    const outage = outageOf(error)
    if (outage) {
      if (!wasReported(outage)) config.logger.error(outage)
      throw outage
    }
    config.logger.error(error instanceof Error ? error : new Error(String(error)))
    if (error instanceof RequestError) throw error
    if (error instanceof AuthError) {
      const code = 'code' in error ? String(error.code) : undefined
      return { redirect: errorPageOf(config, request.origin, error.type, code), body: undefined, cookies: [], error }
    }
    return { redirect: errorRedirectUrl(config, request.origin, 'Configuration', 'error'), body: undefined, cookies: [] }
  }
}

/**
 * Refuses a request from another site as the double-submit check would: `MissingCSRF`, logged,
 * answered with the sign-in page that reports it.
 */
function refusedCrossSite(config: ResolvedConfig, request: ServerRequest, action: string): Served | undefined {
  const headers = typeof request.headers === 'function' ? request.headers() : request.headers
  if (isSameOrigin(headers, [request.origin, ...(request.origins ?? [])])) return undefined
  const error = new MissingCSRF(`CSRF token was missing during an action ${action}`)
  config.logger.error(error)
  return { redirect: errorPageOf(config, request.origin, 'MissingCSRF'), body: undefined, cookies: [], error }
}

const sessionOf = (body: unknown): Session | null =>
  body && typeof body === 'object' && Object.keys(body).length > 0 ? (body as Session) : null

const answerOf = (served: Served, fallback: string): ActionAnswer => ({
  redirect: served.redirect ?? fallback,
  cookies: served.cookies,
  ...(served.error ? { error: served.error } : {}),
})

/**
 * Reads the session of `request` with the session route's logic (`GET {basePath}/session`): the
 * same checks, `jwt` and `session` callbacks and cookie rules as the client's session fetch.
 * `null` when there is no session.
 *
 * @throws the configuration's error (`MissingSecret`, `ConfigError`…), `UntrustedHost` when the
 *   host is not trusted, the `AuthError` the read ended in, each with its own class, and
 *   `ServiceUnavailable` (`retryAfter` in seconds) while the database or store it needs is down.
 */
export async function readSession(request: ServerRequest, config: Omit<AuthConfig, 'raw'>): Promise<SessionRead> {
  const ready = readyConfig(config, request)
  const resolved = ready instanceof Promise ? await ready : ready
  const served = await serve(resolved, request, SESSION_READ, routingTable(resolved))
  if (served.error) throw served.error
  return { session: sessionOf(served.body), cookies: served.cookies }
}

const SESSION_READ: Target = { method: 'GET', action: 'session' }

/**
 * Signs in with a provider, as a POST to its route would: credentials and e-mail providers take
 * `fields`, OAuth providers answer with the redirect to the provider. Without a configured
 * provider, the answer is the sign-in page with `callbackUrl`. A request from another site is
 * refused (`MissingCSRF`).
 *
 * @throws the configuration's error or `UntrustedHost`, as {@link readSession};
 *   {@link RequestError} for a `redirectTo` that is not an http(s) URL.
 */
export async function signIn(request: ServerRequest, config: Omit<AuthConfig, 'raw'>, input: SignInInput): Promise<ActionAnswer> {
  const resolved = await readyConfig(config, request)
  const provider = input.providerId === undefined ? undefined : resolved.providerById.get(input.providerId)
  if (!provider) {
    const signInPage = `${request.origin}${basePathOf(resolved)}/signin`
    return { redirect: `${signInPage}?${new URLSearchParams({ callbackUrl: input.redirectTo })}`, cookies: [] }
  }
  const credentials = provider.type === 'credentials'
  const refused = refusedCrossSite(resolved, request, credentials ? 'callback' : 'signin')
  if (refused) return answerOf(refused, input.redirectTo)
  const body: Record<string, unknown> = Object.create(null)
  for (const [name, value] of Object.entries(input.fields ?? {})) body[name] = value
  body.callbackUrl = input.redirectTo
  const target: Target = {
    method: 'POST',
    action: credentials ? 'callback' : 'signin',
    providerId: provider.id,
    ...(credentials ? {} : { query: input.authorizationParams }),
    body,
  }
  return answerOf(await serve(resolved, request, target, originCheckedRoutes(routingTable(resolved))), input.redirectTo)
}

/**
 * Signs out, as a POST to `/signout` would: the session ends (the database row too) and the answer
 * redirects to `redirectTo`. A request from another site is refused (`MissingCSRF`).
 *
 * @throws as {@link signIn}.
 */
export async function signOut(
  request: ServerRequest,
  config: Omit<AuthConfig, 'raw'>,
  input: { redirectTo: string },
): Promise<ActionAnswer> {
  const resolved = await readyConfig(config, request)
  const refused = refusedCrossSite(resolved, request, 'signout')
  if (refused) return answerOf(refused, input.redirectTo)
  const target: Target = { method: 'POST', action: 'signout', body: { callbackUrl: input.redirectTo } }
  return answerOf(await serve(resolved, request, target, originCheckedRoutes(routingTable(resolved))), input.redirectTo)
}

/**
 * Updates the session, as a POST to `/session` would: the `jwt` callback runs with
 * `trigger: 'update'` and `session: data` (the database `session` callback with `newSession`).
 * The session is `null` when there is none, or when the update failed (with the error, if it is
 * an `AuthError`). A request from another site is refused (`MissingCSRF`).
 *
 * @throws the configuration's error or `UntrustedHost`, as {@link readSession}.
 */
export async function updateSession(request: ServerRequest, config: Omit<AuthConfig, 'raw'>, data: unknown): Promise<SessionUpdate> {
  const resolved = await readyConfig(config, request)
  const refused = refusedCrossSite(resolved, request, 'session')
  if (refused) return { session: null, cookies: [], ...(refused.error ? { error: refused.error } : {}) }
  const target: Target = { method: 'POST', action: 'session', body: { data }, json: true }
  let served: Served
  try {
    served = await serve(resolved, request, target, originCheckedRoutes(routingTable(resolved)))
  } catch (error) {
    // Over HTTP the route answers bad input with 400 and a JSON null.
    if (error instanceof RequestError) return { session: null, cookies: [] }
    throw error
  }
  return {
    session: served.error || served.redirect !== undefined ? null : sessionOf(served.body),
    cookies: served.cookies,
    ...(served.error ? { error: served.error } : {}),
  }
}

/**
 * Whether the session of `request` is fresh enough for `policy` (step-up): read through the one
 * authority for who is signed in, as the session route reads it, and measured from its per-factor
 * verification times. No cookie is set and no callback runs.
 *
 * @throws as {@link readSession}.
 */
export async function readFreshness(
  request: ServerRequest,
  config: Omit<AuthConfig, 'raw'>,
  policy: StepUpPolicy,
): Promise<Freshness> {
  const resolved = await readyConfig(config, request)
  const table: readonly Route[] = [
    {
      method: 'GET',
      action: 'session',
      provider: 'none',
      actsForUser: true,
      serve: async (ctx) => ({ body: await requestFreshness(ctx, policy) }),
    },
  ]
  const served = await serve(resolved, request, SESSION_READ, table)
  if (served.error) throw served.error
  return served.body as Freshness
}

/**
 * Runs `read` for `request` as the session read would run: the configuration ready, the host
 * trusted, the request context built, `read` asking the one authority for who is signed in. No
 * cookie is set and no callback runs (the organisations' `can()` reads the membership this way).
 *
 * @throws as {@link readSession}.
 */
export async function readForSignedInUser<T>(
  request: ServerRequest,
  config: Omit<AuthConfig, 'raw'>,
  read: (ctx: RequestContext) => Promise<T>,
): Promise<T> {
  const resolved = await readyConfig(config, request)
  const table: readonly Route[] = [
    { method: 'GET', action: 'session', provider: 'none', actsForUser: true, serve: async (ctx) => ({ body: await read(ctx) }) },
  ]
  const served = await serve(resolved, request, SESSION_READ, table)
  if (served.error) throw served.error
  return served.body as T
}

function authBase(request: ServerRequest, config: Omit<AuthConfig, 'raw'>): string {
  const resolution = resolveConfig(config as AuthConfig)
  return `${request.origin}${resolution.ok ? basePathOf(resolution.config) : '/auth'}`
}

/**
 * The URL of the page where the signed-in user proves one of `factors` again (without signing in
 * anew), returning to `returnTo`.
 */
export function reauthenticationUrl(
  request: ServerRequest,
  config: Omit<AuthConfig, 'raw'>,
  returnTo: string,
  factors?: readonly string[],
): string {
  const query = new URLSearchParams({ callbackUrl: returnTo, ...(factors ? { factors: factors.join(' ') } : {}) })
  return `${authBase(request, config)}/reauthenticate?${query}`
}

/** The URL of the sign-in page, returning to `returnTo`. */
export function signInUrl(request: ServerRequest, config: Omit<AuthConfig, 'raw'>, returnTo: string): string {
  return `${authBase(request, config)}/signin?${new URLSearchParams({ callbackUrl: returnTo })}`
}
