/**
 * Patreon: OAuth 2 with PKCE, scopes `identity identity[email]`; the profile is the `data` of
 * `/api/oauth2/api/current_user`.
 *
 * @module
 */
import { nullable, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `current_user` that the mapping reads (others pass through untouched). */
export const PatreonProfile = type({
  data: type({
    id: string(),
    attributes: type({
      full_name: optional(nullable(string())),
      email: optional(nullable(string())),
      image_url: optional(nullable(string())),
    }),
  }),
})
export type PatreonProfile = Infer<typeof PatreonProfile> & Record<string, unknown>

/** Creates the Patreon provider. */
export default function Patreon(options: OAuthUserConfig<PatreonProfile> = {}): OAuthConfig<PatreonProfile> {
  return {
    id: 'patreon',
    name: 'Patreon',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: { url: 'https://www.patreon.com/oauth2/authorize', params: { scope: 'identity identity[email]' } },
    token: 'https://www.patreon.com/api/oauth2/token',
    userinfo: 'https://www.patreon.com/api/oauth2/api/current_user',
    profileSchema: PatreonProfile,
    profile: ({ data }) => ({
      id: data.id,
      name: data.attributes.full_name,
      email: data.attributes.email,
      image: data.attributes.image_url,
    }),
    style: { bg: '#e85b46', text: '#fff' },
    options,
  } as OAuthConfig<PatreonProfile>
}
