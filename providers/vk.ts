/**
 * VK, the social-network provider: OAuth 2 with API version `v=5.126` on every URL (a `v` already
 * in an overridden URL wins). VK returns the e-mail address in the token response, not in the
 * profile, and its token response has no `token_type`; both are handled here.
 *
 * @module
 */
import {
  array,
  boolean,
  enums,
  literal,
  number,
  object,
  optional,
  string,
  type,
  union,
  type Infer,
} from 'superstruct'
import { conformBearerToken } from '../core/oauth/exchange.js'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The API version VK's endpoints are called with by default. */
export const VK_API_VERSION = '5.126'

const flag = () => optional(union([literal(0), literal(1)]))
const IdTitle = object({ id: number(), title: string() })

/** The user as `users.get` returns it: the required fields and the common optional ones. */
export const VkUser = type({
  id: number(),
  first_name: string(),
  last_name: string(),
  is_closed: boolean(),
  can_access_closed: boolean(),
  photo_100: string(),
  photo_50: optional(string()),
  photo_200: optional(string()),
  photo_max: optional(string()),
  screen_name: optional(string()),
  nickname: optional(string()),
  domain: optional(string()),
  email: optional(string()),
  bdate: optional(string()),
  sex: optional(union([literal(0), literal(1), literal(2)])),
  relation: optional(number()),
  friend_status: optional(union([literal(0), literal(1), literal(2), literal(3)])),
  wall_default: optional(enums(['all', 'owner'])),
  city: optional(IdTitle),
  country: optional(IdTitle),
  online: flag(),
  verified: flag(),
  has_photo: flag(),
  followers_count: optional(number()),
  timezone: optional(number()),
  last_seen: optional(type({ platform: number(), time: number() })),
  occupation: optional(type({ id: optional(number()), name: string(), type: enums(['work', 'school', 'university']) })),
  personal: optional(type({ langs: optional(array(string())) })),
})
export type VkUser = Infer<typeof VkUser>

/** The `users.get` response. */
export const VkProfile = type({ response: array(VkUser) })
export type VkProfile = Infer<typeof VkProfile> & Record<string, unknown>

/** Options of {@link VK}: the next-auth v4 URL overrides are accepted. */
export interface VkOptions extends OAuthUserConfig<VkProfile> {
  authorizationUrl?: string
  accessTokenUrl?: string
  /** Accepted for next-auth v4 configs; OAuth 2 has no request token, so it is not called. */
  requestTokenUrl?: string
  profileUrl?: string
}

/** Adds `v=<version>` to `url` unless it names a version already. */
export function withApiVersion(url: string, version = VK_API_VERSION): string {
  const parsed = new URL(url)
  if (!parsed.searchParams.has('v')) parsed.searchParams.set('v', version)
  return parsed.href
}

/** Creates the VK provider. */
export default function VK(options: VkOptions = {}): OAuthConfig<VkProfile> {
  const { authorizationUrl, accessTokenUrl, requestTokenUrl, profileUrl, ...rest } = options
  return {
    id: 'vk',
    name: 'VK',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: withApiVersion(authorizationUrl ?? 'https://oauth.vk.com/authorize?scope=email'),
    token: { url: withApiVersion(accessTokenUrl ?? 'https://oauth.vk.com/access_token'), conform: conformBearerToken },
    userinfo: withApiVersion(profileUrl ?? 'https://api.vk.com/method/users.get?fields=photo_100'),
    ...(requestTokenUrl ? { requestTokenUrl: withApiVersion(requestTokenUrl) } : {}),
    client: { token_endpoint_auth_method: 'client_secret_post' },
    profileSchema: VkProfile,
    profile: (profile, tokens) => {
      const user = profile.response[0]!
      return {
        id: String(user.id),
        name: [user.first_name, user.last_name].filter(Boolean).join(' '),
        email: typeof tokens.email === 'string' ? tokens.email : (user.email ?? null),
        image: user.photo_100,
      }
    },
    style: { brandColor: '#07F', logo: 'https://authjs.dev/img/providers/vk.svg' },
    options: rest,
  } as OAuthConfig<VkProfile>
}
