/**
 * The one authority for "who is signed in". Every path that acts for the signed-in user — the
 * session route, passkey registration, account linking, `/sessions`, `/two-factor` and a second
 * factor's enrolment, an e-mail sign-in replacing another user's session — reads the session here, with the session route's checks and no others: decryption and
 * signature, `exp`, the absolute lifetime under both strategies, the not-before time of "sign out
 * everywhere", a stored row's `expires`. A session the session route would refuse acts for no one.
 *
 * The session route keeps its own chart (it also logs, reissues and deletes), but reads through
 * {@link liveJwtSession} and {@link storedSession} below, so the two cannot drift apart. Routes that
 * act for the user carry the `actsForUser` flag in the routing table; a test runs each of them with
 * a dead session.
 *
 * @module
 */
import { isSessionOver, type SessionEndReason } from '../../machines/session.logic.js'
import type { AdapterSession, AdapterUser } from '../adapters.js'
import type { RequestContext } from '../http/context.js'
import type { JWT } from '../jwt.js'
import { outageOf } from '../outage.js'
import { readSessionCache, writeSessionCache } from './cache.js'
import { isJwtSessionEnded, signInTimeOf, storedSessionEnd } from './lifecycle.js'
import { decodeSessionTokenNow } from './token.js'

/** The signed-in user, as much of them as the session tells. */
export interface SignedInUser {
  id: string
  email: string | null
  name: string | null
}

/** The request's live session, as the authority decided it. */
export type CurrentSession =
  | {
      strategy: 'jwt'
      user: SignedInUser
      /** The session cookie's value. */
      value: string
      token: JWT
      /** The sign-in time the token carries (`auth_time`), if any. */
      signedInAt: number | undefined
    }
  | {
      strategy: 'database'
      user: SignedInUser
      /** The session cookie's value: the session token. */
      value: string
      session: AdapterSession
      /** The stored user, as the adapter returned it. */
      stored: AdapterUser
      /** When the session ends (epoch seconds): its idle expiry or absolute lifetime. */
      expires: number
    }

/** A decoded JWT's session: the token while it is live, else why it ended. */
function tokenOrEnd(ctx: RequestContext, token: JWT | null): JWT | SessionEndReason | Promise<JWT | SessionEndReason> {
  if (!token || typeof token !== 'object') throw new Error('Invalid JWT')
  const ended = isJwtSessionEnded(ctx.config, token, ctx.at)
  return ended instanceof Promise ? ended.then((e) => e || token) : ended || token
}

/**
 * Decodes the session JWT `value` and checks its session: the token when it is live, or why it
 * has ended on the server's side (a {@link SessionEndReason}: `exp`, absolute lifetime, sign-out
 * everywhere, the provider's logout). Synchronous when the built-in codec can answer at once and
 * no store is asked (the session read's common path).
 *
 * @throws (or rejects) when the token cannot be read: tampered, expired for the decoder, sealed
 *   with an unknown secret, or empty once decoded.
 */
export function readJwtSession(ctx: RequestContext, value: string): JWT | SessionEndReason | Promise<JWT | SessionEndReason> {
  const token = decodeSessionTokenNow(ctx, value)
  return token instanceof Promise ? token.then((t) => tokenOrEnd(ctx, t)) : tokenOrEnd(ctx, token)
}

const liveOnly = (read: JWT | SessionEndReason): JWT | null => (typeof read === 'string' ? null : read)

/**
 * {@link readJwtSession}'s verdict without the reason: the token when its session is live, `null`
 * when it has ended.
 *
 * @throws (or rejects) as {@link readJwtSession}.
 */
export function liveJwtSession(ctx: RequestContext, value: string): JWT | null | Promise<JWT | null> {
  const read = readJwtSession(ctx, value)
  return read instanceof Promise ? read.then(liveOnly) : liveOnly(read)
}

/** A stored session with its user, and the second it ends. */
export interface StoredSession {
  session: AdapterSession
  user: AdapterUser
  /** Epoch seconds: the row's `expires`, or its absolute lifetime when that comes first. */
  expires: number
  /** Whether {@link StoredSession.expires} is the absolute lifetime's end. */
  endsByLifetime: boolean
}

/**
 * Looks the database session `sessionToken` up with its user, and when it ends; `null` when no
 * row has that token. Whether it is over at a given time is {@link isSessionOver}'s to say.
 *
 * @throws the adapter's error (an outage), or `TypeError` when the row's expiry is not a date.
 */
