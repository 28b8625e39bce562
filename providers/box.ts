/**
 * Box: OAuth 2 with PKCE; the profile comes from `https://api.box.com/2.0/users/me`, whose
 * `login` is the user's e-mail address.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/users/me` that the mapping reads (others pass through untouched). */
export const BoxProfile = type({
  id: string(),
  name: optional(string()),
  login: optional(string()),
  avatar_url: optional(string()),
})
export type BoxProfile = Infer<typeof BoxProfile> & Record<string, unknown>

/** Creates the Box provider. */
export default function Box(options: OAuthUserConfig<BoxProfile> = {}): OAuthConfig<BoxProfile> {
  return {
    id: 'box',
    name: 'Box',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'https://account.box.com/api/oauth2/authorize',
    token: 'https://api.box.com/oauth2/token',
    userinfo: 'https://api.box.com/2.0/users/me',
    profileSchema: BoxProfile,
    profile: (profile) => ({
      id: profile.id,
      name: profile.name,
      email: profile.login,
      image: profile.avatar_url,
    }),
    style: { bg: '#0075C9', text: '#fff' },
    options,
  } as OAuthConfig<BoxProfile>
}
