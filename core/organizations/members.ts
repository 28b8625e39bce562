/**
 * Changes of memberships and of organisations, run by the membership chart
 * (`machines/organization-membership.*`), each `POST {basePath}/organization/<segment>` with a JSON
 * body (CSRF-checked by the route), for the signed-in user, in their ACTIVE organisation:
 *
 * - `suspend` / `reinstate` `{ userId }`: an active member suspended, a suspended one active again
 *   (`member:update`);
 * - `remove` `{ userId }`: a member removed (`member:remove`), or the user themselves (leaving);
 * - `leave` `{}`: the user leaves;
 * - `role` `{ userId, role }`: another role (`member:update`), never one above the actor's own;
 * - `transfer` `{ userId }`: an owner makes an active member the owner and becomes an admin
 *   (a sensitive action: a stale session proves a factor again first);
 * - `update` `{ slug?, name?, metadata? }`: the organisation changed (`organization:update`);
 * - `delete` `{}`: the organisation deleted with its memberships and invitations (an owner, after
 *   a recent proof).
 *
 * And `GET {basePath}/organization/members`: the active organisation's members (`member:read`).
 *
 * A body or query naming an organisation other than the active one is refused, and a member of
 * another organisation is one that does not exist: an id alone reaches nothing. The adapter applies
 * each membership change with a compare-and-set (`changeMembership`), so a change decided on a
 * membership that changed meanwhile is refused, and the last active owner can neither leave, be
 * removed, be suspended nor be demoted, however the requests race.
 *
 * @module
 */
import {
  ORGANIZATION_MEMBERSHIP,
  OrganizationMembershipContext,
  type MembershipAnswer,
  type MembershipIntent,
  type OrganizationAnswer,
  type OrganizationChanges,
} from '../../machines/organization-membership.logic.js'
import type { organizationMembershipMachine } from '../../machines/organization-membership.machine.js'
import { organizationMembershipChart } from '../charts/organization-membership.js'
import type { FlowModule, RequestContext } from '../config/types.js'
import { advanceNow } from '../engine/advance.js'
import { defineCompiledFlow } from '../engine/compiled-flow.js'
import { effects, fail } from '../flows/effect.js'
import { JSON_NO_STORE_HEADERS } from '../http/handlers.js'
import { notifyRun, observedRunOptions } from '../observe/notify.js'
import { currentSession } from '../session/current.js'
import type { ResponseInternal } from '../types.js'
import { activeMembershipOf } from './active.js'
import { mayGrant, roleAllows, type Permission, type Roles } from './roles.js'
import type { AdapterMembership, AdapterOrganization, MembershipFields, MembershipStatus } from './types.js'

type MembershipMachine = typeof organizationMembershipMachine

/** The segments the membership chart serves under `{basePath}/organization/`. */
export const MEMBERSHIP_SEGMENTS = Object.freeze(['suspend', 'reinstate', 'remove', 'leave', 'role', 'transfer', 'update', 'delete'] as const)
/** A change of a membership or of the organisation: `suspend`, `reinstate`, `remove`, `leave`, `role`, `transfer`, `update` or `delete`. */
export type MembershipSegment = (typeof MEMBERSHIP_SEGMENTS)[number]

/** The segment of the members list. */
export const MEMBERS_SEGMENT = 'members'

/** The segments that are the sensitive action `manage-organization` (a stale session proves a factor first). */
export const SENSITIVE_SEGMENTS: ReadonlySet<string> = new Set(['delete', 'transfer'])

const INTENT_OF_SEGMENT: Readonly<Record<MembershipSegment, `${'member' | 'organization'}.${string}`>> = {
  suspend: 'member.suspend',
  reinstate: 'member.reinstate',
  remove: 'member.remove',
  leave: 'member.leave',
  role: 'member.role',
  transfer: 'member.transfer',
  update: 'organization.update',
  delete: 'organization.delete',
}

/** A slug: lower-case letters, digits and inner hyphens, 2 to 48 characters. */
export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])$/

/** The largest metadata an organisation keeps, as JSON. */
export const MAX_METADATA_BYTES = 4096

const rolesOf = (ctx: RequestContext): Roles => ctx.config.organizations!.roles
const adapterOf = (ctx: RequestContext) => ctx.config.adapter!

const forbidden = (code = 'Forbidden') => fail('forbidden', { error: 'AccessDenied', code })
const invalid = (code = 'InvalidRequest') => fail('invalid', { error: 'AccessDenied', code })
const refused = (code: string) => fail('refused', { error: 'AccessDenied', code })

