/**
 * Okta, an OpenID Connect provider with PKCE and state: the org's or authorization server's issuer
 * (`https://<org>.okta.com/oauth2/default`, or `AUTH_OKTA_ISSUER`) is needed.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of an Okta user. */
export type OktaProfile = OidcClaims

/** Creates the Okta provider. */
export default function Okta(options: OAuthUserConfig<OktaProfile> = {}): OAuthConfig<OktaProfile> {
  return oidcPreset(
    {
      id: 'okta',
      name: 'Okta',
      checks: ['pkce', 'state'],
      style: { bg: '#000', text: '#fff' },
    },
    options,
  )
}
