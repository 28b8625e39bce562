/**
 * Encoding and decoding the session JWT with the configured codec: `config.jwt.encode/decode` when
 * given (called with the whole `jwt` options plus `token` and `salt`, as Auth.js does), the
 * built-in JWE codec otherwise. The salt is the session cookie name.
 *
 * @module
 */
import { decode, decodeNow, encode, isSealedWith, type JWT } from '../jwt.js'
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
 * Decrypts the session cookie's token; `null` when the codec returns nothing. Synchronously when
 * the built-in codec can answer at once (see `decodeNow`); a promise otherwise, and always with an
 * application's own codec. Only the session authority (./current.ts) calls it: a decoded token
 * says nothing about whether its session has ended.
 *
 * @throws (synchronously, or as a rejection) when the token is tampered, expired or sealed with an
 *   unknown secret.
 */
export function decodeSessionTokenNow(ctx: RequestContext, token: string): JWT | null | Promise<JWT | null> {
  const { jwt } = ctx.config
  // The built-in codec reads only these three: no copy of the options on every session read.
  if (!jwt.decode) return decodeNow({ token, secret: jwt.secret, salt: ctx.cookies.sessionToken.name })
  const params = jwtParams(ctx)
  return Promise.resolve(params.decode({ ...params, token }))
}

/**
 * Whether the session cookie's token was sealed under an older secret of the rotation list, so the
 * read seals it again under the first (an app switching from a short Auth.js secret keeps its
 * sessions and can drop the old secret once they are renewed). Only with the built-in codec and a
 * list of secrets: an application's own codec decides for itself.
 */
export function isSealedUnderOlderSecret(ctx: RequestContext, token: string): boolean | Promise<boolean> {
  const { jwt } = ctx.config
  if (!token || jwt.decode || !Array.isArray(jwt.secret) || jwt.secret.length < 2) return false
  const sealed = isSealedWith(token, jwt.secret[0]!, ctx.cookies.sessionToken.name)
  return sealed instanceof Promise ? sealed.then((first) => !first) : !sealed
}
