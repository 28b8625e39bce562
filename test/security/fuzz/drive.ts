/**
 * Turns a plan into requests against a world, and judges every response with the oracles. The
 * legitimate ingredients are obtained the way a browser would get them (a CSRF token from
 * `/csrf`, a session from a real sign-in, an OAuth flow started through the routing table's start
 * route and walked through the provider's pages); those preparatory requests are judged too.
 *
 * What may happen is derived from the ingredients that survive the tampering:
 * - a session cookie may be issued only by a credentials callback with an intact CSRF pair and the
 *   right credentials, or by an OAuth callback carrying the intact, unused envelope and the
 *   provider's untouched answer; otherwise only for the same subject as an intact session the
 *   request already carried (a renewal), else never (deletions are always fine);
 * - a request whose CSRF pair is broken never reaches the flow of a CSRF-protected route, and one
 *   whose envelope is broken (tampered, replayed, foreign, missing) never resumes a flow: the
 *   engine's inspection hook must report no flow run for it.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { base64url } from 'jose'
import type { FlowTrace } from '../../../core/engine/trace.js'
import type { FlowBinding, Route } from '../../../core/http/routes.js'
import { decode, encode } from '../../../core/jwt.js'
import { CookieJar, ORIGIN, SECRET, setCookies } from '../../fixtures/http.js'
import type { ProviderReturn } from '../../fixtures/oidc-provider.js'
import { badBody, badLogOutput, issuedSession, offOriginRedirect } from './oracles.js'
import type { Noise, Plan, Tamper } from './plans.js'
import { FIELD_VALUES, FUZZ_CREDENTIALS, FUZZ_USER, type World } from './world.js'
import { PASSWORD_INTENTS } from '../../../core/flows/password/index.js'

const PASSWORD_CHANGE_MODES = ['change', 'set', 'remove'] as const

/** Markup planted in generated values; a page must never reflect it unescaped. */
export const MARKUP = '<fuzz-xss'

/** The most `Set-Cookie` headers one response may carry (16 session chunks and our own cookies). */
export const MAX_SET_COOKIES = 24

/** Authorization parameters that carry the protocol's guarantees: never the request's to choose. */
const PROTECTED_PARAMS = ['client_id', 'redirect_uri', 'response_type', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'request', 'request_uri']

/** A key naming a route: `METHOD action provider-type`. */
export const routeKey = (route: Pick<Route, 'method' | 'action' | 'provider'>): string =>
  `${route.method} ${route.action} ${route.provider}`

const isFlow = (serve: Route['serve']): serve is FlowBinding<never> => typeof serve !== 'function'

/** Per-route and per-flow counts of one run. */
export class Reach {
  /** Fuzzed requests per route key. */
  readonly sent = new Map<string, number>()
  /** Fuzzed requests whose flow ran (a trace was reported), per route key. */
  readonly reached = new Map<string, number>()
  /** Fuzzed requests that reached each flow, by machine id. */
  readonly flows = new Map<string, number>()
  /** Fuzzed requests that legitimately signed in, per route key. */
  readonly signedIn = new Map<string, number>()
  /** Preparatory (legitimate) requests sent. */
  preludes = 0
  /** Fuzzed requests sent. */
  total = 0

  count(map: Map<string, number>, key: string): void {
    map.set(key, (map.get(key) ?? 0) + 1)
  }

  /** A printable summary. */
  report(title: string): string {
    const lines = [`${title}: ${this.total} fuzzed requests (+${this.preludes} preparatory)`]
    for (const [flow, count] of [...this.flows].sort()) lines.push(`  flow ${flow}: reached by ${count}`)
    for (const [key, count] of [...this.sent].sort()) {
      lines.push(
        `  ${key.padEnd(28)} sent ${String(count).padStart(5)}  reached its flow ${String(this.reached.get(key) ?? 0).padStart(5)}  signed in ${this.signedIn.get(key) ?? 0}`,
      )
    }
    return lines.join('\n')
  }
}

/** A request being put together. */
interface Draft {
  method: string
  path: string
  query: Record<string, string>
  body: Record<string, unknown>
  encoding: 'form' | 'json' | 'sniffed-json'
  cookies: Map<string, string>
  /** Cookies written raw into the header after the jar's (a flood of chunk names). */
  rawCookies: string
  headers: Record<string, string>
  /** The method was switched (a second switch is refused). */
  switched?: boolean
}

