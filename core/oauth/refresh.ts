/**
 * Refresh-token rotation on the session path. Providers that rotate refresh tokens accept each one
 * once; a page that fires several requests at the same time, all carrying the same session cookie,
 * must not spend it twice (the incumbent's most requested fix: its issues #7558, #8897). So a
 * refresh is single-flight per refresh token, and its result is remembered briefly for requests
 * that still carry the old cookie because they left the browser before the new one arrived.
 *
 * The coordination is per process: behind several instances, route a session's requests to one
 * instance or accept that the provider may refuse a concurrent replay (the session then reports
 * `RefreshTokenError`).
 *
 * @module
 */
import * as oauth from 'oauth4webapi'
import type { SessionOAuthTokens } from '../../machines/session.machine.js'
import type { ResolvedOAuthProvider } from './provider.js'
import { authorizationServer, clientAuthentication, clientOf, tokenRequestOptions } from './server.js'

/** How long a refresh result is handed to requests that still carry the spent refresh token. */
export const REFRESH_REUSE_WINDOW_MS = 60_000
const MAX_REMEMBERED = 10_000

/** The provider refused the refresh token (spent, revoked, expired): sign-in is needed. */
export class RefreshRejected extends Error {
  override name = 'RefreshRejected'
}

const inFlight = new Map<string, Promise<SessionOAuthTokens>>()
const remembered = new Map<string, { tokens: SessionOAuthTokens; until: number }>()

async function requestRefresh(
  provider: ResolvedOAuthProvider,
  current: SessionOAuthTokens,
  at: number,
): Promise<SessionOAuthTokens> {
  const as = await authorizationServer(provider)
  const client = clientOf(provider)
  try {
    const response = await oauth.refreshTokenGrantRequest(
      as,
      client,
      clientAuthentication(provider, as),
      current.refresh_token!,
      tokenRequestOptions(provider, as),
    )
    const tokens = await oauth.processRefreshTokenResponse(as, client, response)
    return {
      provider: current.provider,
      ...(tokens.access_token ? { access_token: tokens.access_token } : {}),
      // A provider that does not rotate keeps the old refresh token valid.
      refresh_token: tokens.refresh_token ?? current.refresh_token!,
      ...(typeof tokens.expires_in === 'number' ? { expires_at: at + tokens.expires_in } : {}),
    }
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant') {
      throw new RefreshRejected(error.error_description ?? 'invalid_grant', { cause: error })
    }
    throw error
  }
}

/**
 * Refreshes `current` at `provider`, at most once per refresh token however many requests ask.
 *
 * @throws {RefreshRejected} when the provider refuses the refresh token; other errors when the
 *   provider cannot be reached or answers nonsense.
 */
export async function refreshAccessToken(
  provider: ResolvedOAuthProvider,
  current: SessionOAuthTokens,
  at: number,
): Promise<SessionOAuthTokens> {
  const key = `${provider.id}\u0000${current.refresh_token}`
  const recent = remembered.get(key)
  if (recent && recent.until > Date.now()) return recent.tokens
  let pending = inFlight.get(key)
  if (!pending) {
    pending = requestRefresh(provider, current, at)
    inFlight.set(key, pending)
    pending
      .then((tokens) => {
        if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!)
        remembered.set(key, { tokens, until: Date.now() + REFRESH_REUSE_WINDOW_MS })
      })
      .catch(() => {})
      .finally(() => inFlight.delete(key))
  }
  return pending
}
