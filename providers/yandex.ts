/**
 * Yandex ID: OAuth 2 with PKCE, scopes `login:info login:email login:avatar`; the profile comes
 * from `https://login.yandex.ru/info?format=json`.
 *
 * @module
 */
import { array, boolean, nullable, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/info` that the mapping reads (others pass through untouched). */
export const YandexProfile = type({
  id: string(),
  display_name: optional(nullable(string())),
  real_name: optional(nullable(string())),
  first_name: optional(nullable(string())),
  default_email: optional(nullable(string())),
  emails: optional(array(string())),
  default_avatar_id: optional(nullable(string())),
  is_avatar_empty: optional(boolean()),
})
export type YandexProfile = Infer<typeof YandexProfile> & Record<string, unknown>

/** Creates the Yandex provider. */
export default function Yandex(options: OAuthUserConfig<YandexProfile> = {}): OAuthConfig<YandexProfile> {
  return {
    id: 'yandex',
    name: 'Yandex',
    type: 'oauth',
    ...OAUTH_FLOW,
    /** @see https://yandex.com/dev/id/doc/en/register-client#access */
    authorization: 'https://oauth.yandex.ru/authorize?scope=login:info+login:email+login:avatar',
    token: 'https://oauth.yandex.ru/token',
    userinfo: 'https://login.yandex.ru/info?format=json',
    profileSchema: YandexProfile,
    profile: (profile) => ({
      id: profile.id,
      name: profile.display_name ?? profile.real_name ?? profile.first_name,
      email: profile.default_email ?? profile.emails?.[0] ?? null,
      image:
        !profile.is_avatar_empty && profile.default_avatar_id
          ? `https://avatars.yandex.net/get-yapic/${profile.default_avatar_id}/islands-200`
          : null,
    }),
    style: { bg: '#ffcc00', text: '#000' },
    options,
  } as OAuthConfig<YandexProfile>
}