/** What a legitimate client brought, and whether it survived the tampering. */
interface Facts {
  csrf: boolean
  credentials: boolean
  /** The provider's answer, untouched (only after a real visit). */
  answer: boolean
  /**
   * The parameters the callback carried from the flow (the provider's answer): only these are the
   * answer's to tamper with. A PKCE-only provider sends no `state`; one added by noise is not its.
   */
  answerKeys: ReadonlySet<string>
  /** The envelope of a flow started for this provider, unused and untouched. */
  envelope: boolean
  /** Set when a broken envelope travels (it must not resume anything). */
  envelopeBroken: boolean
  /** The session the request carries, while intact. */
  session?: { sub: string; token: string }
  sessionBroken: boolean
}

/** A violated property: what was sent, what came back, what went wrong. */
export class Violation extends Error {
  constructor(message: string, request: string, detail: unknown) {
    super(`${message}\n  request: ${request}\n  detail: ${JSON.stringify(detail)?.slice(0, 600)}`)
  }
}

/** Flips one bit of one non-empty segment of a compact JWE, re-encoded canonically. */
function flipJwe(jwe: string, n: number): string {
  const parts = jwe.split('.')
  const candidates = parts.map((p, i) => (p.length > 0 ? i : -1)).filter((i) => i >= 0)
  if (candidates.length === 0) return `${jwe}x`
  const index = candidates[n % candidates.length]!
  let bytes: Uint8Array
  try {
    bytes = base64url.decode(parts[index]!)
  } catch {
    return `${jwe}x`
  }
  if (bytes.length === 0) return `${jwe}x`
  const copy = Uint8Array.from(bytes)
  const at = Math.floor(n / candidates.length) % copy.length
  copy[at] = copy[at]! ^ (1 << (n % 8))
  parts[index] = base64url.encode(copy)
  return parts.join('.')
}

/** Changes one character of an opaque token to a different one of the same alphabet. */
function flipChar(token: string, n: number): string {
  if (token.length === 0) return 'x'
  const at = n % token.length
  const c = token[at]!
  const replacement = c === 'a' ? 'b' : /[0-9]/.test(c) ? String((Number(c) + 1) % 10) : 'a'
  return `${token.slice(0, at)}${replacement}${token.slice(at + 1)}`
}

const stripSecurePrefix = (name: string) => name.replace(/^__(Secure|Host)-/, '')

/** Moves a cookie's value to another name (the browser would send it under that name). */
function renameCookie(cookies: Map<string, string>, from: string, to: string): void {
  const value = cookies.get(from)
  cookies.delete(from)
  if (value !== undefined) cookies.set(to, value)
}

/** Runs plans against a world, counting reach and throwing a {@link Violation} on the first bad answer. */
export class Driver {
  readonly reach = new Reach()
  private readonly routes: readonly Route[]

  constructor(readonly world: World) {
    this.routes = world.table
    // Every route with a provider type must have a provider to fuzz it with.
    for (const route of this.routes) if (route.provider !== 'none') world.providersOf(route.provider)
  }

  /** The routing table as fuzzed (every entry, in order). */
  get table(): readonly Route[] {
    return this.routes
  }

  /** Indexes of the table's routes that a flow serves. */
  /** The indexes of the routes a flow serves, grouped by flow (a flow chosen per request is one group). */
  get routesByFlow(): number[][] {
    // By the flow object: routes of one flow share it, and a flow loaded with its provider has no
    // machine to read before the first request.
    const groups = new Map<unknown, number[]>()
    this.routes.forEach((route, index) => {
      if (!isFlow(route.serve)) return
      const { flow } = route.serve
      const key = typeof flow === 'function' ? `per-request:${routeKey(route)}` : flow
      groups.set(key, [...(groups.get(key) ?? []), index])
    })
    return [...groups.values()]
  }

