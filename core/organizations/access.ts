/**
 * What a session may do in its active organisation: read from the adapter on every call. The
 * session names the user and the organisation it acts in; neither the role nor the status is taken
 * from it, so a removed, suspended or demoted member loses the permission on their next request,
 * on every instance (the membership is re-read, as revocation is).
 *
 * @module
 */
import type { ResolvedConfig } from '../config/types.js'
import { ConfigError } from '../errors.js'
import type { AdapterMembership, AdapterOrganization } from './types.js'
import type { OrganizationsModule } from '../config/types.js'
import { permissionOf, roleAllows, type Permission } from './roles.js'

/** What `can()` reads of a session: the user's id and the organisation it acts in. */
export interface OrganizationSession {
  user?: { id?: string | null | undefined } | null | undefined
  /** The active organisation's id (set by the application or the switch route). */
  activeOrganizationId?: string | null | undefined
}

/** The active organisation of a session, with the membership that makes it so. */
export interface ActiveOrganization {
  organization: AdapterOrganization
  membership: AdapterMembership
}

/**
 * The organisations module and adapter of `config`.
 *
 * @throws {ConfigError} when the configuration does not name `organizations()`.
 */
function organizationsOf(config: ResolvedConfig): { module: OrganizationsModule; adapter: NonNullable<ResolvedConfig['adapter']> } {
  if (!config.organizations || !config.adapter) {
    throw new ConfigError("config.organizations: can() needs `organizations: organizations({ … })` with import { organizations } from 'authchart/organizations'", ['organizations'])
  }
  return { module: config.organizations, adapter: config.adapter }
}

/**
 * The session's active organisation, while the user's membership of it is active; `null`
 * otherwise (no user id, no organisation, no membership, or one invited, suspended or removed).
 */
export async function activeOrganizationOf(session: OrganizationSession | null | undefined, config: ResolvedConfig): Promise<ActiveOrganization | null> {
  const { adapter } = organizationsOf(config)
  const userId = session?.user?.id
  const organizationId = session?.activeOrganizationId
  if (typeof userId !== 'string' || userId === '' || typeof organizationId !== 'string' || organizationId === '') return null
  const membership = await adapter.getMembership!(organizationId, userId)
  // The store answers for the pair asked; a record for another pair is not trusted.
  if (!membership || membership.status !== 'active' || membership.userId !== userId || membership.organizationId !== organizationId) return null
  const organization = await adapter.getOrganization!(organizationId)
  if (!organization || organization.id !== organizationId) return null
  return { organization, membership }
}

/** Whether the session's user may do `permission` (`'resource:action'`) in its active organisation. */
export async function canIn(
  session: OrganizationSession | null | undefined,
  permission: string | Permission,
  config: ResolvedConfig,
): Promise<boolean> {
  const { module } = organizationsOf(config)
  const wanted = permissionOf(permission)
  const active = await activeOrganizationOf(session, config)
  return active !== null && roleAllows(module.roles, active.membership.role, wanted)
}
