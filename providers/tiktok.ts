/**
 * TikTok (Login Kit for Web): OAuth 2 with PKCE, scope `user.info.basic`. TikTok names the client
 * id `client_key`: it is sent in the authorization request and, with the client secret, in the
 * token request body. The profile is `data.user` of `/v2/user/info/`; TikTok gives no e-mail address.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/v2/user/info/` that the mapping reads (others pass through untouched). */
export const TikTokProfile = type({
  data: type({
    user: type({
      open_id: string(),
      display_name: optional(string()),
      avatar_url: optional(string()),
    }),
  }),
})
export type TikTokProfile = Infer<typeof TikTokProfile> & Record<string, unknown>

/** Creates the TikTok provider. */
export default function TikTok(options: OAuthUserConfig<TikTokProfile> = {}): OAuthConfig<TikTokProfile> {
  const clientKey = options.clientId
  return {
    id: 'tiktok',
    name: 'TikTok',
    type: 'oauth',
    ...OAUTH_FLOW,
    client: { token_endpoint_auth_method: 'client_secret_post' },
    authorization: {
      url: 'https://www.tiktok.com/v2/auth/authorize',
      params: { client_key: clientKey, scope: 'user.info.basic' },
    },
    token: {
      url: 'https://open.tiktokapis.com/v2/oauth/token/',
      ...(clientKey !== undefined ? { additionalParameters: { client_key: clientKey } } : {}),
    },
    userinfo: 'https://open.tiktokapis.com/v2/user/info/?fields=open_id,avatar_url,display_name',
    profileSchema: TikTokProfile,
    profile: ({ data }) => ({
      id: data.user.open_id,
      name: data.user.display_name,
      image: data.user.avatar_url,
      email: null,
    }),
    style: { bg: '#000', text: '#fff' },
    options,
  } as OAuthConfig<TikTokProfile>
}
