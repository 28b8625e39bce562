/**
 * Node's `IncomingMessage` / `ServerResponse` as web `Request` / `Response`, for the integrations
 * whose frameworks run on Node's HTTP server (Fastify, Express). The request URL follows the rule
 * of `../shared/request-url.ts`.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { trimHttpWhitespace, type Answer } from '../../core/http/answer.js'
import { MAX_BODY_BYTES, setClientAddress, type RequestSource } from '../../core/http/request.js'
import { RequestError } from '../../core/errors.js'

/** What the handler needs of a Node request, whatever framework parsed it. */
export interface NodeRequest {
  method: string
  headers: IncomingHttpHeaders
  /** The body of a POST, if any. */
  body?: Uint8Array | undefined
  /** The client's address as the framework sees it (its proxy trust applied): `request.ip`. */
  clientAddress?: string | undefined
}

/** Node's request headers as web `Headers` (HTTP/2 pseudo-headers left out). */
export function webHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming)) {
    // HTTP/2 pseudo-headers (`:authority`…) are not header names a `Headers` accepts.
    if (value === undefined || name.startsWith(':')) continue
    if (Array.isArray(value)) for (const item of value) headers.append(name, item)
    else headers.set(name, value)
  }
  return headers
}

const hasBody = (request: NodeRequest) =>
  request.method === 'POST' && request.body !== undefined && request.body.length > 0

/** Builds the web `Request` for `url` (already built by the URL rule) from a Node request. */
export function toWebRequest(request: NodeRequest, url: URL): Request {
  const headers = webHeaders(request.headers)
  const web = new Request(url, { method: request.method, headers, ...(hasBody(request) ? { body: request.body as BodyInit } : {}) })
  return request.clientAddress ? setClientAddress(web, request.clientAddress) : web
}

/** One header value as `Headers.get` gives it: trimmed, repeated values joined with `, `. */
function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null
  if (Array.isArray(value)) return value.map((item) => headerValue(item)).join(', ')
  return trimHttpWhitespace(value)
}

/**
 * A Node request as the handler's {@link RequestSource}: headers read straight from Node's object,
 * the web `Request` and `Headers` built only if a callback asks for them. It answers exactly as
 * {@link toWebRequest} would make the handler answer.
 */
export class NodeRequestSource implements RequestSource {
  readonly method: string
  readonly clientAddress: string | undefined
  private web: Request | undefined

  constructor(
    private readonly node: NodeRequest,
    readonly url: URL,
  ) {
    this.method = node.method
    this.clientAddress = node.clientAddress ? node.clientAddress : undefined
  }

  header(name: string): string | null {
    return headerValue(this.node.headers[name])
  }

  headers(): Headers {
    return this.request().headers
  }

  request(): Request {
    return (this.web ??= toWebRequest(this.node, this.url))
  }

  async bytes(limit: number): Promise<Uint8Array> {
    if (!hasBody(this.node)) return new Uint8Array(0)
    const body = this.node.body!
    if (body.length > limit) throw new RequestError('Request body too large', 413)
    return body
  }
}

/**
 * Writes an answer to a reply: status, headers (every `Set-Cookie` as its own header line) and
 * the body as bytes, so the framework adds nothing to its type.
 */
export function writeAnswer(answer: Answer, reply: HeaderSink & { code(status: number): unknown }): Buffer | undefined {
  reply.code(answer.status)
  let cookies: string[] | undefined
  for (const [name, value] of answer.headers) {
    if (name === 'set-cookie') (cookies ??= []).push(value)
    else reply.header(name, value)
  }
  if (cookies) reply.header('set-cookie', cookies)
  const { body } = answer
  if (body === null || body.length === 0) return undefined
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
}

/**
 * Reads a request body, at most {@link MAX_BODY_BYTES}.
 *
 * @throws {RequestError} 413 when the body is larger.
 */
export async function readBody(stream: Readable): Promise<Uint8Array> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    size += buffer.length
    if (size > MAX_BODY_BYTES) throw new RequestError('Request body too large', 413)
    chunks.push(buffer)
  }
  return new Uint8Array(Buffer.concat(chunks))
}

/**
 * Re-encodes a body some middleware already parsed (`express.json()`, `express.urlencoded()`,
 * `express.text()`, `express.raw()`) as the bytes its content type says.
 */
export function encodeParsedBody(body: unknown, contentType: string | undefined): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined
  if (typeof body === 'string') return new TextEncoder().encode(body)
  if (body instanceof Uint8Array) return body
  if (typeof body !== 'object') return undefined
  if (contentType?.includes('application/json')) return new TextEncoder().encode(JSON.stringify(body))
  const form = new URLSearchParams()
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') {
        form.append(key, String(item))
      }
    }
  }
  return new TextEncoder().encode(form.toString())
}

/** Anything that can take a response header: Node's `ServerResponse`, Fastify's reply. */
export interface HeaderSink {
  /** `set-cookie` arrives as an array, one entry per cookie; other headers as one string. */
  header(name: string, value: string | string[]): unknown
}

/** Copies the headers of `response`, keeping every `Set-Cookie` as its own header line. */
export function copyHeaders(response: Response, sink: HeaderSink): void {
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') sink.header(name, value)
  }
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) sink.header('set-cookie', cookies)
}

/** The body of `response` as bytes (empty for none). */
export async function bodyBytes(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer())
}
