/**
 * The per-request context: what effects and handlers may read about the request being served.
 *
 * @module
 */
import type { ResolvedConfig, ResolvedProvider } from '../config/resolve-config.js'
import type { ChunkedCookie, Cookie, CookiesOptions } from '../cookies.js'
import type { ServiceUnavailable } from '../errors.js'
import type { Logger } from '../logger.js'
import type { CsrfState } from './csrf.js'
import type { ParsedRequest } from './request.js'

/** Everything a handler or an effect knows about the request it serves. */
export interface RequestContext {
  readonly config: ResolvedConfig
  readonly request: ParsedRequest
  /** The web request as received, for callbacks that take one (`authorize`). */
  readonly raw: Request
  /** The client's address as the integration gave it, if it did (rate limits by address). */
  readonly clientAddress: string | undefined
  /** Cookie names and attributes for this request's protocol. */
  readonly cookies: CookiesOptions
  readonly provider?: ResolvedProvider
  /** The flow a `step` request names (`/step/<flow id>`). */
  readonly flowId?: string
  /** Request time, epoch seconds; the same `at` every event of this request carries. */
  readonly at: number
  readonly logger: Logger
  /** `<origin>` of the request URL, the base of redirects. */
  readonly origin: string
  /** `<origin><basePath>`. */
  readonly authUrl: string
  /** The session cookie as sent, with the names of its chunks. */
  readonly sessionCookie: ChunkedCookie
  /** Cookies the response sets, in order. */
  readonly setCookies: Cookie[]
  /** CSRF state, when the route uses a token. */
  csrf?: CsrfState
  /** The callback URL after the `redirect` callback, when the route uses one. */
  callbackUrl: string
  /**
   * Set when a part this request needed (the adapter, the store) was unavailable and an effect
   * reported it (every failure an effect catches is logged through {@link logger}): the request
   * is then answered 503, not with the refusal or the "no session" the flow fell back to.
   */
  readonly outage?: ServiceUnavailable
}
