/**
 * The management routes of organisations, each `POST {basePath}/organization/<segment>` with a JSON
 * body (CSRF-checked by the route), for the signed-in user only:
 *
 * - `create` `{ slug, name }`: a new organisation, its creator its owner;
 * - `role` `{ userId, role }`: changes a member's role;
 * - `remove` `{ userId }`: removes a member (or the user themselves: leaving).
 *
 * `role` and `remove` act in the user's ACTIVE organisation, its membership re-read: a body that
 * names another organisation is refused, so an admin of one organisation cannot reach another by
 * its id. Nobody grants a role above their own, nor acts on a member ranked above them, and the
 * last owner can neither leave, be removed nor be demoted.
 *
 * @module
 */
import type { RequestContext } from '../config/types.js'
import { JSON_NO_STORE_HEADERS } from '../http/handlers.js'
import { currentSession } from '../session/current.js'
import type { ResponseInternal } from '../types.js'
import { activeMembershipOf } from './active.js'
import { mayGrant, roleAllows, type Roles } from './roles.js'
import type { AdapterMembership, AdapterOrganization } from './types.js'

/** A refusal's code, as the JSON body names it. */
export type ManagementRefusal =
  | 'InvalidRequest'
  | 'NoActiveOrganization'
  | 'NotActiveOrganization'
  | 'Forbidden'
  | 'NotAMember'
  | 'UnknownRole'
  | 'LastOwner'
  | 'SlugTaken'

const STATUS: Record<ManagementRefusal, number> = {
  InvalidRequest: 400,
  NoActiveOrganization: 403,
  NotActiveOrganization: 403,
  Forbidden: 403,
  NotAMember: 404,
  UnknownRole: 400,
  LastOwner: 409,
  SlugTaken: 409,
}

function json(ctx: RequestContext, body: unknown, status = 200): ResponseInternal {
  return { status, headers: JSON_NO_STORE_HEADERS, body, cookies: ctx.setCookies }
}

const refuse = (ctx: RequestContext, error: ManagementRefusal) => json(ctx, { error }, STATUS[error])

/** A slug: lower-case letters, digits and inner hyphens, 2 to 48 characters. */
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])$/

const stringField = (body: Readonly<Record<string, unknown>> | undefined, name: string, max = 256): string | undefined => {
  const value = body?.[name]
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined
}

const membershipAnswer = (membership: AdapterMembership) => ({
  organizationId: membership.organizationId,
  userId: membership.userId,
  role: membership.role,
  status: membership.status,
})

const organizationAnswer = (organization: AdapterOrganization) => ({ id: organization.id, slug: organization.slug, name: organization.name })

/** `create`: a new organisation whose owner is the signed-in user. */
async function createOrganization(ctx: RequestContext, userId: string): Promise<ResponseInternal> {
  const body = ctx.request.body
  const slug = stringField(body, 'slug', 48)
  const name = stringField(body, 'name', 200)
  if (slug === undefined || !SLUG.test(slug) || name === undefined) return refuse(ctx, 'InvalidRequest')
  const adapter = ctx.config.adapter!
  if (await adapter.getOrganizationBySlug!(slug)) return refuse(ctx, 'SlugTaken')
  const createdAt = new Date(ctx.at * 1000)
  const organization: AdapterOrganization = { id: crypto.randomUUID(), slug, name, verifiedDomains: [], metadata: {}, createdAt }
  try {
    await adapter.createOrganization!(organization)
  } catch (error) {
    // A concurrent creation took the slug between the read and the write: the store refused it.
    if (await adapter.getOrganizationBySlug!(slug)) return refuse(ctx, 'SlugTaken')
    throw error
  }
  await adapter.createMembership!({ organizationId: organization.id, userId, role: 'owner', status: 'active', createdAt })
  return json(ctx, { organization: organizationAnswer(organization), role: 'owner' }, 201)
}

/** Whether `membership` is the only active owner of its organisation. */
async function isLastOwner(ctx: RequestContext, membership: AdapterMembership): Promise<boolean> {
  if (membership.role !== 'owner' || membership.status !== 'active') return false
  const members = await ctx.config.adapter!.listMemberships!(membership.organizationId)
  return !members.some((other) => other.userId !== membership.userId && other.role === 'owner' && other.status === 'active')
}

