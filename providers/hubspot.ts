/**
 * HubSpot: OAuth 2 with PKCE, scope `oauth`, the client secret in the token request body. The
 * profile is HubSpot's access-token metadata (`GET /oauth/v1/access-tokens/<token>`); its `user`
 * is the e-mail address, and it has no picture.
 *
 * @module
 */
import { number, string, type, type Infer } from 'superstruct'
import { requestUserinfo } from '../core/oauth/exchange.js'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of the access-token metadata that the mapping reads (others pass through untouched). */
export const HubSpotProfile = type({ user: string(), user_id: number() })
export type HubSpotProfile = Infer<typeof HubSpotProfile> & Record<string, unknown>

const ACCESS_TOKENS_URL = 'https://api.hubapi.com/oauth/v1/access-tokens'

/** Creates the HubSpot provider. */
export default function HubSpot(options: OAuthUserConfig<HubSpotProfile> = {}): OAuthConfig<HubSpotProfile> {
  return {
    id: 'hubspot',
    name: 'HubSpot',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: {
      url: 'https://app.hubspot.com/oauth/authorize',
      params: { scope: 'oauth', client_id: options.clientId },
    },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    token: 'https://api.hubapi.com/oauth/v1/token',
    userinfo: {
      url: ACCESS_TOKENS_URL,
      // HubSpot's API takes the token in the path (encoded here), not in a header.
      request: (context) =>
        requestUserinfo(context, {
          url: `${context.provider.userinfo ?? ACCESS_TOKENS_URL}/${encodeURIComponent(context.tokens.access_token ?? '')}`,
          headers: { 'Content-Type': 'application/json' },
          bearer: false,
        }),
    },
    profileSchema: HubSpotProfile,
    profile: (profile) => ({
      // A number, as in Auth.js (it becomes the account's providerAccountId).
      id: profile.user_id as unknown as string,
      name: profile.user,
      email: profile.user,
      image: null,
    }),
    style: { bg: '#ff7a59', text: '#fff' },
    options,
  } as OAuthConfig<HubSpotProfile>
}