/** A membership as the answers show it. */
export const membershipAnswer = (membership: AdapterMembership): MembershipAnswer => ({
  organizationId: membership.organizationId,
  userId: membership.userId,
  role: membership.role,
  status: membership.status,
})

const organizationAnswer = (organization: AdapterOrganization): OrganizationAnswer => ({
  id: organization.id,
  slug: organization.slug,
  name: organization.name,
  metadata: organization.metadata,
})

/** The permission each member change needs of the actor's role (leaving needs none). */
const PERMISSION: Readonly<Partial<Record<MembershipIntent, Permission>>> = {
  suspend: { resource: 'member', action: 'update' },
  reinstate: { resource: 'member', action: 'update' },
  role: { resource: 'member', action: 'update' },
  remove: { resource: 'member', action: 'remove' },
  transfer: { resource: 'organization', action: 'transfer' },
  update: { resource: 'organization', action: 'update' },
  delete: { resource: 'organization', action: 'delete' },
}

/** The statuses each change starts from, and what it changes. */
function changeOf(intent: MembershipIntent, role: string | null): { from: readonly MembershipStatus[]; to: MembershipFields } {
  if (intent === 'suspend') return { from: ['active'], to: { status: 'suspended' } }
  if (intent === 'reinstate') return { from: ['suspended'], to: { status: 'active' } }
  if (intent === 'role') return { from: ['active', 'suspended', 'invited'], to: { role: role! } }
  if (intent === 'transfer') return { from: ['active'], to: { role: 'owner' } }
  return { from: ['active', 'suspended', 'invited'], to: { status: 'removed' } }
}

/** The update a body asks for, or `undefined` when it is malformed or asks for nothing. */
function organizationChangesOf(changes: OrganizationChanges | null): OrganizationChanges | undefined {
  if (!changes) return undefined
  const { slug, name, metadata } = changes
  if (slug === undefined && name === undefined && metadata === undefined) return undefined
  if (slug !== undefined && !SLUG.test(slug)) return undefined
  if (name !== undefined && (name.trim().length === 0 || name.length > 200)) return undefined
  if (metadata !== undefined && new TextEncoder().encode(JSON.stringify(metadata)).length > MAX_METADATA_BYTES) return undefined
  return { ...(slug !== undefined ? { slug } : {}), ...(name !== undefined ? { name } : {}), ...(metadata !== undefined ? { metadata } : {}) }
}