  /** Executes one plan: preparation, tampering, the fuzzed request, the verdict. */
  async run(plan: Plan): Promise<void> {
    const { world } = this
    const route = this.routes[plan.route % this.routes.length]!
    const providers = route.provider === 'none' ? [] : world.providersOf(route.provider)
    const providerId = providers.length > 0 ? providers[plan.provider % providers.length] : undefined
    const jar = new CookieJar()
    const facts: Facts = {
      csrf: false,
      credentials: false,
      answer: false,
      answerKeys: new Set(),
      envelope: false,
      envelopeBroken: false,
      sessionBroken: false,
    }
    const secrets = new Set(world.staticSecrets())

    if (plan.session !== 'none') facts.session = await this.signIn(jar, plan.session)
    if (facts.session) secrets.add(facts.session.token)
    let csrfToken: string | undefined
    if (plan.csrf) {
      csrfToken = await this.csrfToken(jar)
      facts.csrf = true
    }

    const draft: Draft = {
      method: route.method,
      path: world.path(route.action, providerId),
      query: {},
      body: {},
      encoding: 'form',
      cookies: jar.cookies,
      rawCookies: '',
      headers: {},
    }
    const carry = (params: Record<string, string>) => Object.assign(draft.method === 'POST' ? draft.body : draft.query, params)
    if (draft.method === 'POST' && csrfToken !== undefined) draft.body.csrfToken = csrfToken

    if (plan.proof) {
      // The fields the route's input declares (a route added later gets plausible input too),
      // and a credentials provider's form fields with the right values.
      carry(declaredFields(route))
      if (providerId !== undefined && world.typeOf(providerId) === 'credentials') {
        carry(this.credentialFields(providerId))
        facts.credentials = true
      }
      // The password provider's body names its flow in `intent` (its params declare no fields):
      // a settings intent on /signin, a sign-in, sign-up, verification or reset on /callback.
      if (providerId !== undefined && world.typeOf(providerId) === 'password') {
        const intents = route.action === 'signin' ? PASSWORD_CHANGE_MODES : PASSWORD_INTENTS
        carry({ intent: intents[plan.provider % intents.length]!, email: FUZZ_USER.email, password: `fuzz-password-${plan.provider}` })
      }
    }

    let started: Started | undefined
    const resumes = isFlow(route.serve) && route.serve.resumes === true
    if (resumes && providerId !== undefined && plan.flow !== 'none') {
      started = await this.startFlow(route, providerId, jar)
      secrets.add(started.envelope.value)
      facts.envelope = true
      let params: Record<string, string>
      if (started.authorizationUrl === undefined) {
        // A flow that does not leave for a provider (passkeys): an answer the browser could have
        // produced, for a challenge no authenticator signed.
        params = { action: plan.provider % 2 === 0 ? 'authenticate' : 'register', data: unsignedPasskeyAnswer(plan.provider) }
      } else if (plan.flow === 'visited') {
        const answer = await world.visitProvider(started.authorizationUrl)
        params = answer.form ?? Object.fromEntries(answer.url.searchParams)
        facts.answer = true
      } else {
        const state = new URL(started.authorizationUrl).searchParams.get('state')
        params = { ...(state ? { state } : {}), code: 'not-a-code-the-provider-issued' }
      }
      if (params.code) secrets.add(params.code)
      facts.answerKeys = new Set(Object.keys(params))
      carry(params)
    }

    // Replay first, so the other alterations apply to the replayed request.
    const tampers = [...plan.tampers].sort((a, b) => Number(isReplay(b)) - Number(isReplay(a)))
    const applied: string[] = []
    for (const tamper of tampers) {
      const done = await this.tamper(tamper, draft, facts, { route, providerId, started, jar })
      if (done) applied.push(done)
    }

    const request = toRequest(draft)
    const description = `${draft.method} ${request.url} (plan ${JSON.stringify({ ...plan, tampers: applied })})`.slice(0, 2000)
    const maySignIn =
      (providerId !== undefined &&
        world.typeOf(providerId) === 'credentials' &&
        route.action === 'callback' &&
        draft.method === 'POST' &&
        facts.csrf &&
        facts.credentials) ||
      (resumes && facts.envelope && !facts.envelopeBroken && facts.answer)
    // The route that serves the request as finally sent (a method switch may pick another).
    const served = this.routes.find((r) => r.method === draft.method && r.action === route.action && r.provider === route.provider)
    const csrfBroken = served?.csrf === true && !facts.csrf
    this.reach.total += 1
    this.reach.count(this.reach.sent, routeKey(route))
    const { response, traces, sessionsCreated, body } = await this.send(request, description, secrets)

    const reached = traces.length > 0
    if (reached) {
      this.reach.count(this.reach.reached, routeKey(route))
      for (const flow of new Set(traces.map((t) => t.flow))) this.reach.count(this.reach.flows, flow)
    }
    if (reached && csrfBroken) {
      throw new Violation('a request without a valid CSRF pair reached a flow', description, traces.map(summary))
    }
    if (reached && resumes && facts.envelopeBroken && traces.some((t) => t.resumed)) {
      throw new Violation('a broken, replayed or foreign envelope resumed a flow', description, traces.map(summary))
    }
    const issued = issuedSession(setCookies(response), world.cookies.sessionToken.name)
    if (issued !== undefined) {
      if (maySignIn) this.reach.count(this.reach.signedIn, routeKey(route))
      else await this.expectRenewal(issued, facts, description)
    }
    if (sessionsCreated > 0 && !maySignIn) {
      throw new Violation('the adapter created a session for a request that may not sign in', description, { sessionsCreated })
    }
    if (route.action === 'session' && draft.method === 'GET' && (!facts.session || facts.sessionBroken) && response.status === 200) {
      const session = JSON.parse(body) as { user?: unknown } | null
      if (session && session.user !== undefined) {
        throw new Violation('a broken or absent session was read as a session', description, session)
      }
    }
  }

