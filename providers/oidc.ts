/**
 * A generic OpenID Connect provider: an `issuer` is enough, everything else comes from its
 * discovery document. The profile is taken from the validated ID token (or from userinfo with
 * `idToken: false`).
 *
 * @module
 */
import { nullable, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { Profile } from '../core/types.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

export type { OAuthUserConfig } from './oauth.js'

const claim = () => optional(nullable(string()))

/**
 * The standard claims the default profile mapping reads (`sub`, then `name`, `nickname`,
 * `preferred_username`, `email`, `picture`); every other claim passes through untouched.
 */
export const OidcClaims = type({
  sub: string(),
  name: claim(),
  nickname: claim(),
  preferred_username: claim(),
  email: claim(),
  picture: claim(),
})
export type OidcClaims = Infer<typeof OidcClaims> & Record<string, unknown>

/**
 * Creates an OpenID Connect provider.
 *
 * @example
 * ```ts
 * OIDC({ id: 'corp', name: 'Corp SSO', issuer: 'https://sso.corp.example', clientId, clientSecret })
 * ```
 */
export default function OIDC<P extends object = Profile>(
  options: OAuthUserConfig<P> & { id: string; issuer: string },
): OAuthConfig<P> {
  return { name: options?.id, ...OAUTH_FLOW, ...options, type: 'oidc' } as OAuthConfig<P>
}

/**
 * A preset of an OpenID Provider: its defaults, with the ID token's standard claims as the profile
 * schema unless the preset names its own. Configuration only; the protocol is the generic one.
 */
export function oidcPreset<P extends object = OidcClaims>(
  preset: Omit<OAuthConfig<P>, 'type' | 'options'> & { id: string; name: string },
  options: OAuthUserConfig<P>,
): OAuthConfig<P> {
  return { type: 'oidc', profileSchema: OidcClaims, ...OAUTH_FLOW, ...preset, options } as OAuthConfig<P>
}
