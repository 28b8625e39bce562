/**
 * Atlassian (Jira, Confluence: OAuth 2.0 "3LO"), with state and no PKCE, audience
 * `api.atlassian.com`; the profile comes from `https://api.atlassian.com/me`.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/me` that the mapping reads (others pass through untouched). */
export const AtlassianProfile = type({
  account_id: string(),
  name: optional(string()),
  email: optional(string()),
  picture: optional(string()),
})
export type AtlassianProfile = Infer<typeof AtlassianProfile> & Record<string, unknown>

/** Creates the Atlassian provider. */
export default function Atlassian(options: OAuthUserConfig<AtlassianProfile> = {}): OAuthConfig<AtlassianProfile> {
  return {
    id: 'atlassian',
    name: 'Atlassian',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: {
      url: 'https://auth.atlassian.com/authorize',
      params: { audience: 'api.atlassian.com', scope: 'read:me' },
    },
    token: 'https://auth.atlassian.com/oauth/token',
    userinfo: 'https://api.atlassian.com/me',
    checks: ['state'],
    profileSchema: AtlassianProfile,
    profile: (profile) => ({
      id: profile.account_id,
      name: profile.name,
      email: profile.email,
      image: profile.picture,
    }),
    style: { bg: '#fff', text: '#0052cc' },
    options,
  } as OAuthConfig<AtlassianProfile>
}
