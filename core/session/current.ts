/**
 * Who the request is signed in as, read from the session cookie: the JWT's subject, or the user of
 * the database session. An unreadable or expired session is no session.
 *
 * @module
 */
import type { RequestContext } from '../http/context.js'
import { isJwtSessionEnded } from './lifecycle.js'
import { decodeSessionToken } from './token.js'

/** The signed-in user, as much of them as the session tells. */
export interface SignedInUser {
  id: string
  email: string | null
  name: string | null
}

/** The user the request's session belongs to, or `null`. */
export async function signedInUser(ctx: RequestContext): Promise<SignedInUser | null> {
  const { value } = ctx.sessionCookie
  // Stryker disable next-line ConditionalExpression: equivalent, an empty token decodes to nothing and names no stored session
  if (!value) return null
  try {
    if (ctx.config.session.strategy === 'jwt') {
      const token = await decodeSessionToken(ctx, value)
      // A token without a numeric exp (a custom decoder) is live, as the session route re-issues it.
      // Stryker disable next-line OptionalChaining: equivalent, a null token throws into the catch below (no one)
      if (!token?.sub || (typeof token.exp === 'number' && token.exp <= ctx.at)) return null
      if (await isJwtSessionEnded(ctx.config, token, ctx.at)) return null
      return { id: String(token.sub), email: (token.email as string | null) ?? null, name: (token.name as string | null) ?? null }
    }
    // Stryker disable next-line OptionalChaining: unreachable, the database strategy requires an adapter with getSessionAndUser (checked at boot)
    const found = await ctx.config.adapter?.getSessionAndUser?.(value)
    if (!found || new Date(found.session.expires).getTime() <= ctx.at * 1000) return null
    return { id: String(found.user.id), email: found.user.email ?? null, name: found.user.name ?? null }
  } catch {
    // A session that cannot be read is no session (as the session route treats it).
    return null
  }
}
