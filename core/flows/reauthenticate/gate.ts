/**
 * The freshness gate of the built-in sensitive actions: before a route flagged `stepUp` runs, the
 * signed-in user's proof must be recent enough for the action's policy. When it is not, the request
 * is not served. With the step-up module its intent is sealed in a re-authentication flow, and the
 * browser is sent to the page that asks (a fetch gets 401 with the URL), as `requireRecentAuth`
 * answers an application (`intentOf`, `reauthenticationRequired`: the module's); without it, to a
 * fresh sign-in (`core/session/freshness.ts`).
 *
 * @module
 */
import type { Intent } from '../../../machines/reauthenticate.logic.js'
import type { RequestContext } from '../../config/types.js'
import { stoppedRequestAnswer, wantsPage } from './challenge.js'
import type { StepUpDemand } from '../../modules.js'
import { sensitiveActionDemand } from '../../session/freshness.js'
import type { ResponseInternal } from '../../types.js'
import type { SensitiveAction } from './policy.js'

export type { StepUpDemand }

/**
 * The gate's verdict on the request for `action` (see `sensitiveActionDemand`): the step-up
 * module's policy, or without it the core's ten-minute rule.
 */
export const stepUpDemand: (ctx: RequestContext, action: SensitiveAction) => Promise<StepUpDemand | undefined> = sensitiveActionDemand

/** Field names never sealed into an intent: they are secrets, or minted again on resumption. */
const SECRET_FIELD = /pass|secret|token|code|otp|csrf|credential|key/i
/** The most fields, and characters in all, an intent keeps (it rides in a cookie of 4,096 bytes). */
const MAX_INTENT_FIELDS = 16
const MAX_INTENT_CHARS = 1024

/** The form fields of the request worth replaying: strings, no secrets, small enough to seal. */
function replayableFields(body: Record<string, unknown> | undefined): Record<string, string> {
  const fields: Record<string, string> = {}
  let size = 0
  for (const [name, value] of Object.entries(body ?? {})) {
    if (typeof value !== 'string' || SECRET_FIELD.test(name)) continue
    size += name.length + value.length
    if (size > MAX_INTENT_CHARS || Object.keys(fields).length === MAX_INTENT_FIELDS) break
    fields[name] = value
  }
  return fields
}

/**
 * Where a resumed action may send the browser: `url` (a callback URL the `redirect` callback
 * resolved, or a `Referer`) when it is on `origin`, as its path and query, else `undefined`. The
 * same rule as the sign-in's: a URL on our origin is kept whole. A path the URL parser reads as
 * starting with `//` (`https://app//evil.example`, `/\evil.example`) is kept absolute, because as
 * a bare path in a `Location` a browser reads it as another host.
 */
export function resumeTarget(url: string | null | undefined, origin: string): string | undefined {
  if (!url) return undefined
  let parsed: URL
  try {
    parsed = new URL(url, origin)
  } catch {
    return undefined
  }
  if (parsed.origin !== origin || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return undefined
  const path = `${parsed.pathname}${parsed.search}`
  return path.startsWith('//') ? `${origin}${path}` : path
}

/**
 * What resumes after the proof. A browser's form post is posted again (fields minus secrets); a
 * navigation is followed again; a `fetch` cannot be replayed by a page, so the browser goes back to
 * the page it came from (its `Referer` on our origin, else the callback URL), whose script retries.
 */
export function intentOf(ctx: RequestContext): Intent {
  const { request } = ctx
  if (!wantsPage(request.headers)) {
    const back = resumeTarget(request.headers.get('referer'), ctx.origin) ?? resumeTarget(ctx.callbackUrl, ctx.origin) ?? '/'
    return { method: 'GET', url: back, fields: {} }
  }
  const url = `${request.url.pathname}${request.url.search}`
  if (request.method === 'GET') return { method: 'GET', url, fields: {} }
  return { method: 'POST', url, fields: replayableFields(request.body) }
}

/** The answer to a stopped request: 303 to the page for a browser, 401 with the URL for a fetch. */
export const reauthenticationRequired: (ctx: RequestContext, demand: StepUpDemand, url: string) => ResponseInternal = stoppedRequestAnswer
