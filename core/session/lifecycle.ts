/**
 * Session lifecycle beyond one request (OWASP ASVS 5.0 V7): an absolute lifetime beside the idle
 * `maxAge`, and "sign out everywhere". A JWT carries its sign-in time (`auth_time`, seconds, as in
 * OpenID Connect); a database row its `createdAt`. A sign-out everywhere keeps a per-user
 * not-before time in the store, and a logout by the provider (back- or front-channel) one per
 * provider session (`sid`), which a session read consults only when the config names a store: the
 * default read stays free of I/O.
 *
 * These are the checks of "is this session still live"; the one authority that applies them to a
 * request is ./current.ts.
 *
 * @module
 */
import type { SessionEndReason } from '../../machines/session.machine.js'
import type { AdapterSession } from '../adapters.js'
import { sha256Hex } from '../crypto.js'
import type { ResolvedConfig } from '../config/types.js'
import type { JWT } from '../jwt.js'

/** The JWT claim holding the sign-in time (epoch seconds); the engine keeps it across reissues. */
export const SIGN_IN_TIME_CLAIM = 'auth_time'

/** Seconds a JWT is still accepted after its `exp`: the built-in decoder's (and Auth.js's) clock tolerance. */
const EXP_TOLERANCE = 15

/** `value` when it is a finite number (Number.isFinite coerces nothing, unlike isFinite). */
const finite = (value: unknown): number | undefined => (Number.isFinite(value) ? (value as number) : undefined)

/**
 * The sign-in time a JWT carries (its `auth_time`); `undefined` for a token without one: issued
 * before an absolute lifetime or a store was configured, or by Auth.js.
 */
export function signInTimeOf(token: JWT): number | undefined {
  return finite(token[SIGN_IN_TIME_CLAIM])
}

/**
 * Whether anything is measured from a session's sign-in time under `config`: an absolute
 * lifetime, or sign-out everywhere through a configured store. Only then does a JWT carry one.
 */
export function measuresSignInTime(config: ResolvedConfig): boolean {
  return config.session.absoluteMaxAge !== null || config.sharedStore
}

/**
 * The JWT claim naming the provider session a token was signed in with: the OpenID Connect `sid` of
 * the ID token, written only when the provider sent one (with {@link PROVIDER_CLAIM}).
 */
export const PROVIDER_SESSION_CLAIM = 'sid'
/** The JWT claim naming the provider (its id in our config) whose session {@link PROVIDER_SESSION_CLAIM} is. */
export const PROVIDER_CLAIM = 'idp'

const notBeforeKey = async (config: ResolvedConfig, userId: string) =>
  `session:not-before:${await sha256Hex(`${userId}\u0000${config.secrets[0]}`)}`

/**
 * The store key of the not-before time of the sessions signed in through provider session `sid`
 * of `provider` (a back- or front-channel logout ends them).
 */
export const providerSessionNotBeforeKey = async (config: ResolvedConfig, provider: string, sid: string) =>
  `session:sid-not-before:${await sha256Hex(`${provider}\u0000${sid}\u0000${config.secrets[0]}`)}`

/** The provider session a JWT names (its `idp` and `sid` claims), if any. */
export function providerSessionOfToken(token: JWT): { provider: string; sid: string } | undefined {
  const provider = token[PROVIDER_CLAIM]
  const sid = token[PROVIDER_SESSION_CLAIM]
  return typeof provider === 'string' && typeof sid === 'string' ? { provider, sid } : undefined
}

/**
 * Whether a decoded JWT session has ended on the server's side at `at`, and why (`false` while it
 * is live):
 * - `'expired'`: past its `exp` (the built-in decoder refuses such a token already; an
 *   application's may not);
 * - `'absolute-lifetime'`: past its absolute lifetime, counted from its `auth_time`. A token
 *   without one starts that clock at this read: the session route writes `at` into the token it
 *   reissues, so the clock runs from then on (re-stamping the issue time on every reissue would
 *   never reach the lifetime);
 * - `'signed-out-everywhere'`, `'provider-logout'`: signed in no later than the user's last
 *   sign-out everywhere, or the provider's logout of the provider session it names (both checked
 *   only with a configured store). A token without a sign-in time is measured by its `iat`: the
 *   session existed then.
 */
export function isJwtSessionEnded(
  config: ResolvedConfig,
  token: JWT,
  at: number,
): false | SessionEndReason | Promise<false | SessionEndReason> {
  // A token without an expiry of its own is held to none here (the session route reissues it).
  if ((finite(token.exp) ?? Infinity) <= at - EXP_TOLERANCE) return 'expired'
  const signedInAt = signInTimeOf(token)
  const { absoluteMaxAge } = config.session
  // Without a sign-in time, the clock starts at this read.
  if (absoluteMaxAge !== null && (signedInAt ?? at) + absoluteMaxAge <= at) return 'absolute-lifetime'
  if (!config.sharedStore || typeof token.sub !== 'string') return false
  const since = signedInAt ?? finite(token.iat)
  if (since === undefined) return false
  return endedInStore(config, token, token.sub, since)
}

