/**
 * Logout Tokens as a provider would post them, right in every way a test does not change: the
 * claims, the header and the key (the test OP's own, by default).
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import { CompactSign, importJWK, type JWK } from 'jose'
import { BACKCHANNEL_LOGOUT_EVENT } from '../../core/oauth/logout-token.js'
import { OP_ACCOUNT, type RunningOidcProvider } from '../fixtures/oidc-provider.js'

/** What a forgery changes; a claim set to `undefined` is left out. */
export interface Forgery {
  claims?: Record<string, unknown>
  header?: Record<string, unknown>
  /** The signing key (default: the OP's current signing key). */
  key?: CryptoKey | Uint8Array
}

const encoder = new TextEncoder()

/** The claims of a right Logout Token for client `aud` and provider session `sid`. */
export function logoutClaims(op: RunningOidcProvider, aud: string, sid: string | undefined): Record<string, unknown> {
  return {
    iss: op.issuer,
    aud,
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    ...(sid !== undefined ? { sid } : {}),
    sub: OP_ACCOUNT.sub,
  }
}

/** A Logout Token signed (RS256, `typ` logout+jwt, the OP's `kid`) after `forgery` changed it. */
export async function logoutToken(
  op: RunningOidcProvider,
  aud: string,
  sid: string | undefined,
  { claims = {}, header = {}, key }: Forgery = {},
): Promise<string> {
  const payload = Object.fromEntries(
    Object.entries({ ...logoutClaims(op, aud, sid), ...claims }).filter(([, value]) => value !== undefined),
  )
  const signingKey = key ?? ((await importJWK(op.signingKey as JWK, 'RS256')) as CryptoKey)
  return new CompactSign(encoder.encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'RS256', kid: op.signingKey.kid, typ: 'logout+jwt', ...header } as never)
    .sign(signingKey)
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** An unsecured JWT (`alg: none`) with the claims of a right Logout Token. */
export function unsignedLogoutToken(op: RunningOidcProvider, aud: string, sid: string | undefined): string {
  return `${base64url({ alg: 'none', typ: 'logout+jwt' })}.${base64url(logoutClaims(op, aud, sid))}.`
}