/**
 * The actor's active membership and the target's membership of the same organisation, or the
 * refusal: no active organisation, a body naming another one, no such member.
 */
async function actorAndTarget(
  ctx: RequestContext,
  userId: string,
): Promise<{ actor: AdapterMembership; target: AdapterMembership } | ManagementRefusal> {
  const actor = await activeMembershipOf(ctx, userId)
  if (!actor) return 'NoActiveOrganization'
  const named = ctx.request.body?.organizationId
  // The organisation acted in is the active one; a body naming another is a forged or stale id.
  if (named !== undefined && named !== actor.organizationId) return 'NotActiveOrganization'
  const targetId = stringField(ctx.request.body, 'userId')
  if (targetId === undefined) return 'InvalidRequest'
  const target = await ctx.config.adapter!.getMembership!(actor.organizationId, targetId)
  if (!target || target.status === 'removed' || target.organizationId !== actor.organizationId || target.userId !== targetId) return 'NotAMember'
  return { actor, target }
}

/** `role`: gives a member of the active organisation another role. */
async function changeRole(ctx: RequestContext, userId: string, roles: Roles): Promise<ResponseInternal> {
  const found = await actorAndTarget(ctx, userId)
  if (typeof found === 'string') return refuse(ctx, found)
  const { actor, target } = found
  const role = stringField(ctx.request.body, 'role', 64)
  if (role === undefined || !Object.hasOwn(roles, role)) return refuse(ctx, 'UnknownRole')
  if (!roleAllows(roles, actor.role, { resource: 'member', action: 'update' })) return refuse(ctx, 'Forbidden')
  // Never a role above the actor's own, and never a member ranked above them (an admin demoting an owner).
  if (!mayGrant(roles, actor.role, role) || !mayGrant(roles, actor.role, target.role)) return refuse(ctx, 'Forbidden')
  if (role !== 'owner' && (await isLastOwner(ctx, target))) return refuse(ctx, 'LastOwner')
  const updated = await ctx.config.adapter!.updateMembership!({ organizationId: target.organizationId, userId: target.userId, role })
  if (!updated) return refuse(ctx, 'NotAMember')
  return json(ctx, { membership: membershipAnswer(updated) })
}

/** `remove`: removes a member of the active organisation, or the user themselves (leaving). */
async function removeMember(ctx: RequestContext, userId: string, roles: Roles): Promise<ResponseInternal> {
  const found = await actorAndTarget(ctx, userId)
  if (typeof found === 'string') return refuse(ctx, found)
  const { actor, target } = found
  const leaving = target.userId === actor.userId
  if (!leaving) {
    if (!roleAllows(roles, actor.role, { resource: 'member', action: 'remove' })) return refuse(ctx, 'Forbidden')
    if (!mayGrant(roles, actor.role, target.role)) return refuse(ctx, 'Forbidden')
  }
  if (await isLastOwner(ctx, target)) return refuse(ctx, 'LastOwner')
  const updated = await ctx.config.adapter!.updateMembership!({ organizationId: target.organizationId, userId: target.userId, status: 'removed' })
  if (!updated) return refuse(ctx, 'NotAMember')
  return json(ctx, { membership: membershipAnswer(updated) })
}

/** The management segments under `{basePath}/organization/`. */
export const MANAGEMENT_SEGMENTS = Object.freeze(['create', 'role', 'remove'] as const)

/**
 * Serves `POST {basePath}/organization/<create | role | remove>`; `undefined` for another segment.
 * 401 `null` signed out.
 */
export async function manageOrganization(ctx: RequestContext, roles: Roles): Promise<ResponseInternal | undefined> {
  const segment = ctx.request.providerId
  if (segment !== 'create' && segment !== 'role' && segment !== 'remove') return undefined
  const current = await currentSession(ctx)
  if (!current) return json(ctx, null, 401)
  const userId = current.user.id
  if (segment === 'create') return createOrganization(ctx, userId)
  if (segment === 'role') return changeRole(ctx, userId, roles)
  return removeMember(ctx, userId, roles)
}
