/**
 * What every integration does the same way: the configuration resolved once (environment defaults
 * applied to a copy, validated, then never touched again) and the session read on the server.
 *
 * @module
 */
import { Auth } from '../../core/auth.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import { setEnvDefaults, type EnvObject } from '../../core/env.js'
import { UntrustedHost } from '../../core/errors.js'
import { raw } from '../../core/symbols.js'
import type { AuthConfig, Cookie, ResponseInternal, Session } from '../../core/types.js'
import { configuredOrigin } from './request-url.js'

/** A configuration as integrations take it: the core's, without `raw`. */
export type IntegrationConfig = Omit<AuthConfig, 'raw'>

/** A configuration after {@link prepareConfig}, with the origin `AUTH_URL` pins, if any. */
export interface PreparedConfig {
  readonly config: IntegrationConfig
  /** The origin from `AUTH_URL`; requests are answered for it whatever their `Host`. */
  readonly origin: string | undefined
}

const prepared = new WeakMap<object, PreparedConfig>()

/**
 * Applies the environment's defaults (`AUTH_SECRET`, `AUTH_TRUST_HOST`, provider ids…) to a copy
 * of `config` and validates it, once per config object: later calls return the same result, and
 * the application's object is never written to.
 *
 * @throws {ConfigError} (or the Auth.js error class, such as `MissingSecret`) when the config is
 *   invalid, so that a broken app fails at boot rather than at its first request.
 * @see reference §8 (`setEnvDefaults`)
 */
export function prepareConfig(
  config: IntegrationConfig,
  env: EnvObject,
  overrides: Partial<IntegrationConfig> = {},
): PreparedConfig {
  const known = prepared.get(config)
  if (known) return known
  const copy = { ...config, ...overrides } as AuthConfig
  setEnvDefaults(env, copy, true)
  assertConfig(copy)
  const result = Object.freeze({ config: copy, origin: configuredOrigin(env) })
  prepared.set(config, result)
  return result
}

/** The same configuration under another `basePath` (one per mount point), made once each. */
export function withBasePath(config: IntegrationConfig, basePath: string): IntegrationConfig {
  let byPath = rebased.get(config)
  if (!byPath) rebased.set(config, (byPath = new Map()))
  let copy = byPath.get(basePath)
  if (!copy) {
    copy = { ...config, basePath }
    assertConfig(copy as AuthConfig)
    // Mount paths with parameters could otherwise grow this without bound.
    if (byPath.size < 32) byPath.set(basePath, copy)
  }
  return copy
}
const rebased = new WeakMap<object, Map<string, IntegrationConfig>>()

const rawConfigs = new WeakMap<object, AuthConfig & { raw: typeof raw }>()

/** The result of {@link readSession}. */
export interface SessionRead {
  session: Session | null
  /** Cookies the session read set (a refreshed session, a rotated token). */
  cookies: Cookie[]
}

/**
 * Reads the session of a request through the handler's own `GET {basePath}/session`, so callbacks
 * and cookie rules are the same as for the client. `null` when there is no session.
 *
 * @throws the configuration's error (`MissingSecret`, `ConfigError`…), `UntrustedHost` when the
 *   host is not trusted, and any `AuthError` the session read ended in, each with its own class
 *   (Auth.js turns them all into a bare `Error(message)`).
 */
export async function readSession(
  config: IntegrationConfig,
  origin: string,
  cookie: string | null | undefined,
): Promise<SessionRead> {
  const resolved = assertConfig(config as AuthConfig)
  if (!resolved.trustHost) throw new UntrustedHost(`Host must be trusted. URL was: ${origin}`)
  let rawConfig = rawConfigs.get(config)
  if (!rawConfig) rawConfigs.set(config, (rawConfig = { ...config, raw } as AuthConfig & { raw: typeof raw }))
  const base = resolved.basePath === '/' ? '' : resolved.basePath
  const headers = new Headers()
  if (cookie) headers.set('cookie', cookie)
  const internal = (await Auth(new Request(`${origin}${base}/session`, { headers }), rawConfig)) as
    | ResponseInternal<Session | null>
    | Response
  // A config that resolves cannot reach the handler's Response-only paths; keep the types honest.
  if (internal instanceof Response) throw new Error(`Unexpected session answer ${internal.status}`)
  const body = internal.body
  const session = body && typeof body === 'object' && Object.keys(body).length > 0 ? body : null
  return { session, cookies: internal.cookies ?? [] }
}

