/**
 * Hono integration (`authchart/hono`) with `@hono/auth-js`'s surface: switching is a change of
 * import.
 *
 * ```ts
 * import { Hono } from 'hono'
 * import { authHandler, initAuthConfig, verifyAuth } from 'authchart/hono'
 *
 * const app = new Hono()
 * app.use('*', initAuthConfig((c) => ({ secret: c.env.AUTH_SECRET, providers: [] })))
 * app.use('/api/auth/*', authHandler())
 * app.use('/api/*', verifyAuth())
 * app.get('/api/protected', (c) => c.json(c.get('authUser')))
 * app.post('/api/account/delete', requireRecentAuth({ maxAge: 300 }), handler) // step-up
 * ```
 *
 * Where it differs from `@hono/auth-js`: the origin of every URL is `AUTH_URL`'s, else the
 * request's `Host` (`X-Forwarded-Host` and `-Proto` only with `AUTH_TRUST_PROXY=true`), never the
 * authority of an absolute-form request target; without a `basePath` in the config or `AUTH_URL`,
 * the path `authHandler()` is mounted at is the base path.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from 'hono'
import { env } from 'hono/adapter'
import { HTTPException } from 'hono/http-exception'
import type { AdapterUser } from '../../core/adapters.js'
import { Auth } from '../../core/auth.js'
import { serializeCookie } from '../../core/cookies.js'
import { setEnvDefaults as coreSetEnvDefaults } from '../../core/env.js'
import { RequestError, UntrustedHost } from '../../core/errors.js'
import type { JWT } from '../../core/jwt.js'
import { createLogger } from '../../core/logger.js'
import { checkRecentAuth, type RecentAuth, type StepUpPolicy } from '../../core/recent-auth.js'
import type { AuthConfig as CoreConfig, Session } from '../../core/types.js'
import { readSession, withBasePath, type IntegrationConfig } from '../shared/auth.js'
import { configuredOrigin, originFromHeaders, requestUrl, trustsForwardedHeaders } from '../shared/request-url.js'

declare module 'hono' {
  interface ContextVariableMap {
    authUser: AuthUser
    authConfig: AuthConfig
    /** Set by {@link requireRecentAuth}: when the accepted factor was proven. */
    recentAuth: RecentAuth
  }
}

export type { RecentAuth, StepUpPolicy } from '../../core/recent-auth.js'

/** The environment the integration reads (`c.env` on Workers, `process.env` on Node…). */
export type AuthEnv = {
  AUTH_URL?: string
  AUTH_SECRET: string
  AUTH_REDIRECT_PROXY_URL?: string
  [key: string]: string | undefined
}

/** What `verifyAuth()` puts in `c.get('authUser')`: the session, and the token or user behind it. */
export type AuthUser = {
  session: Session
  /** The JWT of a JWT session. */
  token?: JWT
  /** The user row of a database session. */
  user?: AdapterUser
}

/** The configuration: the core's, without `raw`. */
export interface AuthConfig extends IntegrationConfig {}

/** The configuration as a function of the request's context (to read `c.env`). */
export type ConfigHandler = (c: Context) => AuthConfig | Promise<AuthConfig>

/**
 * Applies the environment's defaults to `config` (`AUTH_SECRET`, `AUTH_URL`'s path as `basePath`,
 * `AUTH_TRUST_HOST`, `AUTH_<PROVIDER>_ID`…), as `@hono/auth-js`'s function of the same name.
 */
export function setEnvDefaults(envObject: AuthEnv, config: AuthConfig): void {
  config.secret ??= envObject.AUTH_SECRET
  coreSetEnvDefaults(envObject, config as CoreConfig, true)
}

interface Prepared {
  config: AuthConfig
  origin: string | undefined
  trustForwarded: boolean
  /** The configuration chose its base path (or `AUTH_URL` did); else the mount point does. */
  fixedBasePath: boolean
}
const prepared = new WeakMap<object, Prepared>()

/** The configuration with the environment's defaults, on a copy made once per config object. */
function prepare(c: Context): Prepared {
  const config = c.get('authConfig')
  if (!config) throw new Error('authchart/hono: register initAuthConfig() before authHandler() and verifyAuth()')
  const known = prepared.get(config)
  if (known) return known
  const environment = env(c) as AuthEnv
  const fixedBasePath = Boolean(config.basePath || environment.AUTH_URL)
  const copy = { ...config }
  setEnvDefaults(environment, copy)
  const result = { config: copy, origin: configuredOrigin(environment), trustForwarded: trustsForwardedHeaders(environment), fixedBasePath }
  prepared.set(config, result)
  return result
}

/** The origin a request is answered for (see the module doc). */
function originOf(c: Context, { origin, trustForwarded }: Prepared): string {
  return origin ?? originFromHeaders(c.req.raw.headers, new URL(c.req.url).protocol, trustForwarded)
}

/** The path `authHandler()` is mounted at: its route (`/api/auth/*`) without the wildcard. */
function mountPath(c: Context): string {
  const route = c.req.routePath.replace(/\/\*$/, '')
  return route === '' || route.includes(':') || route.includes('*') ? '/auth' : route
}

