/**
 * Qwik City integration (`authchart/qwik`): `QwikAuth$((ev) => config)` gives `onRequest` (serves
 * `{basePath}/*`, stores the session in `sharedMap` under `'session'`), `useSession`, `useSignIn`
 * and `useSignOut`; {@link requireRecentAuth} for `routeLoader$`, `routeAction$` and `onRequest`
 * handlers that need a recent proof (step-up).
 *
 * Shipped as `index.qwik.js`, already in the optimizer's output form (`inlinedQrl`): the app's Qwik
 * optimizer recognises the file by its name and the package by its `qwik` field, and splits it
 * like the app's own code.
 *
 * ```ts
 * // src/routes/plugin@auth.ts
 * import { QwikAuth$ } from 'authchart/qwik'
 * export const { onRequest, useSession, useSignIn, useSignOut } = QwikAuth$(() => config)
 * // src/routes/settings/index.tsx
 * import { requireRecentAuth } from 'authchart/qwik'
 * export const useSettings = routeLoader$(async (ev) => (await requireRecentAuth(ev, { maxAge: 300 })).verifiedAt)
 * ```
 *
 * @module
 */
import { implicit$FirstArg, inlinedQrl, useLexicalScope, type QRL } from '@builder.io/qwik'
import { isServer } from '@builder.io/qwik/build'
import {
  globalActionQrl,
  routeLoaderQrl,
  validatorQrl,
  type Action,
  type Loader,
  type RequestEvent,
  type RequestEventCommon,
} from '@builder.io/qwik-city'
import {
  instance,
  optional,
  record,
  string,
  type as looseObject,
  union,
  validate,
  type Infer,
  type Struct,
} from 'superstruct'
import { RequestError } from '../../core/errors.js'
import type { EnvObject } from '../../core/env.js'
import { checkRecentAuth, type RecentAuth, type StepUpPolicy } from '../../core/recent-auth.js'
import type { Awaitable, Cookie, Session } from '../../core/types.js'
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

export type { RecentAuth, StepUpPolicy } from '../../core/recent-auth.js'

/** The configuration of the Qwik integration: the core's, without `raw`. */
export type QwikAuthConfig = IntegrationConfig

/** The input of `useSignIn` (spec §4.1). */
export const SignInInput = looseObject({
  providerId: optional(string()),
  redirectTo: optional(string()),
  options: optional(looseObject({ redirectTo: optional(string()) })),
  authorizationParams: optional(union([string(), instance(URLSearchParams), record(string(), string())])),
})

/** The input of `useSignOut` (spec §4.1). */
export const SignOutInput = looseObject({ redirectTo: optional(string()) })

/** The failure value of an action whose input did not validate (spec §4.1). */
export interface InputFailure<K extends string> {
  failed: true
  fieldErrors: Partial<Record<K, string[]>>
  formErrors: string[]
}

/** What {@link QwikAuthQrl} returns. */
export interface QwikAuthResult {
  /** Export from the root layout or a `plugin@auth.ts`. */
  onRequest: (event: RequestEvent) => Promise<void>
  /** The session of the request (`null` without one). */
  useSession: Loader<Session | null>
  useSignIn: Action<InputFailure<keyof Infer<typeof SignInInput>> | undefined, Infer<typeof SignInInput>>
  useSignOut: Action<InputFailure<keyof Infer<typeof SignOutInput>> | undefined, Infer<typeof SignOutInput>>
}

type ConfigQrl = QRL<(ev: RequestEventCommon) => Awaitable<QwikAuthConfig>>

/** Qwik's `ev.env` as the record `setEnvDefaults` reads (by property, so a proxy does). */
const envOf = (ev: RequestEventCommon): EnvObject =>
  new Proxy({}, { get: (_target, key) => (typeof key === 'string' ? ev.env.get(key) : undefined) })

/** Once per config object the application's function returns (see `prepareConfig`). */
const prepare = async (configQrl: ConfigQrl, ev: RequestEventCommon): Promise<PreparedConfig> =>
  prepareConfig(await configQrl(ev), envOf(ev))

function setCookies(ev: RequestEventCommon, cookies: readonly Cookie[]): void {
  // Qwik writes string values as given; ours are URI-encoded on the wire, as the core writes them.
  for (const { name, value, options } of cookies) ev.cookie.set(name, encodeURIComponent(value), { path: '/', ...options })
}

