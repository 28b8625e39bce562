/**
 * API keys, brought in by their import: `apiKeys: apiKeys({ … })` from `authchart/api-keys`. A
 * signed-in user's programs present a key (`Authorization: Bearer <key>`, or a header of the
 * application's); {@link verifyApiKey} answers its owner and scopes, or the 401/403 to send.
 * A key is shown once (`<prefix>_<id>_<secret>`, 256 random bits), stored as a keyed hash, and
 * revoked at once on every instance that shares the adapter.
 *
 * Without it the core links none of this, and a configuration names no adapter methods for it.
 *
 * @example
 * ```ts
 * import { apiKeys, verifyApiKey } from 'authchart/api-keys'
 *
 * const config = { adapter, providers, apiKeys: apiKeys({ prefix: 'acme' }) }
 * const verified = await verifyApiKey(request, config, { scopes: ['reports:read'] })
 * if (!verified.ok) return verified.response
 * ```
 *
 * @module
 */
import type { AdapterMethod } from './shapes.js'
import type { ApiKeysModule } from './config/types.js'
import { FEATURE } from './modules.js'
import type { ApiKeysOptions } from './api-keys/types.js'
import { route } from './http/params.js'
import { manageApiKeys, respondApiKeys } from './api-keys/routes.js'

export type { ApiKeysModule }
export type { AdapterApiKey, ApiKeyAdapterMethods, ApiKeyChange, ApiKeysOptions, ResolvedApiKeysOptions } from './api-keys/types.js'
export { verifyApiKey } from './api-keys/verify.js'
export type { ApiKeyVerification, VerifiedApiKey, VerifyApiKeyOptions } from './api-keys/verify.js'
export { createApiKey, listApiKeys, revokeApiKey, rotateApiKey, MAX_SCOPES } from './api-keys/manage.js'
export type { ApiKeyRefusal, IssuedApiKey, ListedApiKey, NewApiKey } from './api-keys/manage.js'
export type { ApiKeyRouteRefusal } from './api-keys/routes.js'

/** Seconds an old secret keeps working after a rotation by default: 24 hours. */
export const DEFAULT_ROTATION_OVERLAP = 24 * 3600

const PREFIX = /^[a-z][a-z0-9]{0,15}$/
const HEADER = /^[a-z0-9!#$%&'*+.^_`|~-]+$/

/** The adapter methods API keys call. */
const ADAPTER_METHODS: readonly AdapterMethod[] = Object.freeze(['createApiKey', 'getApiKey', 'listApiKeys', 'listOrganizationApiKeys', 'updateApiKey'])

/**
 * The feature's routes: the signed-in user's keys, listed (`GET {basePath}/api-keys`) and created,
 * revoked or rotated (`POST {basePath}/api-keys`, JSON `{ action, … }`, see `api-keys/routes.ts`);
 * the POST CSRF-checked and gated as the sensitive action `manage-api-keys`, both through the one
 * authority for who is signed in.
 */
const ROUTES = Object.freeze([
  route({ method: 'GET', action: 'api-keys', provider: 'none', actsForUser: true, serve: respondApiKeys }),
  route({
    method: 'POST',
    action: 'api-keys',
    provider: 'none',
    csrf: true,
    failure: 'json-null',
    actsForUser: true,
    stepUp: () => 'manage-api-keys',
    serve: manageApiKeys,
  }),
])

/**
 * The API-key module. The adapter must have `createApiKey`, `getApiKey`, `listApiKeys`,
 * `listOrganizationApiKeys` and `updateApiKey` (the memory and PostgreSQL adapters do): the
 * configuration is refused at load otherwise.
 *
 * @throws {TypeError} for a prefix other than 1–16 lower-case letters and digits starting with a
 *   letter, a header name that is not a token, or an overlap that is not whole seconds ≥ 0.
 */
export function apiKeys(options: ApiKeysOptions = {}): ApiKeysModule {
  const prefix = options.prefix ?? 'ak'
  if (!PREFIX.test(prefix)) throw new TypeError('apiKeys({ prefix }) is 1 to 16 lower-case letters and digits, starting with a letter')
  const header = (options.header ?? 'authorization').toLowerCase()
  if (!HEADER.test(header)) throw new TypeError('apiKeys({ header }) is a header name')
  const rotationOverlap = options.rotationOverlap ?? DEFAULT_ROTATION_OVERLAP
  if (!Number.isSafeInteger(rotationOverlap) || rotationOverlap < 0) {
    throw new TypeError('apiKeys({ rotationOverlap }) is a whole number of seconds, 0 or more')
  }
  return Object.freeze({
    [FEATURE]: 'api-keys' as const,
    options: Object.freeze({ prefix, header, rotationOverlap }),
    adapterMethods: ADAPTER_METHODS,
    flows: Object.freeze([]),
    routes: ROUTES,
  })
}
