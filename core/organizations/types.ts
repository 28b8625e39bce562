/**
 * The organisations model (issue 45): organisations, memberships, invitations, and the adapter
 * methods that store them. A leaf: the adapter interface is extended here by declaration merging,
 * so the core's own `Adapter` names none of it, and an application that does not import
 * `authchart/organizations` sees none of it either.
 *
 * @module
 */
import type { Awaitable } from '../shapes.js'

/** An organisation (a tenant of the application's users). */
export interface AdapterOrganization {
  id: string
  /** Unique across organisations: the store refuses a second organisation with the same slug. */
  slug: string
  name: string
  /** Domains the organisation proved it holds (lower case). */
  verifiedDomains: string[]
  metadata: Record<string, unknown>
  createdAt: Date
}

/** Where a membership is in its lifecycle: only an `active` one grants anything. */
export type MembershipStatus = 'invited' | 'active' | 'suspended' | 'removed'

/** A user's membership of an organisation: one per (organisation, user). */
export interface AdapterMembership {
  organizationId: string
  userId: string
  /** A built-in role (`owner`, `admin`, `member`) or one of the configuration's custom roles. */
  role: string
  status: MembershipStatus
  createdAt: Date
}

/** Where an invitation is in its lifecycle: `sent` until it is settled, once. */
export type InvitationStatus = 'sent' | 'accepted' | 'declined' | 'expired' | 'revoked'

/** An invitation to join an organisation, sent to an e-mail address. */
export interface AdapterInvitation {
  id: string
  organizationId: string
  /** The invited address (lower case): only a user whose stored, verified address it is may accept. */
  email: string
  role: string
  inviterId: string
  expires: Date
  status: InvitationStatus
  createdAt: Date
}

/** How an invitation is settled: the status it moves to from `sent`, at `at`. */
export interface InvitationSettlement {
  id: string
  status: Exclude<InvitationStatus, 'sent'>
  /** Accepting fails once `expires` is not after `at` (checked in the same atomic write). */
  at: Date
}

/** What a membership change may change: its role, its status, or both. */
export type MembershipFields = Partial<Pick<AdapterMembership, 'role' | 'status'>>

/**
 * A change of a membership, decided on what it and the actor's membership were when it was
 * allowed: the store applies it only while both still are (compare-and-set), and never so that
 * the organisation is left without an active owner.
 */
export interface MembershipChange {
  organizationId: string
  userId: string
  /** The role and status the change was decided on: it applies only while the membership still has them. */
  from: Pick<AdapterMembership, 'role' | 'status'>
  to: MembershipFields
  /** The member who allowed it: it applies only while their membership is still active with this role. */
  actor: { userId: string; role: string }
}

/**
 * How a {@link MembershipChange} went: the membership as changed, or why it was not made (no such
 * membership, it or the actor's changed since the change was decided, or the target is the last
 * active owner and the change would leave none).
 */
export type MembershipChangeResult = { changed: AdapterMembership } | { refused: 'NotFound' | 'Changed' | 'LastOwner' }

/** What an organisation update may change. */
export type OrganizationFields = Partial<Pick<AdapterOrganization, 'slug' | 'name' | 'metadata'>>

/** Whether `change` takes an active owner away: a role other than owner, or a status other than active. */
export function takesAnOwnerAway(change: Pick<MembershipChange, 'from' | 'to'>): boolean {
  if (change.from.role !== 'owner' || change.from.status !== 'active') return false
  return (change.to.role !== undefined && change.to.role !== 'owner') || (change.to.status !== undefined && change.to.status !== 'active')
}

/** The adapter methods of organisations (implemented by the memory and PostgreSQL adapters). */
export interface OrganizationAdapterMethods {
  /** Stores a new organisation; throws when its id or slug is taken. */
  createOrganization?(organization: AdapterOrganization): Awaitable<AdapterOrganization>
  getOrganization?(id: string): Awaitable<AdapterOrganization | null>
  getOrganizationBySlug?(slug: string): Awaitable<AdapterOrganization | null>
  /** Stores a new membership; throws when the user already has one in that organisation. */
  createMembership?(membership: AdapterMembership): Awaitable<AdapterMembership>
  getMembership?(organizationId: string, userId: string): Awaitable<AdapterMembership | null>
  /** Changes a membership's role or status; `null` when there is none. */
  updateMembership?(
    membership: Pick<AdapterMembership, 'organizationId' | 'userId'> & Partial<Pick<AdapterMembership, 'role' | 'status'>>,
  ): Awaitable<AdapterMembership | null>
  listMemberships?(organizationId: string): Awaitable<AdapterMembership[]>
  /**
   * Applies `change` atomically: only while the membership still has `change.from`, the actor's is
   * still active with `change.actor.role`, and, when it takes an active owner away, another active
   * owner remains. Of two owners demoting (or suspending, or removing) each other at once, or both
   * leaving, one change is made and the other refused `LastOwner`.
   */
  changeMembership?(change: MembershipChange): Awaitable<MembershipChangeResult>
  /** Changes an organisation's slug, name or metadata; `null` when there is none; throws when the slug is taken. */
  updateOrganization?(id: string, fields: OrganizationFields): Awaitable<AdapterOrganization | null>
  /** Deletes an organisation with its memberships and invitations; whether there was one. */
  deleteOrganization?(id: string): Awaitable<boolean>
  createInvitation?(invitation: AdapterInvitation): Awaitable<AdapterInvitation>
  getInvitation?(id: string): Awaitable<AdapterInvitation | null>
  /**
   * Moves a `sent` invitation to `status`, atomically: of two concurrent settlements one wins and
   * the other gets `null`, as does one of a settled invitation, and an acceptance at or after its
   * expiry.
   */
  settleInvitation?(settlement: InvitationSettlement): Awaitable<AdapterInvitation | null>
}

/** The names of the organisation adapter methods, as the load check and the instrumentation list them. */
export type OrganizationAdapterMethod = keyof OrganizationAdapterMethods

declare module '../shapes.js' {
  // Declaration merging: the adapter interface gains the organisation methods (all optional, as
  // every adapter method is); a configuration with `organizations()` is refused at load without them.
  interface Adapter extends OrganizationAdapterMethods {}
}
