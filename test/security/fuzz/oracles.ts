/**
 * The fuzz suite's oracles: what a response and the log may never contain, decided independently
 * of the engine's own checks. Redirects are judged the way a browser follows them (WHATWG URL
 * parsing of `Location` against the request URL), not by string matching, so every form a browser
 * normalises off-origin (`/\evil.example`, `\/evil.example`, tab- or newline-split slashes,
 * `https:evil.example`, leading spaces and C0 controls, …) is caught.
 *
 * @module
 */
import { format } from 'node:util'
import type { SetCookie } from '../../fixtures/http.js'

/** Where a redirect may go besides the request's own origin: exact `origin + pathname` targets. */
export interface AllowedTargets {
  /** e.g. an OpenID Provider's authorization or end-session endpoint, `https://op.example/auth`. */
  readonly endpoints: readonly string[]
}

/**
 * Why `location` would take a browser off `requestUrl`'s origin (and not to an allowed endpoint),
 * or `undefined` when it stays. `Location` is resolved against the request URL exactly as a browser
 * resolves it; an opaque origin (`javascript:`, `data:`) is never ours. The Location is judged once
 * more after one percent-decoding (`/%5Cevil.example` → `/\evil.example`): an application or proxy
 * that decodes it once must not be handed an off-origin redirect either.
 */
export function offOriginRedirect(
  location: string,
  requestUrl: string,
  allowed: AllowedTargets = { endpoints: [] },
): string | undefined {
  const verdict = judgeLocation(location, requestUrl, allowed)
  if (verdict !== undefined) return verdict
  let decoded: string
  try {
    decoded = decodeURIComponent(location)
  } catch {
    return undefined
  }
  if (decoded === location) return undefined
  const once = judgeLocation(decoded, requestUrl, allowed)
  return once === undefined ? undefined : `once percent-decoded, ${once}`
}

function judgeLocation(location: string, requestUrl: string, allowed: AllowedTargets): string | undefined {
  let target: URL
  try {
    target = new URL(location, requestUrl)
  } catch {
    // A browser does not follow a Location it cannot parse: harmless, but never what we meant.
    return `unparsable Location ${JSON.stringify(location)}`
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return `Location ${JSON.stringify(location)} has the scheme ${target.protocol}`
  }
  if (target.origin === new URL(requestUrl).origin) return undefined
  if (allowed.endpoints.includes(`${target.origin}${target.pathname}`)) return undefined
  return `Location ${JSON.stringify(location)} leads to ${target.origin}`
}

/** Whether a `Set-Cookie` deletes its cookie (empty value, `Max-Age=0` or an expiry in the past). */
export function isDeletion(cookie: SetCookie): boolean {
  const expires = cookie.attributes.expires
  return (
    cookie.value === '' ||
    cookie.attributes['max-age'] === '0' ||
    (typeof expires === 'string' && Date.parse(expires) <= Date.now())
  )
}

/** The session value a response sets under `base` (chunks `base.0`, `base.1`, … joined), if any. */
export function issuedSession(cookies: readonly SetCookie[], base: string): string | undefined {
  const live = cookies.filter(
    (c) => (c.name === base || new RegExp(`^${escapeRegExp(base)}\\.\\d+$`).test(c.name)) && !isDeletion(c),
  )
  if (live.length === 0) return undefined
  const index = (name: string) => (name === base ? -1 : Number(name.slice(base.length + 1)))
  return live
    .sort((a, b) => index(a.name) - index(b.name))
    .map((c) => c.value)
    .join('')
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** A stack frame as Node prints it (`    at fn (file:line:col)`), in a body or a log line. */
const STACK_FRAME = /\n\s+at .+[/\\].+:\d+:\d+\)?/

/** Control characters that have no business in one log line (CR, ESC, NUL, …; not the separator). */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f\u0085\u2028\u2029]/

/**
 * What is wrong with one console call's output, or `undefined`. The default logger prints one line
 * per call, starting with `[auth]`; only a cause's stack may follow, frame by frame. A request value
 * that smuggles a line break (log forging) therefore shows up as a line that is neither.
 */
export function badLogOutput(output: string, secrets: Iterable<string>): string | undefined {
  const [first, ...rest] = output.split('\n')
  if (!first!.startsWith('[auth]')) return `a log line not written by the logger: ${JSON.stringify(first)}`
  for (const line of [first!, ...rest]) {
    if (RAW_CONTROL.test(line)) return `a raw control character in the log: ${JSON.stringify(line)}`
  }
  const forged = rest.find((line) => !/^\s+at \S/.test(line))
  if (forged !== undefined) return `a log line that is neither the message nor a stack frame: ${JSON.stringify(forged)}`
  for (const secret of secrets) {
    if (secret.length >= 8 && output.includes(secret)) return `a secret in the log: …${secret.slice(0, 6)}…`
  }
  return undefined
}

/** What is wrong with a response body, or `undefined`: no stack trace, no secret, no raw markup. */
export function badBody(body: string, contentType: string | null, secrets: Iterable<string>, markup: string): string | undefined {
  if (STACK_FRAME.test(body)) return 'a stack trace in the body'
  for (const secret of secrets) {
    if (secret.length >= 8 && body.includes(secret)) return `a secret in the body: …${secret.slice(0, 6)}…`
  }
  if (contentType?.startsWith('text/html') && body.includes(markup)) return `request markup ${markup} reflected unescaped`
  return undefined
}

/** Collects what the default logger prints (console.error, warn, log), one string per call. */
export class LogCapture {
  readonly calls: string[] = []
  private readonly originals = { error: console.error, warn: console.warn, log: console.log, info: console.info }

  install(): void {
    for (const method of ['error', 'warn', 'log', 'info'] as const) {
      console[method] = (...args: unknown[]) => {
        this.calls.push(format(...args))
      }
    }
  }

  restore(): void {
    Object.assign(console, this.originals)
  }

  /** Prints through the real console, whether or not the capture is installed. */
  print(...args: unknown[]): void {
    this.originals.log(...args)
  }

  /** The calls made since `mark` (an earlier length of {@link calls}). */
  since(mark: number): string[] {
    return this.calls.slice(mark)
  }
}
