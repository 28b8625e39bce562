/**
 * Sign in with Apple, an OpenID Connect provider (`https://appleid.apple.com`): nonce and state,
 * `response_mode=form_post`, the client secret (a JWT the application signs) in the token request
 * body. Apple sends the user's name only once, on first consent, as JSON in the callback's `user`
 * field; it is added to the profile as `user`.
 *
 * @module
 */
import { assign, nullable, optional, string, type } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { OidcClaims, oidcPreset } from './oidc.js'

/** The `user` field Apple posts on first consent. */
export const AppleNonConformUser = type({
  name: optional(type({ firstName: optional(nullable(string())), lastName: optional(nullable(string())) })),
  email: optional(string()),
})

/** The ID token claims, with the first callback's `user`. */
export const AppleProfile = assign(OidcClaims, type({ user: optional(AppleNonConformUser) }))
export type AppleProfile = OidcClaims & {
  user?: { name?: { firstName?: string | null; lastName?: string | null }; email?: string }
}

/** The `user` field of Apple's callback, if it is a JSON object. */
function firstConsentUser(params: Readonly<Record<string, string>>): Record<string, unknown> | undefined {
  if (params.user === undefined) return undefined
  try {
    const user: unknown = JSON.parse(params.user)
    return typeof user === 'object' && user !== null && !Array.isArray(user) ? { user } : undefined
  } catch {
    return undefined
  }
}

/** Creates the Apple provider. */
export default function Apple(options: OAuthUserConfig<AppleProfile> = {}): OAuthConfig<AppleProfile> {
  return oidcPreset(
    {
      id: 'apple',
      name: 'Apple',
      issuer: 'https://appleid.apple.com',
      authorization: { params: { scope: 'name email', response_mode: 'form_post' } },
      callbackProfile: firstConsentUser,
      profileSchema: AppleProfile,
      profile: (profile) => {
        const name = profile.user?.name
        return {
          id: profile.sub,
          // Auth.js writes "First undefined" when a part is missing; the parts present are joined.
          name: name ? [name.firstName, name.lastName].filter(Boolean).join(' ') : profile.email,
          email: profile.email,
          image: null,
        }
      },
      client: { token_endpoint_auth_method: 'client_secret_post' },
      checks: ['nonce', 'state'],
      style: { text: '#fff', bg: '#000' },
    },
    options,
  )
}
