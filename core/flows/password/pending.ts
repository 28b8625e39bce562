/**
 * A password chosen at sign-up, before its address is proven, is stored marked as pending. It
 * becomes the account's password only through the sign-up's own verification (which asks for it
 * again); if the address is proven another way first (an e-mailed sign-in link, a linked OAuth
 * account), the pending password is not the owner's and is removed at the next attempt to use it.
 * This is what keeps a sign-up made ahead of the owner (a pre-account takeover) from keeping a
 * way in once the owner arrives.
 *
 * @module
 */

const PENDING = 'pending:'

/** The stored form of a hash chosen before its address was proven. */
export const pendingHash = (hash: string): string => `${PENDING}${hash}`

/** Whether a stored hash still waits for its address to be proven. */
export const isPending = (stored: string): boolean => stored.startsWith(PENDING)

/** The hash itself, pending or not. */
export const hashOf = (stored: string): string => (isPending(stored) ? stored.slice(PENDING.length) : stored)
