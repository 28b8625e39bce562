/**
 * The organisation methods of the memory adapter (spread into `MemoryAdapter`). Their tables hang
 * off the adapter's store, so two adapters over one store see the same organisations.
 *
 * @module
 */
import {
  takesAnOwnerAway,
  type AdapterInvitation,
  type AdapterMembership,
  type AdapterOrganization,
  type OrganizationAdapterMethods,
} from '../core/organizations/types.js'

const copy = <T extends object>(record: T): T => {
  const out = { ...record }
  for (const [key, value] of Object.entries(out)) {
    if (value instanceof Date) (out as Record<string, unknown>)[key] = new Date(value)
    else if (Array.isArray(value)) (out as Record<string, unknown>)[key] = [...(value as unknown[])]
    else if (typeof value === 'object' && value !== null) (out as Record<string, unknown>)[key] = structuredClone(value)
  }
  return out
}

/** The organisation tables of one memory store. */
export interface MemoryOrganizationTables {
  organizations: Map<string, AdapterOrganization>
  /** By `organizationId \0 userId`: the key is the uniqueness of a membership. */
  memberships: Map<string, AdapterMembership>
  invitations: Map<string, AdapterInvitation>
}

const tablesOfStore = new WeakMap<object, MemoryOrganizationTables>()

/** The organisation tables of `store` (made empty on first use). */
export function memoryOrganizationTables(store: object): MemoryOrganizationTables {
  let tables = tablesOfStore.get(store)
  if (!tables) {
    tables = { organizations: new Map(), memberships: new Map(), invitations: new Map() }
    tablesOfStore.set(store, tables)
  }
  return tables
}

const membershipKey = (organizationId: string, userId: string) => `${organizationId}\u0000${userId}`

/** The organisation methods over `store`'s organisation tables. */
export function memoryOrganizations(store: object): Required<OrganizationAdapterMethods> {
  const tables = memoryOrganizationTables(store)
  const bySlug = (slug: string) => [...tables.organizations.values()].find((organization) => organization.slug === slug) ?? null

  return {
    async createOrganization(organization) {
      if (tables.organizations.has(organization.id)) throw new Error(`organization ${organization.id} already exists`)
      if (bySlug(organization.slug)) throw new Error(`an organization with the slug ${organization.slug} exists`)
      tables.organizations.set(organization.id, copy(organization))
      return copy(organization)
    },
    async getOrganization(id) {
      const organization = tables.organizations.get(id)
      return organization ? copy(organization) : null
    },
    async getOrganizationBySlug(slug) {
      const organization = bySlug(slug)
      return organization ? copy(organization) : null
    },
    async createMembership(membership) {
      const key = membershipKey(membership.organizationId, membership.userId)
      if (tables.memberships.has(key)) throw new Error('the user already has a membership of this organization')
      tables.memberships.set(key, copy(membership))
      return copy(membership)
    },
    async getMembership(organizationId, userId) {
      const membership = tables.memberships.get(membershipKey(organizationId, userId))
      return membership ? copy(membership) : null
    },
    async updateMembership({ organizationId, userId, role, status }) {
      const key = membershipKey(organizationId, userId)
      const stored = tables.memberships.get(key)
      if (!stored) return null
      const updated = { ...stored, ...(role === undefined ? {} : { role }), ...(status === undefined ? {} : { status }) }
      tables.memberships.set(key, updated)
      return copy(updated)
    },
    async listMemberships(organizationId) {
      return [...tables.memberships.values()].filter((membership) => membership.organizationId === organizationId).map(copy)
    },
    async changeMembership(change) {
      // No await between the reads and the write: the checks and the change are one step, so of
      // two owners demoting each other at once the second finds the first already demoted.
      const key = membershipKey(change.organizationId, change.userId)
      const stored = tables.memberships.get(key)
      if (!stored) return { refused: 'NotFound' }
      if (stored.role !== change.from.role || stored.status !== change.from.status) return { refused: 'Changed' }
      const actor = tables.memberships.get(membershipKey(change.organizationId, change.actor.userId))
      if (!actor || actor.status !== 'active' || actor.role !== change.actor.role) return { refused: 'Changed' }
      if (takesAnOwnerAway(change)) {
        const anotherOwner = [...tables.memberships.values()].some(
          (other) => other.organizationId === change.organizationId && other.userId !== change.userId && other.role === 'owner' && other.status === 'active',
        )
        if (!anotherOwner) return { refused: 'LastOwner' }
      }
      const updated = { ...stored, ...change.to }
      tables.memberships.set(key, updated)
      return { changed: copy(updated) }
    },
    async updateOrganization(id, fields) {
      const stored = tables.organizations.get(id)
      if (!stored) return null
      if (fields.slug !== undefined && fields.slug !== stored.slug && bySlug(fields.slug)) throw new Error(`an organization with the slug ${fields.slug} exists`)
      const updated = copy({ ...stored, ...fields })
      tables.organizations.set(id, updated)
      return copy(updated)
    },
    async deleteOrganization(id) {
      if (!tables.organizations.delete(id)) return false
      for (const [key, membership] of tables.memberships) if (membership.organizationId === id) tables.memberships.delete(key)
      for (const [key, invitation] of tables.invitations) if (invitation.organizationId === id) tables.invitations.delete(key)
      return true
    },
    async createInvitation(invitation) {
      if (tables.invitations.has(invitation.id)) throw new Error(`invitation ${invitation.id} already exists`)
      tables.invitations.set(invitation.id, copy(invitation))
      return copy(invitation)
    },
    async getInvitation(id) {
      const invitation = tables.invitations.get(id)
      return invitation ? copy(invitation) : null
    },
    async settleInvitation({ id, status, at }) {
      // No await between the read and the write: the check and the settlement are one step.
      const stored = tables.invitations.get(id)
      if (!stored || stored.status !== 'sent') return null
      if (status === 'accepted' && stored.expires.getTime() <= at.getTime()) return null
      const settled = { ...stored, status }
      tables.invitations.set(id, settled)
      return copy(settled)
    },
  }
}
