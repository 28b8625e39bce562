/**
 * The session flow: the compiled session chart and its effects.
 *
 * @module
 */
import { defineCompiledFlow } from '../../engine/compiled-flow.js'
import {
  SessionContext,
  type SessionContext as Context,
  type SessionEndReason,
  type SessionOAuthTokens,
  ACCESS_TOKEN_LEEWAY,
} from '../../../machines/session.logic.js'
import type { sessionMachine } from '../../../machines/session.machine.js'
import { sessionChart } from '../../charts/session.js'
import type { AdapterAccount, AdapterSession, AdapterUser } from '../../adapters.js'
import { JWTSessionError, SessionTokenError, SignOutError } from '../../errors.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import type { JWT } from '../../jwt.js'
// OAuth token refresh and provider logout run only for OAuth providers, whose flow module is loaded.
import { flowModule } from '../kinds.js'
import { storeAccountTokens } from '../account.js'
import { cachedStoredSession, readJwtSession, type StoredSession } from '../../session/current.js'
import { refreshSessionCache, revokeCachedSessionTokens } from '../../session/cache.js'
import { measuresSignInTime, renewedExpiry, signInTimeOf, SIGN_IN_TIME_CLAIM, toSeconds } from '../../session/lifecycle.js'
import { encodeSessionToken, isSealedUnderOlderSecret } from '../../session/token.js'
import { FACTOR_VERIFICATION_CLAIM } from '../../session/verification.js'
import { callbacksOf, eventsOf } from '../../config/read.js'
import { callback } from '../callbacks.js'
import { effects, fail, type Failure } from '../effect.js'
import { emitEvent } from '../emit.js'
import { adapterView } from '../module.js'
import { isThenable } from '../../thenable.js'

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

let lastIso = { seconds: Number.NaN, text: '' }

/** `new Date(seconds * 1000).toISOString()`, remembered for the last value (a token's reads repeat it). */
function isoTime(seconds: number): string {
  if (seconds !== lastIso.seconds) lastIso = { seconds, text: new Date(seconds * 1000).toISOString() }
  return lastIso.text
}

type DecodeAnswer = { token: JWT } | Failure<'invalid' | SessionEndReason>

/** The decode effect's answer: the live token, or why its session ended (the chart ends there, the cookie cleared). */
const decoded = (read: JWT | SessionEndReason): DecodeAnswer => (typeof read === 'string' ? fail(read) : { token: read })

/** The message jose's `JWTExpired` and the built-in decoder give a token past its `exp`. */
const EXPIRED_MESSAGE = '"exp" claim timestamp check failed'

function decodeFailed(ctx: RequestContext, context: Context, error: unknown): DecodeAnswer {
  // Logged as Auth.js logs any unreadable token; the chart's end tells an expired one apart.
  logSessionFailure(ctx, context, error)
  return fail((error as Error | undefined)?.message === EXPIRED_MESSAGE ? 'expired' : 'invalid')
}

function jwtCallbackDone(
  ctx: RequestContext,
  token: JWT,
  builtIn: boolean,
  before: string,
  mustReissue: boolean,
  result: JWT | null | undefined,
) {
  const refreshed = result ?? null
  // The sign-in time is the engine's: a callback that rebuilds the token does not lose it (the
  // next read would otherwise start its absolute clock again).
  // Stryker disable next-line ConditionalExpression: eq#flows-session-1
  if (refreshed && token[SIGN_IN_TIME_CLAIM] !== undefined) refreshed[SIGN_IN_TIME_CLAIM] = token[SIGN_IN_TIME_CLAIM]
  // So are the factor verification times: a step-up policy measures from them. Proofs are the
  // subject's: a callback that switches the subject (update() data merged into the token, say)
  // gets a token in which the new subject has proven nothing yet.
  if (refreshed && refreshed.sub !== token.sub) {
    ctx.logger.warn('jwt-callback-changed-subject')
    refreshed[FACTOR_VERIFICATION_CLAIM] = {}
  } else if (
    refreshed &&
    // Stryker disable next-line ConditionalExpression: eq#flows-session-1
    token[FACTOR_VERIFICATION_CLAIM] !== undefined
  ) {
    refreshed[FACTOR_VERIFICATION_CLAIM] = token[FACTOR_VERIFICATION_CLAIM]
  }
  // A token given its sign-in time by this read is reissued, or the next read would start again;
  // so is one an older secret sealed. (Whether a revoked token changed is never asked: the chart
  // ends it first.)
  const changed = mustReissue || (!builtIn && stableJson(refreshed) !== before)
  return { token: refreshed, changed }
}

