/**
 * Session lifecycle beyond one request (OWASP ASVS 5.0 V7): an absolute lifetime beside the idle
 * `maxAge`, and "sign out everywhere". A JWT carries its sign-in time (`auth_time`, seconds, as in
 * OpenID Connect); a sign-out everywhere keeps a per-user not-before time in the store, and a
 * logout by the provider (back- or front-channel) one per provider session (`sid`), which a
 * session read consults only when the config names a store: the default read stays free of I/O.
 *
 * @module
 */
import { sha256Hex } from '../crypto.js'
import type { ResolvedConfig } from '../config/resolve-config.js'
import type { JWT } from '../jwt.js'

/** The JWT claim holding the sign-in time (epoch seconds); the engine keeps it across reissues. */
export const SIGN_IN_TIME_CLAIM = 'auth_time'

/** The sign-in time a JWT carries: its `auth_time`, else (a token from before it) its `iat`. */
export function signInTimeOf(token: JWT): number | undefined {
  const time = token[SIGN_IN_TIME_CLAIM] ?? token.iat
  // Number.isFinite is false for anything but a finite number (no coercion, unlike isFinite).
  return Number.isFinite(time) ? (time as number) : undefined
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
 * Whether a decoded JWT session has ended on the server's side: past its absolute lifetime, or
 * signed in no later than the user's last sign-out everywhere or the provider's logout of the
 * provider session it names (both checked only with a configured store). A token whose sign-in
 * time is unknown is checked against `maxAge` alone.
 */
export function isJwtSessionEnded(config: ResolvedConfig, token: JWT, at: number): boolean | Promise<boolean> {
  const signedInAt = signInTimeOf(token)
  if (signedInAt === undefined) return false
  const { absoluteMaxAge } = config.session
  if (absoluteMaxAge !== null && signedInAt + absoluteMaxAge <= at) return true
  if (!config.sharedStore || typeof token.sub !== 'string') return false
  return endedInStore(config, token, token.sub, signedInAt)
}

/**
 * Whether the user's last sign-out everywhere, or the end of the provider session the token was
 * signed in with (back- or front-channel logout), came at or after `signedInAt`.
 */
async function endedInStore(config: ResolvedConfig, token: JWT, sub: string, signedInAt: number): Promise<boolean> {
  const providerSession = providerSessionOfToken(token)
  const [userNotBefore, sessionNotBefore] = await Promise.all([
    notBeforeKey(config, sub).then((key) => config.store.get(key)),
    providerSession ? providerSessionNotBeforeKey(config, providerSession.provider, providerSession.sid).then((key) => config.store.get(key)) : null,
  ])
  // A session signed in during the very second of the sign-out everywhere ends too.
  return [userNotBefore, sessionNotBefore].some((notBefore) => notBefore !== null && signedInAt <= Number(notBefore))
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
