/**
 * How the Fastify plugin mounts the handler: the body parser it needs and the URL rule, shared by
 * the plugin and by the test that holds it to the web-Request path.
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { RequestError } from '../../core/errors.js'
import { originFromHost, requestUrl } from '../shared/request-url.js'

/** What serves a request once its URL is known. */
export type UrlHandler = (request: FastifyRequest, reply: FastifyReply, url: URL) => Promise<unknown>

/**
 * Mounts `handle` on GET and POST `{base}/*` in `scope`, whose body parsers it replaces: the handler
 * parses bodies itself, with its own limits, and receives the raw bytes. A request whose URL cannot
 * be built by the URL rule (a malformed `Host`) is answered 400 before the handler sees it.
 */
export function mountAuthRoutes(scope: FastifyInstance, base: string, origin: string | undefined, handle: UrlHandler): void {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 64 * 1024 }, (_req, body, done) => done(null, body))
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    let url: URL
    try {
      url = requestUrl(request.url, origin, () => originFromHost(request.protocol, request.host))
    } catch (error) {
      if (!(error instanceof RequestError)) throw error
      return reply.code(400).send('"Bad request."')
    }
    return handle(request, reply, url)
  }
  scope.get(`${base}/*`, handler)
  scope.post(`${base}/*`, handler)
}
