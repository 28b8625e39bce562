/**
 * Express integration (Express 5, and Express 4): a middleware for the auth routes and
 * `getSession` for the app's own pages.
 *
 * ```ts
 * import express from 'express'
 * import { ExpressAuth, getSession } from 'authchart/express'
 *
 * const app = express()
 * app.set('trust proxy', true)              // only behind a proxy you run
 * app.use('/auth', ExpressAuth(config))     // Express 4 also takes '/auth/*'; Express 5 '/auth/*splat'
 * app.use(async (req, res, next) => {
 *   res.locals.session = await getSession(req, config)
 *   next()
 * })
 * ```
 *
 * @module
 */
import type { NextFunction, Request as ExpressRequest, Response as ExpressResponse } from 'express'
import { answerRequest } from '../../core/auth.js'
import { RequestError } from '../../core/errors.js'
import { checkRecentAuth, type StepUpPolicy } from '../../core/recent-auth.js'
import type { Session } from '../../core/types.js'
import { bodyBytes, copyHeaders, encodeParsedBody, NodeRequestSource, readBody, webHeaders, writeAnswer } from '../node/index.js'
import { prepareConfig, readSession, withBasePath, type IntegrationConfig } from '../shared/auth.js'
import { originFromHost, requestUrl, targetPath } from '../shared/request-url.js'

/** The configuration of the Express integration: the core's, without `raw`. */
export type ExpressAuthConfig = IntegrationConfig

type TrustFunction = (address: string | undefined, hop: number) => boolean

/**
 * The request's host as Express sees it: `X-Forwarded-Host` only when the app's `trust proxy`
 * setting trusts the peer (what Express 5's `req.host` does; Express 4 has no such getter).
 */
function hostOf(req: ExpressRequest): string | undefined {
  const trust = req.app.get('trust proxy fn') as TrustFunction | undefined
  const forwarded = trust?.(req.socket.remoteAddress, 0) ? req.get('x-forwarded-host') : undefined
  return forwarded?.split(',')[0]?.trim() || req.get('host')
}

const detectOrigin = (req: ExpressRequest) => () => originFromHost(req.protocol, hostOf(req))

/**
 * The path the middleware is mounted at: `req.baseUrl`, without what a wildcard in the mount path
 * (`/auth/*`, `/auth/*splat`) matched.
 */
function mountPath(req: ExpressRequest): string {
  const rest = req.url.split('?')[0]
  if (rest && rest !== '/') return req.baseUrl || '/'
  const params = (req.params ?? {}) as Record<string, unknown>
  const wildcard = Object.values(params).find(Array.isArray) ?? params[0]
  const tail = Array.isArray(wildcard) ? wildcard.join('/') : typeof wildcard === 'string' ? wildcard : ''
  const base = tail && req.baseUrl.endsWith(`/${tail}`) ? req.baseUrl.slice(0, -tail.length - 1) : req.baseUrl
  return base || '/'
}

/** The POST body as bytes, whether or not the app installed `express.json()` / `urlencoded()`. */
async function bodyOf(req: ExpressRequest): Promise<Uint8Array | undefined> {
  if (req.method !== 'POST') return undefined
  // A body parser that ran has consumed the stream and left its result on `req.body`.
  if (req.readableEnded) return encodeParsedBody(req.body, req.get('content-type'))
  return readBody(req)
}

/**
 * The middleware serving the auth routes. Mount it on the auth base path: `app.use('/auth', …)`
 * (or `/auth/*` in Express 4, `/auth/*splat` in Express 5); the mount path becomes `basePath`
 * unless the config sets one. The configuration and the environment (`AUTH_SECRET`, `AUTH_URL`,
 * `AUTH_TRUST_HOST`…) are read here, once.
 *
 * @throws the configuration's error (`ConfigError`, `MissingSecret`…) at once, not per request.
 * @see spec §1.7, §4.1; reference §10 (`@auth/express`)
 */
export function ExpressAuth(
  config: ExpressAuthConfig,
): (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => Promise<void> {
  const fixedBasePath = config.basePath
  const { config: prepared, origin } = prepareConfig(config, process.env)
  return async (req, res, next) => {
    try {
      let url: URL
      let body: Uint8Array | undefined
      try {
        url = requestUrl(req.originalUrl, origin, detectOrigin(req))
        body = await bodyOf(req)
      } catch (error) {
        if (!(error instanceof RequestError)) throw error
        res.status(error.status).json('Bad request.')
        return
      }
      // No web Request or Response on the way: the same handler, without undici's objects.
      const source = new NodeRequestSource({ method: req.method, headers: req.headers, body, clientAddress: req.ip }, url)
      const answer = await answerRequest(source, fixedBasePath ? prepared : withBasePath(prepared, mountPath(req)))
      const bytes = writeAnswer(answer, {
        code: (status) => res.status(status),
        // Appended, so that cookies an earlier middleware set are kept.
        header: (name, value) => (name === 'set-cookie' ? res.append(name, value) : res.setHeader(name, value)),
      })
      res.end(bytes)
    } catch (error) {
      next(error)
    }
  }
}

/**
 * The session of a request, or `null`. Reads it in process with the logic of the handler's
 * `GET /session` on the request's cookies, so callbacks run as for the client; the cookies that
 * read may set are not sent (as in Auth.js).
 *
 * @throws the configuration's error, `UntrustedHost`, or the `AuthError` the read ended in, each
 *   with its own class (Auth.js throws a bare `Error(message)`); `RequestError` for a bad `Host`.
 * @see spec §1.7
 */
export async function getSession(req: ExpressRequest, config: ExpressAuthConfig): Promise<Session | null> {
  const { config: prepared, origin } = prepareConfig(config, process.env)
  const request = { origin: origin ?? detectOrigin(req)(), cookie: req.headers.cookie, headers: () => webHeaders(req.headers) }
  return (await readSession(request, prepared)).session
}

/**
 * A middleware that lets a request through only when its user proved a factor recently enough
 * (step-up; `policy`: `maxAge` seconds, default 600, `factors`, `aal`). Otherwise a page request
 * is redirected (303) to sign in again and come back, and a `fetch`/JSON request gets 401 with
 * `WWW-Authenticate` detail and the URL to open. `res.locals.recentAuth` holds the proof's time.
 *
 * @see `requireRecentAuth` in the core
 */
export function requireRecentAuth(
  config: ExpressAuthConfig,
  policy: StepUpPolicy = {},
): (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => Promise<void> {
  return async (req, res, next) => {
    try {
      const { config: prepared, origin } = prepareConfig(config, process.env)
      const headers = webHeaders(req.headers)
      const request = { origin: origin ?? detectOrigin(req)(), cookie: req.headers.cookie, headers }
      const result = await checkRecentAuth(request, headers, targetPath(req.originalUrl), prepared, policy)
      if (!(result instanceof Response)) {
        res.locals.recentAuth = result
        next()
        return
      }
      res.status(result.status)
      copyHeaders(result, { header: (name, value) => res.setHeader(name, value) })
      res.end(await bodyBytes(result))
    } catch (error) {
      next(error)
    }
  }
}
