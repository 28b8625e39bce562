/**
 * The `state` a sign-in behind a redirect proxy sends the provider: sealed under the shared
 * secret, it names the callback URL the proxy forwards the provider's answer to. It is written in
 * Auth.js's format (a JWT of the built-in codec, salt `encodedState`, 15 minutes, claims
 * `{ origin, random }`), so that a proxy and its preview deployments interoperate while some run
 * Auth.js and some authchart; it is read in that format and in the one authchart wrote before
 * (an envelope value, salt `authchart.redirect-proxy-state`), so a preview on an older authchart
 * keeps working behind a newer proxy.
 *
 * The format carries no more trust than before: only a holder of the secret can seal either, the
 * proxy forwards only to an allowed origin, and the deployment that completes the sign-in compares
 * the whole `state` with the one its flow cookie sealed.
 *
 * @see https://github.com/nextauthjs/next-auth/blob/main/packages/core/src/lib/actions/callback/oauth/checks.ts
 * @module
 */
import * as oauth from 'oauth4webapi'
import { openValue } from '../engine/envelope.js'
import { decode, encode } from '../jwt.js'

/** Auth.js's salt of the proxied state. */
export const AUTHJS_STATE_SALT = 'encodedState'
/** Auth.js's lifetime of the proxied state, in seconds (`STATE_MAX_AGE`). */
export const AUTHJS_STATE_MAX_AGE = 15 * 60
/** The salt authchart sealed the proxied state with before it wrote Auth.js's format. */
export const LEGACY_PROXY_STATE_SALT = 'authchart.redirect-proxy-state'

/** Seals `origin` (the callback URL the proxy forwards to) into a `state`, as Auth.js does. */
export function sealProxyState(origin: string, secrets: readonly string[]): Promise<string> {
  return encode({
    token: { origin, random: oauth.generateRandomState() } as never,
    secret: secrets[0]!,
    salt: AUTHJS_STATE_SALT,
    maxAge: AUTHJS_STATE_MAX_AGE,
  })
}

/**
 * The claims of a proxied `state` sealed by Auth.js or by authchart (this version or the previous
 * one) under one of `secrets`; `null` when it is neither, forged, or expired.
 */
export async function openProxyState(state: string, secrets: readonly string[], at: number): Promise<Record<string, unknown> | null> {
  try {
    const claims = await decode<Record<string, unknown>>({ token: state, secret: secrets as string[], salt: AUTHJS_STATE_SALT })
    if (claims !== null && typeof claims === 'object') return claims
  } catch {
    // Not Auth.js's format under our secrets: perhaps the previous authchart one.
  }
  return openValue(state, { secrets, salt: LEGACY_PROXY_STATE_SALT, at })
}
