/**
 * Kakao: OAuth 2 with PKCE, the client secret in the token request body, no scope asked (the
 * consent items configured for the app apply); the profile comes from `/v2/user/me`.
 *
 * @module
 */
import { nullable, number, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/v2/user/me` that the mapping reads (others pass through untouched). */
export const KakaoProfile = type({
  id: number(),
  kakao_account: optional(
    type({
      email: optional(nullable(string())),
      profile: optional(type({ nickname: optional(string()), profile_image_url: optional(string()) })),
    }),
  ),
})
export type KakaoProfile = Infer<typeof KakaoProfile> & Record<string, unknown>

/** Creates the Kakao provider. */
export default function Kakao(options: OAuthUserConfig<KakaoProfile> = {}): OAuthConfig<KakaoProfile> {
  return {
    id: 'kakao',
    name: 'Kakao',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: 'https://kauth.kakao.com/oauth/authorize?scope',
    token: 'https://kauth.kakao.com/oauth/token',
    userinfo: 'https://kapi.kakao.com/v2/user/me',
    client: { token_endpoint_auth_method: 'client_secret_post' },
    profileSchema: KakaoProfile,
    profile: (profile) => ({
      id: profile.id.toString(),
      name: profile.kakao_account?.profile?.nickname,
      email: profile.kakao_account?.email,
      image: profile.kakao_account?.profile?.profile_image_url,
    }),
    options,
  } as OAuthConfig<KakaoProfile>
}
