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
import { ConfigError } from './errors.js'
import { ORGANIZATIONS_LINE } from './config/features.js'
import type { AuthConfig, ResponseInternal } from './types.js'
import type { RequestContext } from './config/types.js'
import { manageOrganization } from './organizations/manage.js'
import {
  MEMBERS_SEGMENT,
  MEMBERSHIP_SEGMENTS,
  respondMembers,
  SENSITIVE_SEGMENTS,
  serveMembershipChange,
  type ListedMember,
  type MembershipSegment,
} from './organizations/members.js'
import { sensitiveActionDemand } from './session/freshness.js'
import { invitationOptionsOf, serveInvitationPage, serveInvitationPost, type InvitationOptions } from './organizations/invitations.js'
import { route } from './http/params.js'
import { readForSignedInUser, type ServerRequest } from './server.js'
import { currentSession } from './session/current.js'
import { activeOrganizationOf as activeOrganizationIn, canIn, type ActiveOrganization, type OrganizationSession } from './organizations/access.js'
import { activeMembershipOf, respondActiveOrganization, setActiveOrganization, withActiveOrganization } from './organizations/active.js'
import { permissionOf, roleAllows, rolesOf, type Permission, type Roles } from './organizations/roles.js'
import type { OrganizationAdapterMethod } from './organizations/types.js'
import type { OrganizationsModule } from './config/types.js'

export type { ActiveOrganization, OrganizationSession } from './organizations/access.js'
export { BUILT_IN_ROLES, mayGrant, roleAllows, roleRank, type BuiltInRole, type Permission, type RoleStatements, type Roles } from './organizations/roles.js'
export type {
  AdapterInvitation,
  AdapterMembership,
  AdapterOrganization,
  InvitationSettlement,
  InvitationStatus,
  MembershipChange,
  MembershipChangeResult,
  MembershipFields,
  MembershipStatus,
  OrganizationAdapterMethods,
  OrganizationFields,
} from './organizations/types.js'
export type { OrganizationsModule } from './config/types.js'
export type { InvitationMail, InvitationOptions } from './organizations/invitations.js'
export type { ListedMember, MembershipSegment as OrganizationChange } from './organizations/members.js'

/** The options of {@link organizations}. */
export interface OrganizationsOptions {
  /** Custom roles beside owner, admin and member: `{ role: { resource: actions[] } }`. */
  roles?: Roles | undefined
  /** Invitations: how long a link lives (`maxAge`, seconds), the limits per organisation and inviter, the sender. */
  invitations?: InvitationOptions | undefined
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
  'changeMembership',
  'updateOrganization',
  'deleteOrganization',
  'createInvitation',
  'getInvitation',
  'settleInvitation',
])

const isMembershipSegment = (segment: string | undefined): segment is MembershipSegment => (MEMBERSHIP_SEGMENTS as readonly (string | undefined)[]).includes(segment)

/** `POST {basePath}/organization/<segment>`: invitations, switching the active organisation, or managing one. */
async function organizationPost(ctx: RequestContext): Promise<ResponseInternal> {
  const segment = ctx.request.providerId
  if (segment === 'invite' || segment === 'invitation') return serveInvitationPost(ctx, segment)
  if (isMembershipSegment(segment)) return serveMembershipChange(ctx, segment)
  return (await manageOrganization(ctx)) ?? setActiveOrganization(ctx)
}

/** `GET {basePath}/organization/<segment>`: an invitation link's page, the members, or the active organisation. */
async function organizationGet(ctx: RequestContext): Promise<ResponseInternal> {
  const segment = ctx.request.providerId
  if (segment === 'invitation') return serveInvitationPage(ctx)
  return segment === MEMBERS_SEGMENT ? respondMembers(ctx) : respondActiveOrganization(ctx)
}

/** Deleting an organisation and handing it over are the sensitive action `manage-organization`. */
const sensitiveSegment = (ctx: RequestContext) => (SENSITIVE_SEGMENTS.has(ctx.request.providerId ?? '') ? ('manage-organization' as const) : undefined)

/** Only an invitation link's page hands out a CSRF token (its buttons post back). */
const isInvitationPage = (ctx: RequestContext) => ctx.request.providerId === 'invitation'

/**
 * The feature's routes: the signed-in user's active organisation, read (`GET …/organization/active`)
 * and switched (`POST …/organization/active`, JSON `{ organizationId }`), the members
 * (`GET …/organization/members`), the management routes (`POST …/organization/create`, see
 * `organizations/manage.ts`; `POST …/organization/suspend | reinstate | remove | leave | role |
 * transfer | update | delete`, see `organizations/members.ts`, deleting and handing over after a
 * recent proof of a factor) and the
 * invitations (`POST …/organization/invite`, `GET | POST …/organization/invitation`, see
 * `organizations/invitations.ts`); every POST CSRF-checked, all through the one authority for who
 * is signed in.
 */
