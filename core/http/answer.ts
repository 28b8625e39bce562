/**
 * The handler's answer without web objects: status, headers and body, exactly as the web `Response`
 * built from them would carry them. `Auth()` turns it into a `Response`; server integrations
 * (Fastify) write it to their own reply and skip undici's `Response` and its body stream, which
 * cost more than a session read itself.
 *
 * @module
 */
import { serializeCookie } from '../cookies.js'
import { pagePolicy } from '../pages/policy.js'
import type { ResponseInternal } from '../types.js'
import { encodeLocation, type LocationGuard } from './dispatch.js'

/**
 * A response. `headers` lists lower-case names in the order a web `Response` iterates them
 * (sorted by name, each `Set-Cookie` its own entry, in the order set), so that writing them one by
 * one gives the same bytes whichever side built them.
 */
export class Answer {
  constructor(
    readonly status: number,
    readonly headers: readonly (readonly [string, string])[],
    readonly body: string | Uint8Array | null,
  ) {}
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Header names already checked, to their lower case (a handful of constants). */
const checkedNames = new Map<string, string>()
const HTTP_WHITESPACE_EDGES = /^[\t\n\r ]+|[\t\n\r ]+$/g
const FORBIDDEN_IN_VALUE = /[\0\r\n]/

function checkedName(name: string): string {
  const known = checkedNames.get(name)
  if (known !== undefined) return known
  // The same TypeError a web Headers throws.
  if (!TOKEN.test(name)) throw new TypeError(`invalid header name: ${name}`)
  const lower = name.toLowerCase()
  // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#cookies-10
  if (checkedNames.size < 256) checkedNames.set(name, lower)
  return lower
}

/**
 * A header value as a web `Headers` stores it: HTTP whitespace trimmed at both ends; NUL, CR and LF
 * refused, since they would split the header (response splitting).
 *
 * @throws {TypeError} for a value a web `Headers` refuses.
 */
function checkedValue(value: string): string {
  const trimmed = trimHttpWhitespace(value)
  if (FORBIDDEN_IN_VALUE.test(trimmed)) throw new TypeError('invalid header value')
  return trimmed
}

/**
 * A header value with HTTP whitespace trimmed at both ends, as a web `Headers` stores it. The two
 * ends are looked at first, so a long cookie is not scanned to trim nothing.
 */
export function trimHttpWhitespace(value: string): string {
  const edges = value.length > 0 && (isHttpWhitespace(value.charCodeAt(0)) || isHttpWhitespace(value.charCodeAt(value.length - 1)))
  return edges ? value.replace(HTTP_WHITESPACE_EDGES, '') : value
}

const isHttpWhitespace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d

/** Headers by lower-case name, `Set-Cookie` kept apart: the state a web `Headers` keeps. */
export class HeaderMap {
  readonly values = new Map<string, string>()
  readonly cookies: string[] = []

  /** Like `Headers.append`: a repeated name is joined with `, ` (but for `Set-Cookie`). */
  append(name: string, value: string): void {
    const lower = checkedName(name)
    const checked = checkedValue(String(value))
    if (lower === 'set-cookie') {
      this.cookies.push(checked)
      return
    }
    const known = this.values.get(lower)
    this.values.set(lower, known === undefined ? checked : `${known}, ${checked}`)
  }

  /** Like `Headers.set` (never for `Set-Cookie`). */
  set(name: string, value: string): void {
    this.values.set(checkedName(name), checkedValue(value))
  }

  get(name: string): string | undefined {
    return this.values.get(name)
  }

  /** The headers in a web `Response`'s iteration order. */
  list(): [string, string][] {
    const names = [...this.values.keys()]
    if (this.cookies.length > 0) names.push('set-cookie')
    names.sort()
    const list: [string, string][] = []
    for (const name of names) {
      if (name === 'set-cookie') for (const cookie of this.cookies) list.push([name, cookie])
      else list.push([name, this.values.get(name)!])
    }
    return list
  }

