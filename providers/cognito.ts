/**
 * Amazon Cognito user pools, an OpenID Connect provider: the pool's issuer
 * (`https://cognito-idp.<region>.amazonaws.com/<pool id>`, or `AUTH_COGNITO_ISSUER`) is needed.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of a Cognito user. */
export type CognitoProfile = OidcClaims

/** Creates the Cognito provider. */
export default function Cognito(options: OAuthUserConfig<CognitoProfile> = {}): OAuthConfig<CognitoProfile> {
  return oidcPreset(
    {
      id: 'cognito',
      name: 'Cognito',
      style: { brandColor: '#C17B9E' },
    },
    options,
  )
}
