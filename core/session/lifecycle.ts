/**
 * Session lifecycle beyond one request (OWASP ASVS 5.0 V7): an absolute lifetime beside the idle
 * `maxAge`, and "sign out everywhere". A JWT carries its sign-in time (`auth_time`, seconds, as in
 * OpenID Connect); a sign-out everywhere keeps a per-user not-before time in the store, which a
 * session read consults only when the config names a store: the default read stays free of I/O.
 *
 * @module
 */
import { sha256Hex } from '../crypto.js'
import type { ResolvedConfig } from '../config/types.js'
import type { JWT } from '../jwt.js'

/** The JWT claim holding the sign-in time (epoch seconds); the engine keeps it across reissues. */
export const SIGN_IN_TIME_CLAIM = 'auth_time'

/** The sign-in time a JWT carries: its `auth_time`, else (a token from before it) its `iat`. */
export function signInTimeOf(token: JWT): number | undefined {
  const time = token[SIGN_IN_TIME_CLAIM] ?? token.iat
  // Number.isFinite is false for anything but a finite number (no coercion, unlike isFinite).
  return Number.isFinite(time) ? (time as number) : undefined
}

const notBeforeKey = async (config: ResolvedConfig, userId: string) =>
  `session:not-before:${await sha256Hex(`${userId}\u0000${config.secrets[0]}`)}`

/**
 * Whether a decoded JWT session has ended on the server's side: past its absolute lifetime, or
 * signed in no later than the user's last sign-out everywhere (checked only with a configured
 * store). A token whose sign-in time is unknown is checked against `maxAge` alone.
 */
export function isJwtSessionEnded(config: ResolvedConfig, token: JWT, at: number): boolean | Promise<boolean> {
  const signedInAt = signInTimeOf(token)
  if (signedInAt === undefined) return false
  const { absoluteMaxAge } = config.session
  if (absoluteMaxAge !== null && signedInAt + absoluteMaxAge <= at) return true
  if (!config.sharedStore || typeof token.sub !== 'string') return false
  return endedInStore(config, token.sub, signedInAt)
}

async function endedInStore(config: ResolvedConfig, sub: string, signedInAt: number): Promise<boolean> {
  const notBefore = await config.store.get(await notBeforeKey(config, sub))
  // A session signed in during the very second of the sign-out everywhere ends too.
  return notBefore !== null && signedInAt <= Number(notBefore)
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
  const keep = Math.max(config.session.maxAge, config.session.absoluteMaxAge ?? 0)
  await config.store.put(await notBeforeKey(config, userId), String(at), keep)
}
