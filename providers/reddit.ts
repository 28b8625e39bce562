/**
 * Reddit: OAuth 2 with state (no PKCE), scope `identity`; the profile comes from `/api/v1/me` and
 * is mapped by the default mapping (`id`, `name`). Reddit gives no e-mail address.
 *
 * @module
 */
import { string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/api/v1/me` that the mapping reads (others pass through untouched). */
export const RedditProfile = type({ id: string(), name: string() })
export type RedditProfile = Infer<typeof RedditProfile> & Record<string, unknown>

/** Creates the Reddit provider. */
export default function Reddit(options: OAuthUserConfig<RedditProfile> = {}): OAuthConfig<RedditProfile> {
  return {
    id: 'reddit',
    name: 'Reddit',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'https://www.reddit.com/api/v1/authorize?scope=identity',
    token: 'https://www.reddit.com/api/v1/access_token',
    userinfo: 'https://oauth.reddit.com/api/v1/me',
    checks: ['state'],
    profileSchema: RedditProfile,
    style: { brandColor: '#FF4500' },
    options,
  } as OAuthConfig<RedditProfile>
}
