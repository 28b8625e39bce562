/**
 * A user's sessions, for the application and for the `/sessions` routes (OWASP ASVS 5.0 V7.4,
 * V7.5): list them (signed in, last seen, user agent), revoke one, revoke every other, revoke all.
 * Database sessions are rows, listed and deleted through the adapter (`listSessions`, ours).
 * JWT sessions live in cookies only: revoking all of them is a per-user not-before time in the
 * configured store (see ./lifecycle.ts); one JWT session cannot be revoked alone.
 *
 * A session is named by a public id, a hash of its token: the token itself never leaves the cookie.
 *
 * @module
 */
import type { AdapterSession } from '../adapters.js'
import { assertConfig, type ResolvedConfig } from '../config/resolve-config.js'
import { expiredCookie } from '../cookies.js'
import type { RequestContext } from '../http/context.js'
import { notifyLifecycle } from '../observe/notify.js'
import { JSON_NO_STORE_HEADERS } from '../http/handlers.js'
import type { AuthConfig, ResponseInternal } from '../types.js'
import { clearSessionCache, revokeCachedSessions, revokeCachedSessionsOf, revokeCachedSessionTokens } from './cache.js'
import { currentSession } from './current.js'
import { sessionId } from './id.js'
import { endJwtSessionsOf } from './lifecycle.js'

/** One of a user's sessions, as listed (never its token). */
export interface SessionInfo {
  /** Names the session for {@link revokeSession}: a hash of its token. */
  id: string
  /** When it was signed in (ISO 8601), if known. */
  createdAt: string | null
  /** When it was last extended (ISO 8601; moves at most once per `updateAge`), if known. */
  lastSeenAt: string | null
  userAgent: string | null
  /** When it expires if left idle (ISO 8601). */
  expires: string
  /** Whether it is the session of the request that asked. */
  current: boolean
}

export { sessionId }

const nowSeconds = () => Math.floor(Date.now() / 1000)

const iso = (value: Date | string | undefined | null) => (value ? new Date(value).toISOString() : null)

function databaseAdapter(config: ResolvedConfig) {
  const adapter = config.adapter
  // Stryker disable next-line OptionalChaining: eq#sessions-adapter-present
  if (config.session.strategy !== 'database' || !adapter?.listSessions || !adapter.deleteSession) {
    throw new TypeError('listing and revoking single sessions needs database sessions and an adapter with listSessions')
  }
  return adapter as typeof adapter & Required<Pick<typeof adapter, 'listSessions' | 'deleteSession'>>
}

async function describe(session: AdapterSession, currentToken: string | undefined): Promise<SessionInfo> {
  return {
    id: await sessionId(session.sessionToken),
    createdAt: iso(session.createdAt),
    lastSeenAt: iso(session.lastSeenAt),
    userAgent: session.userAgent ?? null,
    expires: iso(session.expires)!,
    current: session.sessionToken === currentToken,
  }
}

/**
 * Lists the database sessions of `userId`, oldest first.
 *
 * @throws {TypeError} without database sessions or an adapter that lists them.
 */
export async function listSessions(config: AuthConfig, userId: string, currentToken?: string): Promise<SessionInfo[]> {
  const sessions = await databaseAdapter(assertConfig(config)).listSessions(userId)
  return Promise.all(sessions.map((session) => describe(session, currentToken)))
}

/**
 * Revokes the database session `id` of `userId` (an id of another user's session revokes
 * nothing). Returns whether one was revoked.
 *
 * @throws {TypeError} without database sessions or an adapter that lists them.
 */
export async function revokeSession(config: AuthConfig, userId: string, id: string): Promise<boolean> {
  const resolved = assertConfig(config)
  const adapter = databaseAdapter(resolved)
  for (const session of await adapter.listSessions(userId)) {
    if ((await sessionId(session.sessionToken)) === id) {
      await revokeCachedSessions(resolved, [id], nowSeconds())
      await adapter.deleteSession(session.sessionToken)
      return true
    }
  }
  return false
}

/**
 * Revokes every database session of `userId` but the one whose token is `keepToken`. Returns how
 * many were revoked.
 *
 * @throws {TypeError} without database sessions or an adapter that lists them.
 */
export async function revokeOtherSessions(config: AuthConfig, userId: string, keepToken: string): Promise<number> {
  const resolved = assertConfig(config)
  const adapter = databaseAdapter(resolved)
  const others = (await adapter.listSessions(userId)).filter((s) => s.sessionToken !== keepToken)
  await revokeCachedSessionTokens(resolved, others.map((session) => session.sessionToken), nowSeconds())
  await Promise.all(others.map((session) => adapter.deleteSession(session.sessionToken)))
  return others.length
}

/**
 * Signs `userId` out everywhere: deletes every database session, or, with JWT sessions, ends every
 * session signed in until now on every instance sharing the configured store.
 *
 * @throws {TypeError} for database sessions without an adapter that lists them, or for JWT sessions
 *   without a configured `store`.
 */
export async function revokeAllSessions(config: AuthConfig, userId: string, at = nowSeconds()): Promise<void> {
  const resolved = assertConfig(config)
  if (resolved.session.strategy === 'jwt') return endJwtSessionsOf(resolved, userId, at)
  const adapter = databaseAdapter(resolved)
  await revokeCachedSessionsOf(resolved, userId, at)
  const sessions = await adapter.listSessions(userId)
  await Promise.all(sessions.map((session) => adapter.deleteSession(session.sessionToken)))
}

