/**
 * Cookie names, attributes, parsing, serialisation and the chunking of large session cookies,
 * byte-compatible with Auth.js so that switching libraries keeps users signed in.
 *
 * @module
 */
import type { Cookie, CookieOption, CookieSerializeOptions } from './shapes.js'
import type { ChunkedCookie, CookiesOptions, RequestCookies } from './engine/types.js'

export type { ChunkedCookie, CookiesOptions, RequestCookies }

export type { Cookie, CookieOption, CookieSerializeOptions }


/**
 * The default cookies. With secure cookies every name gets the `__Secure-` prefix and the CSRF
 * cookie the stricter `__Host-` prefix, which browsers refuse from subdomains or without HTTPS.
 */
export function defaultCookies(useSecureCookies: boolean): CookiesOptions {
  const prefix = useSecureCookies ? '__Secure-' : ''
  const base = (): CookieSerializeOptions => ({
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: useSecureCookies,
  })
  const fifteenMinutes = 15 * 60
  return {
    sessionToken: { name: `${prefix}authjs.session-token`, options: base() },
    callbackUrl: { name: `${prefix}authjs.callback-url`, options: base() },
    csrfToken: {
      name: `${useSecureCookies ? '__Host-' : ''}authjs.csrf-token`,
      options: base(),
    },
    pkceCodeVerifier: {
      name: `${prefix}authjs.pkce.code_verifier`,
      options: { ...base(), maxAge: fifteenMinutes },
    },
    state: { name: `${prefix}authjs.state`, options: { ...base(), maxAge: fifteenMinutes } },
    nonce: { name: `${prefix}authjs.nonce`, options: base() },
    webauthnChallenge: {
      name: `${prefix}authjs.challenge`,
      options: { ...base(), maxAge: fifteenMinutes },
    },
    flowState: {
      name: `${prefix}authchart.flow`,
      options: { ...base(), maxAge: fifteenMinutes },
    },
  }
}

/** The session cache cookie's name, without a prefix. */
export const SESSION_CACHE_COOKIE = 'authjs.session-cache'

/**
 * The session cache cookie (database sessions with `session.cache`): beside the session token and
 * following its options, `__Secure-`-prefixed when the session token cookie is.
 */
export function sessionCacheCookie(sessionToken: CookieOption): CookieOption {
  const prefix = sessionToken.name.startsWith('__Secure-') || sessionToken.name.startsWith('__Host-') ? '__Secure-' : ''
  return { name: `${prefix}${SESSION_CACHE_COOKIE}`, options: sessionToken.options }
}

/** Merges `overrides` (partial names and options per key) over `defaults`. */
export function mergeCookies(
  defaults: CookiesOptions,
  overrides: Partial<Record<keyof CookiesOptions, Partial<CookieOption>>> | undefined,
): CookiesOptions {
  if (!overrides) return defaults
  const merged = { ...defaults }
  for (const key of Object.keys(defaults) as (keyof CookiesOptions)[]) {
    const override = overrides[key]
    if (!override) continue
    merged[key] = {
      name: override.name ?? defaults[key].name,
      options: { ...defaults[key].options, ...override.options },
    }
  }
  return merged
}