/** Superstruct's failures in the shape of spec §4.1 (`fieldErrors` by top-level key, `formErrors`). */
function validateInput<T>(struct: Struct<T>, data: unknown) {
  const [error, value] = validate(data, struct, { coerce: true })
  if (!error) return { success: true as const, data: value }
  const fieldErrors: Record<string, string[]> = {}
  const formErrors: string[] = []
  for (const failure of error.failures()) {
    const key = failure.path[0]
    if (typeof key === 'string') (fieldErrors[key] ??= []).push(failure.message)
    else formErrors.push(failure.message)
  }
  return { success: false as const, status: 400, error: { fieldErrors, formErrors } }
}

/** The framework's request as the in-process session read and actions take it. */
const serverRequest = (ev: RequestEventCommon, prepared: PreparedConfig): ServerRequest =>
  serverRequestOf(prepared, ev.request, ev.url, ev.clientConn.ip)

/** The page the action was posted from, without Qwik's `qaction` parameter. */
function currentPage(ev: RequestEventCommon): string {
  const url = new URL(ev.url)
  url.searchParams.delete('qaction')
  return url.href
}

/**
 * The action posts to the page it is used on and signs in on the server without a CSRF token, so
 * its origin check is what stands between a cross-site form and the victim's browser (login CSRF).
 * Qwik City checks origins only on matched routes, and `@auth/qwik` turns the handler's CSRF check
 * off; here the `/auth/*` routes keep theirs and the actions check origin.
 */
function refuseCrossSite(ev: RequestEventCommon, prepared: PreparedConfig): void {
  if (!isSameOrigin(ev.request.headers, [ev.url.origin, prepared.origin])) {
    throw ev.error(403, 'Cross-site sign-in and sign-out are refused')
  }
}

/**
 * Same-origin targets as paths: Qwik City turns a relative redirect of a `q-data.json` request into
 * a client-side navigation, but drops an absolute one.
 */
function redirectTarget(ev: RequestEventCommon, url: string): string {
  const target = new URL(url, ev.url)
  return target.origin === ev.url.origin ? `${target.pathname}${target.search}${target.hash}` : target.href
}

/**
 * The config `onRequest` served a request with, by the request's `sharedMap` (one per request,
 * shared by its middleware, loaders and actions): {@link requireRecentAuth} reads it.
 */
const requestConfigs = new WeakMap<object, PreparedConfig>()

/** Qwik City's mark of a `q-data.json` request (a client-side navigation's data, a JS action). */
const QDATA_MARK = '@isQData'

/**
 * Lets a `routeLoader$`, a `routeAction$` or an `onRequest` handler go on only when the signed-in
 * user proved an accepted factor within `policy.maxAge` seconds (default 600; `factors`, `aal` as
 * the core's `requireRecentAuth`), and returns when it was proven. Otherwise it throws Qwik City's
 * answer: a page request (a navigation, a form posted without JavaScript, or the `q-data.json`
 * request of a client-side navigation or action, which Qwik City follows as a navigation) is
 * redirected (303) to the re-authentication page, which brings the user back to this path
 * afterwards; a `fetch`/JSON request gets 401 with the detail (`error`, `maxAge`, `factors`, `url`
 * to open) and `WWW-Authenticate`, as the core answers. A signed-out request is sent to sign in
 * instead. Needs the `onRequest` of {@link QwikAuthQrl} on the route (a `plugin@auth.ts`).
 *
 * @throws Qwik City's redirect or response as above; a `TypeError` when the auth `onRequest` did
 *   not run for this request; the configuration's error, or `UntrustedHost`, as the session read.
 * @see `requireRecentAuth` in the core, and docs/concepts/step-up.md
 */
export async function requireRecentAuth(ev: RequestEventCommon, policy: StepUpPolicy = {}): Promise<RecentAuth> {
  const prepared = requestConfigs.get(ev.sharedMap)
  if (!prepared) throw new TypeError('requireRecentAuth needs the onRequest of QwikAuth$ (export it from src/routes/plugin@auth.ts)')
  const headers = ev.sharedMap.has(QDATA_MARK) ? new Headers({ 'sec-fetch-mode': 'navigate' }) : ev.request.headers
  const page = new URL(currentPage(ev))
  const result = await checkRecentAuth(serverRequest(ev, prepared), headers, `${page.pathname}${page.search}`, prepared.config, policy)
  if (!(result instanceof Response)) return result
  const location = result.headers.get('location')
  if (location !== null) throw ev.redirect(303, redirectTarget(ev, location))
  throw ev.send(result)
}