/**
 * Whether the user's last sign-out everywhere (checked first), or the end of the provider session
 * the token was signed in with (back- or front-channel logout), came at or after `signedInAt`.
 */
async function endedInStore(
  config: ResolvedConfig,
  token: JWT,
  sub: string,
  signedInAt: number,
): Promise<false | SessionEndReason> {
  const providerSession = providerSessionOfToken(token)
  const [userNotBefore, sessionNotBefore] = await Promise.all([
    notBeforeKey(config, sub).then((key) => config.store.get(key)),
    providerSession ? providerSessionNotBeforeKey(config, providerSession.provider, providerSession.sid).then((key) => config.store.get(key)) : null,
  ])
  // A session signed in during the very second of the sign-out everywhere ends too.
  const endedBy = (notBefore: string | null) => notBefore !== null && signedInAt <= Number(notBefore)
  if (endedBy(userNotBefore)) return 'signed-out-everywhere'
  return endedBy(sessionNotBefore) ? 'provider-logout' : false
}

/**
 * Ends every JWT session of `userId` signed in up to `at` (epoch seconds), on every instance that
 * shares the configured store. Kept for `maxAge` (or the absolute lifetime, if longer): a token
 * older than that has expired anyway, since no read reissues a token that has ended.
 *
 * @throws {TypeError} when the config names no store: with the in-memory default the sign-out
 *   would hold on one instance only, and session reads do not consult it.
 */
export async function endJwtSessionsOf(config: ResolvedConfig, userId: string, at: number): Promise<void> {
  if (!config.sharedStore) {
    throw new TypeError('signing out everywhere with JWT sessions needs a `store` in the config')
  }
  await config.store.put(await notBeforeKey(config, userId), String(at), notBeforeLifetime(config))
}

/** How long a not-before time is kept: past it, every token it could end has expired anyway. */
const notBeforeLifetime = (config: ResolvedConfig) => Math.max(config.session.maxAge, config.session.absoluteMaxAge ?? 0)

/**
 * Ends every JWT session signed in up to `at` through provider session `sid` of `provider`, on
 * every instance that shares the configured store (a back- or front-channel logout).
 *
 * @throws {TypeError} when the config names no store (see {@link endJwtSessionsOf}).
 */
export async function endJwtSessionsOfProviderSession(config: ResolvedConfig, provider: string, sid: string, at: number): Promise<void> {
  if (!config.sharedStore) {
    throw new TypeError('ending JWT sessions from the provider needs a `store` in the config')
  }
  await config.store.put(await providerSessionNotBeforeKey(config, provider, sid), String(at), notBeforeLifetime(config))
}

/** Epoch seconds of a date as adapters return it (a `Date`, or an ISO string from JSON columns). */
export const toSeconds = (date: Date | string | number): number => Math.floor(new Date(date).getTime() / 1000)

/**
 * When a database session signed in at `createdAt` reaches the absolute lifetime (epoch seconds;
 * `Infinity` without one). A row without a sign-in time (an Auth.js table, or one that is no date)
 * is held to its idle expiry alone.
 */
export function absoluteExpiry(config: ResolvedConfig, createdAt: Date | string | undefined): number {
  const { absoluteMaxAge } = config.session
  if (absoluteMaxAge === null) return Infinity
  const signedInAt = toSeconds(createdAt ?? Number.NaN)
  return Number.isFinite(signedInAt) ? signedInAt + absoluteMaxAge : Infinity
}

/**
 * When a stored session ends (epoch seconds): its `expires`, or its absolute lifetime when that
 * comes first, however recently it was extended; and whether that end is the absolute lifetime (a
 * session over then is past its lifetime, not idle).
 *
 * @throws {TypeError} when the row's `expires` is not a date.
 */
export function storedSessionEnd(config: ResolvedConfig, session: AdapterSession): { expires: number; endsByLifetime: boolean } {
  const idleExpiry = toSeconds(session.expires)
  if (!Number.isFinite(idleExpiry)) throw new TypeError('the stored session has no valid expiry')
  const lifetimeEnd = absoluteExpiry(config, session.createdAt)
  return lifetimeEnd <= idleExpiry ? { expires: lifetimeEnd, endsByLifetime: true } : { expires: idleExpiry, endsByLifetime: false }
}

/**
 * The `expires` a database session gets when it is created or extended at `at`: `maxAge` from
 * now, never later than its absolute lifetime (`createdAt` + `absoluteMaxAge`).
 */
export function renewedExpiry(config: ResolvedConfig, createdAt: Date | string | undefined, at: number): number {
  return Math.min(at + config.session.maxAge, absoluteExpiry(config, createdAt))
}
