/**
 * Google, an OpenID Connect provider: discovery from `https://accounts.google.com`, profile from
 * the ID token.
 *
 * @module
 */
import { boolean, optional, string, type, type Infer } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import { OAUTH_FLOW, type OAuthUserConfig } from './oauth.js'

/** The ID token claims Google sends (checked before `profile` runs). */
export const GoogleProfile = type({
  iss: string(),
  sub: string(),
  aud: string(),
  email: optional(string()),
  email_verified: optional(boolean()),
  name: optional(string()),
  given_name: optional(string()),
  family_name: optional(string()),
  picture: optional(string()),
  locale: optional(string()),
  hd: optional(string()),
})
export type GoogleProfile = Infer<typeof GoogleProfile>

/**
 * Creates the Google provider. Google verifies e-mail addresses, so
 * `allowDangerousEmailAccountLinking` is reasonable here when the application wants it.
 */
export default function Google(options: OAuthUserConfig<GoogleProfile> = {}): OAuthConfig<GoogleProfile> {
  return {
    id: 'google',
    name: 'Google',
    type: 'oidc',
    ...OAUTH_FLOW,
    issuer: 'https://accounts.google.com',
    profileSchema: GoogleProfile,
    style: { brandColor: '#1a73e8', logo: 'https://authjs.dev/img/providers/google.svg' },
    options,
  } as OAuthConfig<GoogleProfile>
}
