/**
 * Discord: OAuth 2 with PKCE, scopes `identify email`; the profile comes from `/users/@me`. A user
 * without an avatar gets Discord's default one (by the new username system's id, or the legacy
 * discriminator), written to the profile's `image_url` as Auth.js does.
 *
 * @module
 */
import { nullable, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/users/@me` that the mapping reads (others pass through untouched). */
export const DiscordProfile = type({
  id: string(),
  username: string(),
  discriminator: string(),
  global_name: optional(nullable(string())),
  avatar: nullable(string()),
  email: optional(nullable(string())),
})
export type DiscordProfile = Infer<typeof DiscordProfile> & Record<string, unknown>

/** The avatar URL of a Discord user, as Discord's CDN serves it. */
export function discordAvatarUrl(profile: Pick<DiscordProfile, 'id' | 'avatar' | 'discriminator'>): string {
  if (profile.avatar === null) {
    const index =
      profile.discriminator === '0' ? Number(BigInt(profile.id) >> BigInt(22)) % 6 : parseInt(profile.discriminator) % 5
    return `https://cdn.discordapp.com/embed/avatars/${index}.png`
  }
  const format = profile.avatar.startsWith('a_') ? 'gif' : 'png'
  return `https://cdn.discordapp.com/avatars/${profile.id}/${profile.avatar}.${format}`
}

/** Creates the Discord provider. */
export default function Discord(options: OAuthUserConfig<DiscordProfile> = {}): OAuthConfig<DiscordProfile> {
  return {
    id: 'discord',
    name: 'Discord',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: { url: 'https://discord.com/api/oauth2/authorize', params: { scope: 'identify email' } },
    token: 'https://discord.com/api/oauth2/token',
    userinfo: 'https://discord.com/api/users/@me',
    profileSchema: DiscordProfile,
    profile: (profile) => {
      profile.image_url = discordAvatarUrl(profile)
      return {
        id: profile.id,
        name: profile.global_name ?? profile.username,
        email: profile.email,
        image: profile.image_url as string,
      }
    },
    style: { bg: '#5865F2', text: '#fff' },
    options,
  } as OAuthConfig<DiscordProfile>
}
