/**
 * Bitbucket Cloud: OAuth 2 with PKCE, scope `account`; the profile comes from
 * `https://api.bitbucket.org/2.0/user` (no e-mail address there).
 *
 * @module
 */
import { nullable, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/2.0/user` that the mapping reads (others pass through untouched). */
export const BitbucketProfile = type({
  account_id: string(),
  display_name: optional(nullable(string())),
  username: optional(string()),
  links: type({ avatar: optional(type({ href: optional(string()) })) }),
})
export type BitbucketProfile = Infer<typeof BitbucketProfile> & Record<string, unknown>

/** Creates the Bitbucket provider. */
export default function Bitbucket(options: OAuthUserConfig<BitbucketProfile> = {}): OAuthConfig<BitbucketProfile> {
  return {
    id: 'bitbucket',
    name: 'Bitbucket',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: { url: 'https://bitbucket.org/site/oauth2/authorize', params: { scope: 'account' } },
    token: 'https://bitbucket.org/site/oauth2/access_token',
    userinfo: 'https://api.bitbucket.org/2.0/user',
    profileSchema: BitbucketProfile,
    profile: (profile) => ({
      name: profile.display_name ?? profile.username,
      id: profile.account_id,
      image: profile.links.avatar?.href,
    }),
    style: { text: '#fff', bg: '#205081' },
    options,
  } as OAuthConfig<BitbucketProfile>
}
