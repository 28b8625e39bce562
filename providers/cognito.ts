/**
 * Amazon Cognito user pools, an OpenID Connect provider: the pool's issuer
 * (`https://cognito-idp.<region>.amazonaws.com/<pool id>`, or `AUTH_COGNITO_ISSUER`) is needed.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { OidcClaims } from './oidc.js'

/** The ID token claims of a Cognito user. */
export type CognitoProfile = OidcClaims

/** Creates the Cognito provider. */
export default function Cognito(options: OAuthUserConfig<CognitoProfile> = {}): OAuthConfig<CognitoProfile> {
  return {
    id: 'cognito',
    name: 'Cognito',
    type: 'oidc',
    profileSchema: OidcClaims,
    style: { brandColor: '#C17B9E' },
    options,
  } as OAuthConfig<CognitoProfile>
}
