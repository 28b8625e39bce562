/**
 * Slack ("Sign in with Slack", OpenID Connect at `https://slack.com`), protected by a nonce only,
 * as Slack does not support PKCE for it.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of a Slack user (the `https://slack.com/…` claims pass through). */
export type SlackProfile = OidcClaims

/** Creates the Slack provider. */
export default function Slack(options: OAuthUserConfig<SlackProfile> = {}): OAuthConfig<SlackProfile> {
  return oidcPreset(
    {
      id: 'slack',
      name: 'Slack',
      issuer: 'https://slack.com',
      checks: ['nonce'],
      style: { brandColor: '#611f69' },
    },
    options,
  )
}