/**
 * Whether a token read now must be given its sign-in time: it has none, and the config measures
 * one (an absolute lifetime, sign-out everywhere). Its absolute clock then starts at this read and
 * runs on in every token reissued from it (issue 24, finding 10).
 */
function needsSignInTime(ctx: RequestContext, token: JWT): boolean {
  return measuresSignInTime(ctx.config) && signInTimeOf(token) === undefined
}

/** A session effect's unexpected throw: logged with the error class Auth.js uses; the chart ends the read. */
const reportSessionFailure = (ctx: RequestContext, error: unknown, context: Context): undefined => {
  logSessionFailure(ctx, context, error)
  return undefined
}

/** The database session as getSessionAndUser reads it: the adapter's session row and its user. */
type StoredRows = Pick<StoredSession, 'session' | 'user'>

/**
 * A row's columns as a type literal: the properties of the adapter's interface, which TypeScript
 * takes as the chart's record of columns (an interface, having no index signature, it does not).
 */
type Columns<Row> = { [Column in keyof Row]: Row[Column] }

/**
 * The rows as the chart keeps them (`user`, `storedSession`): the adapter's objects themselves, not
 * copies, so the `session` callback and the cache get each row as the adapter returned it (its
 * `id`, columns the application added). The chart knows no adapter: it holds them as records.
 */
function chartRows({ user, session }: StoredRows): { user: Columns<AdapterUser>; session: Columns<AdapterSession> } {
  return { user, session }
}

/**
 * Whether the chart holds the rows getSessionAndUser read. Only that effect's answer
 * ({@link chartRows}) writes `user` and `storedSession`, so rows it holds are the adapter's.
 */
function holdsStoredRows(context: Context): context is Context & { user: AdapterUser; storedSession: AdapterSession } {
  return context.user !== null && context.storedSession !== null
}

/**
 * The rows the chart kept from getSessionAndUser, as the adapter's types again.
 *
 * @throws {TypeError} when the chart holds none: it runs the database effects after that lookup only.
 */
function storedRowsOf(context: Context): StoredRows {
  if (!holdsStoredRows(context)) throw new TypeError('the session chart holds no stored session and user')
  return { session: context.storedSession, user: context.user }
}

/**
 * `account` with its refused refresh token dropped, so it is not replayed on every read. The token
 * is `null` (the empty column), not left out: an adapter's update keeps a field it is not given.
 * Auth.js's `AdapterAccount` has no empty refresh token (`string | undefined`): `null` is given the
 * field's type here, and nowhere else.
 */
function withRefreshTokenDropped(account: AdapterAccount): AdapterAccount {
  const emptyColumn = null as never
  return { ...account, refresh_token: emptyColumn }
}

/** The context the session effects receive: database sessions read, extend and end rows. */
type Env = FlowContext<'getSessionAndUser' | 'updateSession' | 'deleteSession'>