/**
 * The session of the request with the token or user it came from, or `null`. The session is read in
 * process with the core's session route's logic, so every check (expiry, revocation, callbacks)
 * applies.
 *
 * @throws the configuration's error (`MissingSecret`, `ConfigError`…) with its own class; an untrusted
 *   host is no session (logged), as in `@hono/auth-js`; a missing or malformed `Host` is an
 *   `HTTPException` answering 400 (logged).
 */
export async function getAuthUser(c: Context): Promise<AuthUser | null> {
  const state = prepare(c)
  let behind: Pick<AuthUser, 'token' | 'user'> = {}
  const userSession = state.config.callbacks?.session
  // As @hono/auth-js: the session callback, wrapped per request to see the token or user it is given.
  const config = {
    ...state.config,
    callbacks: {
      ...state.config.callbacks,
      async session(params: Parameters<NonNullable<typeof userSession>>[0]) {
        behind = { token: params.token, user: params.user }
        return userSession ? userSession.call(state.config.callbacks, params) : params.session
      },
    },
  } as CoreConfig
  let origin: string
  try {
    origin = originOf(c, state)
  } catch (error) {
    if (!(error instanceof RequestError)) throw error
    // A missing or malformed Host is the client's mistake: 400, as the auth routes answer it, not 500.
    createLogger(config).error(error)
    throw new HTTPException(400, { res: new Response(JSON.stringify('Bad request.'), { status: 400, headers: { 'content-type': 'application/json' } }) })
  }
  const request = { origin, cookie: c.req.header('cookie'), headers: () => c.req.raw.headers }
  let read
  try {
    read = await readSession(request, config)
  } catch (error) {
    if (!(error instanceof UntrustedHost)) throw error
    // As @hono/auth-js (its session request answers a configuration error): no session, logged.
    createLogger(config).error(error)
    return null
  }
  const { session, cookies } = read
  if (!session?.user) return null
  for (const cookie of cookies) {
    c.header('set-cookie', serializeCookie(cookie), { append: true })
  }
  return { session, ...(behind.token ? { token: behind.token } : {}), ...(behind.user ? { user: behind.user } : {}) }
}

/**
 * Answers 401 unless the request has a session; puts it in `c.get('authUser')` otherwise.
 */
export function verifyAuth(): MiddlewareHandler {
  return async (c, next) => {
    const authUser = await getAuthUser(c)
    if (!authUser?.token && !authUser?.user) {
      throw new HTTPException(401, { res: new Response('Unauthorized', { status: 401 }) })
    }
    c.set('authUser', authUser)
    await next()
  }
}

/**
 * Puts the configuration in the context for `authHandler()` and `verifyAuth()`: register it
 * first (`app.use('*', initAuthConfig(…))`). The function runs per request; return the same
 * object each time (or a cached one) and it is validated once.
 */
export function initAuthConfig(cb: ConfigHandler): MiddlewareHandler {
  return async (c, next) => {
    c.set('authConfig', await cb(c))
    await next()
  }
}

/** Serves the auth routes: `app.use('/api/auth/*', authHandler())`. */
export function authHandler(): MiddlewareHandler {
  return async (c) => {
    const state = prepare(c)
    if (!state.config.secret || state.config.secret.length === 0) {
      throw new HTTPException(500, { message: 'Missing AUTH_SECRET' })
    }
    const config = state.fixedBasePath ? state.config : withBasePath(state.config, mountPath(c))
    const request = c.req.raw
    let url: URL
    try {
      url = requestUrl(request.url, state.origin, () => originOf(c, state))
    } catch (error) {
      if (!(error instanceof RequestError)) throw error
      createLogger(config).error(error)
      return c.json('Bad request.', 400)
    }
    if (url.href === request.url) return Auth(request, config)
    const body = request.method === 'POST' ? await request.arrayBuffer() : undefined
    return Auth(new Request(url, { method: request.method, headers: request.headers, body }), config)
  }
}

/**
 * A middleware that lets a request through only when its user proved an accepted factor within
 * `policy.maxAge` seconds (default 600; `factors`, `aal` as the core's `requireRecentAuth`), with
 * the proof's time in `c.get('recentAuth')`. Otherwise a page request gets 303 to the
 * re-authentication page (`{basePath}/reauthenticate`, back to this path afterwards), and a
 * `fetch`/JSON request 401 with `WWW-Authenticate` detail and the URL to open; a signed-out request
 * is sent to sign in instead. The URLs use the base path the config or `AUTH_URL` names (`/auth`
 * without either). Register `initAuthConfig()` first.
 *
 * @throws the configuration's error, or `UntrustedHost`, as the session read.
 * @see `requireRecentAuth` in the core
 */
export function requireRecentAuth(policy: StepUpPolicy = {}): MiddlewareHandler {
  return async (c, next) => {
    const state = prepare(c)
    const headers = c.req.raw.headers
    const here = new URL(c.req.url)
    const request = { origin: originOf(c, state), cookie: c.req.header('cookie'), headers }
    const result = await checkRecentAuth(request, headers, `${here.pathname}${here.search}`, state.config, policy)
    if (result instanceof Response) return result
    c.set('recentAuth', result)
    await next()
  }
}