/** Runs a sign-in or sign-out for an action and returns the redirect to throw. */
async function signInOrOut(configQrl: ConfigQrl, ev: RequestEventCommon, input: ServerActionInput): Promise<Error> {
  const prepared = await prepare(configQrl, ev)
  refuseCrossSite(ev, prepared)
  let answer
  try {
    answer = await serverAction(prepared.config, serverRequest(ev, prepared), input)
  } catch (error) {
    // Input the sign-in route refuses (a redirectTo that is no http(s) URL): a 400, not a 500.
    if (error instanceof RequestError) throw ev.error(400, 'Bad request.')
    throw error
  }
  const { url, cookies } = answer
  setCookies(ev, cookies)
  // 303, never 301: a permanent redirect would be cached for the sign-in URL.
  return ev.redirect(303, redirectTarget(ev, url))
}

const stringFields = (options: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(options).map(([key, value]) => [key, String(value)]))

/**
 * The integration from a QRL of the configuration function; `QwikAuth$` is this with the
 * optimizer's `$` sugar. The function receives the request event (read `ev.env`, `ev.platform`).
 *
 * @see spec §1.7, §4.1; reference §10 (`@auth/qwik`)
 */
export function QwikAuthQrl(configQrl: ConfigQrl): QwikAuthResult {
  const useSignIn = globalActionQrl(
    inlinedQrl(
      async (input: Infer<typeof SignInInput>, ev: RequestEventCommon) => {
        if (!isServer) return undefined
        const [configQrl] = useLexicalScope<[ConfigQrl]>()
        const { redirectTo: optionRedirect, ...fields } = input.options ?? {}
        const params = input.authorizationParams
        throw await signInOrOut(configQrl, ev, {
          action: 'signin',
          providerId: input.providerId,
          redirectTo: optionRedirect ?? input.redirectTo ?? currentPage(ev),
          fields: stringFields(fields),
          authorizationParams: Object.fromEntries(new URLSearchParams(params as string | Record<string, string> | undefined)),
        })
      },
      'authchart_QwikAuth_useSignIn',
      [configQrl],
    ),
    validatorQrl(inlinedQrl((_ev: RequestEvent, data: unknown) => validateInput(SignInInput, data), 'authchart_QwikAuth_signInInput')),
  ) as QwikAuthResult['useSignIn']

  const useSignOut = globalActionQrl(
    inlinedQrl(
      async (input: Infer<typeof SignOutInput>, ev: RequestEventCommon) => {
        if (!isServer) return undefined
        const [configQrl] = useLexicalScope<[ConfigQrl]>()
        throw await signInOrOut(configQrl, ev, { action: 'signout', redirectTo: input.redirectTo ?? currentPage(ev) })
      },
      'authchart_QwikAuth_useSignOut',
      [configQrl],
    ),
    validatorQrl(inlinedQrl((_ev: RequestEvent, data: unknown) => validateInput(SignOutInput, data), 'authchart_QwikAuth_signOutInput')),
  ) as QwikAuthResult['useSignOut']

  const useSession = routeLoaderQrl(
    inlinedQrl((ev: RequestEventCommon) => (ev.sharedMap.get('session') ?? null) as Session | null, 'authchart_QwikAuth_useSession'),
  )

  const onRequest = async (ev: RequestEvent): Promise<void> => {
    if (!isServer) return
    const prepared = await prepare(configQrl, ev)
    const response = await serveAuthRoutes(prepared, ev.request, ev.url, ev.clientConn.ip)
    // Qwik City's send() carries each Set-Cookie over through its cookie API, attributes included.
    if (response) throw ev.send(response)
    requestConfigs.set(ev.sharedMap, prepared)
    const { session, cookies } = await readSession(serverRequest(ev, prepared), prepared.config)
    ev.sharedMap.set('session', session)
    setCookies(ev, cookies)
  }

  return { onRequest, useSession, useSignIn, useSignOut }
}

/**
 * `QwikAuth$((ev) => config)`: the optimizer turns the function into a QRL and calls
 * {@link QwikAuthQrl}.
 */
export const QwikAuth$ = implicit$FirstArg(QwikAuthQrl)
