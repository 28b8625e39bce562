/**
 * X (Twitter), the microblog provider: OAuth 2 with PKCE and state. The profile comes from
 * `/2/users/me` with `user.fields` and `expansions=pinned_tweet_id`. X does not give an e-mail
 * address in OAuth 2.0; OAuth 1.0a (and its `oauth_token`/`oauth_token_secret`) is not supported.
 *
 * @module
 */
import {
  array,
  boolean,
  number,
  object,
  optional,
  string,
  type,
  type Infer,
} from 'superstruct'
import { ConfigError } from '../core/errors.js'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

const Hashtag = object({ start: number(), end: number(), tag: string() })
const Url = object({
  display_url: string(),
  expanded_url: string(),
  url: string(),
  start: number(),
  end: number(),
})

/** The user as `/2/users/me` returns it (optional fields need `user.fields`). */
export const TwitterUser = type({
  id: string(),
  name: string(),
  username: string(),
  created_at: optional(string()),
  description: optional(string()),
  email: optional(string()),
  entities: optional(
    type({
      description: optional(type({ hashtags: optional(array(Hashtag)) })),
      url: optional(type({ urls: optional(array(Url)) })),
    }),
  ),
  location: optional(string()),
  pinned_tweet_id: optional(string()),
  profile_image_url: optional(string()),
  protected: optional(boolean()),
  url: optional(string()),
  verified: optional(boolean()),
})

/** The `/2/users/me` response: the user under `data`, the pinned tweet under `includes`. */
export const TwitterProfile = type({
  data: TwitterUser,
  includes: optional(type({ tweets: optional(array(type({ id: string(), text: string() }))) })),
})
export type TwitterProfile = Infer<typeof TwitterProfile> & Record<string, unknown>

/** The user fields asked for by default. */
export const TWITTER_USER_FIELDS = [
  'profile_image_url',
  'description',
  'created_at',
  'entities',
  'location',
  'pinned_tweet_id',
  'protected',
  'url',
  'verified',
] as const

/** Options of {@link Twitter}. */
export interface TwitterOptions extends OAuthUserConfig<TwitterProfile> {
  /** `"2.0"` (OAuth 2.0, the only mode supported; accepted for next-auth v4 configs). */
  version?: '2.0'
}

/**
 * Creates the X (Twitter) provider.
 *
 * @throws {ConfigError} when `version` asks for OAuth 1.0a.
 */
export default function Twitter(options: TwitterOptions = {}): OAuthConfig<TwitterProfile> {
  const { version, ...rest } = options
  if (version !== undefined && version !== '2.0') {
    throw new ConfigError(
      `Twitter: version "${String(version)}" (OAuth 1.0a) is not supported; use "2.0"`,
      ['providers', 'twitter', 'version'],
    )
  }
  const userinfo = new URL('https://api.x.com/2/users/me')
  userinfo.searchParams.set('user.fields', TWITTER_USER_FIELDS.join(','))
  userinfo.searchParams.set('expansions', 'pinned_tweet_id')
  return {
    id: 'twitter',
    name: 'Twitter',
    type: 'oauth',
    ...OAUTH_FLOW,
    checks: ['pkce', 'state'],
    authorization: {
      url: 'https://x.com/i/oauth2/authorize',
      params: { scope: 'users.read tweet.read offline.access' },
    },
    token: 'https://api.x.com/2/oauth2/token',
    userinfo: userinfo.href,
    profileSchema: TwitterProfile,
    profile: ({ data }) => ({
      id: data.id,
      name: data.name,
      email: data.email ?? null,
      image: data.profile_image_url ?? null,
    }),
    style: { brandColor: '#1da1f2', logo: 'https://authjs.dev/img/providers/twitter.svg' },
    options: rest,
  } as OAuthConfig<TwitterProfile>
}
