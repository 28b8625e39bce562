/**
 * authentik, a self-hosted OpenID Connect provider: the application's issuer
 * (`https://<host>/application/o/<slug>/`, or `AUTH_AUTHENTIK_ISSUER`) is needed.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of an authentik user (`groups` and the others pass through). */
export type AuthentikProfile = OidcClaims

/** Creates the authentik provider. */
export default function Authentik(options: OAuthUserConfig<AuthentikProfile> = {}): OAuthConfig<AuthentikProfile> {
  return oidcPreset(
    {
      id: 'authentik',
      name: 'Authentik',
    },
    options,
  )
}
