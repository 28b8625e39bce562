'use client'
/**
 * The client side of the Next.js integration (`authchart/next/react`), with next-auth/react's
 * surface and behaviour: `SessionProvider`, `useSession` (`loading | authenticated |
 * unauthenticated`, `update()`), `signIn`, `signOut`, `getSession`, `getCsrfToken`,
 * `getProviders`. The session is fetched again when the tab becomes visible, on an interval if
 * asked, and when another tab signs in or out (a `BroadcastChannel` named `next-auth`, as
 * next-auth's, so tabs of both libraries stay in step during a migration).
 *
 * @module
 */
import * as React from 'react'
import { AuthError } from '../../core/errors.js'
import type { ProviderType, Session } from '../../core/types.js'

/** A fetch of the session or another route failed (logged, never thrown). */
class ClientFetchError extends AuthError {}

/** The session could not be refreshed (logged, never thrown). */
export class ClientSessionError extends AuthError {}

/** What the client knows of where the auth routes are, and its last session. */
export interface AuthClientConfig {
  baseUrl: string
  basePath: string
  baseUrlServer: string
  basePathServer: string
  _session?: Session | null | undefined
  _lastSync: number
  _getSession: (...args: any[]) => any
}

/** Options of {@link useSession}. */
export interface UseSessionOptions<R extends boolean> {
  /** Redirect to the sign-in page when there is no session. */
  required: R
  /** Called instead of that redirect. */
  onUnauthenticated?: () => void
}

/** A provider as `GET {basePath}/providers` lists it. */
export interface ClientSafeProvider {
  id: string
  name: string
  type: ProviderType
  signinUrl: string
  callbackUrl: string
  redirectTo: string
}

/** Options of {@link signIn}: `redirectTo`, `redirect`, and the provider's fields. */
export interface SignInOptions<Redirect extends boolean = true> extends Record<string, unknown> {
  /** @deprecated use `redirectTo` */
  callbackUrl?: string
  redirectTo?: string
  redirect?: Redirect
}

/** The outcome of {@link signIn} with `redirect: false`. */
export interface SignInResponse {
  error: string | undefined
  code: string | undefined
  status: number
  ok: boolean
  url: string | null
}

/** Authorization parameters for an OAuth provider. */
export type SignInAuthorizationParams = string | string[][] | Record<string, string> | URLSearchParams

/** The outcome of {@link signOut} with `redirect: false`. */
export interface SignOutResponse {
  url: string
}

/** Options of {@link signOut}. */
export interface SignOutParams<Redirect extends boolean = true> {
  /** @deprecated use `redirectTo` */
  callbackUrl?: string
  redirectTo?: string
  redirect?: Redirect
}

/** Props of {@link SessionProvider}. */
export interface SessionProviderProps {
  children: React.ReactNode
  /** The session read on the server, so the first render needs no fetch. */
  session?: Session | null
  baseUrl?: string
  /** The auth routes' base path; default `/api/auth`. */
  basePath?: string
  /** Seconds between session fetches while signed in; 0 (default) never polls. */
  refetchInterval?: number
  /** Fetch the session when the tab becomes visible; default `true`. */
  refetchOnWindowFocus?: boolean
  /** `false`: do not poll while offline. */
  refetchWhenOffline?: false
}

/** Origin and path of a URL as next-auth/react reads `NEXTAUTH_URL`: default `http://localhost:3000/api/auth`. */
function parseUrl(url?: string): { origin: string; path: string } {
  const fallback = new URL('http://localhost:3000/api/auth')
  const withScheme = url && !url.startsWith('http') ? `https://${url}` : url
  const parsed = new URL(withScheme || fallback)
  const path = (parsed.pathname === '/' ? fallback.pathname : parsed.pathname).replace(/\/$/, '')
  return { origin: parsed.origin, path }
}

// Read as next-auth/react reads them; in a browser bundle they are undefined and paths are relative.
const env: Record<string, string | undefined> = typeof process === 'undefined' ? {} : process.env

/** The client's configuration and state (next-auth/react's `__NEXTAUTH`). */
export const __NEXTAUTH: AuthClientConfig = {
  baseUrl: parseUrl(env.NEXTAUTH_URL ?? env.VERCEL_URL).origin,
  basePath: parseUrl(env.NEXTAUTH_URL).path,
  baseUrlServer: parseUrl(env.NEXTAUTH_URL_INTERNAL ?? env.NEXTAUTH_URL ?? env.VERCEL_URL).origin,
  basePathServer: parseUrl(env.NEXTAUTH_URL_INTERNAL ?? env.NEXTAUTH_URL).path,
  _lastSync: 0,
  _session: undefined,
  _getSession: () => {},
}

