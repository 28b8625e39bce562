import { MemoryAdapter, createMemoryStore } from '../../adapters/memory.js'
import { adapterContract } from './contract.js'

const store = createMemoryStore()
const adapter = MemoryAdapter(store)
const key = (a: string, b: string) => `${a}\u0000${b}`
const found = <T>(value: T | undefined) => (value === undefined ? null : structuredClone(value))

adapterContract('memory', () => ({
  adapter,
  db: {
    user: async (id) => found(store.users.get(id)),
    account: async ({ provider, providerAccountId }) => found(store.accounts.get(key(provider, providerAccountId))),
    session: async (token) => found(store.sessions.get(token)),
    verificationToken: async ({ identifier, token }) => found(store.verificationTokens.get(key(identifier, token))),
    authenticator: async (id) => found(store.authenticators.get(id)),
  },
}))
