/**
 * WordPress.com: OAuth 2 with PKCE, scope `auth`; the profile comes from `/rest/v1/me`.
 *
 * @module
 */
import { number, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/rest/v1/me` that the mapping reads (others pass through untouched). */
export const WordPressProfile = type({
  ID: number(),
  display_name: optional(string()),
  email: optional(string()),
  avatar_URL: optional(string()),
})
export type WordPressProfile = Infer<typeof WordPressProfile> & Record<string, unknown>

/** Creates the WordPress.com provider. */
export default function WordPress(options: OAuthUserConfig<WordPressProfile> = {}): OAuthConfig<WordPressProfile> {
  return {
    id: 'wordpress',
    name: 'WordPress.com',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'https://public-api.wordpress.com/oauth2/authorize?scope=auth',
    token: 'https://public-api.wordpress.com/oauth2/token',
    userinfo: 'https://public-api.wordpress.com/rest/v1/me',
    profileSchema: WordPressProfile,
    profile: (profile) => ({
      // A number, as in Auth.js (it becomes the account's providerAccountId).
      id: profile.ID as unknown as string,
      name: profile.display_name,
      email: profile.email,
      image: profile.avatar_URL,
    }),
    options,
  } as OAuthConfig<WordPressProfile>
}
