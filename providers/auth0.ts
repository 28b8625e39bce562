/**
 * Auth0, an OpenID Connect provider: the tenant's domain is the issuer
 * (`issuer: 'https://<tenant>.auth0.com/'`, or `AUTH_AUTH0_ISSUER`); the profile is the ID token's.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of an Auth0 user (the standard ones are checked; the rest pass through). */
export type Auth0Profile = OidcClaims

/** Creates the Auth0 provider. */
export default function Auth0(options: OAuthUserConfig<Auth0Profile> = {}): OAuthConfig<Auth0Profile> {
  return oidcPreset(
    {
      id: 'auth0',
      name: 'Auth0',
      style: { text: '#fff', bg: '#EB5424' },
    },
    options,
  )
}
