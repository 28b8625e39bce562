/**
 * GitHub (and GitHub Enterprise Server through `enterprise.baseUrl`): OAuth 2 with PKCE; the
 * profile comes from `/user`, and the primary e-mail from `/user/emails` when the profile hides it.
 *
 * @module
 */
import { nullable, number, optional, string, type, type Infer } from 'superstruct'
import { requestUserinfo } from '../core/oauth/exchange.js'
import type { OAuthConfig, UserinfoContext } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of GitHub's `/user` that the mapping reads (others pass through untouched). */
export const GitHubProfile = type({
  id: number(),
  login: string(),
  name: optional(nullable(string())),
  email: optional(nullable(string())),
  avatar_url: optional(string()),
})
export type GitHubProfile = Infer<typeof GitHubProfile> & Record<string, unknown>

interface GitHubEmail {
  email: string
  primary: boolean
  verified: boolean
}

/** Options of {@link GitHub}. */
export interface GitHubOptions extends OAuthUserConfig<GitHubProfile> {
  /** GitHub Enterprise Server: its base URL, e.g. `https://github.corp.example`. */
  enterprise?: { baseUrl?: string }
}

async function fetchProfile(apiBaseUrl: string, context: UserinfoContext): Promise<unknown> {
  const headers = { 'User-Agent': 'authchart' }
  const profile = (await requestUserinfo(context, { headers })) as Record<string, unknown>
  if (!profile.email) {
    // The profile omits a private address; /user/emails has it (scope user:email).
    try {
      const list = (await requestUserinfo(context, { url: `${apiBaseUrl}/user/emails`, headers })) as GitHubEmail[]
      profile.email = (list.find((e) => e.primary) ?? list[0])?.email ?? null
    } catch {
      // Without the address list the profile goes on without an e-mail address, as in Auth.js.
    }
  }
  return profile
}

/** Creates the GitHub provider. */
export default function GitHub(options: GitHubOptions = {}): OAuthConfig<GitHubProfile> {
  const { enterprise, ...rest } = options
  const baseUrl = (enterprise?.baseUrl ?? 'https://github.com').replace(/\/$/, '')
  const apiBaseUrl = enterprise?.baseUrl ? `${baseUrl}/api/v3` : 'https://api.github.com'
  return {
    id: 'github',
    name: 'GitHub',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: { url: `${baseUrl}/login/oauth/authorize`, params: { scope: 'read:user user:email' } },
    token: `${baseUrl}/login/oauth/access_token`,
    userinfo: { url: `${apiBaseUrl}/user`, request: (context) => fetchProfile(apiBaseUrl, context) },
    profileSchema: GitHubProfile,
    profile: (profile) => ({
      id: String(profile.id),
      name: profile.name ?? profile.login,
      email: profile.email ?? null,
      image: profile.avatar_url ?? null,
    }),
    style: { brandColor: '#24292f', logo: 'https://authjs.dev/img/providers/github.svg' },
    options: rest,
  } as OAuthConfig<GitHubProfile>
}
