/**
 * Encoding and decoding the session JWT with the configured codec: `config.jwt.encode/decode` when
 * given (called with the whole `jwt` options plus `token` and `salt`, as Auth.js does), the
 * built-in JWE codec otherwise. The salt is the session cookie name.
 *
 * @module
 */
import type { AdapterUser } from '../adapters.js'
import { decode, decodeNow, encode, type JWT } from '../jwt.js'
import type { RequestContext } from '../http/context.js'

function jwtParams(ctx: RequestContext) {
  const { jwt } = ctx.config
  return {
    secret: jwt.secret,
    maxAge: jwt.maxAge,
    encode: jwt.encode ?? encode,
    decode: jwt.decode ?? decode,
    salt: ctx.cookies.sessionToken.name,
  }
}

/** Encrypts `token` for the session cookie. */
export async function encodeSessionToken(ctx: RequestContext, token: JWT): Promise<string> {
  const params = jwtParams(ctx)
  return params.encode({ ...params, token })
}

/**
 * Decrypts the session cookie's token; `null` when the codec returns nothing.
 *
 * @throws when the token is tampered, expired or sealed with an unknown secret.
 */
export async function decodeSessionToken(ctx: RequestContext, token: string): Promise<JWT | null> {
  return decodeSessionTokenNow(ctx, token)
}

/**
 * {@link decodeSessionToken}, synchronously when the built-in codec can answer at once (see
 * `decodeNow`); a promise otherwise, and always with an application's own codec.
 *
 * @throws as {@link decodeSessionToken} (synchronously, or as a rejection).
 */
export function decodeSessionTokenNow(ctx: RequestContext, token: string): JWT | null | Promise<JWT | null> {
  const { jwt } = ctx.config
  // The built-in codec reads only these three: no copy of the options on every session read.
  if (!jwt.decode) return decodeNow({ token, secret: jwt.secret, salt: ctx.cookies.sessionToken.name })
  const params = jwtParams(ctx)
  return Promise.resolve(params.decode({ ...params, token }))
}

/**
 * The stored user the request is signed in as, if any (to link a new account or passkey to them):
 * the JWT's `sub` through `getUser`, or the database session's user. An unreadable session counts
 * as none, as in Auth.js.
 */
export async function signedInUser(ctx: RequestContext): Promise<AdapterUser | null> {
  const { value } = ctx.sessionCookie
  // Stryker disable next-line ConditionalExpression: `!value` as false is equivalent, the built-in codec decodes an empty token to null and no adapter stores a session under one; the check only saves a lookup; its other variants on this line are killed (hidden with it)
  if (!value) return null
  const adapter = ctx.config.adapter!
  try {
    if (ctx.config.session.strategy === 'jwt') {
      const token = await decodeSessionToken(ctx, value)
      // Stryker disable next-line OptionalChaining: equivalent, a null token or an adapter without getUser throws into the catch below, which returns null as the original does
      return token?.sub ? ((await adapter.getUser?.(token.sub)) ?? null) : null
    }
    // Stryker disable next-line OptionalChaining: equivalent, no stored session or no getSessionAndUser throws into the catch below, which returns null as the original does
    return (await adapter.getSessionAndUser?.(value))?.user ?? null
  } catch {
    return null
  }
}