  /** Sends a request and judges what every request must satisfy; returns what the instruments saw. */
  async send(
    request: Request,
    description: string,
    secrets: ReadonlySet<string>,
    options: { maySignIn?: boolean } = {},
  ): Promise<{ response: Response; body: string; traces: FlowTrace[]; sessionsCreated: number }> {
    const { world } = this
    world.take()
    const logMark = world.log.calls.length
    let response: Response
    try {
      response = await world.send(request)
    } catch (error) {
      throw new Violation('an exception escaped Auth', description, String((error as Error)?.stack ?? error))
    }
    const { traces, sessionsCreated } = world.take()
    const body = await response.text()
    const url = new URL(request.url)
    const expected5xx =
      request.method === 'GET' &&
      url.pathname.replace(/\/+$/, '') === world.path('error') &&
      url.searchParams.get('error') === 'Configuration' &&
      world.resolved.pages.error === undefined
    if (response.status >= 500 && !expected5xx) {
      throw new Violation(`an unexpected ${response.status}`, description, body.slice(0, 300))
    }
    const contentType = response.headers.get('content-type')
    // The CSRF token is handed out in bodies by design; it must still never be logged.
    const csrfToken = parseCsrfCookie(request.headers.get('cookie'), world.cookies.csrfToken.name)
    const bad = badBody(body, contentType, secrets, MARKUP)
    if (bad) throw new Violation(bad, description, body.slice(0, 300))
    const location = response.headers.get('location')
    if (location !== null) this.judgeRedirect(location, request.url, description)
    if (contentType?.startsWith('application/json') && body) {
      const json = JSON.parse(body) as { url?: unknown } | null
      if (json && typeof json === 'object' && typeof json.url === 'string') this.judgeRedirect(json.url, request.url, description)
    }
    const setCookies = response.headers.getSetCookie()
    if (setCookies.length > MAX_SET_COOKIES) {
      throw new Violation(`${setCookies.length} Set-Cookie headers in one response`, description, setCookies.slice(0, 3))
    }
    for (const output of world.log.since(logMark)) {
      // The OpenID Provider runs in this process and prints its own notices.
      if (output.startsWith('oidc-provider ')) continue
      const badLog = badLogOutput(output, csrfToken ? [...secrets, ...csrfToken] : secrets)
      if (badLog) throw new Violation(badLog, description, output.slice(0, 400))
    }
    if (options.maySignIn === false && sessionsCreated > 0) {
      throw new Violation('the adapter created a session while preparing', description, { sessionsCreated })
    }
    return { response, body, traces, sessionsCreated }
  }

  private judgeRedirect(location: string, requestUrl: string, description: string): void {
    const { world } = this
    const off = offOriginRedirect(location, requestUrl, world.allowedTargets())
    if (off) throw new Violation(`open redirect: ${off}`, description, location)
    const target = new URL(location, requestUrl)
    if (world.authorizationEndpoints().includes(`${target.origin}${target.pathname}`)) {
      // An authorization request: its protocol parameters are ours, whatever the request asked.
      const redirectUri = target.searchParams.get('redirect_uri')
      const expected = `${ORIGIN}${world.basePath}/callback/`
      if (target.searchParams.getAll('redirect_uri').length !== 1 || !redirectUri?.startsWith(expected)) {
        throw new Violation('an authorization request with a redirect_uri the request chose', description, location)
      }
      if (target.searchParams.get('response_type') !== 'code') {
        throw new Violation('an authorization request with a response_type the request chose', description, location)
      }
      const asked = new URL(requestUrl).searchParams
      for (const key of PROTECTED_PARAMS) {
        const value = asked.get(key)
        if (value !== null && target.searchParams.getAll(key).includes(value)) {
          throw new Violation(`an authorization request whose ${key} the request chose`, description, location)
        }
      }
    }
  }

  private async expectRenewal(issued: string, facts: Facts, description: string): Promise<void> {
    const { world } = this
    const session = facts.session
    if (!session || facts.sessionBroken) {
      throw new Violation('a session cookie was issued to a request that may not sign in', description, issued.slice(0, 40))
    }
    if (world.options.strategy === 'database') {
      if (issued !== session.token) throw new Violation('a renewal issued another session token', description, {})
      return
    }
    const claims = await decode({ token: issued, secret: SECRET, salt: world.cookies.sessionToken.name })
    if (claims?.sub !== session.sub) {
      throw new Violation('a renewal issued a session for someone else', description, { sub: claims?.sub, expected: session.sub })
    }
  }

