/**
 * `signIn`, `signOut` and `unstable_update` of the Next.js integration, for server actions: each
 * answers in process through the core's own routes (no fetch of the app's own URL), sets the
 * cookies through `next/headers` and redirects with Next's `redirect`.
 *
 * The CSRF check stays on (next-auth passes `skipCSRFCheck`): the action takes a CSRF token for
 * the request's own cookies only after the request's `Origin` proved it came from this site, so a
 * cross-site form that reaches the action is refused by the core as `MissingCSRF` (login CSRF).
 *
 * @module
 */
import { cookies as nextCookies, headers as nextHeaders } from 'next/headers.js'
// The server-side build of `next/navigation` (what Next itself maps `next/navigation` to on the
// server): `next/navigation.js` brings the client router's context, which route handlers lack.
import { redirect as nextRedirect } from 'next/dist/client/components/navigation.react-server.js'
import { Auth } from '../../core/auth.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import type { Cookie, ResponseInternal, Session } from '../../core/types.js'
import { isSameOrigin } from '../shared/auth.js'
import { baseOf, originOf, type NextPrepared } from './config.js'

/** The options of the server-side `signIn`. */
export type SignInOptions<R extends boolean = true> = {
  /** Where to land afterwards; default the page the action was called from (`Referer`), else `/`. */
  redirectTo?: string
  /** `false`: return the URL instead of redirecting. */
  redirect?: R
} & Record<string, any>

/** The options of the server-side `signOut`. */
export interface SignOutOptions<R extends boolean = true> {
  redirectTo?: string
  redirect?: R
}

/** Authorization parameters for an OAuth provider, in any form `URLSearchParams` takes. */
export type SignInAuthorizationParams = string[][] | Record<string, string> | string | URLSearchParams

// Headers of the action's own request that must not reach the core's routes: the body is new,
// and a JSON redirect answer would turn thrown errors into URLs.
const DROPPED_HEADERS = ['content-length', 'content-type', 'transfer-encoding', 'x-auth-return-redirect']

/** What every action reads first: the request headers, the origin and whether it is this site. */
async function context(prepared: NextPrepared) {
  const headers = new Headers(await nextHeaders())
  for (const name of DROPPED_HEADERS) headers.delete(name)
  // The cookies as the action has left them so far (an update before a sign-out, say).
  const cookie = (await nextCookies()).toString()
  if (cookie) headers.set('cookie', cookie)
  else headers.delete('cookie')
  const origin = originOf(prepared, headers)
  const sameSite = isSameOrigin({ headers } as Request, [origin, prepared.origin])
  return { headers, origin, sameSite, base: `${origin}${baseOf(prepared.config)}` }
}

const cookieHeaderWith = (header: string | null, cookies: readonly Cookie[]) => {
  const pairs = new Map<string, string>()
  for (const part of (header ?? '').split(/;\s*/)) {
    const eq = part.indexOf('=')
    if (eq > 0) pairs.set(part.slice(0, eq), part.slice(eq + 1))
  }
  for (const cookie of cookies) pairs.set(cookie.name, encodeURIComponent(cookie.value))
  return [...pairs].map(([name, value]) => `${name}=${value}`).join('; ')
}

/**
 * A POST to one of the core's routes, in process, with a CSRF token minted for the request's own
 * cookies when (and only when) the request came from this site.
 */
async function post(
  prepared: NextPrepared,
  ctx: Awaited<ReturnType<typeof context>>,
  url: string,
  fields: Record<string, string>,
  json = false,
): Promise<ResponseInternal> {
  const headers = new Headers(ctx.headers)
  let csrfCookies: Cookie[] = []
  let csrfToken: string | undefined
  if (ctx.sameSite) {
    const csrf = (await Auth(new Request(`${ctx.base}/csrf`, { headers }), prepared.raw)) as ResponseInternal<{ csrfToken: string }>
    csrfToken = csrf.body?.csrfToken
    csrfCookies = csrf.cookies ?? []
    headers.set('cookie', cookieHeaderWith(headers.get('cookie'), csrfCookies))
  }
  const body = { ...fields, ...(csrfToken ? { csrfToken } : {}) }
  headers.set('content-type', json ? 'application/json' : 'application/x-www-form-urlencoded')
  const request = new Request(url, {
    method: 'POST',
    headers,
    body: json ? JSON.stringify(body) : new URLSearchParams(body),
  })
  try {
    const answer = await Auth(request, prepared.raw)
    return { ...answer, cookies: [...csrfCookies, ...(answer.cookies ?? [])] }
  } catch (error) {
    await setCookies(csrfCookies)
    throw error
  }
}