export async function storedSession(ctx: RequestContext, sessionToken: string): Promise<StoredSession | null> {
  // Stryker disable next-line OptionalChaining: eq#session-current-1
  const found = await ctx.config.adapter?.getSessionAndUser?.(sessionToken)
  if (!found) return null
  return { session: found.session, user: found.user, ...storedSessionEnd(ctx.config, found.session) }
}

/**
 * {@link storedSession} through the session cache (`session.cache`): an entry the cache may serve
 * (./cache.ts: bound to this token, in its time, no revocation marker) answers without the adapter;
 * otherwise the adapter is asked and, with `mint`, a live session's entry is minted for the next
 * reads. Without a cache, exactly {@link storedSession}.
 *
 * @throws the adapter's error, or the store's `ServiceUnavailable` when the revocation markers
 *   cannot be read (a cached session is never served unchecked).
 */
export async function cachedStoredSession(ctx: RequestContext, sessionToken: string, mint: boolean): Promise<StoredSession | null> {
  if (!ctx.config.session.cache) return storedSession(ctx, sessionToken)
  const cached = await readSessionCache(ctx, sessionToken)
  if (cached) return cached
  const stored = await storedSession(ctx, sessionToken)
  if (mint && stored && !isSessionOver(stored.expires, ctx.at)) await writeSessionCache(ctx, sessionToken, stored)
  return stored
}

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null)

async function readCurrentSession(ctx: RequestContext, value: string): Promise<CurrentSession | null> {
  if (ctx.config.session.strategy === 'jwt') {
    const token = await liveJwtSession(ctx, value)
    // A token names a user only by a subject (sign-out everywhere is keyed by it too).
    if (!token || typeof token.sub !== 'string' || token.sub === '') return null
    return {
      strategy: 'jwt',
      user: { id: token.sub, email: stringOrNull(token.email), name: stringOrNull(token.name) },
      value,
      token,
      signedInAt: signInTimeOf(token),
    }
  }
  // A route acting for the user trusts a cache entry only where every revocation reaches its
  // markers at once (a shared store); with the in-memory default it asks the database.
  const stored = ctx.config.sharedStore ? await cachedStoredSession(ctx, value, false) : await storedSession(ctx, value)
  if (!stored || isSessionOver(stored.expires, ctx.at)) return null
  return {
    strategy: 'database',
    user: { id: String(stored.user.id), email: stored.user.email ?? null, name: stored.user.name ?? null },
    value,
    session: stored.session,
    stored: stored.user,
    expires: stored.expires,
  }
}

/**
 * The request's live session, or `null`: no session cookie, one that cannot be read, or one the
 * session route would refuse.
 *
 * @throws {ServiceUnavailable} when the adapter is unavailable (it logs the outage itself).
 */
export async function currentSession(ctx: RequestContext): Promise<CurrentSession | null> {
  const { value } = ctx.sessionCookie
  // Stryker disable next-line ConditionalExpression: eq#session-current-2
  if (!value) return null
  try {
    return await readCurrentSession(ctx, value)
  } catch (error) {
    // Fail closed and say so: while the database is down nobody can be told apart, and a user who
    // is signed in must not be answered as signed out (the request is answered 503).
    if (outageOf(error)) throw error
    // A session that cannot be read is no session (as the session route treats it); the reason
    // is the error's class only: a decoder's message may quote the token.
    ctx.logger.debug('session-unreadable', { error: (error as Error)?.name })
    return null
  }
}

/** The user the request's live session belongs to, or `null` (see {@link currentSession}). */
export async function signedInUser(ctx: RequestContext): Promise<SignedInUser | null> {
  return (await currentSession(ctx))?.user ?? null
}

/**
 * The stored user the request's live session belongs to (to link a new account or passkey to
 * them), or `null`: the database session's user, or the JWT subject through `getUser`. Decided by
 * {@link currentSession}; an unknown subject or a failing lookup is no one.
 */
export async function signedInAdapterUser(ctx: RequestContext): Promise<AdapterUser | null> {
  const current = await currentSession(ctx)
  if (!current) return null
  if (current.strategy === 'database') return current.stored
  try {
    // Stryker disable next-line OptionalChaining: eq#session-current-3
    return (await ctx.config.adapter!.getUser?.(current.user.id)) ?? null
  } catch (error) {
    if (outageOf(error)) throw error
    return null
  }
}
