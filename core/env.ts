/**
 * Configuration from environment variables and action URLs, as in Auth.js. Framework integrations
 * call {@link setEnvDefaults} once, at boot, with their platform's environment object.
 *
 * @module
 */
import { createLogger } from './logger.js'
import type { AuthAction, AuthConfig, Provider, ProviderConfig } from './types.js'

/** An environment: `process.env`, `import.meta.env`, a platform binding… */
export type EnvObject = Record<string, string | undefined>

/**
 * Fills configuration defaults from the environment, mutating `config`:
 *
 * - `basePath` from the path of `AUTH_URL` (unless set; then warns `env-url-basepath-redundant`),
 *   else `/auth`;
 * - `secret` from `AUTH_SECRET` and `AUTH_SECRET_1`…`_3`, newest first: `[S3, S2, S1, S]` (`[]`
 *   when none is set, as in Auth.js);
 * - `redirectProxyUrl` from `AUTH_REDIRECT_PROXY_URL`, `redirectProxyOrigins` from
 *   `AUTH_REDIRECT_PROXY_ORIGINS` (comma-separated origins);
 * - `trustHost` from the first *defined* of `AUTH_URL`, `AUTH_TRUST_HOST`, `VERCEL`, `CF_PAGES`,
 *   `NODE_ENV !== 'production'` (so `AUTH_TRUST_HOST=false` still trusts, as in Auth.js); a
 *   `trustHost` list gets `AUTH_URL`'s origin added;
 * - provider credentials from `AUTH_<ID>_ID`, `_SECRET`, `_ISSUER` (OAuth) and `_KEY` (email).
 */
export function setEnvDefaults(
  envObject: EnvObject,
  config: AuthConfig,
  suppressBasePathWarning = false,
): void {
  const url = envObject.AUTH_URL
  if (url) {
    if (config.basePath) {
      if (!suppressBasePathWarning) createLogger(config).warn('env-url-basepath-redundant')
    } else {
      try {
        config.basePath = new URL(url).pathname
      } catch {
        // An invalid AUTH_URL is ignored; the default below applies.
      }
    }
  }
  config.basePath ??= '/auth'

  if (!config.secret?.length) {
    // As Auth.js: `[]` when the environment has none, which the config check reports as MissingSecret.
    const secrets: string[] = []
    if (envObject.AUTH_SECRET) secrets.push(envObject.AUTH_SECRET)
    for (const i of [1, 2, 3]) {
      const secret = envObject[`AUTH_SECRET_${i}`]
      if (secret) secrets.unshift(secret)
    }
    config.secret = secrets
  }

  config.redirectProxyUrl ??= envObject.AUTH_REDIRECT_PROXY_URL
  const proxyOrigins = envObject.AUTH_REDIRECT_PROXY_ORIGINS?.split(',').map((o) => o.trim()).filter(Boolean)
  if (proxyOrigins?.length) config.redirectProxyOrigins ??= proxyOrigins
  // A list of trusted hosts also answers for AUTH_URL's: the integrations build every URL from it.
  if (Array.isArray(config.trustHost) && envObject.AUTH_URL && URL.canParse(envObject.AUTH_URL)) {
    const { origin } = new URL(envObject.AUTH_URL)
    if (!config.trustHost.includes(origin)) config.trustHost = [...config.trustHost, origin]
  }
  config.trustHost ??= Boolean(
    envObject.AUTH_URL ??
      envObject.AUTH_TRUST_HOST ??
      envObject.VERCEL ??
      envObject.CF_PAGES ??
      envObject.NODE_ENV !== 'production',
  )

  config.providers = config.providers.map((provider) => {
    const factory = typeof provider === 'function' ? (provider as (o: object) => ProviderConfig) : undefined
    const { id } = factory ? factory({}) : (provider as ProviderConfig)
    const key = id.toUpperCase().replace(/-/g, '_')
    const clientId = envObject[`AUTH_${key}_ID`]
    const clientSecret = envObject[`AUTH_${key}_SECRET`]
    const issuer = envObject[`AUTH_${key}_ISSUER`]
    const apiKey = envObject[`AUTH_${key}_KEY`]
    const final = (factory ? factory({ clientId, clientSecret, issuer, apiKey }) : provider) as ProviderConfig
    if (final.type === 'oauth' || final.type === 'oidc') {
      final.clientId ??= clientId
      final.clientSecret ??= clientSecret
      final.issuer ??= issuer
    } else if (final.type === 'email') {
      final.apiKey ??= apiKey
    }
    return final as Provider
  })
}

/**
 * The URL of an action: from `AUTH_URL` (or `NEXTAUTH_URL`), else from the `Host` /
 * `X-Forwarded-Host` and `X-Forwarded-Proto` headers, plus `basePath`.
 */
export function createActionURL(
  action: AuthAction,
  protocol: string,
  headers: Headers,
  envObject: EnvObject,
  config: Pick<AuthConfig, 'basePath' | 'logger' | 'debug'>,
): URL {
  const basePath = config?.basePath
  const envUrl = envObject.AUTH_URL ?? envObject.NEXTAUTH_URL
  let url: URL
  if (envUrl) {
    url = new URL(envUrl)
    if (basePath && basePath !== '/' && url.pathname !== '/') {
      if (url.pathname !== basePath) createLogger(config).warn('env-url-basepath-mismatch')
      url.pathname = '/'
    }
  } else {
    const host = headers.get('x-forwarded-host') ?? headers.get('host')
    const detected = headers.get('x-forwarded-proto') ?? protocol ?? 'https'
    url = new URL(`${detected.endsWith(':') ? detected : `${detected}:`}//${host}`)
  }
  const base = url.toString().replace(/\/$/, '')
  if (basePath) return new URL(`${base}/${basePath.replace(/(^\/|\/$)/g, '')}/${action}`)
  return new URL(`${base}/${action}`)
}
