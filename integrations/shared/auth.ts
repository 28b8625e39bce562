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
