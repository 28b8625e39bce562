/**
 * Handlers of the routes that are not flows: the provider list, the CSRF token and the built-in
 * pages (or redirects to the application's own pages).
 *
 * @module
 */
import { expiredCookie } from '../cookies.js'
import { signedInUser } from '../session/current.js'
import { takeNotice } from './notice.js'
import { denialSentence } from '../extensions.js'
import {
  renderErrorPage,
  renderSignInPage,
  renderSignOutPage,
  renderVerifyRequestPage,
  type PageProvider,
  type RenderedPage,
} from '../pages/index.js'
import type { PublicProvider, ResponseInternal } from '../types.js'
import type { RequestContext } from './context.js'

/** Headers that keep a response out of every cache: it carries per-user data. */
export const NO_STORE_HEADERS = Object.freeze({
  'Cache-Control': 'private, no-cache, no-store',
  Expires: '0',
  Pragma: 'no-cache',
} as const)

/*
 * Frozen, shared header sets: the answer converts each once and reuses the result (see
 * `http/answer.ts`), instead of checking and sorting the same names on every request.
 */
/** A JSON document. */
export const JSON_HEADERS = Object.freeze({ 'Content-Type': 'application/json' } as const)
/** A JSON document with per-user data. */
export const JSON_NO_STORE_HEADERS = Object.freeze({ 'Content-Type': 'application/json', ...NO_STORE_HEADERS } as const)
/** A page with per-user data. */
export const HTML_NO_STORE_HEADERS = Object.freeze({ 'Content-Type': 'text/html', ...NO_STORE_HEADERS } as const)

/** A built-in page: never cached, since it carries a CSRF token or cookies of one browser. */
function html(ctx: RequestContext, page: RenderedPage): ResponseInternal {
  return {
    status: page.status,
    headers: HTML_NO_STORE_HEADERS,
    body: page.html,
    cookies: ctx.setCookies,
  }
}

/** Appends `?` or `&` and the parameters to a custom page path. */
function withQuery(path: string, params: Record<string, string>): string {
  return `${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams(params)}`
}

/** The public URLs of every configured provider. */
export function publicProviders(ctx: RequestContext): PublicProvider[] {
  return ctx.config.providers.map(({ id, name, type }) => ({
    id,
    name,
    type,
    signinUrl: `${ctx.authUrl}/signin/${id}`,
    callbackUrl: `${ctx.authUrl}/callback/${id}`,
  }))
}

/** GET /providers: `{ <id>: {id, name, type, signinUrl, callbackUrl} }`. */
export function respondProviders(ctx: RequestContext): ResponseInternal {
  const body: Record<string, PublicProvider> = {}
  for (const provider of publicProviders(ctx)) body[provider.id] = provider
  return { headers: JSON_HEADERS, body, cookies: ctx.setCookies }
}

/** GET /csrf: the token, or 404 (and the cookie cleared) when CSRF checks are disabled. */
export function respondCsrf(ctx: RequestContext): ResponseInternal {
  if (ctx.config.csrfDisabled) {
    ctx.logger.warn('csrf-disabled')
    return { status: 404, cookies: [...ctx.setCookies, expiredCookie(ctx.cookies.csrfToken)] }
  }
  return {
    headers: JSON_NO_STORE_HEADERS,
    body: { csrfToken: ctx.csrf!.token },
    cookies: ctx.setCookies,
  }
}

/** POST /signin without a provider that starts a flow: back to the sign-in page. */
export function redirectToSignInPage(ctx: RequestContext): ResponseInternal {
  return { redirect: `${ctx.authUrl}/signin`, cookies: ctx.setCookies }
}

/** The providers on the sign-in page, each with the form its flow draws (none: not on the page). */
function pageProviders(ctx: RequestContext): PageProvider[] {
  const pages: PageProvider[] = []
  for (const provider of publicProviders(ctx)) {
    const form = ctx.config.firstFactorByType.get(provider.type)?.firstFactor?.signInForm
    if (!form) continue
    const config: Readonly<Record<string, unknown>> = ctx.config.providerById.get(provider.id)!.config
    const page = { ...provider, config, form }
    if (form.shows?.(page) ?? true) pages.push(page)
  }
  return pages
}

/**
 * Who the browser is signed in as, for a page to say (address, else name); `undefined` when no one
 * is, or when that cannot be told now (an unreadable session or an outage: the page only says less).
 */
