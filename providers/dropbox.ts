/**
 * Dropbox: OAuth 2 with PKCE and offline access (a refresh token); the profile is the answer of
 * `POST /2/users/get_current_account`.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import { requestUserinfo } from '../core/oauth/exchange.js'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `get_current_account` that the mapping reads (others pass through untouched). */
export const DropboxProfile = type({
  account_id: string(),
  name: type({ display_name: string() }),
  email: optional(string()),
  profile_photo_url: optional(string()),
})
export type DropboxProfile = Infer<typeof DropboxProfile> & Record<string, unknown>

/** Creates the Dropbox provider. */
export default function Dropbox(options: OAuthUserConfig<DropboxProfile> = {}): OAuthConfig<DropboxProfile> {
  return {
    id: 'dropbox',
    name: 'Dropbox',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: {
      url: 'https://www.dropbox.com/oauth2/authorize',
      params: { token_access_type: 'offline', scope: 'account_info.read' },
    },
    token: 'https://api.dropboxapi.com/oauth2/token',
    userinfo: {
      url: 'https://api.dropboxapi.com/2/users/get_current_account',
      request: (context) => requestUserinfo(context, { method: 'POST' }),
    },
    profileSchema: DropboxProfile,
    profile: (profile) => ({
      id: profile.account_id,
      name: profile.name.display_name,
      email: profile.email,
      image: profile.profile_photo_url,
    }),
    style: { brandColor: '#0061fe' },
    options,
  } as OAuthConfig<DropboxProfile>
}
