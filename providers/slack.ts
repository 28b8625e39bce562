/**
 * Slack ("Sign in with Slack", OpenID Connect at `https://slack.com`), protected by a nonce only,
 * as Slack does not support PKCE for it.
 *
 * @module
 */
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { OidcClaims } from './oidc.js'

/** The ID token claims of a Slack user (the `https://slack.com/…` claims pass through). */
export type SlackProfile = OidcClaims

/** Creates the Slack provider. */
export default function Slack(options: OAuthUserConfig<SlackProfile> = {}): OAuthConfig<SlackProfile> {
  return {
    id: 'slack',
    name: 'Slack',
    type: 'oidc',
    issuer: 'https://slack.com',
    checks: ['nonce'],
    profileSchema: OidcClaims,
    style: { brandColor: '#611f69' },
    options,
  } as OAuthConfig<SlackProfile>
}
