/**
 * OAuth 2 / OIDC provider descriptions, normalised once when the config is resolved: endpoints
 * become URLs, checks a set, profile and account mappers get their defaults. A provider describes
 * an identity provider; it never drives the flow (the chart does).
 *
 * @module
 */
import type { Struct } from 'superstruct'
import { InvalidEndpoints } from '../errors.js'
import { customFetch } from '../symbols.js'
import type { Account, Awaitable, CommonProviderOptions, Profile, User } from '../types.js'

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
  readonly fetch?: typeof fetch
}

function endpointParams(endpoint: EndpointConfig | undefined): Record<string, string> {
  if (endpoint === undefined || typeof endpoint === 'string') return {}
  const params: Record<string, string> = {}
  for (const [key, value] of Object.entries(endpoint.params ?? {})) {
    if (value === undefined) continue
    params[key] = key === 'claims' ? JSON.stringify(value) : String(value)
  }
  return params
}

/** Whether `url` names a scheme (`https:`), rather than a path under the issuer. */
const isAbsolute = (url: string) => /^[a-z][a-z0-9+.-]*:/i.test(url)

/**
 * An endpoint as a URL. A relative one (`oauth/token`) is a path under the issuer, so a preset for
 * a provider with many instances (Mastodon) works with the issuer from `AUTH_<ID>_ISSUER`.
 *
 * @throws {InvalidEndpoints} for a relative endpoint without an issuer.
 */
function endpointUrl(endpoint: EndpointConfig | undefined, config: { id: string; issuer?: string }): URL | undefined {
  if (endpoint === undefined) return undefined
  const url = typeof endpoint === 'string' ? endpoint : endpoint.url
  if (url === undefined) return undefined
  if (!isAbsolute(url) && !config.issuer) {
    throw new InvalidEndpoints(`Provider "${config.id}" has the relative endpoint "${url}" but no \`issuer\` to resolve it against`)
  }
  const parsed = new URL(isAbsolute(url) ? url : `${config.issuer!.replace(/\/+$/, '')}/${url.replace(/^\/+/, '')}`)
  if (typeof endpoint !== 'string') {
    for (const [key, value] of Object.entries(endpoint.params ?? {})) {
      if (value === undefined) continue
      parsed.searchParams.set(key, key === 'claims' ? JSON.stringify(value) : String(value))
    }
  }
  return parsed
}

/** The profile mapping of Auth.js: `sub` (or `id`) and the standard claims. */
export function defaultProfile(profile: Record<string, unknown>): User & { id?: string } {
  const str = (value: unknown) => (typeof value === 'string' ? value : undefined)
  const id = profile.sub ?? profile.id
  return stripUndefined({
    id: id === undefined || id === null ? undefined : String(id),
    name: str(profile.name) ?? str(profile.nickname) ?? str(profile.preferred_username),
    email: str(profile.email),
    image: str(profile.picture),
  })
}

/** The token fields Auth.js stores on an account. */
export function defaultAccount(tokens: TokenSet): Partial<Account> {
  return stripUndefined({
    access_token: tokens.access_token,
    id_token: tokens.id_token,
    refresh_token: tokens.refresh_token,
    expires_at: tokens.expires_at,
    scope: tokens.scope,
    token_type: tokens.token_type?.toLowerCase() as Lowercase<string> | undefined,
    session_state: tokens.session_state as string | undefined,
  })
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}

/**
 * Normalises an OAuth provider. `redirectProxyUrl` is the provider's own, else the config's.
 *
 * @throws {InvalidEndpoints} when neither an issuer nor the needed endpoints are configured.
 */
export function resolveOAuthProvider(
  config: OAuthConfig<Record<string, unknown>>,
  redirectProxyUrl: string | undefined,
): ResolvedOAuthProvider {
  const authorization = endpointUrl(config.authorization, config)
  const token = endpointUrl(config.token, config)
  const userinfoConfig = typeof config.userinfo === 'string' ? { url: config.userinfo } : config.userinfo
  const userinfo = endpointUrl(
    userinfoConfig?.url ? { url: userinfoConfig.url, params: userinfoConfig.params ?? {} } : undefined,
    config,
  )
  if (!config.issuer) {
    const missing = !authorization
      ? 'authorization'
      : !token
        ? 'token'
        : !userinfo && !userinfoConfig?.request && config.type === 'oauth'
          ? 'userinfo'
          : undefined
    if (missing) {
      throw new InvalidEndpoints(
        `Provider "${config.id}" is missing both \`issuer\` and \`${missing}\` endpoint config. At least one of them is required`,
      )
    }
  }
  const checks = new Set<OAuthCheck>(config.checks ?? ['pkce'])
  const proxy = config.redirectProxyUrl ?? redirectProxyUrl
  const authorizationParams = endpointParams(config.authorization)
  const formPost =
    (authorizationParams.response_mode ?? authorization?.searchParams.get('response_mode')) === 'form_post'
  // A redirect proxy needs the state parameter to carry where the callback must go back to.
  if (proxy && !formPost) checks.add('state')
  const privateKey = config.clientPrivateKey
  return Object.freeze({
    id: config.id,
    name: config.name,
    type: config.type,
    ...(config.issuer ? { issuer: config.issuer } : {}),
    ...(authorization ? { authorization } : {}),
    authorizationParams,
    ...(token ? { token: token.href } : {}),
    ...(typeof config.token === 'object' && config.token.conform ? { conformToken: config.token.conform } : {}),
    ...(typeof config.token === 'object' && config.token.additionalParameters
      ? { tokenParameters: Object.freeze({ ...config.token.additionalParameters }) }
      : {}),
    ...(userinfo ? { userinfo: userinfo.href } : {}),
    ...(userinfoConfig?.request ? { userinfoRequest: userinfoConfig.request } : {}),
    ...(config.conformDiscovery ? { conformDiscovery: config.conformDiscovery } : {}),
    ...(config.idTokenIssuer ? { idTokenIssuer: config.idTokenIssuer } : {}),
    ...(config.callbackProfile ? { callbackProfile: config.callbackProfile } : {}),
    clientId: config.clientId ?? '',
    ...(config.clientSecret !== undefined ? { clientSecret: config.clientSecret } : {}),
    client: {
      ...config.client,
      token_endpoint_auth_method: config.client?.token_endpoint_auth_method ?? 'client_secret_basic',
    },
    ...(privateKey ? { clientPrivateKey: 'key' in privateKey ? privateKey : { key: privateKey } } : {}),
    checks,
    idToken: config.type === 'oidc' && config.idToken !== false,
    profile: (config.profile as ResolvedOAuthProvider['profile'] | undefined) ?? defaultProfile,
    account: config.account ?? defaultAccount,
    ...(config.profileSchema ? { profileSchema: config.profileSchema } : {}),
    allowDangerousEmailAccountLinking: config.allowDangerousEmailAccountLinking === true,
    ...(proxy && !formPost ? { redirectProxyUrl: `${proxy.replace(/\/$/, '')}/callback/${config.id}` } : {}),
    formPost,
    refreshTokens: config.refreshTokens === true,
    logout: config.logout === true,
    ...(config[customFetch] ? { fetch: config[customFetch] } : {}),
  })
}
