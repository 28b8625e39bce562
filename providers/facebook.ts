/**
 * Facebook Login: OAuth 2 with PKCE, scope `email`; the profile comes from the Graph API's `/me`
 * with the fields `id,name,email,picture`.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import { requestUserinfo } from '../core/oauth/exchange.js'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/me` that the mapping reads (others pass through untouched). */
export const FacebookProfile = type({
  id: string(),
  name: optional(string()),
  email: optional(string()),
  picture: type({ data: type({ url: string() }) }),
})
export type FacebookProfile = Infer<typeof FacebookProfile> & Record<string, unknown>

/** Creates the Facebook provider. */
export default function Facebook(options: OAuthUserConfig<FacebookProfile> = {}): OAuthConfig<FacebookProfile> {
  return {
    id: 'facebook',
    name: 'Facebook',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: { url: 'https://www.facebook.com/v19.0/dialog/oauth', params: { scope: 'email' } },
    token: 'https://graph.facebook.com/oauth/access_token',
    userinfo: {
      // https://developers.facebook.com/docs/graph-api/reference/user/#fields
      url: 'https://graph.facebook.com/me?fields=id,name,email,picture',
      request: (context) => requestUserinfo(context),
    },
    profileSchema: FacebookProfile,
    profile: (profile) => ({
      id: profile.id,
      name: profile.name,
      email: profile.email,
      image: profile.picture.data.url,
    }),
    style: { bg: '#006aff', text: '#fff' },
    options,
  } as OAuthConfig<FacebookProfile>
}
