/**
 * The organisation methods' contract, run on the memory and PostgreSQL adapters: the records
 * round-trip, the tenant-scoped uniqueness holds in the store, and an invitation is settled once.
 */
import { describe, expect, it } from 'vitest'
import type { Adapter } from '../../core/adapters.js'
import type { AdapterInvitation, AdapterOrganization } from '../../core/organizations.js'

let counter = 0
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++counter}`

/** An organisation record with a fresh id and slug. */
export function organizationRecord(overrides: Partial<AdapterOrganization> = {}): AdapterOrganization {
  const id = unique('org')
  return { id, slug: id, name: 'Acme', verifiedDomains: ['acme.test'], metadata: { plan: 'team' }, createdAt: new Date('2026-01-01T00:00:00Z'), ...overrides }
}

/** A `sent` invitation to `organizationId`, expiring at `expires`. */
export function invitationRecord(organizationId: string, inviterId: string, expires: Date): AdapterInvitation {
  return { id: unique('inv'), organizationId, email: 'bob@example.test', role: 'member', inviterId, expires, status: 'sent', createdAt: new Date('2026-01-01T00:00:00Z') }
}

/** Runs the contract on the adapter `make()` returns. */
export function organizationAdapterContract(name: string, make: () => Adapter): void {
  const newUser = async (adapter: Adapter) => {
    const id = unique('user')
    await adapter.createUser!({ id, email: `${id}@example.test`, emailVerified: null })
    return id
  }

  describe(`${name}: organisations`, () => {
    it('stores an organisation and reads it back by id and by slug, domains and metadata included', async () => {
      const adapter = make()
      const organization = organizationRecord()
      await adapter.createOrganization!(organization)
      expect(await adapter.getOrganization!(organization.id)).toEqual(organization)
      expect(await adapter.getOrganizationBySlug!(organization.slug)).toEqual(organization)
      expect(await adapter.getOrganization!(unique('nobody'))).toBeNull()
      expect(await adapter.getOrganizationBySlug!(unique('nobody'))).toBeNull()
    })

    it('refuses a second organisation with a slug already taken, and keeps the first', async () => {
      const adapter = make()
      const first = organizationRecord()
      await adapter.createOrganization!(first)
      await expect(Promise.resolve().then(() => adapter.createOrganization!(organizationRecord({ slug: first.slug, name: 'Impostor' })))).rejects.toThrow()
      expect(await adapter.getOrganizationBySlug!(first.slug)).toMatchObject({ id: first.id, name: 'Acme' })
    })

    it('refuses a second membership of the same user in the same organisation, and allows one in another', async () => {
      const adapter = make()
      const a = organizationRecord()
      const b = organizationRecord()
      await adapter.createOrganization!(a)
      await adapter.createOrganization!(b)
      const userId = await newUser(adapter)
      const membership = { organizationId: a.id, userId, role: 'member', status: 'active' as const, createdAt: new Date('2026-01-01T00:00:00Z') }
      await adapter.createMembership!(membership)
      await expect(Promise.resolve().then(() => adapter.createMembership!({ ...membership, role: 'owner' }))).rejects.toThrow()
      expect(await adapter.getMembership!(a.id, userId)).toEqual(membership)
      await adapter.createMembership!({ ...membership, organizationId: b.id, role: 'admin' })
      expect(await adapter.getMembership!(b.id, userId)).toMatchObject({ role: 'admin' })
      expect((await adapter.listMemberships!(a.id)).map((m) => m.userId)).toEqual([userId])
    })

    it('changes a role and a status of one membership only, and answers null for no membership', async () => {
      const adapter = make()
      const a = organizationRecord()
      const b = organizationRecord()
      await adapter.createOrganization!(a)
      await adapter.createOrganization!(b)
      const userId = await newUser(adapter)
      const at = new Date('2026-01-01T00:00:00Z')
      await adapter.createMembership!({ organizationId: a.id, userId, role: 'member', status: 'active', createdAt: at })
      await adapter.createMembership!({ organizationId: b.id, userId, role: 'member', status: 'active', createdAt: at })
      expect(await adapter.updateMembership!({ organizationId: a.id, userId, role: 'admin' })).toMatchObject({ role: 'admin', status: 'active' })
      expect(await adapter.updateMembership!({ organizationId: a.id, userId, status: 'removed' })).toMatchObject({ role: 'admin', status: 'removed' })
      expect(await adapter.getMembership!(b.id, userId)).toMatchObject({ role: 'member', status: 'active' })
      expect(await adapter.updateMembership!({ organizationId: a.id, userId: unique('nobody'), role: 'owner' })).toBeNull()
    })
  })

  describe(`${name}: invitations`, () => {
    const setUp = async () => {
      const adapter = make()
      const organization = organizationRecord()
      await adapter.createOrganization!(organization)
      const inviterId = await newUser(adapter)
      const expires = new Date('2026-01-08T00:00:00Z')
      const invitation = await adapter.createInvitation!(invitationRecord(organization.id, inviterId, expires))
      return { adapter, invitation, expires }
    }

    it('stores an invitation and reads it back', async () => {
      const { adapter, invitation } = await setUp()
      expect(await adapter.getInvitation!(invitation.id)).toEqual(invitation)
      expect(await adapter.getInvitation!(unique('nobody'))).toBeNull()
    })

    it('accepts an invitation once: of two concurrent acceptances exactly one wins', async () => {
      const { adapter, invitation } = await setUp()
      const at = new Date('2026-01-02T00:00:00Z')
      const results = await Promise.all([
        adapter.settleInvitation!({ id: invitation.id, status: 'accepted', at }),
        adapter.settleInvitation!({ id: invitation.id, status: 'accepted', at }),
      ])
      expect(results.filter((result) => result !== null)).toHaveLength(1)
      expect(await adapter.settleInvitation!({ id: invitation.id, status: 'accepted', at })).toBeNull()
      expect(await adapter.getInvitation!(invitation.id)).toMatchObject({ status: 'accepted' })
    })

    it('refuses an acceptance at or after the expiry, and leaves the invitation sent', async () => {
      const { adapter, invitation, expires } = await setUp()
      expect(await adapter.settleInvitation!({ id: invitation.id, status: 'accepted', at: expires })).toBeNull()
      expect(await adapter.settleInvitation!({ id: invitation.id, status: 'accepted', at: new Date(expires.getTime() + 1) })).toBeNull()
      expect(await adapter.getInvitation!(invitation.id)).toMatchObject({ status: 'sent' })
      expect(await adapter.settleInvitation!({ id: invitation.id, status: 'accepted', at: new Date(expires.getTime() - 1000) })).toMatchObject({ status: 'accepted' })
    })

    it('refuses an acceptance of a revoked invitation', async () => {
      const { adapter, invitation } = await setUp()
      const at = new Date('2026-01-02T00:00:00Z')
      expect(await adapter.settleInvitation!({ id: invitation.id, status: 'revoked', at })).toMatchObject({ status: 'revoked' })
      expect(await adapter.settleInvitation!({ id: invitation.id, status: 'accepted', at })).toBeNull()
      expect(await adapter.getInvitation!(invitation.id)).toMatchObject({ status: 'revoked' })
    })
  })
}
