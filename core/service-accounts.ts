/**
 * Service accounts, brought in by their import: `serviceAccounts: serviceAccounts({ issuer })`
 * from `authchart/service-accounts`. A program holding an account's client credentials obtains a
 * short-lived access token by the OAuth 2.0 client credentials grant at
 * `POST {basePath}/oauth/token` (answered by `Auth`, or alone by {@link serviceAccountRoutes}), a JWT of the RFC 9068 profile
 * signed with a key of ours published at `GET {basePath}/jwks`; {@link verifyServiceToken}
 * answers the account and scopes a token carries, or the 401/403 to send.
 *
 * Without it the core links none of this, and a configuration names no adapter methods for it.
 *
 * @example
 * ```ts
 * import { serviceAccounts, serviceAccountRoutes, verifyServiceToken } from 'authchart/service-accounts'
 *
 * const config = { adapter, providers, serviceAccounts: serviceAccounts({ issuer: 'https://example.com/auth' }) }
 * const served = await serviceAccountRoutes(request, config)
 * const verified = await verifyServiceToken(request, config, { scopes: ['reports:read'] })
 * if (!verified.ok) return verified.response
 * ```
 *
 * @module
 */
import type { AdapterMethod } from './shapes.js'
import type { ServiceAccountsModule } from './config/types.js'
import { FEATURE } from './modules.js'
import type { ServiceAccountsOptions } from './service-accounts/types.js'
import { algorithmOf } from './service-accounts/keys.js'
import { serviceAccountRoutes } from './service-accounts/token.js'

export type { ServiceAccountsModule }
export type {
  AdapterServiceAccount,
  ResolvedServiceAccountsOptions,
  ServiceAccountAdapterMethods,
  ServiceAccountChange,
  ServiceAccountPublicJwk,
  ServiceAccountsOptions,
  SigningJwk,
} from './service-accounts/types.js'
export { verifyServiceToken } from './service-accounts/verify.js'
export type { ServiceTokenVerification, VerifiedServiceToken, VerifyServiceTokenOptions } from './service-accounts/verify.js'
export { serviceAccountRoutes, serviceJwks, serviceTokenEndpoint } from './service-accounts/token.js'
export { createServiceAccount, listServiceAccounts, revokeServiceAccount, rotateServiceAccountSecret } from './service-accounts/manage.js'
export type { IssuedServiceAccount, ListedServiceAccount, NewServiceAccount } from './service-accounts/manage.js'

/** Seconds an access token lives by default: five minutes. */
export const DEFAULT_TOKEN_TTL = 300
/** The longest an access token may live: one hour. */
export const MAX_TOKEN_TTL = 3600

const ADAPTER_METHODS: readonly AdapterMethod[] = Object.freeze([
  'createServiceAccount',
  'getServiceAccount',
  'listServiceAccounts',
  'listOrganizationServiceAccounts',
  'updateServiceAccount',
])

/** Whether `value` is an absolute https URL, or http on a loopback host (development). */
function isIssuerUrl(value: string): boolean {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return false
  }
  if (url.search || url.hash || url.username || url.password) return false
  return url.protocol === 'https:' || (url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname))
}

/**
 * The service-account module. The adapter must have `createServiceAccount`, `getServiceAccount`,
 * `listServiceAccounts`, `listOrganizationServiceAccounts` and `updateServiceAccount` (the memory
 * and PostgreSQL adapters do): the configuration is refused at load otherwise.
 *
 * The issuer is configured, never taken from a request's Host: a token's `iss` must not be
 * something a client can choose.
 *
 * @throws {TypeError} for an issuer or audience that is not an https URL (http on loopback), a
 *   token lifetime outside 1–3,600 s, signing keys that are not Ed25519 or P-256 JWKs (the first
 *   with its private part), or a client limit that is not positive whole numbers.
 */
export function serviceAccounts(options: ServiceAccountsOptions): ServiceAccountsModule {
  const { issuer, audience } = options ?? {}
  if (typeof issuer !== 'string' || !isIssuerUrl(issuer)) throw new TypeError('serviceAccounts({ issuer }) is an https URL (http only on loopback)')
  if (audience !== undefined && (typeof audience !== 'string' || audience.length === 0 || audience.length > 512)) {
    throw new TypeError('serviceAccounts({ audience }) is a string')
  }
  const tokenTtl = options.tokenTtl ?? DEFAULT_TOKEN_TTL
  if (!Number.isSafeInteger(tokenTtl) || tokenTtl < 1 || tokenTtl > MAX_TOKEN_TTL) {
    throw new TypeError(`serviceAccounts({ tokenTtl }) is a whole number of seconds from 1 to ${MAX_TOKEN_TTL}`)
  }
  const signingKeys = options.signingKeys
  if (signingKeys !== undefined) {
    if (!Array.isArray(signingKeys) || signingKeys.length === 0) throw new TypeError('serviceAccounts({ signingKeys }) lists at least one key')
    signingKeys.forEach(algorithmOf)
    if (typeof signingKeys[0]!.d !== 'string') throw new TypeError('the first of serviceAccounts({ signingKeys }) signs: it needs its private part `d`')
  }
  const clientLimit = options.clientLimit ?? { points: 20, window: 60 }
  if (![clientLimit.points, clientLimit.window].every((value) => Number.isSafeInteger(value) && value > 0)) {
    throw new TypeError('serviceAccounts({ clientLimit }) is { points, window }, positive whole numbers')
  }
  return Object.freeze({
    [FEATURE]: 'service-accounts' as const,
    options: Object.freeze({
      issuer,
      audience,
      tokenTtl,
      signingKeys: signingKeys && Object.freeze(signingKeys.map((key) => Object.freeze({ ...key }))),
      clientLimit: Object.freeze({ points: clientLimit.points, window: clientLimit.window }),
    }),
    adapterMethods: ADAPTER_METHODS,
    serve: serviceAccountRoutes,
  })
}
