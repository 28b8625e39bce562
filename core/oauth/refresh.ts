/**
 * Refresh-token rotation on the session path. Providers that rotate refresh tokens accept each one
 * once; a page that fires several requests at the same time, all carrying the same session cookie,
 * must not spend it twice (the incumbent's most requested fix: its issues #7558, #8897). So a
 * refresh is single-flight per refresh token, and its result is kept briefly for requests that
 * still carry the old cookie because they left the browser before the new one arrived.
 *
 * The coordination runs through the configured store, so it holds across every instance that
 * shares it: the first request to claim the refresh token's lock runs the grant and keeps the
 * result (encrypted with the secret: it holds tokens) for the others, which wait for it. Within one
 * process, racing requests also share one promise, so they ask the store once.
 *
 * @module
 */
import * as oauth from 'oauth4webapi'
import type { SessionOAuthTokens } from '../../machines/session.machine.js'
import { sha256Hex } from '../crypto.js'
import { decode, encode, type JWT } from '../jwt.js'
import type { AuthStore } from '../store/index.js'
import type { ResolvedOAuthProvider } from './provider.js'
import { dpopHandle, openDPoPKeyPair, withDPoPNonceRetry } from './dpop.js'
import { authorizationServer, clientAuthentication, clientOf, tokenRequestOptions } from './server.js'

/** How long a refresh result is handed to requests that still carry the spent refresh token. */
export const REFRESH_REUSE_WINDOW_MS = 60_000
/** How long one instance may hold a refresh token's lock (the grant's time limit, in seconds). */
export const REFRESH_LOCK_SECONDS = 30
/** How often a request that lost the lock looks for the winner's result. */
const POLL_MS = 25
/** The cookie-codec salt of a kept result: a key of its own, used for nothing else. */
const RESULT_SALT = 'authchart.refresh-result'

/** Where a refresh is coordinated: the config's store, and the secret that seals kept results. */
export interface RefreshCoordination {
  store: AuthStore
  secrets: readonly [string, ...string[]]
}

/** The provider refused the refresh token (spent, revoked, expired): sign-in is needed. */
export class RefreshRejected extends Error {
  override name = 'RefreshRejected'
}

/** Refreshes under way in this process, per store (two configs on two stores are two instances). */
const inFlight = new WeakMap<AuthStore, Map<string, Promise<SessionOAuthTokens>>>()
async function requestRefresh(
  provider: ResolvedOAuthProvider,
  current: SessionOAuthTokens,
  at: number,
  secrets: readonly string[],
): Promise<SessionOAuthTokens> {
  const as = await authorizationServer(provider)
  const client = clientOf(provider)
  // The session's own key pair: the refreshed tokens stay bound to it.
  const dpop = provider.dpop && current.dpop_key ? dpopHandle(provider, await openDPoPKeyPair(current.dpop_key, secrets)) : undefined
  const options = { ...tokenRequestOptions(provider, as), ...(dpop ? { DPoP: dpop } : {}) }
  try {
    const tokens = await withDPoPNonceRetry(
      dpop,
      () => oauth.refreshTokenGrantRequest(as, client, clientAuthentication(provider, as), current.refresh_token!, options),
      (response) => oauth.processRefreshTokenResponse(as, client, response),
    )
    return {
      provider: current.provider,
      ...(tokens.access_token ? { access_token: tokens.access_token } : {}),
      // A provider that does not rotate keeps the old refresh token valid.
      refresh_token: tokens.refresh_token ?? current.refresh_token!,
      ...(typeof tokens.expires_in === 'number' ? { expires_at: at + tokens.expires_in } : {}),
      ...(current.dpop_key !== undefined ? { dpop_key: current.dpop_key } : {}),
    }
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant') {
      throw new RefreshRejected(error.error_description ?? 'invalid_grant', { cause: error })
    }
    throw error
  }
}

/** A kept outcome: the new tokens, or the provider's refusal. */
type Kept = { tokens: SessionOAuthTokens } | { rejected: string }

async function keep(shared: RefreshCoordination, key: string, kept: Kept): Promise<void> {
  const sealed = await encode({
    token: kept as unknown as JWT,
    secret: shared.secrets[0],
    salt: RESULT_SALT,
    maxAge: REFRESH_REUSE_WINDOW_MS / 1000,
  })
  await shared.store.put(`refresh:result:${key}`, sealed, REFRESH_REUSE_WINDOW_MS / 1000)
}

async function kept(shared: RefreshCoordination, key: string): Promise<SessionOAuthTokens | null> {
  const sealed = await shared.store.get(`refresh:result:${key}`)
  // Stryker disable next-line ConditionalExpression: eq#refresh-kept-missing
  if (sealed === null) return null
  const found = (await decode({ token: sealed, secret: [...shared.secrets], salt: RESULT_SALT })) as Kept | null
  // Stryker disable next-line ConditionalExpression: eq#refresh-kept-missing
  if (!found) return null
  if ('rejected' in found) throw new RefreshRejected(found.rejected)
  return found.tokens
}

/** Runs the grant under the store's lock, or waits for the instance that holds it. */
async function coordinatedRefresh(
  provider: ResolvedOAuthProvider,
  current: SessionOAuthTokens,
  at: number,
  shared: RefreshCoordination,
): Promise<SessionOAuthTokens> {
  // A keyed hash names the refresh token in the store: the store never sees the token itself.
  const key = await sha256Hex(`${provider.id}\u0000${current.refresh_token}\u0000${shared.secrets[0]}`)
  const lock = `refresh:lock:${key}`
  const deadline = Date.now() + REFRESH_LOCK_SECONDS * 1000
  for (;;) {
    const recent = await kept(shared, key)
    if (recent) return recent
    if (await shared.store.claim(lock, REFRESH_LOCK_SECONDS)) {
      try {
        // Another instance may have finished between our look and our claim.
        const finished = await kept(shared, key)
        if (finished) return finished
        const tokens = await requestRefresh(provider, current, at, shared.secrets)
        await keep(shared, key, { tokens })
        return tokens
      } catch (error) {
        if (error instanceof RefreshRejected) await keep(shared, key, { rejected: error.message })
        throw error
      } finally {
        // Released, so that after a failure (the provider unreachable) a later request may try.
        await shared.store.reset(lock)
      }
    }
    if (Date.now() > deadline) throw new Error('timed out waiting for another instance to refresh the token')
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/**
 * Refreshes `current` at `provider`, at most once per refresh token however many requests ask, on
 * however many instances share the store.
 *
 * @throws {RefreshRejected} when the provider refuses the refresh token; other errors when the
 *   provider cannot be reached or answers nonsense, or the instance holding the lock never answers.
 */
export async function refreshAccessToken(
  provider: ResolvedOAuthProvider,
  current: SessionOAuthTokens,
  at: number,
  shared: RefreshCoordination,
): Promise<SessionOAuthTokens> {
  const local = `${provider.id}\u0000${current.refresh_token}`
  let running = inFlight.get(shared.store)
  if (!running) inFlight.set(shared.store, (running = new Map()))
  let pending = running.get(local)
  if (!pending) {
    pending = coordinatedRefresh(provider, current, at, shared)
    running.set(local, pending)
    pending.catch(() => {}).finally(() => running.delete(local))
  }
  return pending
}
