/**
 * Turns a web `Request` into the parsed request the router works on: method, action, provider id,
 * cookies, query and body. Anything malformed or oversized is refused here, before any config,
 * callback or adapter sees it.
 *
 * @module
 */
import { ACTIONS_WITH_PROVIDER, isRoutedAction, type RoutedAction } from '../actions.js'
import { parseCookieHeader, type RequestCookies } from '../cookies.js'
import { RequestError, UnknownAction } from '../errors.js'
import type { ParsedRequest } from '../engine/types.js'

export type { ParsedRequest }

/** Largest accepted body: sign-in forms and WebAuthn responses are a few KiB. */
export const MAX_BODY_BYTES = 64 * 1024
/** Largest accepted `Cookie` header: 16 session chunks of 4 KiB and change. */
export const MAX_COOKIE_HEADER_BYTES = 64 * 1024
/** Largest accepted URL. */
export const MAX_URL_LENGTH = 8 * 1024

const clientAddresses = new WeakMap<Request, string>()

/**
 * Tells the handler which address sent `request`: a web `Request` carries none. Integrations call
 * it with the socket's peer address, or the address their trusted proxy reports (Fastify's
 * `request.ip`). Only code holding the `Request` object can set it; no header can.
 *
 * @returns `request` itself.
 * @example
 * ```ts
 * const response = await Auth(setClientAddress(webRequest, socket.remoteAddress), config)
 * ```
 */
export function setClientAddress(request: Request, address: string): Request {
  clientAddresses.set(request, address)
  return request
}

/** The client address an integration gave for `request` (see {@link setClientAddress}). */
export function clientAddressOf(request: Request): string | undefined {
  return clientAddresses.get(request)
}


/**
 * Splits `{basePath}/{action}[/{providerId}]`. Trailing and doubled slashes are tolerated; the
 * literal provider id `undefined` means none (a client bug Auth.js also forgives).
 *
 * @throws {UnknownAction} `Cannot parse action at <path>` when the path is outside `basePath` or
 *   names no action: Auth.js's type and message, which applications' loggers switch on.
 */
export function parseActionPath(
  pathname: string,
  basePath: string,
): { action: RoutedAction; providerId?: string } {
  const base = basePath === '/' ? '' : basePath
  if (!pathname.startsWith(`${base}/`)) throw new UnknownAction(`Cannot parse action at ${pathname}`)
  const segments = pathname.slice(base.length).split('/').filter(Boolean)
  const [action, providerId, ...rest] = segments
  if (action === undefined || rest.length > 0 || !isRoutedAction(action)) {
    throw new UnknownAction(`Cannot parse action at ${pathname}`)
  }
  if (providerId !== undefined && !ACTIONS_WITH_PROVIDER.has(action)) {
    throw new UnknownAction(`Cannot parse action at ${pathname}`)
  }
  return providerId === undefined || providerId === 'undefined'
    ? { action }
    : { action, providerId }
}

/**
 * A request as the handler reads it, whatever carries it: a web `Request` ({@link webRequestSource})
 * or a server's own request object (the Fastify integration answers without building web objects).
 * Every source is parsed by {@link parseSource}, so the checks are the same for all.
 */
export interface RequestSource {
  readonly method: string
  /** The absolute URL the request is answered for (the integration's URL rule already applied). */
  readonly url: string | URL
  /** One header by lower-case name, as web `Headers.get` returns it (repeated headers joined). */
  header(name: string): string | null
  /** Every header as a web `Headers` (built on first use when the source is not a web request). */
  headers(): Headers
  /**
   * The body's bytes, refused beyond `limit` bytes; empty for none.
   *
   * @throws {RequestError} 413 past `limit`.
   */
  bytes(limit: number): Promise<Uint8Array>
  /** The web `Request`, for callbacks that take one (built on first use when there is none). */
  request(): Request
  /** The client address the integration gave (see {@link setClientAddress}). */
  readonly clientAddress: string | undefined
}

class WebRequestSource implements RequestSource {
  readonly method: string
  readonly url: string
  readonly clientAddress: string | undefined
  constructor(private readonly web: Request) {
    this.method = web.method
    this.url = web.url
    this.clientAddress = clientAddresses.get(web)
  }
  header(name: string): string | null {
    return this.web.headers.get(name)
  }
  headers(): Headers {
    return this.web.headers
  }
  request(): Request {
    return this.web
  }
  async bytes(limit: number): Promise<Uint8Array> {
    if (!this.web.body) return new Uint8Array(0)
    const reader = this.web.body.getReader()
    const chunks: Uint8Array[] = []
    let size = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > limit) {
        await reader.cancel().catch(() => {})
        throw new RequestError('Request body too large', 413)
      }
      chunks.push(value)
    }
    const bytes = new Uint8Array(size)
    let offset = 0
    for (const chunk of chunks) {
      bytes.set(chunk, offset)
      offset += chunk.byteLength
    }
    return bytes
  }
}

