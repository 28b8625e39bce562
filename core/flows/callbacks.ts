/**
 * The callbacks' defaults (spec §2.14) and the lookup that prefers the application's own. Lookup
 * happens at call time on the application's `callbacks` object, so tests may spy on it.
 *
 * @module
 */
import { callbacksOf } from '../config/read.js'
import type { ResolvedConfig } from '../config/types.js'
import type { JWT } from '../jwt.js'
import type { CallbacksOptions, Session } from '../types.js'

/**
 * Only URLs on the site's own origin are allowed, so a crafted `callbackUrl` cannot turn sign-in
 * into an open redirect; anything else falls back to the site itself.
 */
function defaultRedirect({ url, baseUrl }: { url: string; baseUrl: string }): string {
  if (url.startsWith('/')) return `${baseUrl}${url}`
  try {
    if (new URL(url).origin === baseUrl) return url
  } catch {
    // Not a URL: fall through to the safe default.
  }
  return baseUrl
}

/** The built-in callbacks, as Auth.js defines them. */
export const defaultCallbacks: Required<CallbacksOptions> = {
  signIn: () => true,
  redirect: defaultRedirect,
  session: ({ session }) => {
    const expires = session.expires as unknown
    return {
      user: { name: session.user?.name, email: session.user?.email, image: session.user?.image },
      expires: expires instanceof Date ? expires.toISOString() : (expires as string),
      // Ours: a failed built-in refresh-token rotation is reported to the client.
      ...(session.error === 'RefreshTokenError' ? { error: 'RefreshTokenError' } : {}),
    } satisfies Session
  },
  jwt: ({ token }) => token as JWT,
}

/** Calls the application's callback `name`, or the default. */
export function callback<N extends keyof CallbacksOptions>(
  config: ResolvedConfig,
  name: N,
): NonNullable<CallbacksOptions[N]> {
  const callbacks = callbacksOf(config)
  const own = callbacks[name]
  return (own ? own.bind(callbacks) : defaultCallbacks[name]) as NonNullable<CallbacksOptions[N]>
}