const ROUTES = Object.freeze([
  route({ method: 'GET', action: 'organization', provider: 'none', csrfToken: isInvitationPage, callbackUrl: true, actsForUser: true, serve: organizationGet }),
  route({
    method: 'POST',
    action: 'organization',
    provider: 'none',
    csrf: true,
    callbackUrl: true,
    failure: 'json-null',
    actsForUser: true,
    stepUp: sensitiveSegment,
    serve: organizationPost,
  }),
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
    routes: ROUTES,
    sessionRead: withActiveOrganization,
    invitations: invitationOptionsOf(options.invitations),
  })
}

/** The application's request as the in-process session read takes it. */
function serverRequestOf(request: Request): ServerRequest {
  return { origin: new URL(request.url).origin, cookie: request.headers.get('cookie'), headers: request.headers }
}

/**
 * Whether the signed-in user may do `permission` (`'resource:action'`, or `{ resource, action }`)
 * in their active organisation. The membership is read from the adapter on every call: a role or
 * status carried by the session or its token is never trusted, and a user who is no longer an
 * active member has no permission.
 *
 * Given the application's `Request`, the user is the one its session cookie names (read through
 * the session route's checks: an ended session is no one) and the organisation the one they made
 * active (`POST {basePath}/organization/active`). Given a session object, its `user.id` and
 * `activeOrganizationId`; one without either has no permission.
 *
 * @throws {ConfigError} when `config` does not name `organizations()`.
 * @throws {TypeError} when `permission` is not written `resource:action`.
 */
export async function can(
  subject: Request | OrganizationSession | null | undefined,
  permission: string | Permission,
  config: AuthConfig,
): Promise<boolean> {
  const resolved = assertConfig(config)
  if (!(subject instanceof Request)) return canIn(subject, permission, resolved)
  const wanted = permissionOf(permission)
  const roles = activeOrganizationsModule(resolved).roles
  return readForSignedInUser(serverRequestOf(subject), config, async (ctx) => {
    const current = await currentSession(ctx)
    if (!current) return false
    const membership = await activeMembershipOf(ctx, current.user.id)
    return membership !== null && roleAllows(roles, membership.role, wanted)
  })
}

/**
 * The configuration's organisations module.
 *
 * @throws {ConfigError} without one (as `canIn` does).
 */
function activeOrganizationsModule(config: ReturnType<typeof assertConfig>): OrganizationsModule {
  if (config.organizations) return config.organizations
  throw new ConfigError(`config.organizations: can() needs \`${ORGANIZATIONS_LINE}\``, ['organizations'])
}

/** The session's active organisation and membership, while that membership is active; `null` otherwise. */
export async function activeOrganization(session: OrganizationSession | null | undefined, config: AuthConfig): Promise<ActiveOrganization | null> {
  return activeOrganizationIn(session, assertConfig(config))
}

/** What a server function of the management API answers: the route's status and JSON body. */
export interface ManagementAnswer {
  status: number
  body: unknown
}

/**
 * Changes a membership or the organisation for the signed-in user of the application's `request`,
 * in their active organisation, as `POST {basePath}/organization/<change>` does with `input` as
 * its body (`suspend`, `reinstate`, `remove` and `transfer` take `{ userId }`, `role` takes
 * `{ userId, role }`, `update` takes `{ slug?, name?, metadata? }`, `leave` and `delete` nothing):
 * the same checks, the same compare-and-set, the same audit event. The application's own route
 * checks its CSRF token. `delete` and `transfer` are the sensitive action `manage-organization`:
 * without a recent proof of a factor they answer 401 `{ error: 'RecentAuthRequired' }` and change
 * nothing (send the user through `requireRecentAuth` first). Signed out: 401 `null`.
 *
 * @throws {ConfigError} when `config` does not name `organizations()`.
 * @throws {TypeError} for a change that is none of the above.
 */
export async function changeOrganization(
  request: Request,
  change: MembershipSegment,
  input: Readonly<Record<string, unknown>>,
  config: AuthConfig,
): Promise<ManagementAnswer> {
  activeOrganizationsModule(assertConfig(config))
  if (!isMembershipSegment(change)) throw new TypeError(`changeOrganization: no change "${String(change)}"; one of ${MEMBERSHIP_SEGMENTS.join(', ')}`)
  return readForSignedInUser(serverRequestOf(request), config, async (ctx) => {
    if (!(await currentSession(ctx))) return { status: 401, body: null }
    if (SENSITIVE_SEGMENTS.has(change) && (await sensitiveActionDemand(ctx, 'manage-organization'))) {
      return { status: 401, body: { error: 'RecentAuthRequired' } }
    }
    const answered = await serveMembershipChange(ctx, change, { body: input, query: {} })
    return { status: answered.status ?? 200, body: answered.body }
  })
}

/**
 * The members of the active organisation of the signed-in user of `request` (removed ones left
 * out), as `GET {basePath}/organization/members` answers them: `null` signed out, without an
 * active organisation or without `member:read` in it.
 *
 * @throws {ConfigError} when `config` does not name `organizations()`.
 */
export async function listMembers(request: Request, config: AuthConfig): Promise<ListedMember[] | null> {
  activeOrganizationsModule(assertConfig(config))
  return readForSignedInUser(serverRequestOf(request), config, async (ctx) => {
    const answered = await respondMembers(ctx, { body: {}, query: {} })
    return answered.status === 200 ? (answered.body as { members: ListedMember[] }).members : null
  })
}