const membershipEffects = effects<MembershipMachine, RequestContext>(organizationMembershipChart, {
  async checkChange(context, ctx) {
    const intent = context.intent!
    const roles = rolesOf(ctx)
    const actor = await activeMembershipOf(ctx, context.userId)
    if (!actor) return forbidden('NoActiveOrganization')
    const organizationId = actor.organizationId
    // The organisation acted in is the active one; a body or query naming another is a forged or stale id.
    if (context.organizationId !== null && context.organizationId !== organizationId) return forbidden('NotActiveOrganization')
    const allowed = (wanted: MembershipIntent) => roleAllows(roles, actor.role, PERMISSION[wanted]!)
    if (intent === 'update' && !allowed(intent)) return forbidden()
    const decidedBy = { actorRole: actor.role }
    if (intent === 'update') {
      const changes = organizationChangesOf(context.changes)
      if (!changes) return invalid()
      if (changes.slug !== undefined) {
        const holder = await adapterOf(ctx).getOrganizationBySlug!(changes.slug)
        if (holder && holder.id !== organizationId) return refused('SlugTaken')
      }
      return { organizationId, decided: { from: null, to: null, ...decidedBy } }
    }
    // Deleting and handing over are an owner's, whatever a custom role's statements say.
    if ((intent === 'delete' || intent === 'transfer') && (actor.role !== 'owner' || !allowed(intent))) return forbidden()
    if (intent === 'delete') return { organizationId, decided: { from: null, to: null, ...decidedBy } }
    const targetId = context.targetId ?? ''
    if (targetId === '' || targetId.length > 256) return invalid()
    if (intent === 'role' && (context.role === null || !Object.hasOwn(roles, context.role))) return invalid('UnknownRole')
    const target = await adapterOf(ctx).getMembership!(organizationId, targetId)
    // A member of another organisation is one that does not exist (no IDOR by id); the store's answer for another pair is not trusted.
    if (!target || target.status === 'removed' || target.organizationId !== organizationId || target.userId !== targetId) return refused('NotAMember')
    const self = target.userId === actor.userId
    // Nobody suspends themselves (reinstating or handing over to oneself fails on the state it starts from).
    if (self && intent === 'suspend') return refused('NotApplicable')
    // Leaving needs no permission; every other change needs the actor's, on themselves too.
    if (!(self && (intent === 'leave' || intent === 'remove'))) {
      if (!allowed(intent)) return forbidden()
      // Never a member ranked above the actor, and never a role above their own.
      if (!mayGrant(roles, actor.role, target.role)) return forbidden()
      if (intent === 'role' && !mayGrant(roles, actor.role, context.role!)) return forbidden()
    }
    const change = changeOf(intent, context.role)
    if (!change.from.includes(target.status) || (intent === 'transfer' && target.role === 'owner')) return refused('NotApplicable')
    return { organizationId, decided: { from: { role: target.role, status: target.status }, to: change.to, ...decidedBy } }
  },

  async applyChange(context, ctx) {
    const adapter = adapterOf(ctx)
    const organizationId = context.organizationId!
    const decided = context.decided!
    if (context.intent === 'update') {
      let updated: AdapterOrganization | null
      try {
        updated = await adapter.updateOrganization!(organizationId, organizationChangesOf(context.changes)!)
      } catch (error) {
        // A concurrent update or creation took the slug between the check and the write: the store refused it.
        const holder = context.changes?.slug !== undefined ? await adapter.getOrganizationBySlug!(context.changes.slug) : null
        if (holder && holder.id !== organizationId) return refused('SlugTaken')
        throw error
      }
      return updated ? { membership: null, organization: organizationAnswer(updated) } : refused('Changed')
    }
    if (context.intent === 'delete') {
      // The owner's right is read again just before: a demotion that raced the check wins.
      const actor = await adapter.getMembership!(organizationId, context.userId)
      if (actor?.role !== 'owner' || actor.status !== 'active') return refused('Changed')
      return (await adapter.deleteOrganization!(organizationId)) ? { membership: null, organization: null } : refused('Changed')
    }
    const result = await adapter.changeMembership!({
      organizationId,
      userId: context.targetId!,
      from: decided.from as { role: string; status: MembershipStatus },
      to: decided.to as MembershipFields,
      actor: { userId: context.userId, role: decided.actorRole },
    })
    if ('refused' in result) return refused(result.refused === 'NotFound' ? 'NotAMember' : result.refused)
    return { membership: membershipAnswer(result.changed), organization: null }
  },

  async stepDown(context, ctx) {
    const userId = context.userId
    const result = await adapterOf(ctx).changeMembership!({
      organizationId: context.organizationId!,
      userId,
      from: { role: 'owner', status: 'active' },
      to: { role: 'admin' },
      actor: { userId, role: 'owner' },
    })
    // The new owner is one already: a former owner who could not step down stays an owner too.
    if ('refused' in result) throw new Error(`the former owner could not step down (${result.refused})`)
    return { membership: membershipAnswer(result.changed) }
  },
})

/** The membership flow, as the engine runs it (its routes are the organisations module's). */
export const organizationMembershipFlow = defineCompiledFlow<MembershipMachine, RequestContext>({
  chart: organizationMembershipChart,
  context: OrganizationMembershipContext,
  effects: membershipEffects,
  notation: () => import('../../machines/organization-membership.machine.js').then((module) => module.organizationMembershipMachine),
})

/**
 * The membership flow as a flow module, for the readers of every chart (the diagrams, the test
 * kit, the inspector): run by a configuration with `organizations()`.
 */
export const organizationMembershipModule: FlowModule = {
  id: ORGANIZATION_MEMBERSHIP,
  flow: organizationMembershipFlow as unknown as FlowModule['flow'],
  runs: (config) => config.organizations !== undefined,
}

function json(ctx: RequestContext, body: unknown, status = 200, headers: Record<string, string> = {}): ResponseInternal {
  return { status, headers: { ...JSON_NO_STORE_HEADERS, ...headers }, body, cookies: ctx.setCookies }
}

/** What a change reads of its request: the JSON body and the query (a server function's input as the body). */
export interface ChangeInput {
  body: Readonly<Record<string, unknown>>
  query: Readonly<Record<string, unknown>>
}

const inputOf = (ctx: RequestContext): ChangeInput => ({ body: ctx.request.body ?? {}, query: ctx.request.query })

