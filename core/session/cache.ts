/**
 * The session cache of database sessions (`session.cache: { maxAge }`, ours, off by default): the
 * stored session and its user, sealed in a short-lived cookie beside the session token
 * (`authjs.session-cache`, a JWE under a key of its own: the built-in codec with the cookie name as
 * salt), so that a read within `maxAge` of the last database read needs no round trip.
 *
 * What the cache may never do, and how it is kept from it:
 * - **Serve another session.** The sealed entry names the session token it was minted for (its
 *   public id, a hash); a cache cookie beside any other token is ignored and the adapter asked.
 * - **Outlive the session.** An entry lives until `maxAge` after its minting, never past the row's
 *   expiry or the absolute lifetime; `updateAge` extends the row exactly as without a cache (the
 *   entry carries the row's expiry, and the session chart compares it as it compares the row's).
 * - **Outlive a revocation.** Sign-out, sign-out everywhere, `revokeSession` and the `/sessions`
 *   forms, and a logout by the provider write a marker to the store (per session, per user, per
 *   provider session); so does a re-authentication (per session), whose proof the old copy lacks; every cached read asks the store for its markers in one round trip
 *   ({@link AuthStore.getMany}), and an entry minted no later than a marker is refused. With a
 *   shared store that holds on every instance at the next read; with the default in-memory store,
 *   on this instance (other instances learn it from the database within `maxAge`). A store that
 *   does not answer fails the read (503): a cached session is never served unchecked.
 *
 * Anything the entry cannot vouch for (unreadable, tampered, expired, foreign, revoked) is no
 * entry: the adapter is asked, as without a cache, and a fresh entry minted.
 *
 * @module
 */
import type { AdapterSession, AdapterUser, ProviderSession } from '../adapters.js'
import type { ResolvedConfig } from '../config/types.js'
import { clearChunkedCookie, MAX_CHUNKED_VALUE, readChunkedCookie, sessionCacheCookie, writeChunkedCookie } from '../cookies.js'
import { sha256Hex } from '../crypto.js'
import type { RequestContext } from '../http/context.js'
import { decodeNow, encode } from '../jwt.js'
import type { CookieOption } from '../shapes.js'
import type { AuthStore } from '../store/types.js'
import { sessionId } from './id.js'
import { storedSessionEnd } from './lifecycle.js'

/** A stored session with its user, and when it ends (as ./current.ts's `StoredSession`). */
export interface CachedSession {
  session: AdapterSession
  user: AdapterUser
  /** Epoch seconds: the row's `expires`, or its absolute lifetime when that comes first. */
  expires: number
  endsByLifetime: boolean
}

/**
 * Seconds of clock difference between instances that a not-before marker allows for: an entry
 * minted up to this long after a sign-out everywhere (by another instance's clock) is refused too.
 */
export const MARKER_CLOCK_SKEW = 5

/** The sealed entry (claims of the JWE, beside the codec's `iat`, `exp` and `jti`). */
interface Entry {
  /** Format version. */
  v: 1
  /** The public id of the session token it was minted for. */
  sid: string
  /** Minted at (epoch seconds). */
  mat: number
  /** Served until (epoch seconds, exclusive). */
  until: number
  /** When the session ends (epoch seconds) and whether that is its absolute lifetime. */
  end: number
  lt: boolean
  /** The store keys of the not-before markers that end it (user, provider session). */
  mk: string[]
  /** The row (without its token) and the user, dates tagged (see {@link tagDates}). */
  row: Record<string, unknown>
  user: Record<string, unknown>
}

const DATE_TAG = '$date'

/** `value` as JSON can carry it, each `Date` replaced by `{ $date: <ms> }` (restored by {@link restoreDates}). */
function tagDates(value: unknown, depth = 0): unknown {
  // Depth first, as restoreDates reads it: a date deeper than it restores stays JSON's string.
  if (typeof value !== 'object' || value === null || depth > 8) return value
  if (value instanceof Date) return { [DATE_TAG]: value.getTime() }
  if (Array.isArray(value)) return value.map((item) => tagDates(item, depth + 1))
  const out: Record<string, unknown> = {}
  // Stryker disable next-line ConditionalExpression: eq#session-cache-undefined-fields
  for (const [key, field] of Object.entries(value)) if (field !== undefined) out[key] = tagDates(field, depth + 1)
  return out
}

/** Whether `value` is a date as {@link tagDates} tags it: `{ $date: <ms> }` and nothing else. */
function isDateTag(value: object): value is { [DATE_TAG]: number } {
  const keys = Object.keys(value)
  // Stryker disable next-line ConditionalExpression: eq#session-cache-date-tag-key
  return keys.length === 1 && keys[0] === DATE_TAG && typeof (value as Record<string, unknown>)[DATE_TAG] === 'number'
}

