/**
 * An in-memory adapter: the reference implementation of the adapter contract, for tests and
 * prototypes. Data lives in the process and is gone on restart. Every record handed out is a copy,
 * so callers cannot mutate the store behind its back.
 *
 * @module
 */
import type {
  Adapter,
  AdapterAccount,
  AdapterAuthenticator,
  AdapterCompletedStep,
  AdapterSecondFactor,
  AdapterSession,
  AdapterUser,
  VerificationToken,
} from '../core/adapters.js'
import { memoryOrganizations } from './memory-organizations.js'
import type { PasswordMethods } from '../core/flows/password/adapter.js'
import { memoryApiKeyMethods } from './memory-api-keys.js'
import { memoryServiceAccountMethods } from './memory-service-accounts.js'

const copy = <T extends object>(record: T): T => {
  const out = { ...record }
  for (const [key, value] of Object.entries(out)) {
    if (value instanceof Date) (out as Record<string, unknown>)[key] = new Date(value)
  }
  return out
}

const accountKey = (provider: string, providerAccountId: string) =>
  `${provider}\u0000${providerAccountId}`

/** The store behind a {@link MemoryAdapter}, for tests that read it directly. */
export interface MemoryStore {
  users: Map<string, AdapterUser>
  accounts: Map<string, AdapterAccount>
  sessions: Map<string, AdapterSession>
  verificationTokens: Map<string, VerificationToken>
  authenticators: Map<string, AdapterAuthenticator>
  secondFactors: Map<string, AdapterSecondFactor>
  /** Completed sign-in steps, by user id. */
  completedSteps: Map<string, AdapterCompletedStep[]>
  /** Password hashes (PHC strings), by user id: apart from the users, so no user read carries one. */
  passwords: Map<string, string>
}

/** Creates an empty store. */
export function createMemoryStore(): MemoryStore {
  return {
    users: new Map(),
    accounts: new Map(),
    sessions: new Map(),
    verificationTokens: new Map(),
    authenticators: new Map(),
    secondFactors: new Map(),
    completedSteps: new Map(),
    passwords: new Map(),
  }
}

/**
 * Creates an in-memory adapter over `store` (a new, empty one by default).
 *
 * @example
 * ```ts
 * import { MemoryAdapter } from 'authchart/adapters/memory'
 * const config = { adapter: MemoryAdapter(), providers, secret, trustHost: true }
 * ```
 */
