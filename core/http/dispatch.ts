/**
 * The one generic dispatcher: find the route, apply its protections (CSRF, callback URL), then run
 * its flow or handler and turn the flow's outcome into an internal response. It never branches on a
 * provider's type: the routing table and the charts do.
 *
 * @module
 */
import { validate } from 'superstruct'
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate'
import type { FlowOutcome } from '../../machines/shared/outcome.js'
import { cookiesFor } from '../config/read.js'
import type { ResolvedConfig } from '../config/types.js'
import {
  clearChunkedCookie,
  expiredCookie,
  readChunkedCookie,
  serializeCookie,
  SESSION_CHUNK_SIZE,
  writeChunkedCookie,
  type Cookie,
  type CookieOption,
} from '../cookies.js'
import { advanceNow, type FlowRun } from '../engine/advance.js'
import type { FlowDefinition } from '../engine/flow.js'
import { ENVELOPE_MAX_AGE, openEnvelope, sealEnvelope } from '../engine/envelope.js'
import { BROWSER_COOKIE_LIMIT, defaultResting, sealingFor, type Resting } from './resting.js'
import { respondOutcomePage, stepEvent } from './steps.js'
import { ACTIONS_WITH_FLOW, ACTIONS_WITH_SEGMENT } from '../actions.js'
import { SESSION_ISSUING_STATES, SIGN_IN_COMPLETION } from '../../machines/signin-completion.logic.js'
import { notifyRun, observedRunOptions } from '../observe/notify.js'
import {
  FlowStateError,
  InvalidCallbackUrl,
  UnknownProvider,
  type ServiceUnavailable,
  errorParamOf,
  kindOfType,
  MissingCSRF,
  RequestError,
  UnknownAction,
  type ErrorKind,
  type ErrorType,
} from '../errors.js'
import { callback } from '../flows/callbacks.js'
import type { Logger } from '../logger.js'
import { markReported, outageOf } from '../outage.js'
import type { ResponseInternal } from '../types.js'
import type { RequestContext } from './context.js'
import { readCsrf } from './csrf.js'
import { HTML_NO_STORE_HEADERS, JSON_HEADERS, JSON_NO_STORE_HEADERS } from './handlers.js'
import { renderRestartPage } from '../pages/notices.js'
import type { ParsedRequest, RequestSource } from './request.js'
import { handoffs, matchRoute, routingTable, type FlowBinding, type Route } from './routes.js'
import { REAUTHENTICATE, SESSION_MARKING_STATE } from '../../machines/shared/reauthenticate-names.js'
import { freshSignInRequired, sensitiveActionDemand } from '../session/freshness.js'
import { clearSessionCache } from '../session/cache.js'
import type { SensitiveActionName as SensitiveAction } from '../modules.js'

/** Whether `url` is a relative path or an absolute http(s) URL. */
export function isValidCallbackUrl(url: string, origin: string): boolean {
  try {
    const { protocol } = new URL(url, url.startsWith('/') ? origin : undefined)
    return protocol === 'https:' || protocol === 'http:'
  } catch {
    return false
  }
}

/**
 * Where a user starts again after a sign-in could not be finished (a part was down, or a deploy
 * changed the flow): the sign-in page (the application's, else the built-in one) with the callback
 * URL the first try was going to: the request's, else the callback-url cookie's. The sign-in page
 * checks it through the `redirect` callback again.
 */
