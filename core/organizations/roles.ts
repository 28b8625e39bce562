/**
 * Roles as data: each role is a set of statements `resource: actions[]`. The three built-in roles
 * (owner, admin, member) are ranked; a custom role ranks as the highest built-in role whose
 * permissions include all of its own, so that "no role above your own" has one meaning for both.
 *
 * @module
 */

/** A role's permissions: per resource, the actions it allows. */
export type RoleStatements = Readonly<Record<string, readonly string[]>>

/** A permission as `can()` asks for it: one action on one resource. */
export interface Permission {
  resource: string
  action: string
}

/** The built-in roles. */
export const BUILT_IN_ROLES = Object.freeze({
  owner: Object.freeze({
    organization: Object.freeze(['read', 'update', 'delete', 'transfer']),
    member: Object.freeze(['read', 'update', 'remove']),
    invitation: Object.freeze(['create', 'revoke']),
    apiKey: Object.freeze(['read', 'create', 'revoke']),
    serviceAccount: Object.freeze(['read', 'create', 'revoke']),
  }),
  admin: Object.freeze({
    organization: Object.freeze(['read', 'update']),
    member: Object.freeze(['read', 'update', 'remove']),
    invitation: Object.freeze(['create', 'revoke']),
    apiKey: Object.freeze(['read', 'create', 'revoke']),
    serviceAccount: Object.freeze(['read', 'create', 'revoke']),
  }),
  member: Object.freeze({
    organization: Object.freeze(['read']),
    member: Object.freeze(['read']),
  }),
}) satisfies Record<string, RoleStatements>

/** The name of a built-in role. */
export type BuiltInRole = keyof typeof BUILT_IN_ROLES

/** Built-in roles from lowest to highest. */
const RANKED: readonly BuiltInRole[] = ['member', 'admin', 'owner']

/** The roles of a configuration: the built-in ones, and its custom ones (which may not redefine them). */
export type Roles = Readonly<Record<string, RoleStatements>>

/**
 * The configuration's roles: the built-in ones and `custom`.
 *
 * @throws {TypeError} when a custom role redefines a built-in one, or its statements are not lists of action names.
 */
export function rolesOf(custom: Roles = {}): Roles {
  const roles: Record<string, RoleStatements> = { ...BUILT_IN_ROLES }
  for (const [name, statements] of Object.entries(custom)) {
    if (Object.hasOwn(BUILT_IN_ROLES, name)) throw new TypeError(`organizations.roles.${name}: a built-in role cannot be redefined`)
    if (typeof statements !== 'object' || statements === null) throw new TypeError(`organizations.roles.${name}: expected { resource: actions[] }`)
    const frozen: Record<string, readonly string[]> = {}
    for (const [resource, actions] of Object.entries(statements)) {
      if (!Array.isArray(actions) || !actions.every((action) => typeof action === 'string' && action.length > 0)) {
        throw new TypeError(`organizations.roles.${name}.${resource}: expected a list of action names`)
      }
      frozen[resource] = Object.freeze([...actions])
    }
    roles[name] = Object.freeze(frozen)
  }
  return Object.freeze(roles)
}

/** Whether `role` allows `permission` under `roles` (an unknown role allows nothing). */
export function roleAllows(roles: Roles, role: string, permission: Permission): boolean {
  if (!Object.hasOwn(roles, role)) return false
  const statements = roles[role]!
  if (!Object.hasOwn(statements, permission.resource)) return false
  return statements[permission.resource]!.includes(permission.action)
}

/** Whether every permission of `lower` (a role of `roles`) is also one of `higher`. */
function includes(roles: Roles, higher: string, lower: string): boolean {
  return Object.entries(roles[lower]!).every(([resource, actions]) => actions.every((action) => roleAllows(roles, higher, { resource, action })))
}

/**
 * The rank of `role`: a built-in role's place (member 0, admin 1, owner 2); a custom role ranks
 * as the lowest built-in role that has every one of its permissions, and as owner when none has
 * (a role over the application's own resources: only an owner grants it). An unknown role ranks
 * above every role, so nobody grants it.
 */
export function roleRank(roles: Roles, role: string): number {
  const builtIn = RANKED.indexOf(role as BuiltInRole)
  if (builtIn >= 0) return builtIn
  if (!Object.hasOwn(roles, role)) return Number.POSITIVE_INFINITY
  const lowestHolding = RANKED.findIndex((rank) => includes(roles, rank, role))
  return lowestHolding === -1 ? RANKED.length - 1 : lowestHolding
}

/**
 * Whether a member whose role is `granter` may give `role` to someone: an owner any configured
 * role; anyone else only a role whose every permission they hold themselves. That is never a role
 * ranked above their own: the built-in role that holds all of the granter's permissions holds all
 * of `role`'s too, so `role` ranks at or below it.
 */
export function mayGrant(roles: Roles, granter: string, role: string): boolean {
  if (!Object.hasOwn(roles, role) || !Object.hasOwn(roles, granter)) return false
  if (granter === 'owner') return true
  return includes(roles, granter, role)
}

/**
 * Parses `'resource:action'` into a permission.
 *
 * @throws {TypeError} when it is not of that form.
 */
export function permissionOf(permission: string | Permission): Permission {
  if (typeof permission !== 'string') return permission
  const match = /^([^:\s]+):([^:\s]+)$/.exec(permission)
  if (!match) throw new TypeError(`a permission is written "resource:action", got "${permission}"`)
  return { resource: match[1]!, action: match[2]! }
}