async function setCookies(cookies: readonly Cookie[] | undefined): Promise<void> {
  if (!cookies?.length) return
  const jar = await nextCookies()
  for (const { name, value, options } of cookies) jar.set(name, value, options as Parameters<typeof jar.set>[2])
}

const stringFields = (entries: Record<string, unknown>) => {
  const fields: Record<string, string> = {}
  for (const [key, value] of Object.entries(entries)) {
    if (typeof value === 'string') fields[key] = value
    else if (typeof value === 'number' || typeof value === 'boolean') fields[key] = String(value)
  }
  return fields
}

/**
 * Signs in with `provider` (next-auth v5's server-side `signIn`): credentials and e-mail providers
 * take the other fields of `options` (or the form data), OAuth providers redirect to the provider.
 * Without a provider, or with an unknown one, redirects to the sign-in page.
 *
 * @throws the `AuthError` the sign-in ended in (`CredentialsSignin` with its `code`, `AccessDenied`,
 *   `MissingCSRF` for a cross-site request…), as next-auth does; Next's redirect otherwise.
 */
export async function signIn(
  prepared: NextPrepared,
  provider: string | undefined,
  options: FormData | SignInOptions<boolean> = {},
  authorizationParams?: SignInAuthorizationParams,
): Promise<any> {
  const ctx = await context(prepared)
  const { redirect: shouldRedirect = true, redirectTo, ...rest } =
    options instanceof FormData ? (Object.fromEntries(options) as Record<string, unknown>) : options
  const callbackUrl = (redirectTo as string | undefined)?.toString() ?? ctx.headers.get('referer') ?? '/'
  const found = provider ? assertConfig(prepared.config as never).providerById.get(provider) : undefined
  if (!found) {
    const url = `${ctx.base}/signin?${new URLSearchParams({ callbackUrl })}`
    if (shouldRedirect !== false && shouldRedirect !== 'false') nextRedirect(url)
    return url
  }
  const query = new URLSearchParams(authorizationParams).toString()
  const url =
    found.type === 'credentials'
      ? `${ctx.base}/callback/${found.id}`
      : `${ctx.base}/signin/${found.id}${query ? `?${query}` : ''}`
  const answer = await post(prepared, ctx, url, { ...stringFields(rest), callbackUrl })
  await setCookies(answer.cookies)
  const target = answer.redirect ?? url
  if (shouldRedirect !== false && shouldRedirect !== 'false') nextRedirect(target)
  return target
}

/**
 * Signs out (next-auth v5's server-side `signOut`): ends the session (the database row too) and
 * redirects to `redirectTo` (default: the page the action was called from).
 */
export async function signOut(prepared: NextPrepared, options?: SignOutOptions<boolean>): Promise<any> {
  const ctx = await context(prepared)
  const callbackUrl = options?.redirectTo ?? ctx.headers.get('referer') ?? '/'
  const answer = await post(prepared, ctx, `${ctx.base}/signout`, { callbackUrl })
  await setCookies(answer.cookies)
  if (options?.redirect ?? true) nextRedirect(answer.redirect ?? callbackUrl)
  return answer
}

/**
 * Updates the session from the server (`unstable_update`): the `jwt` callback runs with
 * `trigger: 'update'` and `session: data`; returns the new session.
 */
export async function update(
  prepared: NextPrepared,
  data: Partial<Session | { user: Partial<Session['user']> }>,
): Promise<Session | null> {
  const ctx = await context(prepared)
  const answer = await post(prepared, ctx, `${ctx.base}/session`, { data } as never, true)
  await setCookies(answer.cookies)
  const body = answer.body as Session | null | undefined
  return body && typeof body === 'object' && Object.keys(body).length > 0 ? body : null
}
