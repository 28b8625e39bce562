/**
 * Salesforce, an OpenID Connect provider (`https://login.salesforce.com`; a My Domain or sandbox
 * through `issuer`) with PKCE, state and nonce. The profile comes from the userinfo endpoint, not
 * from the ID token (`idToken: false`).
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The userinfo of a Salesforce user. */
export type SalesforceProfile = OidcClaims

/** Creates the Salesforce provider. */
export default function Salesforce(options: OAuthUserConfig<SalesforceProfile> = {}): OAuthConfig<SalesforceProfile> {
  return oidcPreset(
    {
      id: 'salesforce',
      name: 'Salesforce',
      issuer: 'https://login.salesforce.com',
      idToken: false,
      checks: ['pkce', 'state', 'nonce'],
      style: { bg: '#00a1e0' },
    },
    options,
  )
}
