/**
 * Browser-side sign-in and sign-out for SvelteKit pages (`authchart/sveltekit/client`). Each call
 * fetches a CSRF token first and posts it: the handler keeps its CSRF check for these requests
 * (`@auth/sveltekit` turns the check off and relies on SvelteKit's origin check instead).
 *
 * @module
 */

/** Options of {@link signIn}. */
export interface SignInOptions extends Record<string, unknown> {
  /** Where to land after signing in; default the current page. */
  callbackUrl?: string
  /** Alias of `callbackUrl`. */
  redirectTo?: string
  /** `false`: stay on the page and get the outcome back instead of navigating. */
  redirect?: boolean
  /** The auth base path; default `/auth`. */
  basePath?: string
}

/** Options of {@link signOut}. */
export interface SignOutOptions {
  callbackUrl?: string
  redirectTo?: string
  redirect?: boolean
  basePath?: string
}

/** The outcome of a call with `redirect: false`. */
export interface SignInResult {
  /** The error type (`CredentialsSignin`…) when the sign-in failed. */
  error: string | undefined
  code: string | undefined
  status: number
  ok: boolean
  url: string | null
}

interface PublicProviders {
  [id: string]: { id: string; type: string; signinUrl: string; callbackUrl: string }
}

async function csrfToken(basePath: string): Promise<string> {
  const response = await fetch(`${basePath}/csrf`, { credentials: 'same-origin' })
  return ((await response.json()) as { csrfToken: string }).csrfToken
}

async function post(url: string, fields: Record<string, string>): Promise<{ response: Response; url: string }> {
  const response = await fetch(url, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Auth-Return-Redirect': '1' },
    body: new URLSearchParams(fields),
  })
  return { response, url: ((await response.json()) as { url: string }).url }
}

function outcome(response: Response, url: string): SignInResult {
  const parsed = new URL(url, window.location.href)
  const error = parsed.searchParams.get('error') ?? undefined
  return {
    error,
    code: parsed.searchParams.get('code') ?? undefined,
    status: response.status,
    ok: response.ok && error === undefined,
    url: error ? null : url,
  }
}

/**
 * Signs in with `providerId`: credentials and email providers post `options`' other fields (the
 * password, the address), OAuth providers leave for the provider. Without a provider, opens the
 * sign-in page.
 */
export async function signIn(
  providerId?: string,
  options: SignInOptions = {},
  authorizationParams?: Record<string, string> | string | URLSearchParams,
): Promise<SignInResult | undefined> {
  const { callbackUrl: given, redirectTo, redirect = true, basePath = '/auth', ...rest } = options
  const callbackUrl = redirectTo ?? given ?? window.location.href
  const providers = (await (await fetch(`${basePath}/providers`)).json()) as PublicProviders
  const provider = providerId ? providers[providerId] : undefined
  if (!provider) {
    window.location.href = `${basePath}/signin?${new URLSearchParams({ callbackUrl })}`
    return undefined
  }
  const isCredentials = provider.type === 'credentials'
  const target = isCredentials ? provider.callbackUrl : provider.signinUrl
  const query = new URLSearchParams(authorizationParams).toString()
  const fields = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, String(value)]))
  const { response, url } = await post(query ? `${target}?${query}` : target, {
    ...fields,
    csrfToken: await csrfToken(basePath),
    callbackUrl,
  })
  if (redirect || !(isCredentials || provider.type === 'email')) {
    window.location.href = url
    if (url.includes('#')) window.location.reload()
    return undefined
  }
  return outcome(response, url)
}

/** Signs out, then lands on `callbackUrl` (default: the current page). */
export async function signOut(options: SignOutOptions = {}): Promise<{ url: string } | undefined> {
  const { callbackUrl: given, redirectTo, redirect = true, basePath = '/auth' } = options
  const callbackUrl = redirectTo ?? given ?? window.location.href
  const { url } = await post(`${basePath}/signout`, { csrfToken: await csrfToken(basePath), callbackUrl })
  if (!redirect) return { url }
  window.location.href = url
  if (url.includes('#')) window.location.reload()
  return undefined
}
