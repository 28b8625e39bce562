/**
 * Organisations, brought in by their import: `organizations: organizations({ roles? })` from
 * `authchart/organizations`. Organisations, memberships and invitations are stored by the adapter
 * (the memory and PostgreSQL adapters have the methods; another adapter without them is refused at
 * load), and {@link can} answers what a session may do in its active organisation, re-reading the
 * membership from the adapter on every call.
 *
 * Without it the core links none of this.
 *
 * @example
 * ```ts
 * import { can, organizations } from 'authchart/organizations'
 *
 * const config = { adapter, providers, organizations: organizations({ roles: { billing: { invoice: ['read', 'pay'] } } }) }
 * if (!(await can(session, 'invoice:pay', config))) return new Response(null, { status: 403 })
 * ```
 *
 * @module
 */
import { assertConfig } from './config/resolve-config.js'
import { FEATURE } from './modules.js'
import type { AuthConfig } from './types.js'
import { activeOrganizationOf as activeOrganizationIn, canIn, type ActiveOrganization, type OrganizationSession } from './organizations/access.js'
import { rolesOf, type Permission, type Roles } from './organizations/roles.js'
import type { OrganizationAdapterMethod, OrganizationsModule } from './organizations/types.js'

export type { ActiveOrganization, OrganizationSession } from './organizations/access.js'
export { BUILT_IN_ROLES, mayGrant, roleAllows, roleRank, type BuiltInRole, type Permission, type RoleStatements, type Roles } from './organizations/roles.js'
export type {
  AdapterInvitation,
  AdapterMembership,
  AdapterOrganization,
  InvitationSettlement,
  InvitationStatus,
  MembershipStatus,
  OrganizationAdapterMethods,
  OrganizationsModule,
} from './organizations/types.js'

/** The options of {@link organizations}. */
export interface OrganizationsOptions {
  /** Custom roles beside owner, admin and member: `{ role: { resource: actions[] } }`. */
  roles?: Roles | undefined
}

/** Every adapter method the feature calls. */
const ADAPTER_METHODS: readonly OrganizationAdapterMethod[] = Object.freeze([
  'createOrganization',
  'getOrganization',
  'getOrganizationBySlug',
  'createMembership',
  'getMembership',
  'updateMembership',
  'listMemberships',
  'createInvitation',
  'getInvitation',
  'settleInvitation',
])

/**
 * The organisations feature.
 *
 * @throws {TypeError} when a custom role redefines a built-in one or is not `{ resource: actions[] }`.
 */
export function organizations(options: OrganizationsOptions = {}): OrganizationsModule {
  return Object.freeze({
    [FEATURE]: 'organizations' as const,
    roles: rolesOf(options.roles),
    adapterMethods: ADAPTER_METHODS,
  })
}

/**
 * Whether the session's user may do `permission` (`'resource:action'`, or `{ resource, action }`)
 * in the session's active organisation. The membership is read from the adapter on every call:
 * a role or status carried by the session is never trusted, and a user who is no longer an active
 * member has no permission. A session without a user id or an active organisation has none.
 *
 * @throws {ConfigError} when `config` does not name `organizations()`.
 */
export async function can(session: OrganizationSession | null | undefined, permission: string | Permission, config: AuthConfig): Promise<boolean> {
  return canIn(session, permission, assertConfig(config))
}

/** The session's active organisation and membership, while that membership is active; `null` otherwise. */
export async function activeOrganization(session: OrganizationSession | null | undefined, config: AuthConfig): Promise<ActiveOrganization | null> {
  return activeOrganizationIn(session, assertConfig(config))
}
