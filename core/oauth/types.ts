/**
 * The types of OAuth 2 and OpenID Connect providers: the configuration an application gives and
 * the normalised provider the flow runs on. A leaf (shapes and type-only imports), so the public
 * config types can name them without an import circle.
 *
 * @module
 */
import type { Struct } from 'superstruct'
import type { customFetch } from '../symbols.js'
import type { Account, Awaitable, CommonProviderOptions, Profile, User } from '../shapes.js'

/** Tokens from the token endpoint, with `expires_at` computed from `expires_in`. */
export interface TokenSet {
  access_token?: string
  token_type?: string
  id_token?: string
  refresh_token?: string
  scope?: string
  expires_in?: number
  expires_at?: number
  [key: string]: unknown
}

/** An endpoint as configured: a URL, or a URL with extra query parameters. */
export type EndpointConfig = string | { url?: string; params?: Record<string, unknown> }

/** How the client authenticates at the token endpoint (RFC 6749 §2.3, OIDC Core §9). */
export type ClientAuthMethod =
  | 'client_secret_basic'
  | 'client_secret_post'
  | 'client_secret_jwt'
  | 'private_key_jwt'
  | 'none'

/** The checks protecting an authorization code flow. */
export type OAuthCheck = 'pkce' | 'state' | 'nonce' | 'none'

/** Options of an OAuth 2 or OIDC provider (Auth.js-compatible, plus ours where noted). */
export interface OAuthConfig<P extends object = Profile> extends CommonProviderOptions {
  type: 'oauth' | 'oidc'
  /** Issuer identifier; endpoints come from its discovery document when not given. */
  issuer?: string | undefined
  authorization?: EndpointConfig
  token?: EndpointConfig & {
    /** Rewrites a provider's non-conforming token response before it is checked. */
    conform?: (response: Response) => Awaitable<Response | undefined>
    /** Ours: extra form fields of every token request (TikTok's `client_key`). */
    additionalParameters?: Record<string, string>
  }
  userinfo?:
    | string
    | {
        url?: string
        params?: Record<string, unknown>
        /** Fetches the profile itself, for providers without a standard userinfo endpoint. */
        request?: (context: UserinfoContext) => Awaitable<unknown>
      }
  /**
   * Ours: rewrites the discovery document before it is checked against `issuer`, for providers
   * whose document names an issuer template (Microsoft Entra ID's `{tenantid}`).
   */
  conformDiscovery?: (metadata: Record<string, unknown>) => Record<string, unknown>
  /**
   * Ours: the issuer the ID token must name, when it depends on who signed in (a multi-tenant
   * issuer: Entra ID's `common` endpoint answers with the user's tenant). Its signature is still
   * checked against the discovered keys.
   */
  idTokenIssuer?: (claims: Readonly<Record<string, unknown>>, discoveredIssuer: string) => string
  /**
   * Ours: profile fields the provider sends in the callback request itself, merged over the ID
   * token claims (Apple posts the user's name once, on first consent, as JSON in `user`).
   */
  callbackProfile?: (params: Readonly<Record<string, string>>) => Record<string, unknown> | undefined
  clientId?: string | undefined
  clientSecret?: string | undefined
  /** Client metadata: `token_endpoint_auth_method`, `id_token_signed_response_alg`, … */
  client?: { token_endpoint_auth_method?: ClientAuthMethod; [key: string]: unknown }
  /** For `private_key_jwt`: the key signing the client assertion. */
  clientPrivateKey?: CryptoKey | { key: CryptoKey; kid?: string }
  checks?: OAuthCheck[]
  /** OIDC: take the profile from the ID token (default) or, with `false`, from userinfo. */
  idToken?: boolean
  /** Maps the upstream profile to a user (its `id` becomes the account's providerAccountId). */
  profile?: (profile: P, tokens: TokenSet) => Awaitable<User & { id?: string }>
  /** Picks the token fields stored on the account. */
  account?: (tokens: TokenSet) => Partial<Account>
  /** Ours: the upstream profile's shape, checked with superstruct before `profile` runs. */
  profileSchema?: Struct<any, any>
  /** Link to an existing user with the same e-mail address (only for providers that verify it). */
  allowDangerousEmailAccountLinking?: boolean
  redirectProxyUrl?: string | undefined
  /** Ours, opt-in: refresh an expired access token on the session path. */
  refreshTokens?: boolean
  /** Ours, opt-in (OIDC): sign out at the provider too, through its `end_session_endpoint`. */
  logout?: boolean
  /**
   * Ours, opt-in: send the authorization request's parameters to the provider's pushed authorization
   * request endpoint (RFC 9126) and the browser with only a `request_uri`.
   */
  par?: boolean
  /**
   * Ours, opt-in: bind the tokens to a key pair made for each session (DPoP, RFC 9449); the code
   * exchange, refresh and userinfo requests carry proofs signed with it. The key pair is kept with a
   * JWT session's refresh tokens, sealed with the secret.
   */
  dpop?: boolean
  style?: { logo?: string; bg?: string; brandColor?: string; text?: string }
  [customFetch]?: typeof fetch
  options?: Record<string, unknown>
}

/** What a provider's own userinfo request receives. */
export interface UserinfoContext {
  tokens: TokenSet
  provider: ResolvedOAuthProvider
}

/** A provider after normalisation. */
export interface ResolvedOAuthProvider {
  readonly id: string
  readonly name: string
  readonly type: 'oauth' | 'oidc'
  readonly issuer?: string
  readonly authorization?: URL
  /** `authorization.params`, applied to the configured or discovered authorization endpoint. */
  readonly authorizationParams: Readonly<Record<string, string>>
  readonly token?: string
  readonly conformToken?: (response: Response) => Awaitable<Response | undefined>
  /** `token.additionalParameters`: extra fields of every token request body. */
  readonly tokenParameters?: Readonly<Record<string, string>>
  readonly userinfo?: string
  readonly userinfoRequest?: (context: UserinfoContext) => Awaitable<unknown>
  readonly conformDiscovery?: OAuthConfig['conformDiscovery']
  readonly idTokenIssuer?: OAuthConfig['idTokenIssuer']
  readonly callbackProfile?: OAuthConfig['callbackProfile']
  readonly clientId: string
  readonly clientSecret?: string
  readonly client: { token_endpoint_auth_method: ClientAuthMethod; [key: string]: unknown }
  readonly clientPrivateKey?: { key: CryptoKey; kid?: string }
  readonly checks: ReadonlySet<OAuthCheck>
  readonly idToken: boolean
  readonly profile: (profile: Record<string, unknown>, tokens: TokenSet) => Awaitable<User & { id?: string }>
  readonly account: (tokens: TokenSet) => Partial<Account>
  readonly profileSchema?: Struct<unknown, unknown>
  readonly allowDangerousEmailAccountLinking: boolean
  /** `<proxy>/callback/<id>` when a redirect proxy is configured. */
  readonly redirectProxyUrl?: string
  readonly formPost: boolean
  readonly refreshTokens: boolean
  readonly logout: boolean
  /** Pushed authorization requests (RFC 9126). */
  readonly par: boolean
  /** DPoP-bound tokens (RFC 9449). */
  readonly dpop: boolean
  readonly fetch?: typeof fetch
}