  /** A fresh CSRF token (and its cookie in the jar), as a page would get it. */
  async csrfToken(jar: CookieJar): Promise<string> {
    const response = await this.prepare(jar, { method: 'GET', path: this.world.path('csrf') })
    return (JSON.parse(response.body) as { csrfToken: string }).csrfToken
  }

  private credentialFields(providerId: string): Record<string, string> {
    const provider = this.world.resolved.providerById.get(providerId)!
    const declared = Object.keys((provider.config as { credentials?: Record<string, unknown> }).credentials ?? {})
    return Object.fromEntries(declared.map((field) => [field, FIELD_VALUES[field] ?? '']))
  }

  /** Signs in for real, so the plan's request carries a live session; returns its subject and token. */
  private async signIn(jar: CookieJar, how: 'credentials' | 'oauth'): Promise<{ sub: string; token: string }> {
    const { world } = this
    if (how === 'credentials') {
      const csrfToken = await this.csrfToken(jar)
      const providerId = world.providersOf('credentials')[0]!
      await this.prepare(
        jar,
        { method: 'POST', path: world.path('callback', providerId), body: { ...this.credentialFields(providerId), csrfToken } },
        true,
      )
    } else {
      const providerId = world.providersOf('oidc')[0]!
      const resume = this.routes.find((r) => isFlow(r.serve) && r.serve.resumes === true && r.provider === 'oidc')!
      const started = await this.startFlow(resume, providerId, jar)
      const answer = await world.visitProvider(started.authorizationUrl!)
      await this.deliver(jar, providerId, answer)
    }
    const token = jar.get(world.cookies.sessionToken.name)
    if (!token) throw new Error(`preparing a ${how} session signed no one in; the log ends ${JSON.stringify(world.log.calls.slice(-3))}`)
    let sub: string
    if (world.options.strategy === 'database') {
      sub = world.store!.sessions.get(token)!.userId
    } else {
      sub = String((await decode({ token, secret: SECRET, salt: world.cookies.sessionToken.name }))!.sub)
    }
    return { sub, token }
  }

  private async deliver(jar: CookieJar, providerId: string, answer: ProviderReturn): Promise<void> {
    const path = this.world.path('callback', providerId)
    if (answer.method === 'POST') await this.prepare(jar, { method: 'POST', path, body: answer.form ?? {} }, true)
    else await this.prepare(jar, { method: 'GET', path, query: Object.fromEntries(answer.url.searchParams) }, true)
  }

  /** The index of the route that starts the flow `resumeRoute` resumes, for the same provider type. */
  private startRouteFor(resumeRoute: Route): number {
    const flow = (resumeRoute.serve as FlowBinding<never>).flow
    const index = this.routes.findIndex(
      (r) => isFlow(r.serve) && r.serve.flow === flow && !r.serve.resumes && r.provider === resumeRoute.provider,
    )
    if (index === -1) throw new Error(`no route starts the flow that ${routeKey(resumeRoute)} resumes`)
    return index
  }

  /** Starts the flow a resume route continues: through the table's start route, with a CSRF pair. */
  private async startFlow(resumeRoute: Route, providerId: string, jar: CookieJar): Promise<Started> {
    const { world } = this
    const start = this.routes[this.startRouteFor(resumeRoute)]!
    const scratch = new CookieJar()
    const csrfToken = await this.csrfToken(scratch)
    const path = world.path(start.action, providerId)
    const response = await this.prepare(
      scratch,
      start.method === 'GET' ? { method: 'GET', path, query: { action: 'authenticate' } } : { method: start.method, path, body: { csrfToken } },
    )
    // A flow that leaves for a provider redirects there; one answered in the page (passkeys) does not.
    const authorizationUrl = response.location ?? undefined
    if (!authorizationUrl && response.status !== 200) {
      throw new Error(`starting ${providerId} failed: ${response.status} ${response.body.slice(0, 200)}`)
    }
    const known = new Set([world.cookies.csrfToken.name, world.cookies.callbackUrl.name, world.cookies.sessionToken.name])
    const envelope = setCookies(response.raw).find((c) => !known.has(c.name) && c.value !== '')
    if (!envelope) throw new Error(`starting ${providerId} set no flow cookie`)
    const { value } = envelope
    jar.cookies.set(envelope.name, value)
    return { providerId, authorizationUrl, envelope: { name: envelope.name, value } }
  }

