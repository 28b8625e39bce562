/**
 * `signIn`, `signOut` and `unstable_update` of the Next.js integration, for server actions: each
 * runs in process the flow of the core's route a browser would post to (no request to the app's
 * own URL or to the handler), sets the cookies through `next/headers` and redirects with Next's
 * `redirect`.
 *
 * A CSRF check stays on (next-auth passes `skipCSRFCheck`): in place of the double-submit token,
 * which a server action has no way to carry, the action's request must come from this site by
 * its `Origin`; a cross-site form that reaches the action is refused as `MissingCSRF` (login CSRF).
 *
 * @module
 */
import { cookies as nextCookies, headers as nextHeaders } from 'next/headers.js'
// The server-side build of `next/navigation` (what Next itself maps `next/navigation` to on the
// server): `next/navigation.js` brings the client router's context, which route handlers lack.
import { redirect as nextRedirect } from 'next/dist/client/components/navigation.react-server.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import { signIn as signInInProcess, signOut as signOutInProcess, updateSession, type ServerRequest } from '../../core/server.js'
import type { Cookie, Session } from '../../core/types.js'
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

/** What every action reads first: the action's request as the core takes it, and the auth base URL. */
async function context(prepared: NextPrepared) {
  const headers = await nextHeaders()
  // The cookies as the action has left them so far (an update before a sign-out, say).
  const cookie = (await nextCookies()).toString()
  const origin = originOf(prepared, headers)
  // The action's request is checked against this origin only: AUTH_URL's when set, else the Host's.
  const request: ServerRequest = { origin, cookie: cookie || null, headers }
  return { request, referer: headers.get('referer'), base: `${origin}${baseOf(prepared.config)}` }
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
 *   `MissingCSRF` for a request from another site…), as next-auth does; Next's redirect otherwise.
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
  const callbackUrl = (redirectTo as string | undefined)?.toString() ?? ctx.referer ?? '/'
  const found = provider ? assertConfig(prepared.config as never).providerById.get(provider) : undefined
  if (!found) {
    const url = `${ctx.base}/signin?${new URLSearchParams({ callbackUrl })}`
    if (shouldRedirect !== false && shouldRedirect !== 'false') nextRedirect(url)
    return url
  }
  const answer = await signInInProcess(ctx.request, prepared.config, {
    providerId: found.id,
    redirectTo: callbackUrl,
    fields: stringFields(rest),
    authorizationParams: Object.fromEntries(new URLSearchParams(authorizationParams)),
  })
  if (answer.error) throw answer.error
  await setCookies(answer.cookies)
  if (shouldRedirect !== false && shouldRedirect !== 'false') nextRedirect(answer.redirect)
  return answer.redirect
}

/**
 * Signs out (next-auth v5's server-side `signOut`): ends the session (the database row too) and
 * redirects to `redirectTo` (default: the page the action was called from).
 */
export async function signOut(prepared: NextPrepared, options?: SignOutOptions<boolean>): Promise<any> {
  const ctx = await context(prepared)
  const callbackUrl = options?.redirectTo ?? ctx.referer ?? '/'
  const answer = await signOutInProcess(ctx.request, prepared.config, { redirectTo: callbackUrl })
  if (answer.error) throw answer.error
  await setCookies(answer.cookies)
  if (options?.redirect ?? true) nextRedirect(answer.redirect)
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
  const { request } = await context(prepared)
  const { session, cookies, error } = await updateSession(request, prepared.config, data)
  if (error) throw error
  await setCookies(cookies)
  return session
}
