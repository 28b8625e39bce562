/**
 * LINE, an OpenID Connect provider (`https://access.line.me`) with state and no PKCE. LINE signs
 * its ID tokens with HS256, keyed with the channel secret; they are verified with it.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of a LINE user (`amr` and the others pass through). */
export type LineProfile = OidcClaims

/** Creates the LINE provider. */
export default function LINE(options: OAuthUserConfig<LineProfile> = {}): OAuthConfig<LineProfile> {
  return oidcPreset(
    {
      id: 'line',
      name: 'LINE',
      issuer: 'https://access.line.me',
      client: { id_token_signed_response_alg: 'HS256' },
      checks: ['state'],
      style: { bg: '#00C300', text: '#fff' },
    },
    options,
  )
}
