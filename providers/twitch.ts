/**
 * Twitch, an OpenID Connect provider (`https://id.twitch.tv/oauth2`) that asks for the e-mail,
 * picture and username claims in the ID token. Twitch's token response lists `scope` as an array
 * (RFC 6749 wants a string) and names its errors `message`; both are conformed.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of a Twitch user. */
export type TwitchProfile = OidcClaims

/** Rewrites Twitch's token response into RFC 6749's shape; `undefined` when it conforms already. */
export async function conformTwitchToken(response: Response): Promise<Response | undefined> {
  const body = (await response.json()) as Record<string, unknown>
  if (response.ok) {
    if (Array.isArray(body.scope)) body.scope = body.scope.join(' ')
    else if ('scope' in body && typeof body.scope !== 'string') delete body.scope
    else return undefined
  } else {
    if (typeof body.error === 'string') return undefined
    const { message } = body
    return Response.json(
      { error: 'invalid_request', ...(typeof message === 'string' ? { error_description: message } : {}) },
      { status: response.status },
    )
  }
  return Response.json(body, { status: response.status })
}

/** Creates the Twitch provider. */
export default function Twitch(options: OAuthUserConfig<TwitchProfile> = {}): OAuthConfig<TwitchProfile> {
  return oidcPreset(
    {
      id: 'twitch',
      name: 'Twitch',
      issuer: 'https://id.twitch.tv/oauth2',
      client: { token_endpoint_auth_method: 'client_secret_post' },
      authorization: {
        params: {
          scope: 'openid user:read:email',
          claims: { id_token: { email: null, picture: null, preferred_username: null } },
        },
      },
      token: { conform: conformTwitchToken },
      style: { bg: '#65459B', text: '#fff' },
    },
    options,
  )
}
