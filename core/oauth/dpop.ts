/**
 * DPoP (RFC 9449), per provider (`dpop: true`): the access and refresh tokens are bound to a key
 * pair made for the session at sign-in, and every request with them (code exchange, refresh,
 * userinfo) carries a proof signed with it, through oauth4webapi's `DPoP` handle. A stolen access
 * token is then worthless without the private key. The key pair travels with the session sealed
 * with the secret (a key of its own, {@link DPOP_KEY_SALT}), so it is never readable where the
 * session's tokens are handed to the application.
 *
 * @module
 * @see https://www.rfc-editor.org/rfc/rfc9449
 */
import * as oauth from 'oauth4webapi'
import { decode, encode, type JWT } from '../jwt.js'
import type { ResolvedOAuthProvider } from './provider.js'
import { clientOf } from './server.js'

/** The cookie-codec salt of a sealed DPoP key pair: a key of its own, used for nothing else. */
const DPOP_KEY_SALT = 'authchart.dpop-key'
/** The proof algorithm (oauth4webapi's default; every DPoP server supports it). */
const DPOP_ALG = 'ES256'

/** The field of a token set and of a session's `oauth` claim that holds the sealed key pair. */
export const DPOP_KEY_FIELD = 'dpop_key'

/** A new key pair for one session's DPoP proofs. */
export function generateDPoPKeyPair(): Promise<CryptoKeyPair> {
  return oauth.generateKeyPair(DPOP_ALG, { extractable: true })
}

/** Seals `keyPair` with the secret, for `maxAge` seconds (the session's lifetime). */
export async function sealDPoPKeyPair(keyPair: CryptoKeyPair, secrets: readonly string[], maxAge: number): Promise<string> {
  const privateJwk = await crypto.subtle.exportKey('jwk', keyPair.privateKey)
  return encode({ token: { k: privateJwk } as unknown as JWT, secret: secrets[0]!, salt: DPOP_KEY_SALT, maxAge })
}

/**
 * Opens a key pair sealed by {@link sealDPoPKeyPair}.
 *
 * @throws {TypeError} when the seal does not open (another secret, expired, tampered with), or
 *   holds no EC private key.
 */
export async function openDPoPKeyPair(sealed: string, secrets: readonly string[]): Promise<CryptoKeyPair> {
  const opened = (await decode({ token: sealed, secret: [...secrets], salt: DPOP_KEY_SALT }).catch(() => {
    throw new TypeError('the sealed DPoP key pair does not open')
  })) as { k?: JsonWebKey } | null
  const jwk = opened?.k
  if (!jwk || jwk.kty !== 'EC' || typeof jwk.d !== 'string') throw new TypeError('the sealed DPoP key pair holds no EC private key')
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256' }
  const { d: _private, key_ops: _ops, ...publicJwk } = jwk
  return {
    privateKey: await crypto.subtle.importKey('jwk', jwk, algorithm, false, ['sign']),
    publicKey: await crypto.subtle.importKey('jwk', publicJwk, algorithm, true, ['verify']),
  }
}

/** oauth4webapi's DPoP handle for `provider`'s requests with `keyPair` (it keeps the server's nonces). */
export function dpopHandle(provider: ResolvedOAuthProvider, keyPair: CryptoKeyPair): oauth.DPoPHandle {
  return oauth.DPoP(clientOf(provider), keyPair)
}

/**
 * Sends a DPoP-bound request and processes its answer; when the server asks for a DPoP nonce
 * (`use_dpop_nonce`), sends it once more: the handle has learnt the nonce from the refusal. The
 * retry oauth4webapi's documentation prescribes.
 */
export async function withDPoPNonceRetry<T>(
  dpop: oauth.DPoPHandle | undefined,
  send: () => Promise<Response>,
  process: (response: Response) => Promise<T>,
): Promise<T> {
  try {
    return await process(await send())
  } catch (error) {
    if (!dpop || !oauth.isDPoPNonceError(error)) throw error
    return process(await send())
  }
}