async function signedInName(ctx: RequestContext): Promise<string | undefined> {
  try {
    const user = await signedInUser(ctx)
    return user ? (user.email ?? user.name ?? 'your account') : undefined
  } catch {
    return undefined
  }
}

/** The site's own origin, where a built-in page's "Back" leads when nothing better is known. */
const siteOrigin = (ctx: RequestContext) => new URL(ctx.authUrl).origin

/** GET /signin: the built-in page, or a redirect to `pages.signIn`. */
export async function respondSignInPage(ctx: RequestContext): Promise<ResponseInternal> {
  const { pages, theme } = ctx.config
  const error = ctx.request.query.error
  if (pages.signIn) {
    const params: Record<string, string> = { callbackUrl: ctx.callbackUrl || '/' }
    if (error) params.error = error
    return { redirect: withQuery(pages.signIn, params), cookies: ctx.setCookies }
  }
  const signedInAs = await signedInName(ctx)
  const signedOutEverywhere = takeNotice(ctx) === 'all'
  return html(
    ctx,
    renderSignInPage({
      ...(signedInAs ? { signedInAs } : {}),
      ...(signedOutEverywhere ? { signedOutEverywhere } : {}),
      backUrl: ctx.callbackUrl || siteOrigin(ctx),
      theme,
      providers: pageProviders(ctx),
      forms: ctx.config.flows.flatMap((flow) => flow.firstFactor?.signInForm ?? []),
      csrfToken: ctx.csrf!.token,
      callbackUrl: ctx.callbackUrl,
      authUrl: ctx.authUrl,
      ...(ctx.request.query.email ? { email: ctx.request.query.email } : {}),
      ...(error ? { error } : {}),
    }),
  )
}

/** GET /signout: the built-in page, or a redirect to `pages.signOut`. */
export async function respondSignOutPage(ctx: RequestContext): Promise<ResponseInternal> {
  const { pages, theme } = ctx.config
  if (pages.signOut) return { redirect: pages.signOut, cookies: ctx.setCookies }
  // Asked only when someone is signed in; a session that cannot be told (an outage) is asked too.
  const signedOut = (await signedInOrUnknown(ctx)) === false
  return html(
    ctx,
    renderSignOutPage({ theme, csrfToken: ctx.csrf!.token, actionUrl: `${ctx.authUrl}/signout`, signedOut, backUrl: siteOrigin(ctx) }),
  )
}

/** Whether a live session is in the request: `undefined` when that cannot be told now. */
async function signedInOrUnknown(ctx: RequestContext): Promise<boolean | undefined> {
  try {
    return (await signedInUser(ctx)) !== null
  } catch {
    return undefined
  }
}

/** GET /verify-request: the built-in page, or a redirect to `pages.verifyRequest`. */
export function respondVerifyRequestPage(ctx: RequestContext): ResponseInternal {
  const { pages, theme } = ctx.config
  if (pages.verifyRequest) {
    return { redirect: `${pages.verifyRequest}${ctx.request.url.search}`, cookies: ctx.setCookies }
  }
  const provider = ctx.config.providerById.get(ctx.request.query.provider ?? '')
  const code = provider?.email?.code
  return html(
    ctx,
    renderVerifyRequestPage({
      theme,
      url: ctx.request.url,
      // Providers that send codes: the form that posts the code back, from this browser only.
      ...(code && ctx.csrf
        ? {
            code: {
              actionUrl: `${ctx.authUrl}/callback/${provider!.id}`,
              csrfToken: ctx.csrf.token,
              length: code.length,
              rejected: ctx.request.query.error === 'InvalidCode',
            },
          }
        : {}),
    }),
  )
}

/** The error page for `error`: built-in, or a redirect to `pages.error`. */
export function errorPage(ctx: RequestContext, error: string | undefined): ResponseInternal {
  const { pages, theme } = ctx.config
  if (pages.error) {
    return {
      redirect: withQuery(pages.error, error === undefined ? {} : { error }),
      cookies: ctx.setCookies,
    }
  }
  const denial = error === 'AccessDenied' ? denialSentence(ctx.config.extensions, ctx.request.query.code) : undefined
  return html(
    ctx,
    renderErrorPage({
      theme,
      url: ctx.request.url,
      signInUrl: `${ctx.authUrl}/signin`,
      ...(error !== undefined ? { error } : {}),
      ...(denial !== undefined ? { denial } : {}),
    }),
  )
}

/** GET /error?error=… */
export function respondErrorPage(ctx: RequestContext): ResponseInternal {
  return errorPage(ctx, ctx.request.query.error)
}
