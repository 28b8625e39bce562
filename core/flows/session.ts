/**
 * The session flow: the session machine and its effects under the `jwt` strategy.
 *
 * @module
 */
import { defineFlow } from '../engine/flow.js'
import {
  SessionContext,
  sessionMachine,
  type SessionContext as Context,
  type SessionOAuthTokens,
  ACCESS_TOKEN_LEEWAY,
} from '../../machines/session.machine.js'
import type { AdapterAccount, AdapterSession, AdapterUser } from '../adapters.js'
import { JWTSessionError, SessionTokenError, SignOutError } from '../errors.js'
import type { RequestContext } from '../http/context.js'
import type { JWT } from '../jwt.js'
// OAuth token refresh and provider logout run only for OAuth providers, whose flow module is loaded.
import { flowModule } from './kinds.js'
import { isJwtSessionEnded, SIGN_IN_TIME_CLAIM } from '../session/lifecycle.js'
import { decodeSessionTokenNow, encodeSessionToken } from '../session/token.js'
import { callbacksOf, eventsOf } from '../config/resolve-config.js'
import { callback } from './callbacks.js'
import { emitEvent } from './emit.js'

/** Logs a session failure with the error class Auth.js uses for the request kind and strategy. */
function logSessionFailure(ctx: RequestContext, context: Context, error: unknown): void {
  const cause = error instanceof Error ? error : new Error(String(error))
  if (context.request === 'signOut') ctx.logger.error(new SignOutError(cause))
  else if (context.policy?.strategy === 'database') ctx.logger.error(new SessionTokenError(cause))
  else ctx.logger.error(new JWTSessionError(cause))
}

const toSeconds = (date: Date | string | number): number =>
  Math.floor(new Date(date).getTime() / 1000)

const stableJson = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return ''
  }
}

/**
 * Database sessions: the ID token of the signed-out user's account at a provider with RP-initiated
 * logout, from the account row (the session row names only the user).
 *
 * @throws {TypeError} when the adapter cannot list accounts or none has an ID token.
 */
/** The ID token of the user's account at a logout provider; `null` when the user has none. */
async function linkedIdToken(ctx: RequestContext, context: Context): Promise<SessionOAuthTokens | null> {
  const adapter = ctx.config.adapter!
  if (!adapter.listAccounts) throw new TypeError('the adapter has no listAccounts: no RP-initiated logout')
  const { userId } = context.session as AdapterSession
  const providers = context.policy?.logoutProviders ?? []
  const account = (await adapter.listAccounts(userId)).find(
    (a) => providers.includes(a.provider) && typeof a.id_token === 'string',
  )
  return account ? { provider: account.provider, id_token: account.id_token! } : null
}

/** When a database session signed in at `createdAt` reaches the absolute lifetime (Infinity: never). */
function absoluteExpiry(ctx: RequestContext, createdAt: Date | string | undefined): number {
  const { absoluteMaxAge } = ctx.config.session
  if (absoluteMaxAge === null) return Infinity
  // No sign-in time (an Auth.js row) reads as NaN, as an unreadable one does: idle expiry only.
  const signedInAt = toSeconds(createdAt ?? Number.NaN)
  return Number.isFinite(signedInAt) ? signedInAt + absoluteMaxAge : Infinity
}

/** Whether a callback answered with a promise (or any thenable). */
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null)?.then === 'function'

let lastIso = { seconds: Number.NaN, text: '' }

/** `new Date(seconds * 1000).toISOString()`, remembered for the last value (a token's reads repeat it). */
function isoTime(seconds: number): string {
  if (seconds !== lastIso.seconds) lastIso = { seconds, text: new Date(seconds * 1000).toISOString() }
  return lastIso.text
}

/** An effect's result event (the chart checks its shape). */
type EffectEvent = { type: string; at: number; [key: string]: unknown }

/** The decode effect's answer for a decoded token (ended sessions are refused, the cookie cleared). */
function checkedToken(ctx: RequestContext, token: JWT | null): EffectEvent | Promise<EffectEvent> {
  if (!token || typeof token !== 'object') throw new Error('Invalid JWT')
  // Past its absolute lifetime, or signed out everywhere: no session (the cookie is cleared).
  const ended = isJwtSessionEnded(ctx.config, token, ctx.at)
  return ended instanceof Promise ? ended.then((e) => decodedEvent(ctx, token, e)) : decodedEvent(ctx, token, ended)
}

function decodedEvent(ctx: RequestContext, token: JWT, ended: boolean): EffectEvent {
  return ended
    ? { type: 'decodeSessionToken.failed', reason: 'invalid', at: ctx.at }
    : { type: 'decodeSessionToken.done', output: { token }, at: ctx.at }
}

