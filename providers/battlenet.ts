/**
 * Battle.net, an OpenID Connect provider: the region's issuer is needed (`https://oauth.battle.net`,
 * `https://oauth.battlenet.com.cn`, `https://<us|eu|kr|tw>.battle.net/oauth`, or
 * `AUTH_BATTLENET_ISSUER`). Battle.net gives no e-mail address; the name is the BattleTag.
 *
 * @module
 */
import { assign, string, type } from 'superstruct'
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { OAuthUserConfig } from './oauth.js'
import { OidcClaims, oidcPreset } from './oidc.js'

/** The issuers Battle.net serves. */
export type BattleNetIssuer =
  | 'https://oauth.battle.net'
  | 'https://oauth.battlenet.com.cn'
  | 'https://www.battlenet.com.cn/oauth'
  | `https://${'us' | 'eu' | 'kr' | 'tw'}.battle.net/oauth`

/** The ID token claims the mapping reads. */
export const BattleNetProfile = assign(OidcClaims, type({ battle_tag: string() }))
export type BattleNetProfile = OidcClaims & { battle_tag: string }

/** Creates the Battle.net provider. */
export default function BattleNet(
  options: OAuthUserConfig<BattleNetProfile> & { issuer?: BattleNetIssuer } = {},
): OAuthConfig<BattleNetProfile> {
  return oidcPreset(
    {
      id: 'battlenet',
      name: 'Battle.net',
      profileSchema: BattleNetProfile,
      profile: (profile) => ({ id: profile.sub, name: profile.battle_tag, email: null, image: null }),
      style: { bg: '#148eff', text: '#fff' },
    },
    options,
  )
}
