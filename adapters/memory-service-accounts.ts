/**
 * The service-account methods of the memory adapter (see `core/service-accounts/types.ts`). The
 * accounts live beside the {@link MemoryStore} they are spread over, so two adapters over one
 * store (two instances in a test) see the same accounts, and a revocation on one holds on the other.
 *
 * @module
 */
import type { AdapterServiceAccount, ServiceAccountAdapterMethods } from '../core/service-accounts/types.js'

const accountsByStore = new WeakMap<object, Map<string, AdapterServiceAccount>>()

function accountsOf(store: object): Map<string, AdapterServiceAccount> {
  let accounts = accountsByStore.get(store)
  if (!accounts) accountsByStore.set(store, (accounts = new Map()))
  return accounts
}

const copy = (account: AdapterServiceAccount): AdapterServiceAccount => ({
  ...account,
  organizationId: account.organizationId ?? null,
  scopes: [...account.scopes],
  publicJwk: account.publicJwk && { ...account.publicJwk },
  createdAt: new Date(account.createdAt),
  revokedAt: account.revokedAt && new Date(account.revokedAt),
})

/** The service-account methods over the accounts kept beside `store`. */
export function memoryServiceAccountMethods(store: object): Required<ServiceAccountAdapterMethods> {
  const accounts = accountsOf(store)
  return {
    async createServiceAccount(account) {
      if (accounts.has(account.id)) throw new Error(`a service account with id ${account.id} exists`)
      accounts.set(account.id, copy(account))
      return copy(account)
    },
    async getServiceAccount(id) {
      const account = accounts.get(id)
      return account ? copy(account) : null
    },
    async listServiceAccounts(userId) {
      return [...accounts.values()].filter((account) => account.userId === userId).map(copy)
    },
    async listOrganizationServiceAccounts(organizationId) {
      return [...accounts.values()].filter((account) => account.organizationId === organizationId).map(copy)
    },
    async updateServiceAccount(change) {
      const account = accounts.get(change.id)
      if (!account) return null
      const defined = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined))
      const updated = copy({ ...account, ...defined, id: account.id, userId: account.userId, organizationId: account.organizationId })
      accounts.set(account.id, updated)
      return copy(updated)
    },
  }
}