function decodeFailed(ctx: RequestContext, context: Context, error: unknown): EffectEvent {
  logSessionFailure(ctx, context, error)
  return { type: 'decodeSessionToken.failed', reason: 'invalid', at: ctx.at }
}

function jwtCallbackDone(ctx: RequestContext, token: JWT, builtIn: boolean, before: string, result: JWT | null | undefined): EffectEvent {
  const refreshed = result ?? null
  // The sign-in time is the engine's: a callback that rebuilds the token does not lose it.
  if (refreshed && token[SIGN_IN_TIME_CLAIM] !== undefined) refreshed[SIGN_IN_TIME_CLAIM] = token[SIGN_IN_TIME_CLAIM]
  return {
    type: 'runJwtCallback.done',
    output: { token: refreshed, changed: !builtIn && refreshed !== null && stableJson(refreshed) !== before },
    at: ctx.at,
  }
}

function callbackFailed(ctx: RequestContext, context: Context, effect: string, error: unknown): EffectEvent {
  logSessionFailure(ctx, context, error)
  return { type: `${effect}.failed`, reason: 'threw', at: ctx.at }
}

/** The session flow definition. */
export const sessionFlow = defineFlow<typeof sessionMachine, RequestContext>({
  machine: sessionMachine,
  context: SessionContext,
  effects: {
    decodeSessionToken(context, ctx) {
      const { value } = ctx.sessionCookie
      if (!value) return { type: 'decodeSessionToken.failed', reason: 'missing', at: ctx.at }
      // Synchronous on the common path (the built-in codec, keys derived, no store to ask); the
      // closures below are made only when something is pending.
      try {
        const token = decodeSessionTokenNow(ctx, value)
        const result = token instanceof Promise ? token.then((t) => checkedToken(ctx, t)) : checkedToken(ctx, token)
        return result instanceof Promise ? result.catch((error: unknown) => decodeFailed(ctx, context, error)) : result
      } catch (error) {
        return decodeFailed(ctx, context, error)
      }
    },

    async refreshAccessToken(context, ctx) {
      const token = context.token as JWT
      const current = token.oauth as SessionOAuthTokens
      const provider = ctx.config.providerById.get(current.provider)?.oauth
      const failed = (error: unknown, reason: 'rejected' | 'threw') => {
        ctx.logger.error(new Error(`Refreshing the access token of "${current.provider}" failed`, { cause: error }))
        return { type: 'refreshAccessToken.failed', reason, at: ctx.at }
      }
      if (!provider) return failed(new Error(`provider "${current.provider}" is not configured`), 'rejected')
      const { RefreshRejected, refreshAccessToken } = flowModule('oauth')
      try {
        const oauth = await refreshAccessToken(provider, current, ctx.at, ctx.config)
        return { type: 'refreshAccessToken.done', output: { token: { ...token, oauth } }, at: ctx.at }
      } catch (error) {
        return failed(error, error instanceof RefreshRejected ? 'rejected' : 'threw')
      }
    },

    runJwtCallback(context, ctx) {
      const token = context.token as JWT
      // The built-in callback returns the token as it is: nothing to compare.
      const builtIn = !callbacksOf(ctx.config).jwt
      const before = builtIn ? '' : stableJson(token)
      try {
        const result = callback(ctx.config, 'jwt')({
          token,
          ...(context.request === 'update' ? { trigger: 'update' as const } : {}),
          session: context.data,
        })
        // The built-in callback answers at once; an application's may be async.
        if (!isThenable(result)) return jwtCallbackDone(ctx, token, builtIn, before, result)
        return Promise.resolve(result)
          .then((refreshed) => jwtCallbackDone(ctx, token, builtIn, before, refreshed))
          .catch((error: unknown) => callbackFailed(ctx, context, 'runJwtCallback', error))
      } catch (error) {
        return callbackFailed(ctx, context, 'runJwtCallback', error)
      }
    },

    runSessionCallback(context, ctx) {
      const token = context.token as JWT
      const session = {
        user: { name: token.name, email: token.email, image: token.picture as string | undefined },
        expires: isoTime(context.expires),
        // A failed built-in refresh is reported to the client, as Auth.js's rotation guide does.
        ...(token.error === 'RefreshTokenError' ? { error: 'RefreshTokenError' } : {}),
      }
      try {
        // Under the jwt strategy Auth.js passes exactly { session, token }; so do we.
        const result: unknown = callback(ctx.config, 'session')({ session, token } as never)
        if (!isThenable(result)) return { type: 'runSessionCallback.done', output: { session: result }, at: ctx.at }
        return Promise.resolve(result)
          .then((resolved) => ({ type: 'runSessionCallback.done', output: { session: resolved }, at: ctx.at }))
          .catch((error: unknown) => callbackFailed(ctx, context, 'runSessionCallback', error))
      } catch (error) {
        return callbackFailed(ctx, context, 'runSessionCallback', error)
      }
    },

    async encodeSessionToken(context, ctx) {
      try {
        const value = await encodeSessionToken(ctx, context.token as JWT)
        return { type: 'encodeSessionToken.done', output: { value }, at: ctx.at }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        return { type: 'encodeSessionToken.failed', reason: 'threw', at: ctx.at }
      }
    },

    emitSessionEvent(context, ctx) {
      const done = { type: 'emitSessionEvent.done', output: null, at: ctx.at }
      // Nothing to wait for when the application has no `session` event handler.
      if (!eventsOf(ctx.config).session) return done
      // Auth.js passes the token under the jwt strategy and only the session under database.
      return emitEvent(
        ctx,
        'session',
        (context.policy?.strategy === 'database'
          ? { session: context.session }
          : { session: context.session, token: context.token }) as never,
      ).then(() => done)
    },

    async emitSignOutEvent(context, ctx) {
      await emitEvent(
        ctx,
        'signOut',
        context.policy?.strategy === 'database'
          ? { session: context.session as AdapterSession | null | undefined }
          : { token: context.token as JWT },
      )
      return { type: 'emitSignOutEvent.done', output: null, at: ctx.at }
    },

    async buildProviderLogout(context, ctx) {
      try {
        const oauthTokens =
          context.policy?.strategy === 'database'
            ? await linkedIdToken(ctx, context)
            : ((context.token as JWT).oauth as SessionOAuthTokens)
        // A user who signed in another way (credentials, another provider) has nothing to end there.
        if (!oauthTokens) return { type: 'buildProviderLogout.failed', reason: 'notLinked', at: ctx.at }
        const provider = ctx.config.providerById.get(oauthTokens.provider)?.oauth
        if (!provider) throw new TypeError(`provider "${oauthTokens.provider}" is not configured`)
        const as = await flowModule('oauth').authorizationServer(provider)
        if (!as.end_session_endpoint) {
          throw new TypeError(`provider "${provider.id}" does not advertise an end_session_endpoint`)
        }
        const url = new URL(as.end_session_endpoint)
        url.searchParams.set('id_token_hint', oauthTokens.id_token!)
        url.searchParams.set('post_logout_redirect_uri', context.callbackUrl)
        url.searchParams.set('client_id', provider.clientId)
        return { type: 'buildProviderLogout.done', output: { url: url.href }, at: ctx.at }
      } catch (error) {
        ctx.logger.error(new SignOutError(error as Error))
        return { type: 'buildProviderLogout.failed', reason: 'threw', at: ctx.at }
      }
    },

    async getSessionAndUser(context, ctx) {
      const sessionToken = ctx.sessionCookie.value
      if (!sessionToken) return { type: 'getSessionAndUser.failed', reason: 'missing', at: ctx.at }
      try {
        const found = await ctx.config.adapter!.getSessionAndUser!(sessionToken)
        if (!found) return { type: 'getSessionAndUser.failed', reason: 'notFound', at: ctx.at }
        const idleExpiry = toSeconds(found.session.expires)
        if (!Number.isFinite(idleExpiry)) throw new TypeError('the stored session has no valid expiry')
        // Past its absolute lifetime a session is expired, however active (no sign-in time: idle only).
        const expires = Math.min(idleExpiry, absoluteExpiry(ctx, found.session.createdAt))
        return {
          type: 'getSessionAndUser.done',
          output: {
            sessionToken,
            expires,
            user: found.user as unknown as Record<string, unknown>,
            session: found.session as unknown as Record<string, unknown>,
          },
          at: ctx.at,
        }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        // Stryker disable next-line StringLiteral: equivalent, the chart reads only the 'missing' and 'notFound' reasons; any other is an outage
        return { type: 'getSessionAndUser.failed', reason: 'threw', at: ctx.at }
      }
    },

    async deleteExpiredSession(context, ctx) {
      try {
        await ctx.config.adapter!.deleteSession!(ctx.sessionCookie.value)
        return { type: 'deleteExpiredSession.done', output: null, at: ctx.at }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        // Stryker disable next-line StringLiteral: equivalent, the chart reads only the 'missing' and 'notFound' reasons; any other is an outage
        return { type: 'deleteExpiredSession.failed', reason: 'threw', at: ctx.at }
      }
    },

    async extendSession(context, ctx) {
      // The chart enters extendingSession only with the row it read remembered (storedSession).
      const createdAt = (context.storedSession as { createdAt?: Date | string }).createdAt
      const expires = Math.min(ctx.at + context.policy!.maxAge, absoluteExpiry(ctx, createdAt))
      try {
        const updated = await ctx.config.adapter!.updateSession!({
          sessionToken: context.sessionToken!,
          expires: new Date(expires * 1000),
        })
        // Adapters may return the row (use its expiry: the cookie must match it) or nothing.
        const stored = updated?.expires ? toSeconds(updated.expires) : expires
        return { type: 'extendSession.done', output: { expires: stored }, at: ctx.at }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        // Stryker disable next-line StringLiteral: equivalent, the chart reads only the 'missing' and 'notFound' reasons; any other is an outage
        return { type: 'extendSession.failed', reason: 'threw', at: ctx.at }
      }
    },

    async refreshAccountTokens(context, ctx) {
      const adapter = ctx.config.adapter!
      const due = (account: AdapterAccount) =>
        context.policy!.refreshProviders!.includes(account.provider) &&
        typeof account.refresh_token === 'string' &&
        typeof account.expires_at === 'number' &&
        account.expires_at <= ctx.at + ACCESS_TOKEN_LEEWAY
      let rejected = false
      try {
        if (!adapter.listAccounts) throw new TypeError('the adapter has no listAccounts: tokens cannot be refreshed')
        const accounts = await adapter.listAccounts(String((context.user as { id: unknown }).id))
        for (const account of accounts.filter(due)) {
          const provider = ctx.config.providerById.get(account.provider)?.oauth
          if (!provider) continue
          const oauth = flowModule('oauth')
          const current = {
            provider: account.provider,
            refresh_token: account.refresh_token!,
            ...(account.access_token ? { access_token: account.access_token } : {}),
            expires_at: account.expires_at!,
          }
          try {
            const fresh = await oauth.refreshAccessToken(provider, current, ctx.at, ctx.config)
            await oauth.storeAccountTokens(ctx, { ...account, ...fresh })
          } catch (error) {
            ctx.logger.error(new Error(`Refreshing the access token of "${account.provider}" failed`, { cause: error }))
            if (!(error instanceof oauth.RefreshRejected)) continue
            rejected = true
            // A refused refresh token is dropped so it is not replayed on every read.
            await oauth.storeAccountTokens(ctx, { ...account, refresh_token: null } as unknown as AdapterAccount)
          }
        }
      } catch (error) {
        // The session itself is fine: report the outage, serve the session.
        ctx.logger.error(new Error('Refreshing account tokens failed', { cause: error }))
      }
      return { type: 'refreshAccountTokens.done', output: { rejected }, at: ctx.at }
    },

    async runDatabaseSessionCallback(context, ctx) {
      const user = context.user as unknown as AdapterUser
      // The row as the adapter returned it (its `id`, columns the application added), as Auth.js
      // passes it; the expiry is the one this read settled on.
      const stored = {
        ...context.storedSession,
        sessionToken: context.sessionToken!,
        userId: user.id,
        expires: new Date(context.expires * 1000),
        // A failed built-in refresh is reported to the client, as with JWT sessions.
        ...(context.refreshError ? { error: 'RefreshTokenError' as const } : {}),
      }
      try {
        const result = await callback(ctx.config, 'session')({
          session: { ...stored, user } as never,
          user,
          newSession: context.data,
          ...(context.request === 'update' ? { trigger: 'update' as const } : {}),
        } as never)
        return { type: 'runDatabaseSessionCallback.done', output: { session: result }, at: ctx.at }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        return { type: 'runDatabaseSessionCallback.failed', reason: 'threw', at: ctx.at }
      }
    },

    async deleteSession(context, ctx) {
      const sessionToken = ctx.sessionCookie.value
      if (!sessionToken) return { type: 'deleteSession.failed', reason: 'missing', at: ctx.at }
      try {
        const session = await ctx.config.adapter!.deleteSession!(sessionToken)
        return { type: 'deleteSession.done', output: { session }, at: ctx.at }
      } catch (error) {
        ctx.logger.error(
          new SignOutError('The database session could not be deleted: it may stay live until it expires', error as Error),
        )
        return { type: 'deleteSession.failed', reason: 'threw', at: ctx.at }
      }
    },
  },
})
