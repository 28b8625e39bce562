/**
 * What every integration does the same way: the configuration resolved once (environment defaults
 * applied to a copy, validated, then never touched again) and the session read on the server.
 *
 * @module
 */
import { assertTrustedOrigin } from '../../core/config/trusted-hosts.js'
import { isRoutedAction } from '../../core/actions.js'
import { Auth } from '../../core/auth.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import { setEnvDefaults, type EnvObject } from '../../core/env.js'
import { setClientAddress } from '../../core/http/request.js'
import { signIn, signOut, type ServerRequest } from '../../core/server.js'
import type { AuthConfig, Cookie } from '../../core/types.js'
import { configuredOrigin, requestUrl } from './request-url.js'

// The session read in process: the session route's logic on the framework's request.
export { isSameOrigin, readSession, type ServerRequest, type SessionRead } from '../../core/server.js'

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

/**
 * A framework's request (its `url` as the framework derived it, the client address it reports) as
 * the in-process session read and actions take it, answered for `AUTH_URL`'s origin when set.
 */
export function serverRequestOf(prepared: PreparedConfig, request: Request, url: URL, clientAddress: string | undefined): ServerRequest {
  return {
    origin: prepared.origin ?? url.origin,
    cookie: request.headers.get('cookie'),
    headers: request.headers,
    clientAddress,
    origins: [url.origin],
  }
}

/**
 * Serves a request for the core's routes (`<basePath>/<action>…`) from a framework's hook, or
 * answers `undefined` for any other path (the framework's own). The core sees the URL under
 * `AUTH_URL`'s origin when set, else the framework's, and the client address the framework reports
 * (the inspector's loopback rule, rate limits).
 */
export async function serveAuthRoutes(
  prepared: PreparedConfig,
  request: Request,
  url: URL,
  clientAddress: string | undefined,
): Promise<Response | undefined> {
  const base = prepared.config.basePath ?? '/auth'
  const [action] = url.pathname.slice(base.length + 1).split('/')
  if (!url.pathname.startsWith(`${base}/`) || !action || !isRoutedAction(action)) return undefined
  const origin = prepared.origin ?? url.origin
  const target = requestUrl(`${url.pathname}${url.search}`, origin, () => origin)
  const moved = target.href !== request.url
  const body = moved && request.method === 'POST' ? await request.arrayBuffer() : undefined
  const forwarded = moved ? new Request(target, { method: request.method, headers: request.headers, body }) : request
  return Auth(clientAddress ? setClientAddress(forwarded, clientAddress) : forwarded, prepared.config)
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

/**
 * Signs in or out on the server, for frameworks whose forms post to their own routes (SvelteKit
 * form actions, Qwik actions), in process: the flow of the route a browser would post to runs on
 * the framework's request. In place of the CSRF token, a request from another origin is refused
 * (`MissingCSRF`, reported on the sign-in page); the framework route should refuse it first with
 * its own answer. Failures (a wrong password, an unknown provider) come back as the URL of the page
 * that reports them, never as an exception.
 *
 * @throws the configuration's error (`MissingSecret`, `ConfigError`…) or `UntrustedHost`;
 *   `RequestError` for a `redirectTo` that is not an http(s) URL (answer it 400).
 */
export async function serverAction(
  config: IntegrationConfig,
  request: ServerRequest,
  input: ServerActionInput,
): Promise<ServerActionResult> {
  if (input.action === 'signout') {
    const { redirect, cookies } = await signOut(request, config, { redirectTo: input.redirectTo })
    return { url: redirect, cookies }
  }
  const resolved = assertConfig(config as AuthConfig)
  assertTrustedOrigin(resolved, request.origin)
  if (input.providerId === undefined || !resolved.providerById.has(input.providerId)) {
    const signInPage = resolved.pages.signIn ?? `${request.origin}${resolved.basePath === '/' ? '' : resolved.basePath}/signin`
    return { url: `${signInPage}?${new URLSearchParams({ callbackUrl: input.redirectTo })}`, cookies: [] }
  }
  const { redirect, cookies } = await signIn(request, config, input)
  return { url: redirect, cookies }
}
