/**
 * SvelteKit integration: a `handle` hook serving `{basePath}/*` and defining `event.locals.auth()`,
 * the `signIn` / `signOut` form actions for the `SignIn` / `SignOut` components
 * (`authchart/sveltekit/components`) and plain forms, and {@link requireRecentAuth} for `load`
 * functions and actions that need a recent proof (step-up).
 *
 * ```ts
 * // src/hooks.server.ts
 * import { SvelteKitAuth } from 'authchart/sveltekit'
 * export const { handle, signIn, signOut } = SvelteKitAuth(config)
 * // src/routes/signin/+page.server.ts
 * import { signIn } from '../../hooks.server'
 * export const actions = { default: signIn }
 * // src/routes/settings/+page.server.ts
 * import { requireRecentAuth } from 'authchart/sveltekit'
 * export const load = async (event) => ({ proven: (await requireRecentAuth(event, { maxAge: 300 })).verifiedAt })
 * ```
 *
 * @module
 */
import { error, redirect, type Action, type Handle, type RequestEvent } from '@sveltejs/kit'
import { RequestError } from '../../core/errors.js'
import type { EnvObject } from '../../core/env.js'
import { checkRecentAuth, type RecentAuth, type StepUpPolicy } from '../../core/recent-auth.js'
import type { Awaitable, Session } from '../../core/types.js'
import {
  isSameOrigin,
  prepareConfig,
  readSession,
  serveAuthRoutes,
  serverAction,
  serverRequestOf,
  type IntegrationConfig,
  type PreparedConfig,
  type ServerActionInput,
  type ServerRequest,
} from '../shared/auth.js'

declare global {
  namespace App {
    interface Locals {
      /** The session of this request, or `null`; read once per request. */
      auth(): Promise<Session | null>
    }
  }
}

export type { RecentAuth, StepUpPolicy } from '../../core/recent-auth.js'

/** The configuration of the SvelteKit integration: the core's, without `raw`. */
export type SvelteKitAuthConfig = IntegrationConfig

/** What {@link SvelteKitAuth} returns. */
export interface SvelteKitAuthResult {
  /** The server hook: export it from `src/hooks.server.ts` (first, when chaining hooks). */
  handle: Handle
  /** The sign-in form action (`export const actions = { default: signIn }`). */
  signIn: Action
  /** The sign-out form action. */
  signOut: Action
}

// Read once: SvelteKit's Node adapter fills process.env before the server starts.
let processEnv: EnvObject | undefined
const environment = () => (processEnv ??= (globalThis as { process?: { env: EnvObject } }).process?.env ?? {})

const sessions = new WeakMap<RequestEvent, Promise<Session | null>>()

/**
 * The freshness check of the hook that served a request, by its `locals` (the one object its
 * `handle`, `load` and action events share): {@link requireRecentAuth} reads the hook's config.
 */
type RecentAuthCheck = (event: RequestEvent, headers: Pick<Headers, 'get'>, policy: StepUpPolicy) => Promise<RecentAuth | Response>
const recentAuthChecks = new WeakMap<object, RecentAuthCheck>()

/**
 * Creates the hook and form actions. `config` may be a function of the request event (to read
 * `event.platform`); it is resolved, with the environment's defaults, once per config object it
 * returns, and never while the app is being built.
 *
 * @throws nothing at creation; the first request fails with the configuration's error instead.
 * @see spec §1.7, §4.1; reference §10 (`@auth/sveltekit`)
 */
export function SvelteKitAuth(
  config: SvelteKitAuthConfig | ((event: RequestEvent) => Awaitable<SvelteKitAuthConfig>),
): SvelteKitAuthResult {
  const prepare = async (event: RequestEvent): Promise<PreparedConfig> =>
    prepareConfig(typeof config === 'function' ? await config(event) : config, environment())

  // URLs are written for AUTH_URL's origin, else the one SvelteKit derived (adapter-node: its
  // ORIGIN, or Host with PROTOCOL_HEADER/HOST_HEADER when configured).
  const serverRequest = (event: RequestEvent, prepared: PreparedConfig): ServerRequest =>
    serverRequestOf(prepared, event.request, event.url, clientAddressOf(event))

  const auth = (event: RequestEvent): Promise<Session | null> => {
    let session = sessions.get(event)
    if (!session) {
      session = prepare(event).then(async (prepared) => {
        const read = await readSession(serverRequest(event, prepared), prepared.config)
        setCookies(event, read.cookies)
        return read.session
      })
      sessions.set(event, session)
    }
    return session
  }

  const checkRecent: RecentAuthCheck = async (event, headers, policy) => {
    const prepared = await prepare(event)
    const returnTo = `${event.url.pathname}${event.url.search}`
    return checkRecentAuth(serverRequest(event, prepared), headers, returnTo, prepared.config, policy)
  }

  const handle: Handle = async ({ event, resolve }) => {
    event.locals.auth = () => auth(event)
    recentAuthChecks.set(event.locals, checkRecent)
    const prepared = await prepare(event)
    return (await serveAuthRoutes(prepared, event.request, event.url, clientAddressOf(event))) ?? resolve(event)
  }

  const action =
    (kind: ServerActionInput['action']): Action =>
    async (event) => {
      const prepared = await prepare(event)
      refuseCrossSite(event, prepared)
      const form = await event.request.formData()
      const fields: Record<string, string> = {}
      const authorizationParams: Record<string, string> = {}
      for (const [key, value] of form) {
        if (typeof value !== 'string') continue
        if (key.startsWith('authorizationParams-')) authorizationParams[key.slice(20)] = value
        else if (!['providerId', 'redirectTo', 'redirect', 'callbackUrl', 'csrfToken'].includes(key)) fields[key] = value
      }
      const redirectTo =
        text(form.get('redirectTo')) ?? text(form.get('callbackUrl')) ?? event.request.headers.get('referer') ?? '/'
      const input = { action: kind, providerId: text(form.get('providerId')), redirectTo, fields, authorizationParams }
      const { url, cookies } = await serverAction(prepared.config, serverRequest(event, prepared), input).catch(badRequest)
      setCookies(event, cookies)
      if (form.get('redirect') === 'false') return { redirect: url }
      // 303: the browser follows a POST's redirect with a GET. A failed sign-in lands on the sign-in
      // page with ?error=… (Auth.js's action throws, and SvelteKit shows its 500 page).
      redirect(303, url)
    }

  return { handle, signIn: action('signin'), signOut: action('signout') }
}

