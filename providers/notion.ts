/**
 * Notion (public integrations): OAuth 2 with PKCE, `owner=user`; the profile is the user who owns
 * the bot, read from `/v1/users/me` with the `Notion-Version` header.
 *
 * @module
 */
import { nullable, optional, string, type, type Infer } from 'superstruct'
import { requestUserinfo } from '../core/oauth/exchange.js'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

const NOTION_HOST = 'https://api.notion.com'

/** The Notion API version the profile is read with. */
export const NOTION_API_VERSION = '2022-06-28'

/** The fields of the bot owner's user object that the mapping reads (others pass through untouched). */
export const NotionProfile = type({
  id: string(),
  name: optional(nullable(string())),
  avatar_url: optional(nullable(string())),
  person: optional(type({ email: optional(string()) })),
})
export type NotionProfile = Infer<typeof NotionProfile> & Record<string, unknown>

/** Options of {@link Notion}. */
export type NotionOptions = OAuthUserConfig<NotionProfile> & {
  /** Sent as the authorization request's `redirect_uri`, as in Auth.js (rarely needed). */
  redirectUri?: string
}

interface BotUser {
  bot?: { owner?: { user?: unknown } }
}

/** Creates the Notion provider. */
export default function Notion(options: NotionOptions = {}): OAuthConfig<NotionProfile> {
  return {
    id: 'notion',
    name: 'Notion',
    type: 'oauth',
    ...OAUTH_FLOW,
    token: { url: `${NOTION_HOST}/v1/oauth/token` },
    userinfo: {
      url: `${NOTION_HOST}/v1/users`,
      request: async (context) => {
        const me = (await requestUserinfo(context, {
          url: `${NOTION_HOST}/v1/users/me`,
          headers: { 'Notion-Version': NOTION_API_VERSION },
        })) as BotUser
        return me.bot?.owner?.user
      },
    },
    authorization: {
      params: {
        client_id: options.clientId,
        response_type: 'code',
        owner: 'user',
        redirect_uri: options.redirectUri,
      },
      url: `${NOTION_HOST}/v1/oauth/authorize`,
    },
    profileSchema: NotionProfile,
    profile: (profile) => ({
      id: profile.id,
      name: profile.name,
      email: profile.person?.email,
      image: profile.avatar_url,
    }),
    style: { bg: '#fff', text: '#000' },
    options,
  } as OAuthConfig<NotionProfile>
}
