/**
 * The last steps every sign-in flow shares: ask the `signIn` callback, then issue the session, as
 * an encrypted JWT or as a database row.
 *
 * @module
 */
import type { ProviderSession } from '../adapters.js'
import { AccessDenied, AuthError, CallbackRouteError, CredentialsSignin, type ErrorType } from '../errors.js'
import { callback } from '../flows/callbacks.js'
import { fail, type Failure } from '../flows/effect.js'
import type { RequestContext } from '../http/context.js'
import type { JWT } from '../jwt.js'
import type { Account, Profile, SignInCallbackParams, User } from '../types.js'
import { measuresSignInTime, renewedExpiry, SIGN_IN_TIME_CLAIM } from './lifecycle.js'
import { encodeSessionToken } from './token.js'
import { FACTOR_VERIFICATION_CLAIM, type FactorTimes } from './verification.js'

/** The `signIn` callback's verdict. */
export type SignInVerdict =
  | { allowed: true; redirect: string | null }
  | { allowed: false; error: ErrorType; code?: string }

/**
 * Runs the `signIn` callback: `false` → AccessDenied; a thrown AuthError keeps its type; anything
 * else thrown → AccessDenied; a string → a redirect through the `redirect` callback.
 */
export async function askSignIn(ctx: RequestContext, params: SignInCallbackParams): Promise<SignInVerdict> {
  let verdict: boolean | string
  try {
    verdict = await callback(ctx.config, 'signIn')(params)
  } catch (error) {
    const reported = error instanceof AuthError ? error : new AccessDenied(error as Error)
    ctx.logger.error(reported)
    return {
      allowed: false,
      error: reported.type,
      ...(reported instanceof CredentialsSignin ? { code: reported.code } : {}),
    }
  }
  if (!verdict) {
    ctx.logger.error(new AccessDenied('AccessDenied'))
    return { allowed: false, error: 'AccessDenied' }
  }
  if (typeof verdict !== 'string') return { allowed: true, redirect: null }
  try {
    return {
      allowed: true,
      redirect: await callback(ctx.config, 'redirect')({ url: verdict, baseUrl: ctx.origin }),
    }
  } catch (error) {
    ctx.logger.error(new CallbackRouteError(error as Error))
    return { allowed: false, error: 'CallbackRouteError' }
  }
}

/** The `checkSignIn` effect's answer for a verdict (the same in every sign-in flow). */
export function signInVerdict(verdict: SignInVerdict): { redirect: string | null } | Failure<'denied'> {
  return verdict.allowed
    ? { redirect: verdict.redirect }
    : fail('denied', { error: verdict.error, ...(verdict.code !== undefined ? { code: verdict.code } : {}) })
}

/** What a JWT session is issued for. */
export interface JwtSessionInput {
  user: User
  account: Account
  profile?: Profile
  isNewUser: boolean
  /** Claims added to the default token before the `jwt` callback (e.g. refreshable tokens). */
  claims?: Record<string, unknown>
  /**
   * When each factor of this sign-in was proven: the engine's `fva` claim, added after the `jwt`
   * callback (a callback that builds its own token does not lose it).
   */
  verified?: FactorTimes
}

/**
 * The token with its sign-in time (the engine's claim, kept across reissues), when something is
 * measured from it: an absolute lifetime, or sign-out everywhere through a configured store.
 * Otherwise the token is exactly Auth.js's.
 */
function withSignInTime(ctx: RequestContext, token: JWT): JWT {
  return measuresSignInTime(ctx.config) ? { ...token, [SIGN_IN_TIME_CLAIM]: ctx.at } : token
}

/** The token with the sign-in's factor verification times, when there are any. */
function withFactorTimes(token: JWT, verified: FactorTimes | undefined): JWT {
  return verified && Object.keys(verified).length > 0 ? { ...token, [FACTOR_VERIFICATION_CLAIM]: verified } : token
}

/**
 * Runs the `jwt` callback (trigger `signIn`, or `signUp` for a new user) on the default token and
 * encrypts the result; `value` is null when the callback returned null (no session).
 */
export async function issueJwtSession(
  ctx: RequestContext,
  { user, account, profile, isNewUser, claims, verified }: JwtSessionInput,
): Promise<{ value: string | null; expires: number }> {
  const token = await callback(ctx.config, 'jwt')({
    token: {
      name: user.name,
      email: user.email,
      picture: user.image,
      sub: user.id === undefined ? undefined : String(user.id),
      ...claims,
    },
    user,
    account,
    ...(profile ? { profile } : {}),
    isNewUser,
    trigger: isNewUser ? 'signUp' : 'signIn',
  })
  return {
    value:
      token === null
        ? null
        : await encodeSessionToken(ctx, withFactorTimes(withSignInTime(ctx, token as JWT), verified)),
    expires: ctx.at + ctx.config.session.maxAge,
  }
}

/**
 * Stores a new database session for `userId`; the cookie will carry its token and expiry, which is
 * `maxAge` from now but never past the absolute lifetime (a row whose `createdAt` the adapter does
 * not keep could not be held to it later). `amr` (after a second factor) is stored with the row by
 * adapters that keep second factors, and the provider session it was signed in with by adapters
 * that delete sessions by it (logout by the provider).
 */
export async function createSessionRow(
  ctx: RequestContext,
  userId: string,
  amr?: string[],
  verified?: FactorTimes,
  providerSession?: ProviderSession,
): Promise<{ value: string; expires: number }> {
  const createdAt = new Date(ctx.at * 1000)
  const expires = renewedExpiry(ctx.config, createdAt, ctx.at)
  const adapter = ctx.config.adapter!
  const session = await adapter.createSession!({
    sessionToken: ctx.config.session.generateSessionToken(),
    userId: String(userId),
    expires: new Date(expires * 1000),
    ...(amr ? { amr } : {}),
    // Lifecycle details only for adapters that keep them (an Auth.js adapter may refuse them).
    ...(adapter.listSessions
      ? {
          createdAt,
          userAgent: ctx.request.headers.get('user-agent')?.slice(0, 512) ?? null,
          ...(verified ? { fva: verified } : {}),
        }
      : {}),
    ...(providerSession && adapter.deleteProviderSessions ? { providerSession } : {}),
  })
  return {
    value: session.sessionToken,
    // The cookie follows the stored row, whatever expiry the adapter kept.
    expires: Math.floor(new Date(session.expires ?? expires * 1000).getTime() / 1000),
  }
}