export function MemoryAdapter(store: MemoryStore = createMemoryStore()): Required<Adapter> {
  const userByEmail = (email: string) =>
    [...store.users.values()].find((user) => user.email === email) ?? null

  return {
    ...memoryOrganizations(store),
    async createUser(user) {
      const id = user.id ?? crypto.randomUUID()
      if (store.users.has(id)) throw new Error(`user ${id} already exists`)
      if (user.email && userByEmail(user.email)) throw new Error('a user with this email exists')
      const stored = copy({ ...user, id })
      store.users.set(id, stored)
      return copy(stored)
    },
    async getUser(id) {
      const user = store.users.get(id)
      return user ? copy(user) : null
    },
    async getUserByEmail(email) {
      const user = userByEmail(email)
      return user ? copy(user) : null
    },
    async getUserByAccount({ provider, providerAccountId }) {
      const account = store.accounts.get(accountKey(provider, providerAccountId))
      const user = account ? store.users.get(account.userId) : undefined
      return user ? copy(user) : null
    },
    async updateUser(user) {
      const stored = store.users.get(user.id)
      if (!stored) throw new Error(`user ${user.id} does not exist`)
      const updated = copy({ ...stored, ...user })
      store.users.set(user.id, updated)
      return copy(updated)
    },
    async deleteUser(userId) {
      const user = store.users.get(userId)
      if (!user) return null
      store.users.delete(userId)
      // Deleting a user deletes everything that belongs to it.
      for (const [key, session] of store.sessions) if (session.userId === userId) store.sessions.delete(key)
      for (const [key, account] of store.accounts) if (account.userId === userId) store.accounts.delete(key)
      store.completedSteps.delete(userId)
      for (const [key, a] of store.authenticators) if (a.userId === userId) store.authenticators.delete(key)
      for (const [key, f] of store.secondFactors) if (f.userId === userId) store.secondFactors.delete(key)
      store.passwords.delete(userId)
      return copy(user)
    },
    async createUserAndAccount(user, account) {
      const id = user.id ?? crypto.randomUUID()
      const key = accountKey(account.provider, account.providerAccountId)
      // Every check before either write: both records are stored, or neither.
      if (store.users.has(id)) throw new Error(`user ${id} already exists`)
      if (user.email && userByEmail(user.email)) throw new Error('a user with this email exists')
      if (store.accounts.has(key)) throw new Error('this account is already linked')
      const storedUser = copy({ ...user, id })
      const storedAccount = copy({ ...account, userId: id })
      store.users.set(id, storedUser)
      store.accounts.set(key, storedAccount)
      return { user: copy(storedUser), account: copy(storedAccount) }
    },
    async linkAccount(account) {
      const key = accountKey(account.provider, account.providerAccountId)
      if (store.accounts.has(key)) throw new Error('this account is already linked')
      if (!store.users.has(account.userId)) throw new Error(`user ${account.userId} does not exist`)
      store.accounts.set(key, copy(account))
      return copy(account)
    },
    async updateAccount(account) {
      const key = accountKey(account.provider, account.providerAccountId)
      const stored = store.accounts.get(key)
      if (!stored) return null
      const updated = copy({ ...stored, ...account, userId: stored.userId })
      store.accounts.set(key, updated)
      return copy(updated)
    },
    async listAccounts(userId) {
      return [...store.accounts.values()].filter((a) => a.userId === userId).map(copy)
    },
    async unlinkAccount({ provider, providerAccountId }) {
      const key = accountKey(provider, providerAccountId)
      const account = store.accounts.get(key)
      store.accounts.delete(key)
      return account ? copy(account) : undefined
    },
    async createSession(session) {
      if (!store.users.has(session.userId)) throw new Error(`user ${session.userId} does not exist`)
      if (store.sessions.has(session.sessionToken)) throw new Error('session token collision')
      // Lifecycle details only when the engine gives them: the row is otherwise exactly what was given.
      const stored = copy(session.createdAt ? { ...session, lastSeenAt: session.createdAt } : session)
      store.sessions.set(session.sessionToken, stored)
      return copy(stored)
    },
    async getSessionAndUser(sessionToken) {
      const session = store.sessions.get(sessionToken)
      const user = session ? store.users.get(session.userId) : undefined
      return session && user ? { session: copy(session), user: copy(user) } : null
    },
    async updateSession(session) {
      const stored = store.sessions.get(session.sessionToken)
      if (!stored) return null
      const updated = copy({ ...stored, ...session, ...(session.expires && stored.createdAt ? { lastSeenAt: new Date() } : {}) })
      store.sessions.set(session.sessionToken, updated)
      return copy(updated)
    },
    async listSessions(userId) {
      return [...store.sessions.values()].filter((session) => session.userId === userId).map(copy)
    },
    async getCompletedSteps(userId) {
      return (store.completedSteps.get(userId) ?? []).map(copy)
    },
    // A user the application keeps itself (credentials with JWT sessions) has no row here: its
    // steps are recorded under the id authorize returned, as its second factors are.
    async recordCompletedStep(userId, stepId, version) {
      const steps = store.completedSteps.get(userId) ?? []
      if (!steps.some((step) => step.stepId === stepId && step.version === version)) {
        store.completedSteps.set(userId, [...steps, { stepId, version }])
      }
    },
    async deleteSession(sessionToken) {
      const session = store.sessions.get(sessionToken)
      store.sessions.delete(sessionToken)
      return session ? copy(session) : null
    },
    async deleteProviderSessions({ provider, sid, sub }) {
      let deleted = 0
      for (const [key, { providerSession: signedInWith }] of store.sessions) {
        if (signedInWith?.provider !== provider) continue
        if (sid !== undefined && signedInWith.sid !== sid) continue
        if (sub !== undefined && signedInWith.sub !== sub) continue
        store.sessions.delete(key)
        deleted += 1
      }
      return deleted
    },
    async createVerificationToken(token) {
      store.verificationTokens.set(accountKey(token.identifier, token.token), copy(token))
      return copy(token)
    },
    async useVerificationToken({ identifier, token }) {
      // Single use: the token is removed in the same step that returns it, and only for the
      // identifier it was issued to.
      const key = accountKey(identifier, token)
      const stored = store.verificationTokens.get(key)
      store.verificationTokens.delete(key)
      return stored ? copy(stored) : null
    },
    async getAccount(providerAccountId, provider) {
      const account = store.accounts.get(accountKey(provider, providerAccountId))
      return account ? copy(account) : null
    },
    async getAuthenticator(credentialID) {
      const authenticator = store.authenticators.get(credentialID)
      return authenticator ? copy(authenticator) : null
    },
    async createAuthenticator(authenticator) {
      if (store.authenticators.has(authenticator.credentialID)) {
        throw new Error('this credential is already registered')
      }
      store.authenticators.set(authenticator.credentialID, copy(authenticator))
      return copy(authenticator)
    },
    async listAuthenticatorsByUserId(userId) {
      return [...store.authenticators.values()].filter((a) => a.userId === userId).map(copy)
    },
    async updateAuthenticatorCounter(credentialID, counter) {
      const authenticator = store.authenticators.get(credentialID)
      if (!authenticator) throw new Error(`authenticator ${credentialID} does not exist`)
      const updated = { ...authenticator, counter }
      store.authenticators.set(credentialID, updated)
      return copy(updated)
    },
    async listSecondFactors(userId) {
      return [...store.secondFactors.values()].filter((f) => f.userId === userId).map(copy)
    },
    async createSecondFactor(factor) {
      if (store.secondFactors.has(factor.id)) throw new Error(`second factor ${factor.id} already exists`)
      store.secondFactors.set(factor.id, copy(factor))
      return copy(factor)
    },
    async updateSecondFactor({ id, secret }) {
      const factor = store.secondFactors.get(id)
      if (!factor) return null
      const updated = { ...factor, secret }
      store.secondFactors.set(id, updated)
      return copy(updated)
    },
    async spendBackupCode({ id, hash }) {
      // Read and write with no await between them: atomic within the process.
      const factor = store.secondFactors.get(id)
      const hashes = factor?.type === 'backup-codes' ? factor.secret.split(' ').filter(Boolean) : []
      if (!factor || !hashes.includes(hash)) return false
      store.secondFactors.set(id, { ...factor, secret: hashes.filter((h) => h !== hash).join(' ') })
      return true
    },
    async deleteSecondFactor(id) {
      store.secondFactors.delete(id)
    },
    ...passwordMethods(store),
    ...memoryApiKeyMethods(store),
    ...memoryServiceAccountMethods(store),
  }
}

/** The password methods of the memory adapter (see `core/flows/password/adapter.ts`). */
function passwordMethods(store: MemoryStore): PasswordMethods {
  return {
    async getUserPassword(userId) {
      return store.passwords.get(userId) ?? null
    },
    async setUserPassword(userId, hash) {
      if (hash === null) {
        store.passwords.delete(userId)
        return
      }
      if (!store.users.has(userId)) throw new Error(`user ${userId} does not exist`)
      store.passwords.set(userId, hash)
    },
  }
}
