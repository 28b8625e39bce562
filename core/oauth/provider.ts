/**
 * OAuth 2 / OIDC provider descriptions, normalised once when the config is resolved: endpoints
 * become URLs, checks a set, profile and account mappers get their defaults. A provider describes
 * an identity provider; it never drives the flow (the chart does).
 *
 * @module
 */
import { InvalidEndpoints } from '../errors.js'
import { customFetch } from '../symbols.js'
import type { Account, User } from '../shapes.js'
import type {
  ClientAuthMethod,
  EndpointConfig,
  OAuthCheck,
  OAuthConfig,
  ResolvedOAuthProvider,
  TokenSet,
  UserinfoContext,
} from './types.js'

export type { ClientAuthMethod, EndpointConfig, OAuthCheck, OAuthConfig, ResolvedOAuthProvider, TokenSet, UserinfoContext }

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
    par: config.par === true,
    dpop: config.dpop === true,
    ...(config[customFetch] ? { fetch: config[customFetch] } : {}),
  })
}