  /** A legitimate request of the preparation, judged like any other; the jar follows its cookies. */
  private async prepare(
    jar: CookieJar,
    init: { method: string; path: string; query?: Record<string, string>; body?: Record<string, string> },
    maySignIn = false,
  ): Promise<{ status: number; location: string | null; body: string; raw: Response }> {
    const draft: Draft = {
      method: init.method,
      path: init.path,
      query: init.query ?? {},
      body: init.body ?? {},
      encoding: 'form',
      cookies: jar.cookies,
      rawCookies: '',
      headers: {},
    }
    const request = toRequest(draft)
    this.reach.preludes += 1
    const { response, body } = await this.send(request, `preparing: ${init.method} ${request.url}`, new Set(this.world.staticSecrets()), { maySignIn })
    if (!maySignIn && issuedSession(setCookies(response), this.world.cookies.sessionToken.name) !== undefined) {
      throw new Violation('a preparatory request issued a session', `${init.method} ${request.url}`, {})
    }
    jar.store(response)
    return { status: response.status, location: response.headers.get('location'), body, raw: response }
  }

  /** Applies one tamper; returns its description when it changed something, else undefined. */
  private async tamper(
    tamper: Tamper,
    draft: Draft,
    facts: Facts,
    context: { route: Route; providerId: string | undefined; started: Started | undefined; jar: CookieJar },
  ): Promise<string | undefined> {
    const { world } = this
    const label = tamper.kind === 'noise' ? `noise:${JSON.stringify(tamper.noise).slice(0, 80)}` : `${tamper.kind}:${tamper.how}`
    const csrfName = world.cookies.csrfToken.name
    const sessionName = world.cookies.sessionToken.name
    const params = draft.method === 'POST' ? draft.body : draft.query
    switch (tamper.kind) {
      case 'csrf': {
        const cookie = draft.cookies.get(csrfName)
        const token = draft.body.csrfToken
        if (cookie === undefined || typeof token !== 'string') return undefined
        facts.csrf = false
        switch (tamper.how) {
          case 'drop-cookie':
            draft.cookies.delete(csrfName)
            break
          case 'drop-token':
            delete draft.body.csrfToken
            break
          case 'flip-token':
            draft.body.csrfToken = flipChar(token, tamper.n)
            break
          case 'flip-hash': {
            const [value, hash] = cookie.split('|')
            draft.cookies.set(csrfName, `${value}|${flipChar(hash ?? '', tamper.n)}`)
            break
          }
          case 'foreign-pair': {
            // Another browser's valid pair: its cookie, our token.
            const other = new CookieJar()
            await this.csrfToken(other)
            draft.cookies.set(csrfName, other.get(csrfName)!)
            break
          }
          case 'token-is-cookie':
            draft.body.csrfToken = cookie
            break
          case 'token-in-query':
            delete draft.body.csrfToken
            draft.query.csrfToken = token
            break
          case 'insecure-name':
            renameCookie(draft.cookies, csrfName, stripSecurePrefix(csrfName))
            break
          case 'non-string-token':
            draft.body.csrfToken = tamper.n % 2 === 0 ? [token] : { token }
            draft.encoding = 'json'
            break
          case 'uppercase-token':
            draft.body.csrfToken = token.toUpperCase()
            break
        }
        return label
      }
      case 'session': {
        const session = draft.cookies.get(sessionName)
        if (session === undefined || !facts.session) return undefined
        facts.sessionBroken = true
        const database = world.options.strategy === 'database'
        switch (tamper.how) {
          case 'flip':
            draft.cookies.set(sessionName, database ? flipChar(session, tamper.n) : flipJwe(session, tamper.n))
            break
          case 'truncate':
            draft.cookies.set(sessionName, session.slice(0, Math.max(0, session.length - 1 - (tamper.n % 40))))
            break
          case 'foreign-secret':
            draft.cookies.set(
              sessionName,
              database
                ? crypto.randomUUID()
                : await encode({ token: { sub: facts.session.sub, name: FUZZ_USER.name }, secret: `another-${SECRET}`, salt: sessionName }),
            )
            break
          case 'expired':
            if (database) {
              const token = crypto.randomUUID()
              world.store!.sessions.set(token, { sessionToken: token, userId: facts.session.sub, expires: new Date(Date.now() - 60_000) })
              draft.cookies.set(sessionName, token)
            } else {
              draft.cookies.set(sessionName, await encode({ token: { sub: facts.session.sub }, secret: SECRET, salt: sessionName, maxAge: -60 }))
            }
            break
          case 'insecure-name':
            renameCookie(draft.cookies, sessionName, stripSecurePrefix(sessionName))
            break
          case 'drop-chunk': {
            // Chunked the way the engine chunks, then one chunk lost.
            draft.cookies.delete(sessionName)
            const cut = 1 + (tamper.n % Math.max(1, session.length - 1))
            draft.cookies.set(`${sessionName}.0`, session.slice(0, cut))
            break
          }
          case 'chunk-flood':
            draft.rawCookies = Array.from({ length: 200 + (tamper.n % 800) }, (_, i) => `${sessionName}.${i + 1}=x`).join('; ')
            break
        }
        return label
      }
      case 'envelope': {
        const started = context.started
        if (!started || !facts.envelope) return undefined
        const { name, value } = started.envelope
        facts.envelope = false
        facts.envelopeBroken = true
        switch (tamper.how) {
          case 'flip':
            draft.cookies.set(name, flipJwe(value, tamper.n))
            break
          case 'truncate':
            draft.cookies.set(name, value.slice(0, Math.max(0, value.length - 1 - (tamper.n % 40))))
            break
          case 'replay': {
            // The legitimate callback goes first (it may sign in); the copy must then be refused.
            const copy = toRequest({ ...draft, cookies: new Map(draft.cookies) })
            this.reach.preludes += 1
            await this.send(copy, `preparing the replayed callback: ${copy.method} ${copy.url}`, new Set(world.staticSecrets()), { maySignIn: true })
            draft.cookies.set(name, value)
            break
          }
          case 'other-provider': {
            const others = world.providersOf(context.route.provider as 'oauth').filter((id) => id !== context.providerId)
            const otherType = context.route.provider === 'oidc' ? 'oauth' : 'oidc'
            const pool = others.length > 0 ? others : world.providersOf(otherType)
            const otherId = pool[tamper.n % pool.length]!
            const resume = this.routes.find((r) => isFlow(r.serve) && r.serve.resumes && r.provider === world.typeOf(otherId))!
            const foreign = await this.startFlow(resume, otherId, new CookieJar())
            draft.cookies.set(name, foreign.envelope.value)
            break
          }
          case 'rename':
            renameCookie(draft.cookies, name, `${world.cookies.flowState.name}.oauth-signin`)
            break
          case 'insecure-name':
            renameCookie(draft.cookies, name, stripSecurePrefix(name))
            break
          case 'drop':
            draft.cookies.delete(name)
            break
        }
        return label
      }
      case 'answer': {
        if (!context.started) return undefined
        const flip = (key: string) => {
          if (!facts.answerKeys.has(key) || typeof params[key] !== 'string') return false
          params[key] = flipChar(params[key] as string, tamper.n)
          return true
        }
        const drop = (key: string) => {
          if (!facts.answerKeys.has(key) || !(key in params)) return false
          delete params[key]
          return true
        }
        let changed: boolean
        switch (tamper.how) {
          case 'flip-state':
            changed = flip('state')
            break
          case 'drop-state':
            changed = drop('state')
            break
          case 'flip-code':
            changed = flip('code')
            break
          case 'drop-code':
            changed = drop('code')
            break
          case 'flip-iss':
            changed = facts.answerKeys.has('iss') && typeof params.iss === 'string' && ((params.iss = `${params.iss}x`), true)
            break
          case 'drop-iss':
            changed = drop('iss')
            break
          case 'provider-error':
            params.error = 'access_denied'
            changed = true
            break
          case 'other-visit': {
            // Another sign-in's genuine answer, delivered with this flow's envelope.
            const other = await this.startFlow(context.route, context.providerId!, new CookieJar())
            if (other.authorizationUrl === undefined) return undefined
            const answer = await world.visitProvider(other.authorizationUrl)
            for (const key of ['code', 'state', 'iss']) delete params[key]
            Object.assign(params, answer.form ?? Object.fromEntries(answer.url.searchParams))
            changed = true
            break
          }
        }
        if (!changed) return undefined
        facts.answer = false
        return label
      }
      case 'credentials': {
        if (!facts.credentials) return undefined
        facts.credentials = false
        const field = Object.keys(FUZZ_CREDENTIALS)[tamper.n % 2] as keyof typeof FUZZ_CREDENTIALS
        switch (tamper.how) {
          case 'wrong-password':
            params.password = `${FUZZ_CREDENTIALS.password}x`
            break
          case 'case':
            params[field] = FUZZ_CREDENTIALS[field].toUpperCase()
            break
          case 'drop-field':
            delete params[field]
            break
          case 'array':
            params[field] = [FUZZ_CREDENTIALS[field]]
            draft.encoding = 'json'
            break
          case 'pad':
            params[field] = `${FUZZ_CREDENTIALS[field]} `
            break
        }
        return label
      }
      case 'noise':
        return applyNoise(tamper.noise, draft, facts, params) ? label : undefined
    }
  }
}

