/**
 * Encoding and decoding the session JWT with the configured codec: `config.jwt.encode/decode` when
 * given (called with the whole `jwt` options plus `token` and `salt`, as Auth.js does), the
 * built-in JWE codec otherwise. The salt is the session cookie name.
 *
 * @module
 */
import { decode, encode, type JWT } from '../jwt.js'
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
  const params = jwtParams(ctx)
  return params.decode({ ...params, token })
}
