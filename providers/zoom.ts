/**
 * Zoom: OAuth 2 with PKCE, no scope asked (the app's configured scopes apply); the profile comes
 * from `/v2/users/me`.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/v2/users/me` that the mapping reads (others pass through untouched). */
export const ZoomProfile = type({
  id: string(),
  first_name: optional(string()),
  last_name: optional(string()),
  email: optional(string()),
  pic_url: optional(string()),
})
export type ZoomProfile = Infer<typeof ZoomProfile> & Record<string, unknown>

/** Creates the Zoom provider. */
export default function Zoom(options: OAuthUserConfig<ZoomProfile> = {}): OAuthConfig<ZoomProfile> {
  return {
    id: 'zoom',
    name: 'Zoom',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'https://zoom.us/oauth/authorize?scope',
    token: 'https://zoom.us/oauth/token',
    userinfo: 'https://api.zoom.us/v2/users/me',
    profileSchema: ZoomProfile,
    profile: (profile) => ({
      id: profile.id,
      name: `${profile.first_name} ${profile.last_name}`,
      email: profile.email,
      image: profile.pic_url,
    }),
    style: { bg: '#0b5cff', text: '#fff' },
    options,
  } as OAuthConfig<ZoomProfile>
}