  /** Every header of `init` (a record, a list of pairs or a `Headers`), appended. */
  static of(init: HeadersInit | undefined): HeaderMap {
    const map = new HeaderMap()
    if (init === undefined) return map
    if (init instanceof Headers) {
      // Iteration lists each Set-Cookie on its own.
      for (const [name, value] of init) map.append(name, value)
      return map
    }
    if (Array.isArray(init)) {
      for (const pair of init) map.append(pair[0]!, pair[1]!)
      return map
    }
    for (const name of Object.keys(init)) map.append(name, (init as Record<string, string>)[name]!)
    return map
  }
}

/** Statuses a web `Response` refuses a body for. */
const NULL_BODY_STATUSES = new Set([204, 205, 304])

/**
 * The answer for a status, headers and body, as `new Response(body, { status, headers })` would
 * carry them: a string body without a type becomes `text/plain;charset=UTF-8`.
 *
 * @throws {RangeError} for a status outside 200–599; {@link TypeError} for a body on a null-body
 *   status, as the web `Response` constructor does.
 */
export function answerOf(status: number, headers: HeaderMap, body: unknown): Answer | Promise<Answer> {
  if (status < 200 || status > 599) throw new RangeError(`invalid status ${status}`)
  if (body === undefined || body === null) return new Answer(status, headers.list(), null)
  if (NULL_BODY_STATUSES.has(status)) throw new TypeError(`a ${status} response has no body`)
  if (typeof body === 'string') {
    const type = headers.values.get('content-type')
    if (type === undefined) headers.values.set('content-type', 'text/plain;charset=UTF-8')
    else if (type.startsWith('text/html')) guardPage(headers)
    return new Answer(status, headers.list(), body)
  }
  if (body instanceof Uint8Array) return new Answer(status, headers.list(), body)
  if (body instanceof ArrayBuffer) return new Answer(status, headers.list(), new Uint8Array(body))
  if (ArrayBuffer.isView(body)) {
    return new Answer(status, headers.list(), new Uint8Array(body.buffer, body.byteOffset, body.byteLength))
  }
  // Streams, blobs, forms: let the web Response decide their bytes and type.
  return answerOfResponse(new Response(body as BodyInit, { status, headers: headers.list() }))
}

/**
 * Every page we send is guarded here, in one place: a page that asks for a password or approves
 * an action must not be framed by another site (clickjacking), nor run a script we did not write.
 * A page that set its own policy (the front-channel logout page, which its provider frames) keeps
 * it, and gets no `X-Frame-Options`, which could only forbid framing altogether.
 */
function guardPage(headers: HeaderMap): void {
  if (headers.values.has('content-security-policy')) return
  headers.values.set('content-security-policy', pagePolicy())
  headers.values.set('x-frame-options', 'DENY')
}

/** A web `Response` as an {@link Answer} (its body read to the end). */
export async function answerOfResponse(response: Response): Promise<Answer> {
  const headers: [string, string][] = []
  for (const [name, value] of response.headers) headers.push([name, value])
  const bytes = response.body === null ? null : new Uint8Array(await response.arrayBuffer())
  return new Answer(response.status, headers, bytes)
}

/** What an internal response becomes before its body is settled. */
export interface PreparedAnswer {
  status: number
  headers: HeaderMap
  body: unknown
}

/**
 * An internal response's status, headers and body: cookies serialised, JSON and forms encoded, the
 * redirect (or a `Location` header) written through {@link encodeLocation} under `guard`.
 */
export function prepareAnswer(internal: ResponseInternal, guard?: LocationGuard): PreparedAnswer {
  const headers = HeaderMap.of(internal.headers)
  const given = headers.get('location')
  if (given !== undefined) headers.set('location', encodeLocation(given, guard))
  for (const cookie of internal.cookies ?? []) headers.append('set-cookie', serializeCookie(cookie))
  let body: unknown = internal.body
  const contentType = headers.get('content-type')
  if (contentType === 'application/json') body = JSON.stringify(internal.body)
  else if (contentType === 'application/x-www-form-urlencoded') {
    body = new URLSearchParams(internal.body as Record<string, string>).toString()
  }
  if (internal.redirect) headers.set('location', encodeLocation(internal.redirect, guard))
  return { status: internal.redirect ? 302 : (internal.status ?? 200), headers, body }
}

/** Whether {@link answerOf} settles `body` without a web `Response` (no stream, blob or form). */
export function isPlainBody(body: unknown): boolean {
  return body === undefined || body === null || typeof body === 'string' || body instanceof ArrayBuffer || ArrayBuffer.isView(body)
}

/** A frozen header set converted once: its pairs sorted, and where `Set-Cookie` lines go. */
interface CompiledHeaders {
  pairs: readonly (readonly [string, string])[]
  contentType: string | undefined
  /** The index in `pairs` before which `set-cookie` sorts. */
  cookieAt: number
}
const compiledHeaders = new WeakMap<object, CompiledHeaders | null>()

/**
 * The conversion of a frozen header record (the shared constants of `handlers.ts`), or `null` when
 * it cannot be reused (mutable, or naming `Set-Cookie` or `Location`, which the answer merges).
 */
function compiledOf(init: HeadersInit | undefined): CompiledHeaders | null {
  if (init === undefined || !Object.isFrozen(init) || Array.isArray(init) || init instanceof Headers) return null
  let compiled = compiledHeaders.get(init)
  if (compiled === undefined) {
    const map = HeaderMap.of(init)
    const pairs = map.list()
    compiled =
      map.cookies.length > 0 || map.values.has('location')
        ? null
        : {
            pairs: Object.freeze(pairs.map((pair) => Object.freeze(pair))),
            contentType: map.get('content-type'),
            cookieAt: pairs.filter(([name]) => name < 'set-cookie').length,
          }
    compiledHeaders.set(init, compiled)
  }
  return compiled
}

/** An internal response as an {@link Answer}; a `Location` is written under `guard` ({@link encodeLocation}). */
export function toAnswer(internal: ResponseInternal, guard?: LocationGuard): Answer | Promise<Answer> {
  const compiled = internal.redirect ? null : compiledOf(internal.headers)
  // The common case (a JSON document under shared headers): the converted headers, the cookies
  // set in their place, no map and no sort per request.
  if (compiled !== null && compiled.contentType === 'application/json') {
    const status = internal.status ?? 200
    const body = JSON.stringify(internal.body)
    if (status < 200 || status > 599 || (body !== undefined && NULL_BODY_STATUSES.has(status))) {
      return answerOf(status, HeaderMap.of(internal.headers), body)
    }
    const cookies = internal.cookies
    let headers = compiled.pairs
    if (cookies !== undefined && cookies.length > 0) {
      const merged: (readonly [string, string])[] = compiled.pairs.slice(0, compiled.cookieAt)
      for (const cookie of cookies) merged.push(['set-cookie', checkedValue(serializeCookie(cookie))])
      for (let i = compiled.cookieAt; i < compiled.pairs.length; i++) merged.push(compiled.pairs[i]!)
      headers = merged
    }
    return new Answer(status, headers, body ?? null)
  }
  const { status, headers, body } = prepareAnswer(internal, guard)
  return answerOf(status, headers, body)
}

/** A JSON answer, as `Response.json(value, { status, headers })` builds it. */
export function jsonAnswer(value: unknown, status = 200, headers = new HeaderMap()): Answer | Promise<Answer> {
  if (!headers.values.has('content-type')) headers.values.set('content-type', 'application/json')
  return answerOf(status, headers, JSON.stringify(value))
}

/** A 302 to `url`, written under `guard` ({@link encodeLocation}). */
export function redirectAnswer(url: string, guard?: LocationGuard): Answer | Promise<Answer> {
  const headers = new HeaderMap()
  headers.set('location', encodeLocation(url, guard))
  return answerOf(302, headers, null)
}

/** The web `Response` carrying `answer`. */
export function responseOf(answer: Answer): Response {
  return new Response(answer.body as BodyInit | null, { status: answer.status, headers: answer.headers as [string, string][] })
}
