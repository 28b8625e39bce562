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

/**
 * An organisation of two active owners (`a`, `b`) and an active member (`m`), each a fresh user.
 */
export async function twoOwners(adapter: Adapter, newUser: (adapter: Adapter) => Promise<string>) {
  const organization = organizationRecord()
  await adapter.createOrganization!(organization)
  const [a, b, m] = [await newUser(adapter), await newUser(adapter), await newUser(adapter)]
  const createdAt = new Date('2026-01-01T00:00:00Z')
  for (const [userId, role] of [
    [a, 'owner'],
    [b, 'owner'],
    [m, 'member'],
  ] as const) {
    await adapter.createMembership!({ organizationId: organization.id, userId, role, status: 'active', createdAt })
  }
  const owners = async () =>
    (await adapter.listMemberships!(organization.id)).filter((membership) => membership.role === 'owner' && membership.status === 'active').map((membership) => membership.userId)
  return { organizationId: organization.id, a, b, m, owners }
}

const asOwner = { role: 'owner', status: 'active' } as const

/**
 * The compare-and-set of `changeMembership`: a change decided on a stale membership or by an actor
 * no longer allowed is refused, and the last active owner is never taken away, however the
 * changes race (each pair fired at once).
 */
export function membershipChangeContract(make: () => Adapter, newUser: (adapter: Adapter) => Promise<string>): void {
  it('changes a membership decided on its current role and status, and refuses one decided on a stale one', async () => {
    const adapter = make()
    const { organizationId, a, m } = await twoOwners(adapter, newUser)
    const actor = { userId: a, role: 'owner' }
    expect(await adapter.changeMembership!({ organizationId, userId: m, from: { role: 'member', status: 'active' }, to: { status: 'suspended' }, actor })).toEqual({
      changed: expect.objectContaining({ organizationId, userId: m, role: 'member', status: 'suspended' }),
    })
    expect(await adapter.changeMembership!({ organizationId, userId: m, from: { role: 'member', status: 'active' }, to: { role: 'admin' }, actor })).toEqual({ refused: 'Changed' })
    expect(await adapter.getMembership!(organizationId, m)).toMatchObject({ role: 'member', status: 'suspended' })
    expect(await adapter.changeMembership!({ organizationId, userId: unique('nobody'), from: { role: 'member', status: 'active' }, to: { status: 'removed' }, actor })).toEqual({
      refused: 'NotFound',
    })
  })

  it('refuses a change allowed by an actor whose membership changed since (demoted, suspended, of another organisation)', async () => {
    const adapter = make()
    const { organizationId, a, b, m } = await twoOwners(adapter, newUser)
    const other = await twoOwners(adapter, newUser)
    await adapter.updateMembership!({ organizationId, userId: b, role: 'admin' })
    const change = { organizationId, userId: m, from: { role: 'member', status: 'active' as const }, to: { status: 'removed' as const } }
    expect(await adapter.changeMembership!({ ...change, actor: { userId: b, role: 'owner' } })).toEqual({ refused: 'Changed' })
    expect(await adapter.changeMembership!({ ...change, actor: { userId: other.a, role: 'owner' } })).toEqual({ refused: 'Changed' })
    await adapter.updateMembership!({ organizationId, userId: a, status: 'suspended' })
    expect(await adapter.changeMembership!({ ...change, actor: { userId: a, role: 'owner' } })).toEqual({ refused: 'Changed' })
    expect(await adapter.getMembership!(organizationId, m)).toMatchObject({ status: 'active' })
  })

  it('never takes the last active owner away: demoting, suspending, removing or leaving', async () => {
    const adapter = make()
    const { organizationId, a, b, owners } = await twoOwners(adapter, newUser)
    expect(await adapter.changeMembership!({ organizationId, userId: b, from: asOwner, to: { status: 'removed' }, actor: { userId: b, role: 'owner' } })).toMatchObject({
      changed: { status: 'removed' },
    })
    for (const to of [{ role: 'admin' }, { status: 'suspended' as const }, { status: 'removed' as const }, { role: 'member', status: 'active' as const }]) {
      expect(await adapter.changeMembership!({ organizationId, userId: a, from: asOwner, to, actor: { userId: a, role: 'owner' } })).toEqual({ refused: 'LastOwner' })
    }
    expect(await owners()).toEqual([a])
    // A change that keeps the owner an active owner is no taking away.
    expect(await adapter.changeMembership!({ organizationId, userId: a, from: asOwner, to: { role: 'owner' }, actor: { userId: a, role: 'owner' } })).toMatchObject({
      changed: { role: 'owner' },
    })
  })

  it('keeps one owner when two owners demote each other at once', async () => {
    const adapter = make()
    const { organizationId, a, b, owners } = await twoOwners(adapter, newUser)
    const results = await Promise.all([
      adapter.changeMembership!({ organizationId, userId: b, from: asOwner, to: { role: 'admin' }, actor: { userId: a, role: 'owner' } }),
      adapter.changeMembership!({ organizationId, userId: a, from: asOwner, to: { role: 'admin' }, actor: { userId: b, role: 'owner' } }),
    ])
    expect(results.filter((result) => 'changed' in result)).toHaveLength(1)
    expect(results.filter((result) => 'refused' in result)).toHaveLength(1)
    expect(await owners()).toHaveLength(1)
  })

  it('keeps one owner when both owners leave at once', async () => {
    const adapter = make()
    const { organizationId, a, b, owners } = await twoOwners(adapter, newUser)
    const results = await Promise.all(
      [a, b].map((userId) => adapter.changeMembership!({ organizationId, userId, from: asOwner, to: { status: 'removed' }, actor: { userId, role: 'owner' } })),
    )
    expect(results.filter((result) => 'changed' in result)).toHaveLength(1)
    expect(results).toContainEqual({ refused: 'LastOwner' })
    expect(await owners()).toHaveLength(1)
  })

  it('updates an organisation, refuses a taken slug, and deletes it with its memberships and invitations', async () => {
    const adapter = make()
    const { organizationId, a } = await twoOwners(adapter, newUser)
    const other = organizationRecord()
    await adapter.createOrganization!(other)
    const updated = await adapter.updateOrganization!(organizationId, { name: 'Acme Corp', metadata: { plan: 'enterprise' } })
    expect(updated).toMatchObject({ id: organizationId, name: 'Acme Corp', metadata: { plan: 'enterprise' }, verifiedDomains: ['acme.test'] })
    expect(await adapter.updateOrganization!(organizationId, { slug: `${organizationId}-new` })).toMatchObject({ slug: `${organizationId}-new`, name: 'Acme Corp' })
    await expect(Promise.resolve().then(() => adapter.updateOrganization!(organizationId, { slug: other.slug }))).rejects.toThrow()
    expect(await adapter.getOrganization!(other.id)).toMatchObject({ slug: other.slug, name: 'Acme' })
    expect(await adapter.updateOrganization!(unique('nobody'), { name: 'X' })).toBeNull()
    const invitation = await adapter.createInvitation!(invitationRecord(organizationId, a, new Date('2026-01-08T00:00:00Z')))
    expect(await adapter.deleteOrganization!(organizationId)).toBe(true)
    expect(await adapter.getOrganization!(organizationId)).toBeNull()
    expect(await adapter.getMembership!(organizationId, a)).toBeNull()
    expect(await adapter.listMemberships!(organizationId)).toEqual([])
    expect(await adapter.getInvitation!(invitation.id)).toBeNull()
    expect(await adapter.deleteOrganization!(organizationId)).toBe(false)
    expect(await adapter.getOrganization!(other.id)).not.toBeNull()
  })
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

  describe(`${name}: membership changes`, () => {
    membershipChangeContract(make, newUser)
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