/**
 * Lets a `load` function, a form action or a `+server` handler go on only when the signed-in user
 * proved an accepted factor within `policy.maxAge` seconds (default 600; `factors`, `aal` as the
 * core's `requireRecentAuth`), and returns when it was proven. Otherwise it throws SvelteKit's
 * answer: a page request (a navigation, a plain form post, or a client-side navigation's data
 * request) gets `redirect(303, …)` to the re-authentication page, which brings the user back to
 * this path afterwards; a `fetch`/JSON request (an enhanced form's `x-sveltekit-action`, an API
 * call) gets `error(401, …)` with the detail (`error`, `maxAge`, `factors`, `url` to open) and the
 * `WWW-Authenticate` header the core answers with. A signed-out request is sent to sign in instead.
 * Needs the {@link SvelteKitAuth} `handle` hook.
 *
 * @throws SvelteKit's `Redirect` or `HttpError` as above; a `TypeError` when the hook did not run
 *   for this request; the configuration's error, or `UntrustedHost`, as `event.locals.auth()`.
 * @see `requireRecentAuth` in the core, and docs/concepts/step-up.md
 */
export async function requireRecentAuth(event: RequestEvent, policy: StepUpPolicy = {}): Promise<RecentAuth> {
  const check = recentAuthChecks.get(event.locals)
  if (!check) throw new TypeError('requireRecentAuth needs the SvelteKitAuth handle hook (export it from src/hooks.server.ts)')
  // A client-side navigation asks for the page's data by fetch; SvelteKit turns a redirect of that
  // request into a navigation, so it is answered as the page itself would be.
  const headers = event.isDataRequest ? new Headers({ 'sec-fetch-mode': 'navigate' }) : event.request.headers
  const result = await check(event, headers, policy)
  if (!(result instanceof Response)) return result
  const location = result.headers.get('location')
  if (location !== null) redirect(303, location)
  const detail = (await result.json()) as Record<string, unknown>
  event.setHeaders({ 'www-authenticate': result.headers.get('www-authenticate') ?? '' })
  error(401, { message: 'Recent authentication required', ...detail })
}

/** The client address the adapter reports (its proxy settings applied), if it reports one. */
function clientAddressOf(event: RequestEvent): string | undefined {
  try {
    return event.getClientAddress()
  } catch {
    return undefined // an adapter without client addresses
  }
}

/** Input the sign-in route refuses (a `redirectTo` that is no http(s) URL) is a 400, not a 500. */
function badRequest(reason: unknown): never {
  if (reason instanceof RequestError) error(400, { message: 'Bad request.' })
  throw reason
}

const text = (value: FormDataEntryValue | null) => (typeof value === 'string' && value !== '' ? value : undefined)

/**
 * The form actions sign in without a CSRF token, so the request's origin is what protects them:
 * refused unless it is this app's. SvelteKit checks it too (`csrf.checkOrigin`), but an app may
 * turn that off for its own reasons; sign-in must not depend on it (login CSRF).
 */
function refuseCrossSite(event: RequestEvent, prepared: PreparedConfig): void {
  if (!isSameOrigin(event.request.headers, [event.url.origin, prepared.origin])) {
    error(403, { message: 'Cross-site sign-in and sign-out forms are refused' })
  }
}

function setCookies(event: RequestEvent, cookies: readonly { name: string; value: string; options: object }[]): void {
  for (const { name, value, options } of cookies) {
    event.cookies.set(name, value, { path: '/', ...options })
  }
}