/**
 * The organisation the request names, from its body and its query: `null` when neither names one,
 * the id when they agree, and `''` (which is no organisation's id, so refused as another one) when
 * one is not a string or they differ.
 */
export function namedOrganization(input: ChangeInput): string | null {
  const named = [input.body.organizationId, input.query.organizationId].filter((value) => value !== undefined)
  if (named.length === 0) return null
  const [first] = named
  return typeof first === 'string' && named.every((value) => value === first) ? first : ''
}

const text = (value: unknown, max: number): string => (typeof value === 'string' && value.length <= max ? value : '')

/** The event a request makes. */
function eventOf(ctx: RequestContext, input: ChangeInput, segment: MembershipSegment, userId: string) {
  const { body } = input
  const common = { type: INTENT_OF_SEGMENT[segment], at: ctx.at, userId, organizationId: namedOrganization(input) }
  if (segment === 'leave' || segment === 'delete') return common
  if (segment === 'update') {
    const { slug, name, metadata } = body
    const wellFormed =
      (slug === undefined || typeof slug === 'string') &&
      (name === undefined || typeof name === 'string') &&
      (metadata === undefined || (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)))
    // A malformed body asks for no change the check could apply: it is refused as invalid.
    if (!wellFormed) return { ...common, changes: null }
    return {
      ...common,
      changes: { ...(slug !== undefined ? { slug } : {}), ...(name !== undefined ? { name } : {}), ...(metadata !== undefined ? { metadata } : {}) },
    }
  }
  return { ...common, targetId: text(body.userId, 256), ...(segment === 'role' ? { role: text(body.role, 64) } : {}) }
}

/**
 * Serves `POST {basePath}/organization/<suspend | reinstate | remove | leave | role | transfer |
 * update | delete>` (CSRF-checked by the route); 401 `null` signed out. An adapter that fails
 * answers 503 with `Retry-After`.
 */
export async function serveMembershipChange(ctx: RequestContext, segment: MembershipSegment, input: ChangeInput = inputOf(ctx)): Promise<ResponseInternal> {
  const current = await currentSession(ctx)
  if (!current) return json(ctx, null, 401)
  const run = await advanceNow(organizationMembershipFlow, ctx, eventOf(ctx, input, segment, current.user.id) as never, observedRunOptions(ctx))
  notifyRun(ctx, ORGANIZATION_MEMBERSHIP, run)
  const outcome = run.outcome
  if (outcome.type !== 'json') throw new Error(`${ORGANIZATION_MEMBERSHIP}: unexpected outcome ${outcome.type}`)
  const status = outcome.status ?? 200
  return json(ctx, outcome.body, status, status === 503 ? { 'Retry-After': String(ctx.config.availability.retryAfter) } : {})
}

/** A member as the list shows them: the membership and the user's name and address. */
export interface ListedMember extends MembershipAnswer {
  name: string | null
  email: string | null
  createdAt: string
}

/**
 * `GET {basePath}/organization/members`: the members of the signed-in user's active organisation
 * (removed ones left out), for a member whose role allows `member:read`; a query naming another
 * organisation is refused (403), as is a user with no active organisation; 401 `null` signed out.
 */
export async function respondMembers(ctx: RequestContext, input: ChangeInput = inputOf(ctx)): Promise<ResponseInternal> {
  const current = await currentSession(ctx)
  if (!current) return json(ctx, null, 401)
  const actor = await activeMembershipOf(ctx, current.user.id)
  if (!actor) return json(ctx, { error: 'NoActiveOrganization' }, 403)
  const named = namedOrganization(input)
  if (named !== null && named !== actor.organizationId) return json(ctx, { error: 'NotActiveOrganization' }, 403)
  if (!roleAllows(rolesOf(ctx), actor.role, { resource: 'member', action: 'read' })) return json(ctx, { error: 'Forbidden' }, 403)
  const adapter = adapterOf(ctx)
  const memberships = await adapter.listMemberships!(actor.organizationId)
  const members: ListedMember[] = []
  for (const membership of memberships) {
    // The store's list is filtered again: a record of another organisation is never shown.
    if (membership.organizationId !== actor.organizationId || membership.status === 'removed') continue
    const user = await adapter.getUser!(membership.userId)
    members.push({
      ...membershipAnswer(membership),
      name: typeof user?.name === 'string' ? user.name : null,
      email: typeof user?.email === 'string' ? user.email : null,
      createdAt: new Date(membership.createdAt).toISOString(),
    })
  }
  return json(ctx, { organizationId: actor.organizationId, members })
}
