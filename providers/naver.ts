/**
 * Naver: OAuth 2 with PKCE; the profile is the `response` of `https://openapi.naver.com/v1/nid/me`.
 *
 * @module
 */
import { optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/v1/nid/me` that the mapping reads (others pass through untouched). */
export const NaverProfile = type({
  response: type({
    id: string(),
    nickname: optional(string()),
    email: optional(string()),
    profile_image: optional(string()),
  }),
})
export type NaverProfile = Infer<typeof NaverProfile> & Record<string, unknown>

/** Creates the Naver provider. */
export default function Naver(options: OAuthUserConfig<NaverProfile> = {}): OAuthConfig<NaverProfile> {
  return {
    id: 'naver',
    name: 'Naver',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'https://nid.naver.com/oauth2.0/authorize',
    token: 'https://nid.naver.com/oauth2.0/token',
    userinfo: 'https://openapi.naver.com/v1/nid/me',
    profileSchema: NaverProfile,
    profile: ({ response }) => ({
      id: response.id,
      name: response.nickname,
      email: response.email,
      image: response.profile_image,
    }),
    options,
  } as OAuthConfig<NaverProfile>
}
