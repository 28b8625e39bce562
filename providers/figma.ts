/**
 * Figma: OAuth 2 with state (no PKCE), scope `files:read`; the profile comes from `/v1/me`.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/v1/me` that the mapping reads (others pass through untouched). */
export const FigmaProfile = type({
  id: string(),
  email: optional(string()),
  handle: optional(string()),
  img_url: optional(string()),
})
export type FigmaProfile = Infer<typeof FigmaProfile> & Record<string, unknown>

/** Creates the Figma provider. */
export default function Figma(options: OAuthUserConfig<FigmaProfile> = {}): OAuthConfig<FigmaProfile> {
  return {
    id: 'figma',
    name: 'Figma',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: { url: 'https://www.figma.com/oauth', params: { scope: 'files:read' } },
    checks: ['state'],
    token: 'https://api.figma.com/v1/oauth/token',
    userinfo: 'https://api.figma.com/v1/me',
    profileSchema: FigmaProfile,
    profile: (profile) => ({
      name: profile.handle,
      email: profile.email,
      id: profile.id,
      image: profile.img_url,
    }),
    style: { text: '#fff', bg: '#ff7237' },
    options,
  } as OAuthConfig<FigmaProfile>
}
