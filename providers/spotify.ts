/**
 * Spotify: OAuth 2 with PKCE, scope `user-read-email`; the profile comes from `/v1/me`.
 *
 * @module
 */
import { array, nullable, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/v1/me` that the mapping reads (others pass through untouched). */
export const SpotifyProfile = type({
  id: string(),
  display_name: optional(nullable(string())),
  email: optional(string()),
  images: optional(array(type({ url: string() }))),
})
export type SpotifyProfile = Infer<typeof SpotifyProfile> & Record<string, unknown>

/** Creates the Spotify provider. */
export default function Spotify(options: OAuthUserConfig<SpotifyProfile> = {}): OAuthConfig<SpotifyProfile> {
  return {
    id: 'spotify',
    name: 'Spotify',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'https://accounts.spotify.com/authorize?scope=user-read-email',
    token: 'https://accounts.spotify.com/api/token',
    userinfo: 'https://api.spotify.com/v1/me',
    profileSchema: SpotifyProfile,
    profile: (profile) => ({
      id: profile.id,
      name: profile.display_name,
      email: profile.email,
      image: profile.images?.[0]?.url,
    }),
    style: { brandColor: '#1db954' },
    options,
  } as OAuthConfig<SpotifyProfile>
}
