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