function decodeCookieValue(value: string): string {
  // Stryker disable next-line ConditionalExpression,StringLiteral: eq#cookies-1
  if (!value.includes('%')) return value
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

function trimmed(text: string, start: number, end: number): string {
  // The bounds are equivalent under mutation: the character at `end` (and before `start`) is always
  // `;`, `=` or outside the text, never a space.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#cookies-trim-bounds
  while (start < end && (text.charCodeAt(start) === 0x20 || text.charCodeAt(start) === 0x09)) start++
  // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#cookies-trim-bounds
  while (end > start && (text.charCodeAt(end - 1) === 0x20 || text.charCodeAt(end - 1) === 0x09)) end--
  return text.slice(start, end)
}

/**
 * Parses a `Cookie` header. The first occurrence of a name wins, as in the `cookie` package that
 * Auth.js vendors; values are URI-decoded when they decode cleanly.
 */
export function parseCookieHeader(header: string | null): RequestCookies {
  const cookies: RequestCookies = Object.create(null)
  if (!header) return cookies
  let index = 0
  const length = header.length
  // Stryker disable next-line EqualityOperator: eq#cookies-2
  while (index < length) {
    const semicolon = header.indexOf(';', index)
    const end = semicolon === -1 ? length : semicolon
    const equals = header.indexOf('=', index)
    // Stryker disable next-line EqualityOperator: eq#cookies-3
    if (equals !== -1 && equals < end) {
      const name = trimmed(header, index, equals)
      if (name && cookies[name] === undefined) {
        cookies[name] = decodeCookieValue(trimmed(header, equals + 1, end))
      }
    }
    index = end + 1
  }
  return cookies
}

const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// Stryker disable next-line Regex: eq#cookies-4
const COOKIE_VALUE = /^[\u0021\u0023-\u002B\u002D-\u003A\u003C-\u005B\u005D-\u007E]*$/
/** Cookie names already checked against {@link COOKIE_NAME} (a handful per deployment). */
const checkedNames = new Set<string>()

// Stryker disable next-line ObjectLiteral,StringLiteral: eq#cookies-5
let lastDate = { time: NaN, text: '' }

/** `date.toUTCString()`, memoised for the last second formatted (session expiries repeat). */
function httpDate(date: Date): string {
  // Stryker disable next-line ArithmeticOperator: eq#cookies-6
  const time = Math.floor(date.getTime() / 1000)
  // Stryker disable next-line ConditionalExpression: eq#cookies-7
  if (time !== lastDate.time) lastDate = { time, text: date.toUTCString() }
  return lastDate.text
}

/** Characters `encodeURIComponent` leaves as they are. */
// Stryker disable next-line Regex: eq#cookies-8
const PLAIN_VALUE = /^[A-Za-z0-9._~!*'()-]*$/
const COOKIE_PATH = /^[\u0020-\u003A\u003D-\u007E]*$/
const COOKIE_DOMAIN =
  /^([.]?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)([.][a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i

/**
 * Serialises a `Set-Cookie` value with the value URI-encoded, attributes in the order of the
 * `cookie` package.
 *
 * @throws {TypeError} when a name, path or domain would break the header (header injection).
 */
export function serializeCookie(cookie: Cookie): string {
  const { name, options } = cookie
  // Stryker disable next-line ConditionalExpression: eq#cookies-9
  if (!checkedNames.has(name)) {
    if (!COOKIE_NAME.test(name)) throw new TypeError(`invalid cookie name: ${name}`)
    // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#cookies-10
    if (checkedNames.size < 1024) checkedNames.add(name)
  }
  // Tokens (base64url, hex, dots) need no encoding: skip the copy for the long session values.
  let value = cookie.value
  // Stryker disable next-line ConditionalExpression: eq#cookies-11
  if (!PLAIN_VALUE.test(value)) {
    value = encodeURIComponent(value)
    // Stryker disable next-line ConditionalExpression,StringLiteral: eq#cookies-12
    if (!COOKIE_VALUE.test(value)) throw new TypeError(`invalid cookie value for ${name}`)
  }
  let header = `${name}=${value}`
  if (options.maxAge !== undefined) {
    if (!Number.isInteger(options.maxAge)) throw new TypeError(`invalid maxAge for ${name}`)
    header += `; Max-Age=${options.maxAge}`
  }
  if (options.domain) {
    if (!COOKIE_DOMAIN.test(options.domain)) throw new TypeError(`invalid domain for ${name}`)
    header += `; Domain=${options.domain}`
  }
  if (options.path) {
    if (!COOKIE_PATH.test(options.path)) throw new TypeError(`invalid path for ${name}`)
    header += `; Path=${options.path}`
  }
  if (options.expires) header += `; Expires=${httpDate(options.expires)}`
  if (options.httpOnly) header += '; HttpOnly'
  if (options.secure) header += '; Secure'
  if (options.partitioned) header += '; Partitioned'
  if (options.priority) {
    header += `; Priority=${options.priority[0]!.toUpperCase()}${options.priority.slice(1)}`
  }
  if (options.sameSite) {
    const sameSite = options.sameSite === true ? 'strict' : options.sameSite
    header += `; SameSite=${sameSite[0]!.toUpperCase()}${sameSite.slice(1)}`
  }
  return header
}

/** A cookie that deletes `option` in the browser. */
export function expiredCookie(option: CookieOption, name = option.name): Cookie {
  return { name, value: '', options: { ...option.options, maxAge: 0 } }
}

/**
 * Browsers accept about 4096 bytes per cookie; Auth.js reserves 160 for the name and attributes,
 * so a session value is split into chunks of 3936 characters.
 */
export const SESSION_CHUNK_SIZE = 4096 - 160


/**
 * Most chunks a session cookie is read from, and so deleted as: 16 chunks of 3936 characters fill
 * the 64 KiB `Cookie` header we accept. Bogus chunk names beyond it are someone else's cookies, or
 * an attempt to make one response carry thousands of `Set-Cookie` deletions.
 */
export const MAX_SESSION_CHUNKS = 16
/** Most characters a chunked cookie is read to, all chunks together. */
export const MAX_CHUNKED_VALUE = MAX_SESSION_CHUNKS * 4096

/** The chunk index of `name` (`base` itself is -1), or NaN when it is not a chunk we could write. */
function chunkIndex(name: string, base: string): number {
  if (name === base) return -1
  const suffix = name.slice(base.length + 1)
  // Only the names writeChunkedCookie produces: `base.0` … `base.15`, no leading zeros.
  if (name[base.length] !== '.' || !/^(0|[1-9]\d?)$/.test(suffix)) return Number.NaN
  const index = Number(suffix)
  return index < MAX_SESSION_CHUNKS ? index : Number.NaN
}

/**
 * Reads a possibly chunked cookie: `name` itself, or `name.0`, `name.1`, … concatenated in index
 * order. Only exact chunk names count (a cookie merely starting with `name` is someone else's), at
 * most {@link MAX_SESSION_CHUNKS} of them and {@link MAX_CHUNKED_VALUE} characters in all, so the
 * names later deleted are only those a session of ours could have.
 */
export function readChunkedCookie(cookies: RequestCookies, name: string): ChunkedCookie {
  const found: { name: string; index: number; value: string }[] = []
  for (const cookieName in cookies) {
    if (!cookieName.startsWith(name)) continue
    const value = cookies[cookieName]
    if (!value) continue
    const index = chunkIndex(cookieName, name)
    if (Number.isNaN(index)) continue
    found.push({ name: cookieName, index, value })
  }
  // One cookie is read as the loop below would read it, cap included: getToken() reads headers that
  // never passed the request's Cookie header limit.
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: eq#cookies-13
  if (found.length === 1 && found[0]!.value.length <= MAX_CHUNKED_VALUE) {
    return { value: found[0]!.value, names: [found[0]!.name] }
  }
  found.sort((a, b) => a.index - b.index)
  const names: string[] = []
  let value = ''
  for (const chunk of found) {
    if (value.length + chunk.value.length > MAX_CHUNKED_VALUE) break
    value += chunk.value
    names.push(chunk.name)
  }
  return { value, names }
}

/**
 * The cookies that replace a chunked cookie with `value`: deletions for every previously seen
 * chunk that is not rewritten, then the new chunk(s). Switching between one and several chunks
 * therefore never leaves a stale piece behind.
 */
export function writeChunkedCookie(
  option: CookieOption,
  value: string,
  expires: Date,
  previous: readonly string[],
): Cookie[] {
  const options = { ...option.options, expires }
  const count = Math.max(1, Math.ceil(value.length / SESSION_CHUNK_SIZE))
  const written: Cookie[] =
    count === 1
      ? [{ name: option.name, value, options }]
      : Array.from({ length: count }, (_, i) => ({
          name: `${option.name}.${i}`,
          value: value.slice(i * SESSION_CHUNK_SIZE, (i + 1) * SESSION_CHUNK_SIZE),
          options,
        }))
  const writtenNames = new Set(written.map((c) => c.name))
  const deletions = previous
    .filter((name) => !writtenNames.has(name))
    .map((name) => expiredCookie(option, name))
  return [...deletions, ...written]
}

/** Deletions for every chunk of a chunked cookie. */
export function clearChunkedCookie(option: CookieOption, previous: readonly string[]): Cookie[] {
  return previous.map((name) => expiredCookie(option, name))
}
