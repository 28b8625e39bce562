/**
 * The API-key methods of the memory adapter (see `core/api-keys/types.ts`). The keys live beside
 * the {@link MemoryStore} they are spread over, so two adapters over one store (two instances in a
 * test) see the same keys, and a revocation on one is seen at once on the other.
 *
 * @module
 */
import type { AdapterApiKey, ApiKeyAdapterMethods } from '../core/api-keys/types.js'

const keysByStore = new WeakMap<object, Map<string, AdapterApiKey>>()

function keysOf(store: object): Map<string, AdapterApiKey> {
  let keys = keysByStore.get(store)
  if (!keys) keysByStore.set(store, (keys = new Map()))
  return keys
}

const copy = (key: AdapterApiKey): AdapterApiKey => ({
  ...key,
  scopes: [...key.scopes],
  createdAt: new Date(key.createdAt),
  expiresAt: key.expiresAt && new Date(key.expiresAt),
  revokedAt: key.revokedAt && new Date(key.revokedAt),
  lastUsedAt: key.lastUsedAt && new Date(key.lastUsedAt),
  previousUntil: key.previousUntil && new Date(key.previousUntil),
})

/** The API-key methods over the keys kept beside `store`. */
export function memoryApiKeyMethods(store: object): Required<ApiKeyAdapterMethods> {
  const keys = keysOf(store)
  return {
    async createApiKey(key) {
      if (keys.has(key.id)) throw new Error(`an API key with id ${key.id} exists`)
      keys.set(key.id, copy(key))
      return copy(key)
    },
    async getApiKey(id) {
      const key = keys.get(id)
      return key ? copy(key) : null
    },
    async listApiKeys(userId) {
      return [...keys.values()].filter((key) => key.userId === userId).map(copy)
    },
    async listOrganizationApiKeys(organizationId) {
      return [...keys.values()].filter((key) => key.organizationId === organizationId).map(copy)
    },
    async updateApiKey(change) {
      const key = keys.get(change.id)
      if (!key) return null
      const defined = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined))
      const updated = copy({ ...key, ...defined, id: key.id, userId: key.userId, organizationId: key.organizationId ?? null })
      keys.set(key.id, updated)
      return copy(updated)
    },
  }
}
