/**
 * The membership check of the features that act for an organisation (its API keys, its service
 * accounts): the user's active membership re-read from the adapter, and whether its role allows
 * what is asked.
 *
 * @module
 */
import type { ResolvedConfig } from '../config/types.js'
import { permissionOf, roleAllows } from './roles.js'
import type { AdapterMembership } from './types.js'

/** `userId`'s active membership of `organizationId`, re-read; `null` without organisations or one. */
export async function activeMembership(resolved: ResolvedConfig, organizationId: string, userId: string): Promise<AdapterMembership | null> {
  const getMembership = resolved.organizations ? resolved.adapter?.getMembership : undefined
  if (!getMembership) return null
  const membership = await getMembership(organizationId, userId)
  // The store answers for the pair asked; a record for another pair is not trusted.
  if (!membership || membership.status !== 'active' || membership.organizationId !== organizationId || membership.userId !== userId) return null
  return membership
}

/**
 * Whether `userId` may do every one of `actions` on `resource` in `organizationId`, and `null` when
 * they are no active member of it (the organisation is none of theirs).
 */
export async function organizationAllows(
  resolved: ResolvedConfig,
  organizationId: string,
  userId: string,
  resource: string,
  actions: readonly string[],
): Promise<{ membership: AdapterMembership; allowed: boolean } | null> {
  const membership = await activeMembership(resolved, organizationId, userId)
  if (!membership) return null
  const roles = resolved.organizations!.roles
  return { membership, allowed: actions.every((action) => roleAllows(roles, membership.role, { resource, action })) }
}

/**
 * Whether `scopes` (`resource:action` each) are within `membership`'s role: an owner may give any,
 * anyone else only what their role allows (a key or an account never holds more than its creator).
 */
export function scopesWithinRole(resolved: ResolvedConfig, membership: AdapterMembership, scopes: readonly string[]): boolean {
  if (membership.role === 'owner') return true
  const roles = resolved.organizations!.roles
  return scopes.every((scope) => roleAllows(roles, membership.role, permissionOf(scope)))
}