const logger = { error: (error: Error) => console.error(error) }

const now = () => Math.floor(Date.now() / 1000)

function apiBaseUrl(config: AuthClientConfig): string {
  // Absolute on the server (no page to be relative to), relative in the browser.
  if (typeof window === 'undefined') return `${config.baseUrlServer}${config.basePathServer}`
  return config.basePath
}

/** A channel that does nothing, where `BroadcastChannel` does not exist (old browsers, the server). */
function newBroadcastChannel(): BroadcastChannel {
  if (typeof BroadcastChannel === 'undefined') {
    return {
      postMessage: () => {},
      addEventListener: () => {},
      removeEventListener: () => {},
      name: 'next-auth',
      onmessage: null,
      onmessageerror: null,
      close: () => {},
      dispatchEvent: () => false,
    } satisfies BroadcastChannel
  }
  return new BroadcastChannel('next-auth')
}
let channel: BroadcastChannel | null = null
const broadcast = () => (channel ??= newBroadcastChannel())

async function fetchData<T>(path: string, body?: unknown): Promise<T | null> {
  try {
    const response = await fetch(`${apiBaseUrl(__NEXTAUTH)}/${path}`, {
      headers: { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }),
    })
    const data = (await response.json()) as T
    if (!response.ok) throw data
    return data
  } catch (error) {
    logger.error(new ClientFetchError((error as Error).message, error as Error))
    return null
  }
}

/** What {@link useSession} returns. */
export type SessionContextValue<R extends boolean = false> = R extends true
  ?
      | { update: UpdateSession; data: Session; status: 'authenticated' }
      | { update: UpdateSession; data: null; status: 'loading' }
  :
      | { update: UpdateSession; data: Session; status: 'authenticated' }
      | { update: UpdateSession; data: null; status: 'unauthenticated' | 'loading' }

/** `update()`: fetches the session again, or with data, updates it (the `jwt` callback's `trigger: 'update'`). */
export type UpdateSession = (data?: any) => Promise<Session | null | undefined>

/** The context {@link SessionProvider} provides. */
export const SessionContext = React.createContext?.<SessionContextValue | undefined>(undefined)

/**
 * The session in a client component, inside a {@link SessionProvider}. With `required: true`, a
 * visitor without a session goes to the sign-in page (or `onUnauthenticated` runs).
 */
export function useSession<R extends boolean>(options?: UseSessionOptions<R>): SessionContextValue<R> {
  if (!SessionContext) throw new Error('React Context is unavailable in Server Components')
  const value = React.useContext(SessionContext) as SessionContextValue<R> | undefined
  if (!value && process.env.NODE_ENV !== 'production') {
    throw new Error('[next-auth]: `useSession` must be wrapped in a <SessionProvider />')
  }
  const { required, onUnauthenticated } = options ?? {}
  const requiredAndNotLoading = required && value!.status === 'unauthenticated'
  React.useEffect(() => {
    if (requiredAndNotLoading) {
      const url = `${__NEXTAUTH.basePath}/signin?${new URLSearchParams({ error: 'SessionRequired', callbackUrl: window.location.href })}`
      if (onUnauthenticated) onUnauthenticated()
      else window.location.href = url
    }
  }, [requiredAndNotLoading, onUnauthenticated])
  if (requiredAndNotLoading) return { data: value!.data, update: value!.update, status: 'loading' } as SessionContextValue<R>
  return value!
}

/** Options of {@link getSession}. */
export interface GetSessionParams {
  event?: 'storage' | 'timer' | 'hidden' | string
  triggerEvent?: boolean
  /** Tell other tabs to fetch theirs too (default `true`). */
  broadcast?: boolean
}

/** Fetches the session (`null` without one) and tells the other tabs. */
export async function getSession(params?: GetSessionParams): Promise<Session | null> {
  const session = await fetchData<Session>('session')
  if (params?.broadcast ?? true) newBroadcastChannel().postMessage({ event: 'session', data: { trigger: 'getSession' } })
  return session
}

