/**
 * Azure AD B2C, an OpenID Connect provider: the user flow's issuer
 * (`https://<tenant>.b2clogin.com/<tenant id>/v2.0/`, or `AUTH_AZURE_AD_B2C_ISSUER`) is needed.
 * B2C puts the e-mail addresses in an `emails` array; the first one is the user's.
 *
 * @module
 */
import { array, assign, optional, string, type } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { OidcClaims, oidcPreset } from './oidc.js'

/** The ID token claims the mapping reads. */
export const AzureADB2CProfile = assign(OidcClaims, type({ emails: optional(array(string())) }))
export type AzureADB2CProfile = OidcClaims & { emails?: string[] }

/** Creates the Azure AD B2C provider. */
export default function AzureADB2C(options: OAuthUserConfig<AzureADB2CProfile> = {}): OAuthConfig<AzureADB2CProfile> {
  return oidcPreset(
    {
      id: 'azure-ad-b2c',
      name: 'Azure AD B2C',
      profileSchema: AzureADB2CProfile,
      profile: (profile) => ({
        id: profile.sub,
        name: profile.name ?? profile.preferred_username,
        email: profile.emails?.[0],
        image: null,
      }),
      style: { text: '#fff', bg: '#0072c6' },
    },
    options,
  )
}