/** A web `Request` as a {@link RequestSource}. */
export function webRequestSource(request: Request): RequestSource {
  return new WebRequestSource(request)
}

async function readBoundedText(source: RequestSource): Promise<string> {
  const declared = source.header('content-length')
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) {
    throw new RequestError('Request body too large', 413)
  }
  const bytes = await source.bytes(MAX_BODY_BYTES)
  if (bytes.byteLength === 0) return ''
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new RequestError('Request body is not UTF-8')
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The media type of a `Content-Type` value, lower-cased, without its parameters. Matching the
 * whole media type matters: `text/plain; x=application/json` is what a cross-site page can send
 * without a CORS preflight, and it must not be read as JSON.
 */
export function mediaTypeOf(contentType: string | null): string {
  if (contentType === null) return ''
  const semicolon = contentType.indexOf(';')
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase()
}

async function readBody(request: RequestSource): Promise<Record<string, unknown> | undefined> {
  const mediaType = mediaTypeOf(request.header('content-type'))
  if (mediaType === 'application/json') {
    const text = await readBoundedText(request)
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new RequestError('Request body is not valid JSON')
    }
    if (!isRecord(parsed)) throw new RequestError('Request body must be a JSON object')
    return parsed
  }
  if (mediaType === 'application/x-www-form-urlencoded') {
    const form: Record<string, unknown> = Object.create(null)
    for (const [key, value] of new URLSearchParams(await readBoundedText(request))) form[key] = value
    return form
  }
  return undefined
}

/**
 * Parses a request.
 *
 * @throws {RequestError} 400 for a bad method, path or body; 413 for a large body; 431 for a large
 *   `Cookie` header or URL.
 */
export async function parseRequest(request: Request, basePath: string): Promise<ParsedRequest> {
  return parseSource(webRequestSource(request), basePath)
}

/**
 * Parses a request from any {@link RequestSource}: the one place requests are checked.
 * Synchronous for a GET; a promise for a POST, whose body is read first.
 *
 * @throws {RequestError} as {@link parseRequest} (synchronously, or as a rejection).
 */
export function parseSource(source: RequestSource, basePath: string): ParsedRequest | Promise<ParsedRequest> {
  // HEAD is answered as GET; the server that writes the response drops its body, as HTTP asks.
  const method = source.method === 'HEAD' ? 'GET' : source.method
  if (method !== 'GET' && method !== 'POST') {
    throw new RequestError('Only GET and POST requests are supported')
  }
  const href = typeof source.url === 'string' ? source.url : source.url.href
  if (href.length > MAX_URL_LENGTH) throw new RequestError('URL too long', 431)
  let url: URL
  if (typeof source.url === 'string') {
    try {
      url = new URL(source.url)
    } catch {
      throw new RequestError('Invalid URL')
    }
  } else {
    url = source.url
  }
  const { action, providerId } = parseActionPath(url.pathname, basePath)
  const cookieHeader = source.header('cookie')
  if (cookieHeader !== null && cookieHeader.length > MAX_COOKIE_HEADER_BYTES) {
    throw new RequestError('Cookie header too large', 431)
  }
  const query: Record<string, string> = Object.create(null)
  if (url.search.length > 1) for (const [key, value] of url.searchParams) query[key] = value
  const cookies = parseCookieHeader(cookieHeader)
  // Only a POST has a body to wait for: a GET is parsed without a microtask.
  if (method !== 'POST') return new Parsed(source, url, method, action, providerId, cookies, query, undefined)
  return readBody(source).then((body) => new Parsed(source, url, method, action, providerId, cookies, query, body))
}

/** A parsed request; its `headers` are built only if something reads them as a whole. */
class Parsed implements ParsedRequest {
  constructor(
    private readonly source: RequestSource,
    readonly url: URL,
    readonly method: 'GET' | 'POST',
    readonly action: RoutedAction,
    readonly providerId: string | undefined,
    readonly cookies: RequestCookies,
    readonly query: Readonly<Record<string, string>>,
    readonly body: Readonly<Record<string, unknown>> | undefined,
  ) {}

  get headers(): Headers {
    return this.source.headers()
  }
}
