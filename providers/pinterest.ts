/**
 * Pinterest (API v5): OAuth 2 with PKCE, scope `user_accounts:read`; the profile comes from
 * `/v5/user_account`, whose `username` is the account's id. Pinterest gives no e-mail address.
 *
 * @module
 */
import { nullable, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/v5/user_account` that the mapping reads (others pass through untouched). */
export const PinterestProfile = type({ username: string(), profile_image: optional(nullable(string())) })
export type PinterestProfile = Infer<typeof PinterestProfile> & Record<string, unknown>

/** Creates the Pinterest provider. */
export default function Pinterest(options: OAuthUserConfig<PinterestProfile> = {}): OAuthConfig<PinterestProfile> {
  return {
    id: 'pinterest',
    name: 'Pinterest',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: { url: 'https://www.pinterest.com/oauth', params: { scope: 'user_accounts:read' } },
    token: 'https://api.pinterest.com/v5/oauth/token',
    userinfo: 'https://api.pinterest.com/v5/user_account',
    profileSchema: PinterestProfile,
    profile: ({ username, profile_image }) => ({ id: username, name: username, image: profile_image, email: null }),
    style: { brandColor: '#bd081c' },
    options,
  } as OAuthConfig<PinterestProfile>
}
