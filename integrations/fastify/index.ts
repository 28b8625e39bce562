/**
 * Fastify integration: mounts the handler on `{basePath}/*`, decorates each request with
 * `request.auth()`, and offers `getSession` and a `requireSession` pre-handler for routes that need
 * a signed-in user.
 *
 * ```ts
 * import Fastify from 'fastify'
 * import { fastifyAuth, getSession, requireSession } from 'authchart/fastify'
 *
 * const app = Fastify({ trustProxy: true })
 * await app.register(fastifyAuth, config)
 * app.get('/me', async (request) => request.auth())
 * app.get('/account', { preHandler: requireSession({ redirectTo: '/login' }) }, handler)
 * ```
 *
 * @module
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { answerRequest } from '../../core/auth.js'
import type { Session } from '../../core/types.js'
import { NodeRequestSource, webHeaders, writeAnswer } from '../node/index.js'
import { prepareConfig, readSession, type IntegrationConfig } from '../shared/auth.js'
import { originFromHost, targetPath } from '../shared/request-url.js'
import { mountAuthRoutes } from './routes.js'

/** The configuration of the Fastify integration: the core's, without `raw`. */
export type FastifyAuthConfig = IntegrationConfig

declare module 'fastify' {
  interface FastifyRequest {
    /** The session of this request, or `null` (read once per request). */
    auth(): Promise<Session | null>
  }
}

/** Fastify's `request.host` and `request.protocol` honour X-Forwarded-* only under `trustProxy`. */
const originOf = (configured: string | undefined, request: FastifyRequest) =>
  configured ?? originFromHost(request.protocol, request.host)

const sessions = new WeakMap<FastifyRequest, Promise<Session | null>>()

const plugin: FastifyPluginAsync<FastifyAuthConfig> = async (app: FastifyInstance, options) => {
  // Resolved at boot: a broken config fails `register`, not the first user's request.
  const { config, origin } = prepareConfig(options, process.env)
  app.decorateRequest('auth', function (this: FastifyRequest) {
    let session = sessions.get(this)
    if (!session) sessions.set(this, (session = getSession(this, options)))
    return session
  })
  // setEnvDefaults has set it (`/auth` unless configured).
  const base = config.basePath === '/' ? '' : (config.basePath ?? '/auth')
  await app.register(async (scope) =>
    mountAuthRoutes(scope, base, origin, async (request, reply, url) => {
      const body = request.body as Buffer | undefined
      // No web Request or Response on the way: the same handler, without undici's objects.
      const source = new NodeRequestSource({ method: request.method, headers: request.headers, body, clientAddress: request.ip }, url)
      const bytes = writeAnswer(await answerRequest(source, config), reply)
      return bytes ? reply.send(bytes) : reply.send()
    }),
  )
}

/**
 * The Fastify plugin; register it with the auth configuration. Not encapsulated: the app sees the
 * `request.auth()` decorator it adds.
 */
export const fastifyAuth = fastifyPlugin(plugin, { name: 'authchart', fastify: '5.x' })

/**
 * The session of a request, or `null`. Reads it in process with the logic of the handler's
 * GET `/session`, so callbacks and cookie rules are the same as for the client.
 *
 * @throws the configuration's error, `UntrustedHost`, or the `AuthError` the read ended in, each
 *   with its own class; {@link RequestError} for a malformed `Host`.
 */
export async function getSession(request: FastifyRequest, options: FastifyAuthConfig): Promise<Session | null> {
  const { config, origin } = prepareConfig(options, process.env)
  const read = { origin: originOf(origin, request), cookie: request.headers.cookie, headers: () => webHeaders(request.headers) }
  return (await readSession(read, config)).session
}

/** Options of {@link requireSession}. */
export interface RequireSessionOptions {
  /** Where to send a visitor without a session; `callbackUrl` is added. Default `/auth/signin`. */
  redirectTo?: string
}

/**
 * A `preHandler` that lets a request through only with a signed-in user (`session.user`); others
 * are redirected (302, never permanent) to `redirectTo` with the page they wanted as `callbackUrl`.
 * Needs the {@link fastifyAuth} plugin registered (it reads `request.auth()`).
 */
export function requireSession(options: RequireSessionOptions = {}): preHandlerAsyncHookHandler {
  const target = options.redirectTo ?? '/auth/signin'
  return async (request, reply) => {
    const session = await request.auth()
    if (session?.user) return
    const separator = target.includes('?') ? '&' : '?'
    await reply.redirect(`${target}${separator}callbackUrl=${encodeURIComponent(targetPath(request.url))}`, 302)
  }
}
