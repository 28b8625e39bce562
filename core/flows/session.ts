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
import { liveJwtSession, storedSession } from '../session/current.js'
import { measuresSignInTime, renewedExpiry, signInTimeOf, SIGN_IN_TIME_CLAIM, toSeconds } from '../session/lifecycle.js'
import { encodeSessionToken } from '../session/token.js'
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

/** The decode effect's answer: the live token, or (ended on the server's side) an invalid one whose cookie is cleared. */
function decodedEvent(ctx: RequestContext, token: JWT | null): EffectEvent {
  return token
    ? { type: 'decodeSessionToken.done', output: { token }, at: ctx.at }
    : { type: 'decodeSessionToken.failed', reason: 'invalid', at: ctx.at }
}

function decodeFailed(ctx: RequestContext, context: Context, error: unknown): EffectEvent {
  logSessionFailure(ctx, context, error)
  return { type: 'decodeSessionToken.failed', reason: 'invalid', at: ctx.at }
}

function jwtCallbackDone(
  ctx: RequestContext,
  token: JWT,
  builtIn: boolean,
  before: string,
  stamped: boolean,
  result: JWT | null | undefined,
): EffectEvent {
  const refreshed = result ?? null
  // The sign-in time is the engine's: a callback that rebuilds the token does not lose it (the
  // next read would otherwise start its absolute clock again).
  // Stryker disable next-line ConditionalExpression: `refreshed && true` is equivalent, it writes an undefined claim, which the token's JSON leaves out
  if (refreshed && token[SIGN_IN_TIME_CLAIM] !== undefined) refreshed[SIGN_IN_TIME_CLAIM] = token[SIGN_IN_TIME_CLAIM]
  // A token given its sign-in time by this read is reissued, or the next read would start again.
  // (Whether a revoked token changed is never asked: the chart ends it first.)
  const changed = stamped || (!builtIn && stableJson(refreshed) !== before)
  return { type: 'runJwtCallback.done', output: { token: refreshed, changed }, at: ctx.at }
}

/**
 * Whether a token read now must be given its sign-in time: it has none, and the config measures
 * one (an absolute lifetime, sign-out everywhere). Its absolute clock then starts at this read and
 * runs on in every token reissued from it (issue 24, finding 10).
 */
function needsSignInTime(ctx: RequestContext, token: JWT): boolean {
  return measuresSignInTime(ctx.config) && signInTimeOf(token) === undefined
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
      // The authority's own check (core/session/current.ts): past its absolute lifetime, signed out
      // everywhere or past exp is no session, the cookie cleared. Synchronous on the common path
      // (the built-in codec, keys derived, no store to ask); the closures below are made only when
      // something is pending.
      try {
        const token = liveJwtSession(ctx, value)
        if (!(token instanceof Promise)) return decodedEvent(ctx, token)
        return token.then(
          (live) => decodedEvent(ctx, live),
          (error: unknown) => decodeFailed(ctx, context, error),
        )
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
      const read = context.token as JWT
      const stamped = needsSignInTime(ctx, read)
      const token = stamped ? { ...read, [SIGN_IN_TIME_CLAIM]: ctx.at } : read
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
        if (!isThenable(result)) return jwtCallbackDone(ctx, token, builtIn, before, stamped, result)
        return Promise.resolve(result)
          .then((refreshed) => jwtCallbackDone(ctx, token, builtIn, before, stamped, refreshed))
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
        // The authority's own lookup (core/session/current.ts): the end is the row's expiry or its
        // absolute lifetime, whichever comes first; the chart's isSessionExpired compares it.
        const found = await storedSession(ctx, sessionToken)
        if (!found) return { type: 'getSessionAndUser.failed', reason: 'notFound', at: ctx.at }
        return {
          type: 'getSessionAndUser.done',
          output: {
            sessionToken,
            expires: found.expires,
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
      // Never past the absolute lifetime, however active the session is.
      const expires = renewedExpiry(ctx.config, createdAt, ctx.at)
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
