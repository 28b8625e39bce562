/**
 * ZITADEL, an OpenID Connect provider: the instance's issuer (`https://<instance>.zitadel.cloud`,
 * or `AUTH_ZITADEL_ISSUER`) is needed.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of a ZITADEL user. */
export type ZitadelProfile = OidcClaims

/** Creates the ZITADEL provider. */
export default function ZITADEL(options: OAuthUserConfig<ZitadelProfile> = {}): OAuthConfig<ZitadelProfile> {
  return oidcPreset(
    {
      id: 'zitadel',
      name: 'ZITADEL',
    },
    options,
  )
}
