/**
 * Fastify integration: mounts the handler on `{basePath}/*` and offers `getSession`.
 *
 * ```ts
 * import Fastify from 'fastify'
 * import { fastifyAuth, getSession } from 'authchart/fastify'
 *
 * const app = Fastify({ trustProxy: true })
 * await app.register(fastifyAuth, config)
 * app.get('/me', async (request) => getSession(request, config))
 * ```
 *
 * @module
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Auth } from '../../core/auth.js'
import { setClientAddress } from '../../core/http/request.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import type { AuthConfig, Session } from '../../core/types.js'

/** The configuration of the Fastify integration: the core's, without `raw`. */
export type FastifyAuthConfig = Omit<AuthConfig, 'raw'>

const originOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`

function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const item of value) headers.append(name, item)
    else headers.set(name, value)
  }
  const body = request.body as Buffer | undefined
  const webRequest = new Request(new URL(request.url, originOf(request)), {
    method: request.method,
    headers,
    ...(request.method === 'POST' && body && body.length > 0 ? { body: new Uint8Array(body) } : {}),
  })
  // The socket's peer, or the client a trusted proxy names (Fastify's `trustProxy`).
  return setClientAddress(webRequest, request.ip)
}

async function send(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status)
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') reply.header(name, value)
  }
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) reply.header('set-cookie', cookies)
  return reply.send(Buffer.from(await response.arrayBuffer()))
}

const plugin: FastifyPluginAsync<FastifyAuthConfig> = async (app: FastifyInstance, options) => {
  // Validate at boot: a broken config fails `register`, not the first user's request.
  const config = assertConfig(options as AuthConfig)
  await app.register(async (scope) => {
    // The handler parses bodies itself, with its own limits; Fastify hands it the raw bytes.
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 64 * 1024 }, (_req, body, done) =>
      done(null, body),
    )
    const handler = async (request: FastifyRequest, reply: FastifyReply) =>
      send(reply, await Auth(toWebRequest(request), options))
    scope.get(`${config.basePath}/*`, handler)
    scope.post(`${config.basePath}/*`, handler)
  })
}

// Like fastify-plugin: skip encapsulation so the app sees what the plugin registers, and name it.
Object.assign(plugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'authchart',
  [Symbol.for('plugin-meta')]: { name: 'authchart', fastify: '5.x' },
})

/** The Fastify plugin; register it with the auth configuration. */
export const fastifyAuth = plugin

/**
 * The session of a request, or `null`. Reads it through the handler's own GET `/session`, so
 * callbacks and cookie rules are the same as for the client.
 */
export async function getSession(
  request: FastifyRequest,
  options: FastifyAuthConfig,
): Promise<Session | null> {
  const config = assertConfig(options as AuthConfig)
  const url = new URL(`${config.basePath}/session`, originOf(request))
  const headers = new Headers()
  if (request.headers.cookie) headers.set('cookie', request.headers.cookie)
  const response = await Auth(new Request(url, { headers }), options)
  if (response.status !== 200) return null
  const data = (await response.json()) as Session | null
  return data && Object.keys(data).length > 0 ? data : null
}