/** The session flow's effects. */
export const sessionEffects = effects<typeof sessionMachine, Env>(
  sessionChart,
  {
    decodeSessionToken(context, ctx) {
      const { value } = ctx.sessionCookie
      if (!value) return fail('missing')
      // The authority's own check (core/session/current.ts): past its absolute lifetime, signed out
      // everywhere or past exp is no session, the cookie cleared. Synchronous on the common path
      // (the built-in codec, keys derived, no store to ask); the closures below are made only when
      // something is pending.
      try {
        const read = readJwtSession(ctx, value)
        if (!(read instanceof Promise)) return decoded(read)
        return read.then(decoded, (error: unknown) => decodeFailed(ctx, context, error))
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
        return fail(reason)
      }
      if (!provider) return failed(new Error(`provider "${current.provider}" is not configured`), 'rejected')
      const { RefreshRejected, refreshAccessToken } = flowModule('oauth')
      try {
        const oauth = await refreshAccessToken(provider, current, ctx.at, ctx.config)
        return { token: { ...token, oauth } }
      } catch (error) {
        return failed(error, error instanceof RefreshRejected ? 'rejected' : 'threw')
      }
    },

    runJwtCallback(context, ctx) {
      const read = context.token as JWT
      const stamped = needsSignInTime(ctx, read)
      // A sign-in time given at a read proves no factor: such a token has proven none (an empty fva).
      const token = stamped ? { [FACTOR_VERIFICATION_CLAIM]: {}, ...read, [SIGN_IN_TIME_CLAIM]: ctx.at } : read
      // The built-in callback returns the token as it is: nothing to compare.
      const builtIn = !callbacksOf(ctx.config).jwt
      const before = builtIn ? '' : stableJson(token)
      const result = callback(ctx.config, 'jwt')({
        token,
        ...(context.request === 'update' ? { trigger: 'update' as const } : {}),
        session: context.data,
      })
      // A token an older secret sealed is sealed again under the first, like a changed one.
      const rotated = isSealedUnderOlderSecret(ctx, ctx.sessionCookie.value ?? '')
      const reseal = stamped || rotated === true
      // The built-in callback answers at once; an application's may be async.
      if (!isThenable(result) && !isThenable(rotated)) return jwtCallbackDone(ctx, token, builtIn, before, reseal, result)
      return Promise.all([result, rotated]).then(([refreshed, older]) =>
        jwtCallbackDone(ctx, token, builtIn, before, stamped || older, refreshed),
      )
    },

    runSessionCallback(context, ctx) {
      const token = context.token as JWT
      const session = {
        user: { name: token.name, email: token.email, image: token.picture as string | undefined },
        expires: isoTime(context.expires),
        // A failed built-in refresh is reported to the client, as Auth.js's rotation guide does.
        ...(token.error === 'RefreshTokenError' ? { error: 'RefreshTokenError' } : {}),
      }
      // Under the jwt strategy Auth.js passes exactly { session, token }; so do we.
      const result: unknown = callback(ctx.config, 'session')({ session, token } as never)
      if (!isThenable(result)) return { session: result }
      return Promise.resolve(result).then((resolved) => ({ session: resolved }))
    },

    async encodeSessionToken(context, ctx) {
      return { value: await encodeSessionToken(ctx, context.token as JWT) }
    },

    emitSessionEvent(context, ctx) {
      // Nothing to wait for when the application has no `session` event handler.
      if (!eventsOf(ctx.config).session) return null
      // Auth.js passes the token under the jwt strategy and only the session under database.
      return emitEvent(
        ctx,
        'session',
        (context.policy?.strategy === 'database'
          ? { session: context.session }
          : { session: context.session, token: context.token }) as never,
      ).then(() => null)
    },

    async emitSignOutEvent(context, ctx) {
      await emitEvent(
        ctx,
        'signOut',
        context.policy?.strategy === 'database'
          ? { session: context.session as AdapterSession | null | undefined }
          : { token: context.token as JWT },
      )
      return null
    },

    // A failure here is logged as SignOutError (the request is a sign-out): reportSessionFailure.
    async buildProviderLogout(context, ctx) {
      const oauthTokens =
        context.policy?.strategy === 'database'
          ? await linkedIdToken(ctx, context)
          : ((context.token as JWT).oauth as SessionOAuthTokens)
      // A user who signed in another way (credentials, another provider) has nothing to end there.
      if (!oauthTokens) return fail('notLinked')
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
      return { url: url.href }
    },

    async getSessionAndUser(_context, ctx) {
      const sessionToken = ctx.sessionCookie.value
      if (!sessionToken) return fail('missing')
      // The authority's own lookup (core/session/current.ts): the end is the row's expiry or its
      // absolute lifetime, whichever comes first; the chart's isSessionExpired compares it. With a
      // session cache, a live entry answers instead of the adapter (and a fresh one is minted).
      const found = await cachedStoredSession(ctx, sessionToken, true)
      if (!found) return fail('notFound')
      return {
        sessionToken,
        expires: found.expires,
        endsByLifetime: found.endsByLifetime,
        ...chartRows(found),
      }
    },

    async deleteExpiredSession(_context, ctx) {
      await ctx.adapter.deleteSession(ctx.sessionCookie.value)
      return null
    },

    async extendSession(context, ctx) {
      // The chart enters database.extendingSession only with the row it read remembered (storedSession).
      const createdAt = (context.storedSession as { createdAt?: Date | string }).createdAt
      // Never past the absolute lifetime, however active the session is.
      const expires = renewedExpiry(ctx.config, createdAt, ctx.at)
      const updated = await ctx.adapter.updateSession({
        sessionToken: context.sessionToken!,
        expires: new Date(expires * 1000),
      })
      // Adapters may return the row (use its expiry: the cookie must match it) or nothing.
      const extended = updated?.expires ? toSeconds(updated.expires) : expires
      // The cache entry carries the new expiry, or every later read would find the extension due.
      const { session, user } = storedRowsOf(context)
      await refreshSessionCache(ctx, context.sessionToken!, session, user, extended)
      return { expires: extended }
    },

    async refreshAccountTokens(context, ctx) {
      const { adapter } = ctx
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
            // The sealed key pair the account's tokens are bound to (DPoP): the refresh proves it.
            ...(typeof account.dpop_key === 'string' ? { dpop_key: account.dpop_key } : {}),
          }
          try {
            const fresh = await oauth.refreshAccessToken(provider, current, ctx.at, ctx.config)
            await storeAccountTokens(ctx, { ...account, ...fresh })
          } catch (error) {
            ctx.logger.error(new Error(`Refreshing the access token of "${account.provider}" failed`, { cause: error }))
            if (!(error instanceof oauth.RefreshRejected)) continue
            rejected = true
            // A refused refresh token is dropped so it is not replayed on every read.
            await storeAccountTokens(ctx, withRefreshTokenDropped(account))
          }
        }
      } catch (error) {
        // The session itself is fine: report the outage, serve the session.
        ctx.logger.error(new Error('Refreshing account tokens failed', { cause: error }))
      }
      return { rejected }
    },

    runDatabaseSessionCallback(context, ctx) {
      const { session: row, user } = storedRowsOf(context)
      // A failed built-in refresh is reported to the client, as with JWT sessions.
      const error = context.refreshError ? { error: 'RefreshTokenError' as const } : {}
      // The built-in callback reads only the user, the expiry and the error: it is given those. An
      // application's gets the row as the adapter returned it (its `id`, columns the application
      // added), as Auth.js passes it, with the expiry this read settled on.
      // Stryker disable next-line ConditionalExpression: eq#flows-session-built-in-database-callback
      const session = callbacksOf(ctx.config).session
        ? {
            ...row,
            sessionToken: context.sessionToken!,
            userId: user.id,
            expires: new Date(context.expires * 1000),
            ...error,
            user,
          }
        : { user, expires: isoTime(context.expires), ...error }
      const result: unknown = callback(ctx.config, 'session')({
        session,
        user,
        newSession: context.data,
        ...(context.request === 'update' ? { trigger: 'update' as const } : {}),
      } as never)
      // The built-in callback answers at once; an application's may be async.
      if (!isThenable(result)) return { session: result }
      return Promise.resolve(result).then((resolved) => ({ session: resolved }))
    },

    async deleteSession(_context, ctx) {
      const sessionToken = ctx.sessionCookie.value
      if (!sessionToken) return fail('missing')
      try {
        // First the marker that refuses a copy of this session's cache entry on every instance.
        await revokeCachedSessionTokens(ctx.config, [sessionToken], ctx.at)
        return { session: await ctx.adapter.deleteSession(sessionToken) }
      } catch (error) {
        ctx.logger.error(
          new SignOutError('The database session could not be deleted: it may stay live until it expires', error as Error),
        )
        return fail('threw')
      }
    },
  },
  reportSessionFailure,
)

/** The session flow definition. */
export const sessionFlow = defineCompiledFlow<typeof sessionMachine, RequestContext>({
  chart: sessionChart,
  context: SessionContext,
  effects: adapterView(sessionEffects),
})
