/**
 * Strava: OAuth 2 with PKCE, scope `read`, the client secret in the token request body; the profile
 * is the athlete (`/api/v3/athlete`). Strava gives no e-mail address.
 *
 * @module
 */
import { number, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/api/v3/athlete` that the mapping reads (others pass through untouched). */
export const StravaProfile = type({
  id: number(),
  firstname: optional(string()),
  lastname: optional(string()),
  profile: optional(string()),
})
export type StravaProfile = Infer<typeof StravaProfile> & Record<string, unknown>

/** Creates the Strava provider. */
export default function Strava(options: OAuthUserConfig<StravaProfile> = {}): OAuthConfig<StravaProfile> {
  return {
    id: 'strava',
    name: 'Strava',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: {
      url: 'https://www.strava.com/api/v3/oauth/authorize',
      params: { scope: 'read', approval_prompt: 'auto', response_type: 'code' },
    },
    token: { url: 'https://www.strava.com/api/v3/oauth/token' },
    userinfo: 'https://www.strava.com/api/v3/athlete',
    client: { token_endpoint_auth_method: 'client_secret_post' },
    profileSchema: StravaProfile,
    profile: (profile) => ({
      // A number, as in Auth.js (it becomes the account's providerAccountId).
      id: profile.id as unknown as string,
      name: `${profile.firstname} ${profile.lastname}`,
      email: null,
      image: profile.profile,
    }),
    options,
  } as OAuthConfig<StravaProfile>
}
