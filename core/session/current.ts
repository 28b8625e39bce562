/**
 * Who the request is signed in as, read from the session cookie: the JWT's subject, or the user of
 * the database session. An unreadable or expired session is no session.
 *
 * @module
 */
import type { RequestContext } from '../http/context.js'
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
  if (!value) return null
  try {
    if (ctx.config.session.strategy === 'jwt') {
      const token = await decodeSessionToken(ctx, value)
      if (!token?.sub || (typeof token.exp === 'number' && token.exp <= ctx.at)) return null
      return { id: String(token.sub), email: (token.email as string | null) ?? null, name: (token.name as string | null) ?? null }
    }
    const found = await ctx.config.adapter?.getSessionAndUser?.(value)
    if (!found || new Date(found.session.expires).getTime() <= ctx.at * 1000) return null
    return { id: String(found.user.id), email: found.user.email ?? null, name: found.user.name ?? null }
  } catch {
    // A session that cannot be read is no session (as the session route treats it).
    return null
  }
}
