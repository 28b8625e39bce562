/**
 * Keycloak, a self-hosted OpenID Connect provider: the realm's issuer
 * (`https://<host>/realms/<realm>`, or `AUTH_KEYCLOAK_ISSUER`) is needed.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of a Keycloak user. */
export type KeycloakProfile = OidcClaims

/** Creates the Keycloak provider. */
export default function Keycloak(options: OAuthUserConfig<KeycloakProfile> = {}): OAuthConfig<KeycloakProfile> {
  return oidcPreset(
    {
      id: 'keycloak',
      name: 'Keycloak',
      style: { brandColor: '#428bca' },
    },
    options,
  )
}
