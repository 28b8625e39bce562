/**
 * A generic OAuth 2 provider: give it the endpoints (or an `issuer` with discovery) and a
 * `profile` mapping. The building block of every OAuth provider in this folder.
 *
 * @module
 */
import { FLOW_MODULE } from '../core/flows/kinds.js'
import type { OAuthConfig } from '../core/oauth/provider.js'
import type { Profile, UserOptions } from '../core/types.js'

export type {
  ClientAuthMethod,
  EndpointConfig,
  OAuthCheck,
  OAuthConfig,
  TokenSet,
} from '../core/oauth/provider.js'

/**
 * Spread into every OAuth and OIDC provider this package makes: the loader of the OAuth flow, so an
 * application bundles `oauth4webapi` and the flow only by importing such a provider.
 */
export const OAUTH_FLOW = { [FLOW_MODULE]: () => import('../core/flows/oauth/flow.js') } as const

/** What an application passes to a provider factory: any option, `clientId`/`clientSecret` above all. */
export type OAuthUserConfig<P extends object = Profile> = UserOptions<Omit<OAuthConfig<P>, 'options' | 'type'>>

/**
 * Creates an OAuth 2 provider.
 *
 * @example
 * ```ts
 * OAuth({
 *   id: 'acme', name: 'Acme',
 *   authorization: 'https://acme.example/oauth/authorize',
 *   token: 'https://acme.example/oauth/token',
 *   userinfo: 'https://acme.example/api/me',
 *   clientId: process.env.ACME_ID, clientSecret: process.env.ACME_SECRET,
 * })
 * ```
 */
export default function OAuth<P extends object = Profile>(
  options: OAuthUserConfig<P> & { id: string },
): OAuthConfig<P> {
  return { name: options?.id, ...OAUTH_FLOW, ...options, type: 'oauth' } as OAuthConfig<P>
}
