/**
 * What the password flows need of the adapter: a password hash per user, read and written by
 * user id. Declared here, beside the flows that call it, as an addition to the adapter interface:
 * the Auth.js interface has no such methods, and an adapter without them is refused at load when a
 * `Password` provider is configured (the flows declare them in `adapter.methods`).
 *
 * The hash lives behind its own two methods (its own table in PostgreSQL), never on the user row
 * or an account row: users and accounts are handed to the callbacks, the events and the session,
 * and a hash on either would travel with them.
 *
 * @module
 */
import type { Adapter, Awaitable } from '../../shapes.js'

declare module '../../shapes.js' {
  interface Adapter {
    /**
     * The stored password hash of `userId` (a PHC string, or an imported format), or `null` when
     * the user has none (signed up with OAuth, e-mail or a passkey, or removed it).
     */
    getUserPassword?(userId: string): Awaitable<string | null>
    /** Stores `hash` as the password of `userId`, replacing any; `null` removes it. */
    setUserPassword?(userId: string, hash: string | null): Awaitable<void>
  }
}

/** The adapter methods every password flow calls. */
export const PASSWORD_METHODS = ['getUserByEmail', 'getUser', 'createUser', 'updateUser', 'getUserPassword', 'setUserPassword'] as const

/** The two password methods, as an adapter implements them. */
export type PasswordMethods = Required<Pick<Adapter, 'getUserPassword' | 'setUserPassword'>>