/** A CSRF token for a form that posts to the auth routes (`''` when it cannot be fetched). */
export async function getCsrfToken(): Promise<string> {
  return (await fetchData<{ csrfToken: string }>('csrf'))?.csrfToken ?? ''
}

/** The configured providers, as `GET {basePath}/providers` lists them. */
export async function getProviders(): Promise<Record<string, ClientSafeProvider> | null> {
  return fetchData<Record<string, ClientSafeProvider>>('providers')
}

/**
 * Signs in from the browser: credentials and e-mail providers post `options`' other fields, OAuth
 * providers leave for the provider; without a (known) provider, opens the sign-in page. With
 * `redirect: false`, resolves to the outcome instead of navigating.
 */
export async function signIn(
  provider?: string,
  options?: SignInOptions<true>,
  authorizationParams?: SignInAuthorizationParams,
): Promise<void>
export async function signIn(
  provider?: string,
  options?: SignInOptions<false>,
  authorizationParams?: SignInAuthorizationParams,
): Promise<SignInResponse>
export async function signIn(
  provider?: string,
  options?: SignInOptions<boolean>,
  authorizationParams?: SignInAuthorizationParams,
): Promise<SignInResponse | void> {
  const { callbackUrl, ...rest } = options ?? {}
  const { redirect = true, redirectTo = callbackUrl ?? window.location.href, ...signInParams } = rest
  const baseUrl = apiBaseUrl(__NEXTAUTH)
  const providers = await getProviders()
  if (!providers) {
    window.location.href = `${baseUrl}/error`
    return
  }
  if (!provider || !providers[provider]) {
    window.location.href = `${baseUrl}/signin?${new URLSearchParams({ callbackUrl: redirectTo })}`
    return
  }
  const providerType = providers[provider]!.type
  if (providerType === 'webauthn') {
    throw new TypeError(
      [`Provider id "${provider}" refers to a WebAuthn provider.`, 'Please use the passkey sign-in page instead.'].join('\n'),
    )
  }
  const signInUrl = `${baseUrl}/${providerType === 'credentials' ? 'callback' : 'signin'}/${provider}`
  const csrfToken = await getCsrfToken()
  const fields: Record<string, string> = {}
  for (const [key, value] of Object.entries(signInParams)) fields[key] = String(value)
  const response = await fetch(`${signInUrl}?${new URLSearchParams(authorizationParams)}`, {
    method: 'post',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Auth-Return-Redirect': '1' },
    body: new URLSearchParams({ ...fields, csrfToken, callbackUrl: redirectTo }),
  })
  const data = (await response.json()) as { url?: string }
  if (redirect) {
    const url = data.url ?? redirectTo
    window.location.href = url
    // A URL with a hash does not reload the page: reload it.
    if (url.includes('#')) window.location.reload()
    return
  }
  const answered = new URL(data.url!, window.location.href)
  const error = answered.searchParams.get('error') ?? undefined
  const code = answered.searchParams.get('code') ?? undefined
  if (response.ok) await __NEXTAUTH._getSession({ event: 'storage' })
  return { error, code, status: response.status, ok: response.ok, url: error ? null : data.url! }
}

/** Signs out from the browser, tells the other tabs, and lands on `redirectTo` (default: this page). */
export async function signOut(options?: SignOutParams<true>): Promise<void>
export async function signOut(options?: SignOutParams<false>): Promise<SignOutResponse>
export async function signOut(options?: SignOutParams<boolean>): Promise<SignOutResponse | void> {
  const { redirect = true, redirectTo = options?.callbackUrl ?? window.location.href } = options ?? {}
  const baseUrl = apiBaseUrl(__NEXTAUTH)
  const csrfToken = await getCsrfToken()
  const response = await fetch(`${baseUrl}/signout`, {
    method: 'post',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Auth-Return-Redirect': '1' },
    body: new URLSearchParams({ csrfToken, callbackUrl: redirectTo }),
  })
  const data = (await response.json()) as SignOutResponse
  broadcast().postMessage({ event: 'session', data: { trigger: 'signout' } })
  if (redirect) {
    const url = data.url ?? redirectTo
    window.location.href = url
    if (url.includes('#')) window.location.reload()
    return
  }
  await __NEXTAUTH._getSession({ event: 'storage' })
  return data
}