/** The token and hash of the CSRF cookie a request carries, when we minted it (else it is no secret). */
function parseCsrfCookie(header: string | null, name: string): string[] | undefined {
  const pair = header?.split(/;\s*/).find((c) => c.startsWith(`${name}=`))
  if (!pair) return undefined
  let value: string
  try {
    value = decodeURIComponent(pair.slice(name.length + 1))
  } catch {
    return undefined
  }
  const [token = '', hash] = value.split('|')
  return hash === createHash('sha256').update(`${token}${SECRET}`).digest('hex') ? [token, hash] : undefined
}

/** Plausible values for the fields a route's params struct names (`type({...})`/`object({...})`). */
function declaredFields(route: Route): Record<string, string> {
  if (!isFlow(route.serve)) return {}
  const schema = (route.serve.params as { schema?: unknown }).schema
  if (!schema || typeof schema !== 'object') return {}
  return Object.fromEntries(Object.keys(schema).map((key) => [key, FIELD_VALUES[key] ?? `fuzz-${key}`]))
}

/** A passkey answer in the browser's JSON shape whose signature no authenticator made. */
function unsignedPasskeyAnswer(n: number): string {
  const id = Buffer.from(`fuzz-credential-${n}`).toString('base64url')
  const bytes = (text: string) => Buffer.from(text).toString('base64url')
  return JSON.stringify({
    id,
    rawId: id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: bytes(JSON.stringify({ type: 'webauthn.get', challenge: bytes('not-the-challenge'), origin: ORIGIN })),
      authenticatorData: bytes('authenticator-data'),
      signature: bytes('signature'),
      attestationObject: bytes('attestation'),
    },
  })
}

