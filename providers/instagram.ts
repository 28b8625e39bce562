/**
 * Instagram (Basic Display): OAuth 2 with PKCE, scope `user_profile`, the client secret in the
 * token request body; the profile comes from the Graph API's `/me`. Instagram gives no e-mail
 * address or picture there. Its token response has no `token_type`; it is a bearer token.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import { conformBearerToken } from '../core/oauth/exchange.js'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/me` that the mapping reads (others pass through untouched). */
export const InstagramProfile = type({ id: string(), username: optional(string()) })
export type InstagramProfile = Infer<typeof InstagramProfile> & Record<string, unknown>

/** Creates the Instagram provider. */
export default function Instagram(options: OAuthUserConfig<InstagramProfile> = {}): OAuthConfig<InstagramProfile> {
  return {
    id: 'instagram',
    name: 'Instagram',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'https://api.instagram.com/oauth/authorize?scope=user_profile',
    // Auth.js has no conform here, so oauth4webapi refuses Instagram's answer (no token_type).
    token: { url: 'https://api.instagram.com/oauth/access_token', conform: conformBearerToken },
    userinfo: 'https://graph.instagram.com/me?fields=id,username,account_type,name',
    client: { token_endpoint_auth_method: 'client_secret_post' },
    profileSchema: InstagramProfile,
    profile: (profile) => ({ id: profile.id, name: profile.username, email: null, image: null }),
    style: { bg: '#fff', text: '#000' },
    options,
  } as OAuthConfig<InstagramProfile>
}