export function signInAgainUrl(config: ResolvedConfig, request: ParsedRequest): string {
  const { origin } = request.url
  const page = config.pages.signIn ?? `${config.basePath === '/' ? '' : config.basePath}/signin`
  const url = new URL(/^https?:\/\//.test(page) ? page : `${origin}${page}`)
  const given = request.body?.callbackUrl ?? request.query.callbackUrl
  const candidate = typeof given === 'string' ? given : request.cookies[cookiesFor(config, request.url).callbackUrl.name]
  if (candidate !== undefined && isValidCallbackUrl(candidate, origin)) url.searchParams.set('callbackUrl', candidate)
  return url.href
}

/** Anything but printable ASCII: not valid raw in a `Location` header (a ByteString). */
const NEEDS_ENCODING = /[^\x21-\x7e]/

function percentEncodeBytes(text: string): string {
  return text.replace(/[^\x21-\x7e]+/g, (run) =>
    Array.from(new TextEncoder().encode(run), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  )
}

/**
 * Whether a browser reads `location` as another host's URL with the page's own scheme: once the URL
 * parser has dropped tabs and newlines and the leading spaces and control characters, it starts
 * with two slashes, either way round (`//evil.example`, `/\evil.example`).
 */
export function isSchemeRelative(location: string): boolean {
  return /^[\u0000-\u0020]*[/\\]{2}/.test(location.replace(/[\t\n\r]/g, ''))
}

/** Where a `Location` that would leave the site goes instead, and where the reason is logged. */
export interface LocationGuard {
  /** The site's base URL (its origin). */
  base: string
  logger: Pick<Logger, 'error'>
}

/**
 * A URL as a `Location` header may carry it: characters outside printable ASCII percent-encoded as
 * UTF-8 (an IDN host as punycode), everything else as it was. Without this a same-origin
 * `callbackUrl` such as `/dashboard/日本` makes building the header throw and loses the sign-in.
 *
 * Every `Location` we write passes here, so this is where none may leave the site by being
 * scheme-relative (a custom `redirect` callback, a path built from a crafted URL): such a target
 * becomes the base URL of `guard` (else the site's root, `/`), and the guard's logger says why.
 */
export function encodeLocation(location: string, guard?: LocationGuard): string {
  if (isSchemeRelative(location)) {
    guard?.logger.error(new InvalidCallbackUrl(`Refused to redirect to ${JSON.stringify(location.slice(0, 200))}: a browser reads it as another host. Redirected to ${guard.base} instead`))
    return guard?.base ?? '/'
  }
  if (!NEEDS_ENCODING.test(location)) return location
  try {
    // The WHATWG serialisation is the URL the browser would follow anyway.
    if (/^[a-z][a-z0-9+.-]*:/i.test(location)) return new URL(location).href
    if (location.startsWith('/') && !location.startsWith('//')) {
      const url = new URL(location, 'http://relative.invalid')
      return `${url.pathname}${url.search}${url.hash}`
    }
  } catch {
    // Not a URL the parser accepts: encode byte by byte below.
  }
  return percentEncodeBytes(location)
}

/** The longest callback URL accepted (the de facto URL limit of browsers and servers). */
export const MAX_CALLBACK_URL_LENGTH = 2048

/** Whether `url` is short enough, and its callback-url cookie (percent-encoded) fits in a browser. */
function callbackUrlFits(ctx: RequestContext, url: string): boolean {
  if (url.length > MAX_CALLBACK_URL_LENGTH) return false
  return serializeCookie({ ...ctx.cookies.callbackUrl, value: url }).length <= BROWSER_COOKIE_LIMIT
}

/**
 * Resolves the callback URL from the body, the query or the callback-url cookie, through the
 * `redirect` callback (which keeps it on our origin by default), and remembers it in the cookie.
 *
 * @throws {RequestError} when the request's `callbackUrl` is not a string or not an http(s) URL, or
 *   longer than {@link MAX_CALLBACK_URL_LENGTH} or than its cookie can hold.
 */
async function resolveCallbackUrl(ctx: RequestContext): Promise<void> {
  const { request, cookies, origin } = ctx
  const param = request.body?.callbackUrl ?? request.query.callbackUrl
  // Stryker disable next-line ConditionalExpression: eq#http-dispatch-1
  if (param !== undefined && (typeof param !== 'string' || !isValidCallbackUrl(param, origin))) {
    ctx.logger.error(new InvalidCallbackUrl(`Invalid callback URL. Received: ${String(param)}`))
    throw new RequestError('Invalid callbackUrl')
  }
  let cookieValue = request.cookies[cookies.callbackUrl.name]
  if (cookieValue !== undefined && (!isValidCallbackUrl(cookieValue, origin) || !callbackUrlFits(ctx, cookieValue))) {
    // A forged callback-url cookie is ignored rather than trusted or fatal.
    ctx.logger.error(new InvalidCallbackUrl(`Invalid callback URL cookie. Received: ${cookieValue}`))
    cookieValue = undefined
  }
  const candidate = (param as string | undefined) || cookieValue
  const resolved = candidate
    ? await callback(ctx.config, 'redirect')({ url: candidate, baseUrl: origin })
    : origin
  if (!callbackUrlFits(ctx, resolved)) {
    // Sealed into flows and kept in its own cookie: a browser would drop that cookie without a word.
    ctx.logger.error(new InvalidCallbackUrl(`Invalid callback URL: ${resolved.length} characters, at most ${MAX_CALLBACK_URL_LENGTH} whose cookie fits in ${BROWSER_COOKIE_LIMIT} bytes`))
    throw new RequestError('Invalid callbackUrl')
  }
  ctx.callbackUrl = resolved
  if (resolved !== request.cookies[cookies.callbackUrl.name]) {
    ctx.setCookies.push({ ...cookies.callbackUrl, value: resolved })
  }
}

function applySessionChange(ctx: RequestContext, outcome: FlowOutcome): void {
  const change = outcome.session
  if (change === undefined) return
  const option = ctx.cookies.sessionToken
  if (change.op === 'clear') {
    ctx.setCookies.push(...clearChunkedCookie(option, ctx.sessionCookie.names))
    // The session cache's entry goes with the session (database sessions with `session.cache`).
    clearSessionCache(ctx)
    return
  }
  const written = writeChunkedCookie(
    option,
    change.value,
    new Date(change.expires * 1000),
    ctx.sessionCookie.names,
  )
  if (change.value.length > SESSION_CHUNK_SIZE) {
    ctx.logger.debug('CHUNKING_SESSION_COOKIE', {
      message: 'Session cookie exceeds allowed 4096 bytes.',
      valueSize: change.value.length,
    })
  }
  ctx.setCookies.push(...written)
}

/** The redirect for an error: the sign-in or error page with `?error=` (and `code`). */
export function errorRedirectUrl(
  config: ResolvedConfig,
  origin: string,
  type: ErrorType | 'Configuration',
  kind: ErrorKind,
  code?: string,
  retryAfter?: number,
): string {
  const params = new URLSearchParams({ error: errorParamOf(type) })
  // AccessDenied carries a code only when an application's step refused with a reason.
  if ((type === 'CredentialsSignin' || type === 'AccessDenied') && code !== undefined) params.set('code', code)
  if (retryAfter !== undefined) params.set('retryAfter', String(retryAfter))
  const custom = kind === 'signIn' ? config.pages.signIn : config.pages.error
  const path = custom ?? `${config.basePath === '/' ? '' : config.basePath}/${kind.toLowerCase()}`
  const base = /^https?:\/\//.test(path) ? path : `${origin}${path}`
  return `${base}${base.includes('?') ? '&' : '?'}${params}`
}

function toInternal(ctx: RequestContext, outcome: SettledOutcome, flowId: string): ResponseInternal {
  applySessionChange(ctx, outcome)
  switch (outcome.type) {
    case 'step':
      return { redirect: `${ctx.authUrl}/step/${flowId}`, cookies: ctx.setCookies }
    case 'page':
      return respondOutcomePage(ctx, outcome.page, outcome.data, outcome.status)
    case 'json':
      return {
        ...(outcome.status !== undefined ? { status: outcome.status } : {}),
        headers: outcome.cache === 'no-store' ? JSON_NO_STORE_HEADERS : JSON_HEADERS,
        body: outcome.body,
        cookies: ctx.setCookies,
      }
    case 'redirect':
      return { redirect: outcome.url, cookies: ctx.setCookies }
    case 'error':
      return {
        redirect: errorRedirectUrl(
          ctx.config,
          ctx.origin,
          outcome.error,
          kindOfType(outcome.error),
          outcome.code,
          outcome.retryAfter,
        ),
        cookies: ctx.setCookies,
      }
  }
}

/** What serving a request produced: the response, and the error it reports, if any. */
export interface Dispatched {
  response: ResponseInternal
  /** Set when a flow ended in an error outcome (raw callers receive it as a thrown AuthError). */
  failure?: { type: ErrorType; code?: string }
}

/** An outcome the HTTP layer answers with: every handoff has been followed. */
type SettledOutcome = Exclude<FlowOutcome, { type: 'handoff' } | { type: 'stepUp' }>

/** The most flows one request may pass through (a first factor, then the sign-in completion). */
const MAX_HANDOFFS = 4

/** Runs `flow` from `from` (or its start) with `event`; seals it if it comes to rest. */
function runOne(
  ctx: RequestContext,
  flow: FlowDefinition<AnyStateMachine, RequestContext>,
  event: { type: string; at: number; [key: string]: unknown },
  resting: Resting,
  from?: AnyMachineSnapshot,
): FlowOutcome | Promise<FlowOutcome> {
  const observed = ctx.config.observers.length > 0 ? observedRunOptions(ctx) : undefined
  const run = advanceNow(flow, ctx, event, observed ? { ...observed, ...(from ? { from } : {}) } : from ? { from } : {})
  // A run whose effects all answered at once (a session read) settles without a microtask.
  return run instanceof Promise ? run.then((ran) => afterRun(ctx, flow, resting, ran)) : afterRun(ctx, flow, resting, run)
}

/** Seals a flow that came to rest, or expires the cookie of one that ended; gives its outcome. */
function afterRun(
  ctx: RequestContext,
  flow: FlowDefinition<AnyStateMachine, RequestContext>,
  resting: Resting,
  run: FlowRun,
): FlowOutcome | Promise<FlowOutcome> {
  if (run.outcome.session?.op === 'set') assertSessionIssued(flow.chart.id, run)
  if (ctx.config.observers.length > 0) notifyRun(ctx, flow.chart.id, run)
  const cookieName = resting.cookie.name
  if (run.resting) return sealResting(ctx, flow, resting, run)
  if (ctx.request.cookies[cookieName] !== undefined) ctx.setCookies.push(expiredCookie(resting.cookie, cookieName))
  return run.outcome
}

async function sealResting(
  ctx: RequestContext,
  flow: FlowDefinition<AnyStateMachine, RequestContext>,
  resting: Resting,
  run: FlowRun,
): Promise<FlowOutcome> {
  const cookieName = resting.cookie.name
  // Like Auth.js's check cookies: Max-Age and an Expires for the envelope's lifetime.
  const expires = new Date((ctx.at + ENVELOPE_MAX_AGE) * 1000)
  const cookie = { ...resting.cookie, options: { ...resting.cookie.options, expires } }
  const value = await sealEnvelope(flow as never, run.snapshot, sealingFor(ctx, cookieName, resting.binding, cookie))
  ctx.setCookies.push({ ...cookie, value })
  return run.outcome
}

/**
 * The flows that may set a session cookie. A first factor can only hand a verified user to the
 * sign-in completion; were one to answer with a session itself (a mistake in an edited chart), the
 * request fails instead of skipping the completion's second-factor gate.
 */
const SESSION_ISSUERS: ReadonlySet<string> = new Set(['session'])
/** The re-authentication re-issues the same session, only from the state that records a proof. */
const REISSUING_STATES: Readonly<Record<string, string>> = { [REAUTHENTICATE]: SESSION_MARKING_STATE }
const ISSUING_STATES: ReadonlySet<string> = new Set(SESSION_ISSUING_STATES)

/**
 * A session cookie is set only by a run that issued it: the `session` flow, or a sign-in
 * completion whose run went through one of its issuing states (which the chart reaches only past
 * the second-factor gate). The flow id alone is not enough: a waiting state's outcome, or a final
 * state reached around the issuing states, would otherwise set whatever value it names.
 *
 * @throws {FlowStateError} `ERR_FLOW_SESSION_REFUSED` otherwise.
 */
function assertSessionIssued(flowId: string, run: FlowRun): void {
  const reissuing = REISSUING_STATES[flowId]
  const issued =
    flowId === SIGN_IN_COMPLETION
      ? !run.resting && run.trace.steps.some((step) => ISSUING_STATES.has(step.from))
      : reissuing !== undefined
        ? !run.resting && run.trace.steps.some((step) => step.from === reissuing)
        : SESSION_ISSUERS.has(flowId)
  if (!issued) {
    throw new FlowStateError('ERR_FLOW_SESSION_REFUSED', `${flowId} may not set a session outside its issuing states`)
  }
}

async function runFlow(ctx: RequestContext, binding: FlowBinding<unknown>, bound = true): Promise<Dispatched> {
  const { request, provider } = ctx
  const input = request.method === 'POST' ? (request.body ?? {}) : request.query
  let params: unknown = input
  if (!binding.accepts?.(input)) {
    const [invalid, validated] = validate(input, binding.params, { coerce: true })
    if (invalid) throw new RequestError(`Invalid input at ${invalid.path.join('.') || 'body'}`)
    params = validated
  }
  const diverted = await binding.divert?.(ctx, params)
  if (diverted) return runFlow(ctx, diverted, false)
  if (binding.intercept) {
    const answered = await binding.intercept(ctx, params)
    if (answered) return { response: answered }
  }
  const flow = typeof binding.flow === 'function' ? binding.flow(ctx) : binding.flow
  const resting: Resting = {
    cookie: binding.envelopeCookie?.(ctx) ?? defaultResting(ctx, flow.chart.id).cookie,
    ...(provider && bound ? { binding: provider.id } : {}),
  }
  let from: AnyMachineSnapshot | undefined
  const resumes = typeof binding.resumes === 'function' ? binding.resumes(ctx, params) : binding.resumes === true
  if (resumes) {
    try {
      const sealed = request.cookies[resting.cookie.name]
      if (!sealed) {
        throw new FlowStateError('ERR_FLOW_STATE_MISSING', `${flow.chart.id}: no flow to resume`)
      }
      from = await openEnvelope(flow as never, sealed, sealingFor(ctx, resting.cookie.name, resting.binding))
    } catch (error) {
      if (error instanceof FlowStateError && error.code === 'ERR_FLOW_VERSION_CHANGED') {
        return { response: restartAfterUpdate(ctx, resting, error) }
      }
      throw binding.refused && error instanceof FlowStateError ? await binding.refused(ctx, error) : error
    }
  }
  const event = binding.step ? stepEvent(ctx, from!) : binding.toEvent(ctx, params)
  let current = flow
  const first = runOne(ctx, flow, event, resting, from)
  let outcome = first instanceof Promise ? await first : first
  // A first factor hands its verified identity on: the request goes on in the next flow.
  for (let hop = 0; outcome.type === 'handoff'; hop++) {
    if (hop === MAX_HANDOFFS) {
      throw new FlowStateError('ERR_FLOW_LOOP', `${flow.chart.id}: more than ${MAX_HANDOFFS} handoffs`)
    }
    const next = handoffs[outcome.flow]
    if (!next) throw new FlowStateError('ERR_FLOW_LOOP', `no flow "${outcome.flow}" to hand over to`)
    current = next.flow(ctx)
    outcome = await runOne(ctx, current, next.toEvent(ctx, outcome.identity), defaultResting(ctx, current.chart.id))
  }
  // An effect that met an outage fell back to a refusal or to "no session": neither is the answer
  // while the part is down (the user did nothing wrong, and may still be signed in). A run that
  // issued a session despite it (a non-essential write failed) keeps its answer.
  if (ctx.outage && outcome.session?.op !== 'set') throw ctx.outage
  // A chart's freshness gate stopped the action: the same answer as the route's gate.
  if (outcome.type === 'stepUp') {
    const asked = await askForRecentProof(ctx, outcome.action as SensitiveAction)
    if (asked) return asked
    return { response: toInternal(ctx, { type: 'error', error: 'AccessDenied' }, current.chart.id), failure: { type: 'AccessDenied' } }
  }
  return {
    response: toInternal(ctx, outcome, current.chart.id),
    ...(outcome.type === 'error'
      ? { failure: { type: outcome.error, ...(outcome.code !== undefined ? { code: outcome.code } : {}) } }
      : {}),
  }
}

/**
 * The freshness gate of a built-in sensitive action: `undefined` lets the request through; with
 * the step-up module, a stale session gets the re-authentication started with this request's
 * intent sealed in it, and is sent to its page (a fetch gets 401 with the page's URL); without it,
 * to a fresh sign-in. The action itself does not run.
 */
async function askForRecentProof(ctx: RequestContext, action: SensitiveAction | undefined): Promise<Dispatched | undefined> {
  if (action === undefined) return undefined
  const demand = await sensitiveActionDemand(ctx, action)
  if (!demand) return undefined
  ctx.logger.debug('step-up required', { action })
  const stepUp = ctx.config.stepUp
  // Without the step-up module there is no re-authentication to start: a fresh sign-in is the proof.
  if (!stepUp) return { response: freshSignInRequired(ctx, demand) }
  const resting = defaultResting(ctx, REAUTHENTICATE)
  const event = { type: 'reauth.start', at: ctx.at, action, intent: stepUp.intentOf(ctx), policy: demand.policy }
  const outcome = await runOne(ctx, stepUp.flow as never, event, resting)
  // No factor the policy accepts can be proven here: the flow's refusal is the answer.
  if (outcome.type !== 'step') return { response: toInternal(ctx, outcome as SettledOutcome, REAUTHENTICATE) }
  return { response: stepUp.required(ctx, demand, `${ctx.authUrl}/step/${REAUTHENTICATE}`) }
}

/**
 * The answer to a flow sealed by a chart version this deploy does not continue: a page that says
 * the sign-in must start again, linking to the sign-in page with the callback URL kept (as the
 * redirect itself for a client that asked for it as JSON), and the stale flow cookie expired so
 * that it is not offered again. Never an error page, never a redirect back into the same flow.
 */
function restartAfterUpdate(ctx: RequestContext, resting: Resting, error: FlowStateError): ResponseInternal {
  ctx.logger.warn('flow-restarted-after-update')
  ctx.logger.debug('flow-restarted-after-update', { reason: error.message })
  ctx.setCookies.push(expiredCookie(resting.cookie, resting.cookie.name))
  const signInUrl = signInAgainUrl(ctx.config, ctx.request)
  if (ctx.request.headers.get('x-auth-return-redirect') !== null) return { redirect: signInUrl, cookies: ctx.setCookies }
  const page = renderRestartPage({ theme: ctx.config.theme, signInUrl })
  return { status: page.status, headers: HTML_NO_STORE_HEADERS, body: page.html, cookies: ctx.setCookies }
}

/** The route serving a parsed request, if any (used by the error handler too). */
export function routeFor(
  request: ParsedRequest,
  config: ResolvedConfig,
  table: readonly Route[] = routingTable(config),
): Route | undefined {
  const provider = request.providerId ? config.providerById.get(request.providerId) : undefined
  return matchRoute(table, request.method, request.action, provider?.type)
}

/**
 * The config's logger, noting the first outage among the errors logged through it: effects catch
 * their failures and log them, so this sees an outage that an effect turned into a refusal.
 */
function noticingOutages(logger: Logger, notice: (outage: ServiceUnavailable) => void): Logger {
  return {
    error(error) {
      const outage = outageOf(error)
      logger.error(error)
      if (outage) {
        markReported(outage)
        notice(outage)
      }
    },
    warn: logger.warn,
    debug: logger.debug,
  }
}

/**
 * The per-request context. A class, not a literal: the web `Request` is a getter on the prototype
 * (built only for the callbacks that take one), and every request's context shares one shape.
 */
class Context implements RequestContext {
  readonly at = Math.floor(Date.now() / 1000)
  readonly logger: ResolvedConfig['logger']
  readonly adapter: ResolvedConfig['adapter']
  readonly authUrl: string
  readonly sessionCookie: RequestContext['sessionCookie']
  readonly setCookies: Cookie[] = []
  readonly clientAddress: string | undefined
  csrf?: RequestContext['csrf']
  callbackUrl: string
  outage?: ServiceUnavailable

  constructor(
    private readonly source: RequestSource,
    readonly request: ParsedRequest,
    readonly config: ResolvedConfig,
    readonly cookies: RequestContext['cookies'],
    readonly provider: RequestContext['provider'],
    readonly flowId: string | undefined,
    readonly origin: string,
  ) {
    // Only a configured adapter or store can be unavailable (the default store is in memory).
    this.logger =
      config.adapter || config.sharedStore
        ? noticingOutages(config.logger, (outage) => (this.outage ??= outage))
        : config.logger
    this.adapter = config.adapter
    this.authUrl = `${origin}${config.basePath === '/' ? '' : config.basePath}`
    this.sessionCookie = readChunkedCookie(request.cookies, cookies.sessionToken.name)
    this.clientAddress = source.clientAddress
    this.callbackUrl = origin
  }

  get raw(): Request {
    return this.source.request()
  }
}

/**
 * Serves a parsed request.
 *
 * @throws {AuthError} for the errors Auth.js throws (unknown provider or action, missing CSRF);
 *   {@link RequestError} for bad input; {@link FlowStateError} for a refused sealed flow.
 */
export async function dispatch(
  source: RequestSource,
  request: ParsedRequest,
  config: ResolvedConfig,
  table: readonly Route[] = routingTable(config),
): Promise<Dispatched> {
  const origin = request.url.origin
  let provider
  // `/step/<flow>` names a flow, not a provider.
  const flowId = ACTIONS_WITH_FLOW.has(request.action) ? request.providerId : undefined
  if (request.providerId !== undefined && flowId === undefined && !ACTIONS_WITH_SEGMENT.has(request.action)) {
    provider = config.providerById.get(request.providerId)
    if (!provider) {
      throw new UnknownProvider(
        `Provider with id "${request.providerId}" not found. Available providers: [${config.providers.map((p) => p.id).join(', ')}].`,
      )
    }
  }
  const route = matchRoute(table, request.method, request.action, provider?.type)
  if (!route) throw new UnknownAction(`Cannot handle action: ${request.action}`)
  const cookies = cookiesFor(config, request.url)
  const ctx = new Context(source, request, config, cookies, provider, flowId, origin)
  const { setCookies } = ctx
  const handsOutCsrfToken = typeof route.csrfToken === 'function' ? route.csrfToken(ctx) : route.csrfToken === true
  if (route.csrf || handsOutCsrfToken) {
    if (config.csrfDisabled) {
      ctx.csrf = { token: '', verified: true }
    } else {
      ctx.csrf = await readCsrf(
        request.cookies[cookies.csrfToken.name],
        config.secrets,
        request.body?.csrfToken,
        // Stryker disable next-line ConditionalExpression: eq#gate-post-only
        request.method === 'POST',
      )
      if (ctx.csrf.cookie) setCookies.push({ ...cookies.csrfToken, value: ctx.csrf.cookie })
    }
    if (route.csrf && !ctx.csrf.verified) {
      throw new MissingCSRF(`CSRF token was missing during an action ${request.action}`)
    }
  }
  if (route.callbackUrl) await resolveCallbackUrl(ctx)
  if (route.stepUp) {
    const asked = await askForRecentProof(ctx, route.stepUp(ctx))
    if (asked) return asked
  }
  if (typeof route.serve === 'function') {
    const response = await route.serve(ctx)
    // A handler that met an outage answered without the part (a session it could not read).
    if (ctx.outage) throw ctx.outage
    return { response }
  }
  return runFlow(ctx, route.serve as unknown as FlowBinding<unknown>)
}
