/**
 * The types the sign-in completion and the first factors share, in a leaf: a first factor's
 * flow names how it stores its user without importing the completion, and the completion calls
 * it without importing a first factor's code for its types.
 *
 * @module
 */
import type { SignInCompletionContext } from '../../machines/signin-completion.machine.js'
import type { RequestContext } from '../config/types.js'

/** A stored user and account, or a refusal to link them. */
export type StoredUser =
  | { user: Record<string, unknown>; account: Record<string, unknown>; isNewUser: boolean }
  | { notLinked: 'OAuthAccountNotLinked' | 'AccountNotLinked' }

/**
 * Stores the verified identity of one first factor: finds, links or creates the user. Throws on
 * outages (logged, the Configuration error); returns `notLinked` (after logging its own error)
 * when the identity belongs to someone else.
 */
export type UserStore = (ctx: RequestContext, context: SignInCompletionContext) => Promise<StoredUser>
