/**
 * LinkedIn ("Sign In with LinkedIn using OpenID Connect"): issuer `https://www.linkedin.com/oauth`,
 * state only, and the client secret in the token request body.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of a LinkedIn member. */
export type LinkedInProfile = OidcClaims

/** Creates the LinkedIn provider. */
export default function LinkedIn(options: OAuthUserConfig<LinkedInProfile> = {}): OAuthConfig<LinkedInProfile> {
  return oidcPreset(
    {
      id: 'linkedin',
      name: 'LinkedIn',
      issuer: 'https://www.linkedin.com/oauth',
      client: { token_endpoint_auth_method: 'client_secret_post' },
      checks: ['state'],
      style: { bg: '#069', text: '#fff' },
    },
    options,
  )
}