/** What a server-side sign-in or sign-out ({@link serverAction}) asks for. */
export interface ServerActionInput {
  action: 'signin' | 'signout'
  providerId?: string | undefined
  /** Where the user lands afterwards (`callbackUrl`). */
  redirectTo: string
  /** Form fields for the provider (credentials, email address…). */
  fields?: Record<string, string>
  /** Extra authorization parameters for an OAuth provider. */
  authorizationParams?: Record<string, string>
}

/** The outcome of {@link serverAction}: where to send the browser, and the cookies to set. */
export interface ServerActionResult {
  url: string
  cookies: Cookie[]
}

const mergeCookieHeader = (header: string | null | undefined, cookies: Cookie[]) => {
  const pairs = new Map<string, string>()
  for (const part of (header ?? '').split(/;\s*/)) {
    const eq = part.indexOf('=')
    if (eq > 0) pairs.set(part.slice(0, eq), part.slice(eq + 1))
  }
  for (const cookie of cookies) pairs.set(cookie.name, encodeURIComponent(cookie.value))
  return [...pairs].map(([name, value]) => `${name}=${value}`).join('; ')
}

/**
 * Signs in or out on the server, for frameworks whose forms post to their own routes (SvelteKit
 * form actions, Qwik actions). It goes through the handler's own routes with a CSRF token it
 * fetched for the same cookies: the framework route that calls it must have checked the request's
 * origin first, since that check is what protects it. Failures (a wrong password, an unknown
 * provider) come back as the URL of the page that reports them, never as an exception.
 *
 * @throws the configuration's error or `UntrustedHost`, as {@link readSession}.
 */
export async function serverAction(
  config: IntegrationConfig,
  origin: string,
  cookie: string | null | undefined,
  input: ServerActionInput,
): Promise<ServerActionResult> {
  const resolved = assertConfig(config as AuthConfig)
  if (!resolved.trustHost) throw new UntrustedHost(`Host must be trusted. URL was: ${origin}`)
  const base = `${origin}${resolved.basePath === '/' ? '' : resolved.basePath}`
  const provider = input.providerId ? resolved.providerById.get(input.providerId) : undefined
  if (input.action === 'signin' && !provider) {
    const signInPage = resolved.pages.signIn ?? `${base}/signin`
    return { url: `${signInPage}?${new URLSearchParams({ callbackUrl: input.redirectTo })}`, cookies: [] }
  }
  let rawConfig = rawConfigs.get(config)
  if (!rawConfig) rawConfigs.set(config, (rawConfig = { ...config, raw } as AuthConfig & { raw: typeof raw }))
  const csrf = (await Auth(new Request(`${base}/csrf`, { headers: cookie ? { cookie } : {} }), rawConfig)) as ResponseInternal<{
    csrfToken: string
  }>
  const csrfCookies = csrf.cookies ?? []
  let path = '/signout'
  if (provider) {
    const query = new URLSearchParams(input.authorizationParams).toString()
    path = provider.type === 'credentials' ? `/callback/${provider.id}` : `/signin/${provider.id}${query ? `?${query}` : ''}`
  }
  const body = new URLSearchParams({ ...input.fields, csrfToken: csrf.body!.csrfToken, callbackUrl: input.redirectTo })
  const request = new Request(`${base}${path}`, {
    method: 'POST',
    headers: {
      cookie: mergeCookieHeader(cookie, csrfCookies),
      'content-type': 'application/x-www-form-urlencoded',
      // Failures then come back as the error page's URL instead of a thrown error.
      'x-auth-return-redirect': '1',
    },
    body,
  })
  const answer = (await Auth(request, rawConfig)) as ResponseInternal | Response
  if (answer instanceof Response) {
    const { url } = (await answer.json()) as { url: string }
    return { url, cookies: csrfCookies }
  }
  return { url: answer.redirect ?? input.redirectTo, cookies: [...csrfCookies, ...(answer.cookies ?? [])] }
}

/**
 * Whether a state-changing request comes from one of `origins` (by its `Origin` header, else by
 * `Sec-Fetch-Site`). A request with neither header is not from a browser that could be abused
 * for login CSRF, and passes. Server-side sign-in ({@link serverAction}) fetches its own CSRF
 * token, so the framework route calling it must pass this check first.
 */
export function isSameOrigin(request: Request, origins: readonly (string | undefined)[]): boolean {
  const origin = request.headers.get('origin')
  if (origin !== null) return origins.includes(origin)
  const site = request.headers.get('sec-fetch-site')
  return site === null || site === 'same-origin' || site === 'none'
}
