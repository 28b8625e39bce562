/**
 * GitLab (gitlab.com, or a self-managed instance through `baseUrl`): OAuth 2 with PKCE, scope
 * `read_user`; the profile comes from `/api/v4/user`.
 *
 * @module
 */
import { nullable, number, optional, string, type, union, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The fields of `/api/v4/user` that the mapping reads (others pass through untouched). */
export const GitLabProfile = type({
  id: number(),
  sub: optional(union([string(), number()])),
  username: string(),
  name: optional(nullable(string())),
  email: optional(nullable(string())),
  avatar_url: optional(nullable(string())),
})
export type GitLabProfile = Infer<typeof GitLabProfile> & Record<string, unknown>

/** Options of {@link GitLab}. */
export type GitLabOptions = OAuthUserConfig<GitLabProfile> & {
  /** A self-managed instance, e.g. `https://gitlab.corp.example` (default `https://gitlab.com`). */
  baseUrl?: URL | string
}

/** Creates the GitLab provider. */
export default function GitLab(options: GitLabOptions = {}): OAuthConfig<GitLabProfile> {
  const url = new URL(String(options.baseUrl ?? 'https://gitlab.com'))
  // Auth.js appends to the URL as written, so an instance under a path needs a trailing slash.
  if (!url.pathname.endsWith('/')) url.pathname += '/'
  return {
    id: 'gitlab',
    name: 'GitLab',
    type: 'oauth',
    ...OAUTH_FLOW,
    authorization: `${url}oauth/authorize?scope=read_user`,
    token: `${url}oauth/token`,
    userinfo: `${url}api/v4/user`,
    profileSchema: GitLabProfile,
    profile: (profile) => ({
      id: profile.sub?.toString() ?? profile.id.toString(),
      name: profile.name ?? profile.username,
      email: profile.email,
      image: profile.avatar_url,
    }),
    style: { bg: '#FC6D26', text: '#fff' },
    options,
  } as OAuthConfig<GitLabProfile>
}
