/**
 * Mastodon: OAuth 2 with PKCE against one instance, named by `issuer` (e.g.
 * `https://mastodon.social`, or `AUTH_MASTODON_ISSUER`), scope `read`; the profile comes from
 * `/api/v1/accounts/verify_credentials`. Mastodon gives no e-mail address.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `verify_credentials` that the mapping reads (others pass through untouched). */
export const MastodonProfile = type({
  id: string(),
  username: string(),
  avatar_static: optional(string()),
})
export type MastodonProfile = Infer<typeof MastodonProfile> & Record<string, unknown>

/**
 * Creates the Mastodon provider. Its endpoints are paths under the instance's `issuer`, which may
 * also come later, from `AUTH_MASTODON_ISSUER`; without one the configuration reports it missing.
 */
export default function Mastodon(options: OAuthUserConfig<MastodonProfile> = {}): OAuthConfig<MastodonProfile> {
  return {
    id: 'mastodon',
    name: 'Mastodon',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'oauth/authorize?scope=read',
    token: 'oauth/token',
    userinfo: 'api/v1/accounts/verify_credentials',
    profileSchema: MastodonProfile,
    profile: (profile) => ({
      id: profile.id,
      name: profile.username,
      image: profile.avatar_static,
      email: null,
    }),
    options,
  } as OAuthConfig<MastodonProfile>
}