const isReplay = (tamper: Tamper) => tamper.kind === 'envelope' && tamper.how === 'replay'

function applyNoise(noise: Noise, draft: Draft, facts: Facts, params: Record<string, unknown>): boolean {
  switch (noise.kind) {
    case 'callbackUrl':
      params.callbackUrl = noise.value
      return true
    case 'query':
      if (noise.key in draft.query) return false
      draft.query[noise.key] = noise.value
      return true
    case 'cookie':
      draft.cookies.set(noise.name, noise.value)
      return true
    case 'header':
      draft.headers[noise.name] = noise.value
      return true
    case 'json-body':
      draft.encoding = 'json'
      return true
    case 'sniffed-json':
      draft.encoding = 'sniffed-json'
      return true
    case 'trailing-slash':
      draft.path = `${draft.path}/`
      return true
    case 'json-redirect':
      draft.headers['x-auth-return-redirect'] = '1'
      return true
    case 'field':
      if (noise.key in params) return false
      params[noise.key] = noise.value
      return true
    case 'method-switch':
      // Once: switching back would carry a token moved into the query into the body again.
      if (draft.switched) return false
      draft.switched = true
      if (draft.method === 'POST') {
        // A GET carries no body: the CSRF token (if any) goes nowhere the check reads.
        for (const [key, value] of Object.entries(draft.body)) if (typeof value === 'string') draft.query[key] = value
        draft.body = {}
        draft.method = 'GET'
        facts.csrf = false
        facts.credentials = false
      } else {
        draft.body = { ...draft.query }
        draft.query = {}
        draft.method = 'POST'
      }
      return true
  }
}

/** A sign-in started through the routing table's start route. */
interface Started {
  providerId: string
  /** Where the browser is sent to sign in at the provider; none when the page answers (passkeys). */
  authorizationUrl: string | undefined
  envelope: { name: string; value: string }
}

const summary = (trace: FlowTrace) => ({ flow: trace.flow, resumed: trace.resumed, status: trace.status, outcome: trace.outcome })

/** Builds the web Request of a draft. */
function toRequest(draft: Draft): Request {
  const url = new URL(draft.path, ORIGIN)
  for (const [key, value] of Object.entries(draft.query)) url.searchParams.set(key, value)
  const headers = new Headers()
  for (const [name, value] of Object.entries(draft.headers)) headers.set(name, value)
  const jar = [...draft.cookies].map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
  if (draft.rawCookies) jar.push(draft.rawCookies)
  if (jar.length > 0) headers.set('cookie', jar.join('; '))
  let body: string | undefined
  if (draft.method === 'POST') {
    if (draft.encoding === 'form') {
      headers.set('content-type', 'application/x-www-form-urlencoded')
      const form = new URLSearchParams()
      for (const [key, value] of Object.entries(draft.body)) form.append(key, String(value))
      body = form.toString()
    } else {
      headers.set('content-type', draft.encoding === 'json' ? 'application/json' : 'text/plain; x=application/json')
      body = JSON.stringify(draft.body)
    }
  }
  return new Request(url, { method: draft.method, headers, ...(body !== undefined ? { body } : {}) })
}