/** Whether the browser is online, following its `online`/`offline` events. */
function useOnline(): boolean {
  const [isOnline, setIsOnline] = React.useState(typeof navigator !== 'undefined' ? navigator.onLine : false)
  React.useEffect(() => {
    const online = () => setIsOnline(true)
    const offline = () => setIsOnline(false)
    window.addEventListener('online', online)
    window.addEventListener('offline', offline)
    return () => {
      window.removeEventListener('online', online)
      window.removeEventListener('offline', offline)
    }
  }, [])
  return isOnline
}

/**
 * Provides the session to {@link useSession} below it, keeps it fresh (tab focus, interval, other
 * tabs) and gives `update()`.
 */
export function SessionProvider(props: SessionProviderProps): React.ReactElement {
  if (!SessionContext) throw new Error('React Context is unavailable in Server Components')
  const { children, basePath, refetchInterval, refetchWhenOffline } = props
  if (basePath) __NEXTAUTH.basePath = basePath
  const hasInitialSession = props.session !== undefined
  __NEXTAUTH._lastSync = hasInitialSession ? now() : 0

  const [session, setSession] = React.useState(() => {
    if (hasInitialSession) __NEXTAUTH._session = props.session
    return props.session
  })
  const [loading, setLoading] = React.useState(!hasInitialSession)

  React.useEffect(() => {
    __NEXTAUTH._getSession = async ({ event }: { event?: string } = {}) => {
      try {
        const storageEvent = event === 'storage'
        // Always fetch without a session yet, and on news from another tab.
        if (storageEvent || __NEXTAUTH._session === undefined) {
          __NEXTAUTH._lastSync = now()
          __NEXTAUTH._session = await getSession({ broadcast: !storageEvent })
          setSession(__NEXTAUTH._session)
          return
        }
        // No event, no session to refresh (a sign-in elsewhere comes as a storage event), or not stale yet.
        if (!event || __NEXTAUTH._session === null || now() < __NEXTAUTH._lastSync) return
        __NEXTAUTH._lastSync = now()
        __NEXTAUTH._session = await getSession()
        setSession(__NEXTAUTH._session)
      } catch (error) {
        logger.error(new ClientSessionError((error as Error).message, error as Error))
      } finally {
        setLoading(false)
      }
    }
    __NEXTAUTH._getSession()
    return () => {
      __NEXTAUTH._lastSync = 0
      __NEXTAUTH._session = undefined
      __NEXTAUTH._getSession = () => {}
    }
  }, [])

  React.useEffect(() => {
    // Another tab signed in or out, or refreshed its session: fetch this tab's own copy (without
    // broadcasting again, which would loop).
    const handle = () => __NEXTAUTH._getSession({ event: 'storage' })
    broadcast().addEventListener('message', handle)
    return () => broadcast().removeEventListener('message', handle)
  }, [])

  React.useEffect(() => {
    const { refetchOnWindowFocus = true } = props
    const onVisibility = () => {
      if (refetchOnWindowFocus && document.visibilityState === 'visible') __NEXTAUTH._getSession({ event: 'visibilitychange' })
    }
    document.addEventListener('visibilitychange', onVisibility, false)
    return () => document.removeEventListener('visibilitychange', onVisibility, false)
  }, [props.refetchOnWindowFocus])

  const isOnline = useOnline()
  const shouldRefetch = refetchWhenOffline !== false || isOnline

  React.useEffect(() => {
    if (refetchInterval && shouldRefetch) {
      const timer = setInterval(() => {
        if (__NEXTAUTH._session) __NEXTAUTH._getSession({ event: 'poll' })
      }, refetchInterval * 1000)
      return () => clearInterval(timer)
    }
    return undefined
  }, [refetchInterval, shouldRefetch])

  const value = React.useMemo(
    () => ({
      data: session,
      status: loading ? 'loading' : session ? 'authenticated' : 'unauthenticated',
      async update(data?: unknown) {
        if (loading) return undefined
        setLoading(true)
        const newSession = await fetchData<Session>(
          'session',
          data === undefined ? undefined : { csrfToken: await getCsrfToken(), data },
        )
        setLoading(false)
        if (newSession) {
          setSession(newSession)
          broadcast().postMessage({ event: 'session', data: { trigger: 'getSession' } })
        }
        return newSession
      },
    }),
    [session, loading],
  )

  return React.createElement(SessionContext.Provider, { value: value as SessionContextValue }, children)
}