/**
 * Restores, in place, the dates {@link tagDates} tagged below `container` (an object or array at
 * `depth`, freshly parsed from the entry: nothing else holds it, so nothing is copied).
 */
function restoreDates(container: Record<string, unknown> | unknown[], depth: number): void {
  // Depth first, as tagDates wrote it: a date deeper than it tags stays JSON's string.
  if (depth >= 8) return
  const record = container as Record<string, unknown>
  for (const key in record) {
    const field = record[key]
    // Stryker disable next-line ConditionalExpression: eq#session-cache-restore-primitive
    if (typeof field !== 'object' || field === null) continue
    if (!Array.isArray(field) && isDateTag(field)) record[key] = new Date(field[DATE_TAG])
    else restoreDates(field as Record<string, unknown>, depth + 1)
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const isSeconds = (value: unknown): value is number => Number.isFinite(value)

/** The claims as an entry, or `null` when they are not one (another format, another version). */
function entryOf(claims: unknown): Entry | null {
  // Stryker disable next-line ConditionalExpression: eq#session-cache-claims-object
  if (!isRecord(claims)) return null
  const { v, sid, mat, until, end, lt, mk, row, user } = claims
  if (v !== 1 || typeof sid !== 'string' || !isSeconds(mat) || !isSeconds(until) || !isSeconds(end)) return null
  if (typeof lt !== 'boolean' || !Array.isArray(mk) || !mk.every((key) => typeof key === 'string')) return null
  if (!isRecord(row) || !isRecord(user) || typeof user.id !== 'string') return null
  return claims as unknown as Entry
}

/** The public id computed last, with its token: a browser's reads repeat the same token. */
let lastBinding: { token: string; id: string } | undefined

/** The public id of `sessionToken` (./id.ts), remembered for the last token asked (then at once). */
function bindingOf(sessionToken: string): string | Promise<string> {
  const last = lastBinding
  // Stryker disable next-line ConditionalExpression: eq#session-cache-binding-memo
  if (last !== undefined && last.token === sessionToken) return last.id
  return sessionId(sessionToken).then((id) => {
    // Stryker disable next-line ObjectLiteral: eq#session-cache-binding-memo
    lastBinding = { token: sessionToken, id }
    return id
  })
}

/** The cache cookie of this request (its name follows the session token cookie). */
export function cacheCookie(ctx: RequestContext): CookieOption {
  return sessionCacheCookie(ctx.cookies.sessionToken)
}

/**
 * A marker key's hash. No secret in it: an entry carries the keys it was minted with, and they must
 * still be the keys a revocation writes after the secret is rotated.
 */
// Stryker disable next-line StringLiteral: eq#session-cache-marker-key-text
const keyHash = (...parts: string[]) => sha256Hex(['authchart-session-cache', ...parts].join('\u0000'))

/** The store key of the revocation marker of the session whose public id is `id`. */
const sessionMarkerKey = (id: string) => `session-cache:revoked:${id}`
/** The store key of the not-before marker of the session whose public id is `id` (re-authenticated). */
const proofMarkerKey = (id: string) => `session-cache:proven:${id}`
/** The store key of the not-before marker of every session of `userId` (sign-out everywhere). */
// Stryker disable next-line StringLiteral: eq#session-cache-marker-key-text
const userMarkerKey = async (userId: string) => `session-cache:user:${await keyHash('user', userId)}`
/** The store key of the not-before marker of the sessions signed in through a provider's session (`sid`) or subject (`sub`). */
const providerMarkerKey = async (provider: string, kind: 'sid' | 'sub', value: string) =>
  `session-cache:provider:${await keyHash(provider, kind, value)}`

/** How long a marker is kept: past it, every entry it could refuse has expired anyway. */
const markerLifetime = (config: ResolvedConfig) => config.session.cache!.maxAge + MARKER_CLOCK_SKEW + 1

/** The values under `keys`, in one round trip where the store can (else key by key, in parallel). */
function valuesOf(store: AuthStore, keys: readonly string[]): Promise<(string | null)[]> {
  return store.getMany ? store.getMany(keys) : Promise.all(keys.map((key) => store.get(key)))
}

/**
 * Whether the markers read for `entry` (its session's revocation marker, its session's proof
 * marker, then its not-before markers in `entry.mk`'s order) refuse it: its session was revoked,
 * re-authenticated, or its user signed out everywhere (or its provider session ended) no earlier
 * than it was minted.
 */
function isRevoked(entry: Entry, [revoked, ...notBefore]: readonly (string | null)[]): boolean {
  // The row of a revoked session is gone: no entry of it, whenever minted, vouches for anything.
  if (revoked !== null) return true
  // Stryker disable next-line ConditionalExpression: eq#session-cache-missing-marker
  return notBefore.some((time) => time !== null && entry.mat <= Number(time) + MARKER_CLOCK_SKEW)
}

/**
 * The cached session of `sessionToken`, or `null` when there is no entry that may be served: no
 * cache configured or no cookie, an unreadable or tampered one, one past its time, one minted for
 * another session, or one a revocation marker refuses. The caller asks the adapter then.
 *
 * @throws the store's `ServiceUnavailable` when the markers cannot be read (fail closed).
 */
export async function readSessionCache(ctx: RequestContext, sessionToken: string): Promise<CachedSession | null> {
  const option = cacheCookie(ctx)
  const { value } = readChunkedCookie(ctx.request.cookies, option.name)
  if (!value) return null
  let claims: unknown
  try {
    const decoded = decodeNow({ token: value, secret: ctx.config.secrets as unknown as string[], salt: option.name })
    claims = decoded instanceof Promise ? await decoded : decoded
  } catch (error) {
    // Tampered, truncated, or sealed with a secret no longer configured: ignored, never trusted.
    // Stryker disable next-line OptionalChaining: eq#session-cache-error-name
    ctx.logger.debug('session-cache-refused', { reason: 'unreadable', error: (error as Error)?.name })
    return null
  }
  const entry = entryOf(claims)
  if (!entry) {
    ctx.logger.debug('session-cache-refused', { reason: 'malformed' })
    return null
  }
  if (entry.until <= ctx.at) return null
  const binding = bindingOf(sessionToken)
  // Stryker disable next-line ConditionalExpression,StringLiteral: eq#session-cache-binding-await
  if (entry.sid !== (typeof binding === 'string' ? binding : await binding)) {
    // Minted for another session (another user's, or this browser's before a new sign-in).
    ctx.logger.debug('session-cache-refused', { reason: 'foreign' })
    return null
  }
  if (isRevoked(entry, await valuesOf(ctx.config.store, [sessionMarkerKey(entry.sid), proofMarkerKey(entry.sid), ...entry.mk]))) {
    ctx.logger.debug('session-cache-refused', { reason: 'revoked' })
    return null
  }
  // The entry was parsed for this read alone: its row and user are restored in place.
  const { row, user } = entry
  restoreDates(row, 0)
  restoreDates(user, 0)
  row.sessionToken = sessionToken
  return {
    session: row as unknown as AdapterSession,
    user: user as unknown as AdapterUser,
    expires: entry.end,
    endsByLifetime: entry.lt,
  }
}

/** The not-before marker keys an entry of `session` is checked against. */
async function markerKeysOf(session: AdapterSession, userId: string): Promise<string[]> {
  const keys = [await userMarkerKey(userId)]
  const provider = session.providerSession as ProviderSession | undefined
  // Stryker disable next-line ConditionalExpression: eq#session-cache-provider-session-parts
  if (provider && typeof provider.provider === 'string') {
    // Stryker disable next-line ConditionalExpression: eq#session-cache-provider-session-parts
    if (typeof provider.sid === 'string') keys.push(await providerMarkerKey(provider.provider, 'sid', provider.sid))
    // Stryker disable next-line ConditionalExpression: eq#session-cache-provider-session-parts
    if (typeof provider.sub === 'string') keys.push(await providerMarkerKey(provider.provider, 'sub', provider.sub))
  }
  return keys
}

/** The response's cookies without any cache cookie written earlier in this request. */
function withoutCacheCookies(ctx: RequestContext, name: string): void {
  for (let i = ctx.setCookies.length - 1; i >= 0; i--) {
    const cookie = ctx.setCookies[i]!
    if (cookie.name === name || cookie.name.startsWith(`${name}.`)) ctx.setCookies.splice(i, 1)
  }
}

/**
 * Mints the cache entry of `stored` (just read from the adapter, or just extended) and sets its
 * cookie: served until `maxAge` from now, never past the session's end. Nothing is minted for a
 * session that ends within the second, or one too large for the cookie chunks a request carries.
 */
export async function writeSessionCache(ctx: RequestContext, sessionToken: string, stored: CachedSession): Promise<void> {
  const cache = ctx.config.session.cache
  if (!cache) return
  const until = Math.min(ctx.at + cache.maxAge, stored.expires)
  if (until <= ctx.at) return
  const { sessionToken: _token, ...row } = stored.session
  const entry: Entry = {
    v: 1,
    sid: await bindingOf(sessionToken),
    mat: ctx.at,
    until,
    end: stored.expires,
    lt: stored.endsByLifetime,
    mk: await markerKeysOf(stored.session, String(stored.user.id)),
    row: tagDates(row) as Record<string, unknown>,
    user: tagDates({ ...stored.user, id: String(stored.user.id) }) as Record<string, unknown>,
  }
  const option = cacheCookie(ctx)
  const value = await encode({ token: entry as never, secret: ctx.config.secrets[0], salt: option.name, maxAge: until - ctx.at })
  // Stryker disable next-line EqualityOperator: eq#session-cache-max-length
  if (value.length > MAX_CHUNKED_VALUE) {
    ctx.logger.debug('session-cache-skipped', { reason: 'too large', valueSize: value.length })
    return
  }
  withoutCacheCookies(ctx, option.name)
  const { names } = readChunkedCookie(ctx.request.cookies, option.name)
  ctx.setCookies.push(...writeChunkedCookie(option, value, new Date(until * 1000), names))
}

/**
 * Mints the entry again after the session was extended to `expires` (epoch seconds): the entry
 * must carry the row's new expiry, or every later read would find the extension still due.
 */
export async function refreshSessionCache(
  ctx: RequestContext,
  sessionToken: string,
  session: AdapterSession,
  user: AdapterUser,
  expires: number,
): Promise<void> {
  // Stryker disable next-line ConditionalExpression: eq#session-cache-early-return
  if (!ctx.config.session.cache) return
  const extended = { ...session, expires: new Date(expires * 1000) }
  await writeSessionCache(ctx, sessionToken, { session: extended, user, ...storedSessionEnd(ctx.config, extended) })
}

/** Deletes this browser's cache cookie (every chunk it sent), and any written earlier in this response. */
export function clearSessionCache(ctx: RequestContext): void {
  const option = cacheCookie(ctx)
  withoutCacheCookies(ctx, option.name)
  const { names } = readChunkedCookie(ctx.request.cookies, option.name)
  // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#session-cache-clear-nothing
  if (names.length > 0) ctx.setCookies.push(...clearChunkedCookie(option, names))
}

/**
 * Refuses every cache entry of the sessions named by their public ids (`ids`, see ./id.ts), on
 * every instance sharing the store: a revoked session's entry replayed later is not served. Does
 * nothing without a session cache.
 *
 * @throws the store's `ServiceUnavailable` when it does not answer.
 */
export async function revokeCachedSessions(config: ResolvedConfig, ids: readonly string[], at: number): Promise<void> {
  // Stryker disable next-line ConditionalExpression: eq#session-cache-early-return
  if (!config.session.cache || ids.length === 0) return
  await Promise.all(ids.map((id) => config.store.put(sessionMarkerKey(id), String(at), markerLifetime(config))))
}

/** {@link revokeCachedSessions} for sessions named by their tokens. */
export async function revokeCachedSessionTokens(config: ResolvedConfig, tokens: readonly string[], at: number): Promise<void> {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: eq#session-cache-early-return
  if (!config.session.cache || tokens.length === 0) return
  await revokeCachedSessions(config, await Promise.all(tokens.map(sessionId)), at)
}

/**
 * After the session of `sessionToken` was re-authenticated (its row now carries the new proof
 * time): clears this browser's cached copy in the answer, and refuses every entry of the session
 * minted up to now on every instance sharing the store, as a revocation does. Without it the
 * action the proof resumes would read the copy from before the proof, and ask for the proof again
 * until that copy expired. Does nothing without a session cache.
 *
 * @throws the store's `ServiceUnavailable` when it does not answer.
 */
export async function refreshCachedSessionAfterProof(ctx: RequestContext, sessionToken: string): Promise<void> {
  // Stryker disable next-line ConditionalExpression: eq#session-cache-early-return
  if (!ctx.config.session.cache) return
  await ctx.config.store.put(proofMarkerKey(await sessionId(sessionToken)), String(ctx.at), markerLifetime(ctx.config))
  clearSessionCache(ctx)
}

/**
 * Refuses every cache entry of `userId` minted up to `at` (sign-out everywhere), on every instance
 * sharing the store. Does nothing without a session cache.
 *
 * @throws the store's `ServiceUnavailable` when it does not answer.
 */
export async function revokeCachedSessionsOf(config: ResolvedConfig, userId: string, at: number): Promise<void> {
  if (!config.session.cache) return
  await config.store.put(await userMarkerKey(userId), String(at), markerLifetime(config))
}

/**
 * Refuses every cache entry of a session signed in through `provider`'s session `sid` or, with
 * only `sub`, through any session of that subject there, minted up to `at` (logout by the
 * provider, when the adapter deleted the rows by their provider session). Does nothing without a
 * session cache.
 *
 * @throws the store's `ServiceUnavailable` when it does not answer.
 */
export async function revokeCachedProviderSessions(
  config: ResolvedConfig,
  provider: string,
  { sid, sub }: { sid: string | null; sub: string | null },
  at: number,
): Promise<void> {
  if (!config.session.cache) return
  const key = sid !== null ? await providerMarkerKey(provider, 'sid', sid) : sub !== null ? await providerMarkerKey(provider, 'sub', sub) : null
  if (key) await config.store.put(key, String(at), markerLifetime(config))
}