/** The signed-in user of the request (decided by the one authority) and their session token. */
async function signedInSession(ctx: RequestContext): Promise<{ userId: string; token: string; signedInAt?: number } | null> {
  const current = await currentSession(ctx)
  if (!current) return null
  // Stryker disable next-line ConditionalExpression: eq#sessions-signed-in-at
  const signedInAt = current.strategy === 'jwt' ? current.signedInAt : undefined
  // Stryker disable next-line ConditionalExpression: eq#sessions-signed-in-at
  return { userId: current.user.id, token: current.value, ...(signedInAt !== undefined ? { signedInAt } : {}) }
}

/** Database sessions can be listed only through an adapter with `listSessions` (logged when not). */
function canManageRows(ctx: RequestContext): boolean {
  // Stryker disable next-line OptionalChaining: eq#sessions-adapter-present
  if (ctx.config.session.strategy === 'jwt' || ctx.config.adapter?.listSessions) return true
  ctx.logger.error(new TypeError('the adapter has no listSessions: database sessions cannot be listed or revoked'))
  return false
}

const json = (body: unknown, status?: number): ResponseInternal => ({
  // Stryker disable next-line ConditionalExpression: eq#sessions-default-status
  ...(status !== undefined ? { status } : {}),
  headers: JSON_NO_STORE_HEADERS,
  body,
})

/**
 * GET `{basePath}/sessions`: the signed-in user's sessions (JSON). Database sessions: every one of
 * the user's; a JWT session: itself only (the others live in other browsers' cookies). 401 with
 * `null` without a session.
 */
export async function respondSessions(ctx: RequestContext): Promise<ResponseInternal> {
  const current = await signedInSession(ctx)
  if (!current) return json(null, 401)
  if (!canManageRows(ctx)) return json(null, 400)
  if (ctx.config.session.strategy === 'jwt') {
    return json([
      {
        id: await sessionId(current.token),
        createdAt: current.signedInAt === undefined ? null : new Date(current.signedInAt * 1000).toISOString(),
        lastSeenAt: null,
        userAgent: null,
        expires: null,
        current: true,
      },
    ])
  }
  const adapter = databaseAdapter(ctx.config)
  const sessions = await adapter.listSessions(current.userId)
  return json(await Promise.all(sessions.map((session) => describe(session, current.token))))
}

/**
 * POST `{basePath}/sessions` (CSRF-checked) with `revoke`: `one` (and the session's `id`),
 * `others` or `all`. Answers `{ revoked }` (JSON); `all` also clears this browser's session
 * cookie. 401 with `null` without a session, 400 for a request the strategy cannot serve.
 */
export async function revokeSessions(ctx: RequestContext): Promise<ResponseInternal> {
  const current = await signedInSession(ctx)
  if (!current) return json(null, 401)
  if (!canManageRows(ctx)) return json(null, 400)
  const body = ctx.request.body ?? {}
  const { strategy } = ctx.config.session
  switch (body.revoke) {
    case 'all': {
      if (strategy === 'jwt') {
        // Stryker disable next-line ConditionalExpression,BlockStatement: eq#sessions-store-check
        if (!ctx.config.sharedStore) {
          ctx.logger.error(new TypeError('signing out everywhere with JWT sessions needs a `store` in the config'))
          return json(null, 400)
        }
        await endJwtSessionsOf(ctx.config, current.userId, ctx.at)
      } else {
        const adapter = databaseAdapter(ctx.config)
        await revokeCachedSessionsOf(ctx.config, current.userId, ctx.at)
        const sessions = await adapter.listSessions(current.userId)
        await Promise.all(sessions.map((session) => adapter.deleteSession(session.sessionToken)))
      }
      ctx.setCookies.push(...ctx.sessionCookie.names.map((name) => expiredCookie(ctx.cookies.sessionToken, name)))
      clearSessionCache(ctx)
      // Stryker disable next-line ConditionalExpression: eq#sessions-audit-note
      if (ctx.config.observers.length > 0) notifyLifecycle(ctx, 'sign-out-everywhere', { userId: current.userId })
      return { ...json({ revoked: 'all' }), cookies: ctx.setCookies }
    }
    case 'others': {
      if (strategy === 'jwt') return json(null, 400)
      const adapter = databaseAdapter(ctx.config)
      const others = (await adapter.listSessions(current.userId)).filter((s) => s.sessionToken !== current.token)
      await revokeCachedSessionTokens(ctx.config, others.map((session) => session.sessionToken), ctx.at)
      await Promise.all(others.map((session) => adapter.deleteSession(session.sessionToken)))
      if (ctx.config.observers.length > 0 && others.length > 0) notifyLifecycle(ctx, 'session-revoked', { userId: current.userId })
      return json({ revoked: others.length })
    }
    case 'one': {
      if (strategy === 'jwt' || typeof body.id !== 'string') return json(null, 400)
      const adapter = databaseAdapter(ctx.config)
      for (const session of await adapter.listSessions(current.userId)) {
        if ((await sessionId(session.sessionToken)) === body.id) {
          await revokeCachedSessions(ctx.config, [body.id], ctx.at)
          await adapter.deleteSession(session.sessionToken)
          // Stryker disable next-line ConditionalExpression: eq#sessions-audit-note
          if (ctx.config.observers.length > 0) notifyLifecycle(ctx, 'session-revoked', { userId: current.userId })
          return json({ revoked: 1 })
        }
      }
      return json({ revoked: 0 })
    }
    default:
      return json(null, 400)
  }
}
