/**
 * The membership and organisation changes at their edges, through `Auth` over HTTP (two users, two
 * organisations): each field of an update alone and at its bounds, a slug raced between the check
 * and the write, an owner demoted between the check of a deletion and the deletion, a former owner
 * who cannot step down, the states each change starts from, and the members list's filtering.
 */
import { describe, expect, it } from 'vitest'
import { organizationMembershipModule } from '../../core/organizations/members.js'
import { organizationMembershipMachine } from '../../machines/organization-membership.machine.js'
import type { ResolvedConfig } from '../../core/config/types.js'
import { Client } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS, setActive, twoOrganizations } from './fixture.js'

type Adapter = Awaited<ReturnType<typeof twoOrganizations>>['adapter']

async function post(client: Client, segment: string, body: Record<string, unknown> = {}) {
  const response = await client.send({ method: 'POST', path: `/organization/${segment}`, json: { ...body, csrfToken: await client.csrfToken() } })
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, unknown> | null }
}

/** Alice active in Acme (its owner), Bob a member of Acme; `wrap` may replace adapter methods. */
async function world(wrap: (adapter: Adapter) => Partial<Adapter> = () => ({})) {
  const setup = await twoOrganizations('jwt', (adapter) => ({ adapter: { ...adapter, ...wrap(adapter) } }))
  expect((await setActive(setup.alice, { organizationId: ACME })).response.status).toBe(200)
  expect((await setActive(setup.bob, { organizationId: ACME })).response.status).toBe(200)
  return setup
}

describe('an update, field by field', () => {
  it('changes one field and keeps the others', async () => {
    const { alice, adapter } = await world()
    expect((await post(alice, 'update', { name: 'Acme Corp' })).status).toBe(200)
    expect(await adapter.getOrganization(ACME)).toMatchObject({ slug: 'acme', name: 'Acme Corp', metadata: {} })
    expect((await post(alice, 'update', { slug: 'acme-two' })).status).toBe(200)
    expect(await adapter.getOrganization(ACME)).toMatchObject({ slug: 'acme-two', name: 'Acme Corp' })
    expect((await post(alice, 'update', { metadata: { plan: 'team' } })).body).toEqual({ organization: { id: ACME, slug: 'acme-two', name: 'Acme Corp', metadata: { plan: 'team' } } })
    // Its own slug is no taken one.
    expect((await post(alice, 'update', { slug: 'acme-two', name: 'Same slug' })).status).toBe(200)
  })

  it('takes a name of 200 characters and metadata of 4096 bytes, and refuses one more, a blank name and non-string fields', async () => {
    const { alice } = await world()
    expect((await post(alice, 'update', { name: 'n'.repeat(200) })).status).toBe(200)
    const padding = 4096 - JSON.stringify({ blob: '' }).length
    expect((await post(alice, 'update', { metadata: { blob: 'x'.repeat(padding) } })).status).toBe(200)
    expect((await post(alice, 'update', { metadata: { blob: 'x'.repeat(padding + 1) } })).status).toBe(400)
    for (const body of [{ name: '   ' }, { slug: 7 }, { name: null }, { metadata: null }, { slug: 'acme', name: 7 }]) {
      expect((await post(alice, 'update', body)).status, JSON.stringify(body)).toBe(400)
    }
  })

  it('answers SlugTaken when another organisation took the slug between the check and the write, and 503 for another failure', async () => {
    let takeIt = true
    const { alice, adapter } = await world((base) => ({
      async updateOrganization(id, fields) {
        if (takeIt && fields.slug === 'raced') await base.updateOrganization(GLOBEX, { slug: 'raced' })
        return base.updateOrganization(id, fields)
      },
    }))
    expect(await post(alice, 'update', { slug: 'raced' })).toMatchObject({ status: 409, body: { error: 'SlugTaken' } })
    expect((await adapter.getOrganization(ACME))!.slug).toBe('acme')
    takeIt = false
    const failing = await world(() => ({ updateOrganization: async () => Promise.reject(new TypeError('broken')) }))
    expect(await post(failing.alice, 'update', { name: 'X' })).toMatchObject({ status: 503, body: { error: 'Unavailable' } })
    expect(await post(failing.alice, 'update', { slug: 'free-slug' })).toMatchObject({ status: 503 })
  })
})

describe('the states a change starts from', () => {
  it('changes the role of, and removes, a suspended or invited member', async () => {
    for (const status of ['suspended', 'invited'] as const) {
      const { alice, adapter } = await world()
      await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status })
      expect(await post(alice, 'role', { userId: USERS.bob.id, role: 'admin' })).toMatchObject({ status: 200, body: { membership: { role: 'admin', status } } })
      expect(await post(alice, 'remove', { userId: USERS.bob.id })).toMatchObject({ status: 200, body: { membership: { status: 'removed' } } })
    }
  })

  it('refuses to hand over to a member who is an owner already, and a user id too long to be one', async () => {
    const { alice, adapter } = await world()
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'owner' })
    expect(await post(alice, 'transfer', { userId: USERS.bob.id })).toMatchObject({ status: 409, body: { error: 'NotApplicable' } })
    expect(await post(alice, 'suspend', { userId: 'u'.repeat(257) })).toMatchObject({ status: 400 })
    expect(await post(alice, 'suspend', { userId: 'u'.repeat(256) })).toMatchObject({ status: 404 })
  })

  it('answers a successful change without Retry-After', async () => {
    const { alice } = await world()
    expect(await post(alice, 'suspend', { userId: USERS.bob.id })).toMatchObject({ status: 200, retryAfter: null })
  })
})

describe('deleting and handing over when the owner changes meanwhile', () => {
  it('refuses a deletion whose owner was demoted between the check and the deletion', async () => {
    let reads = 0
    const { alice, adapter } = await world((base) => ({
      async getMembership(organizationId, userId) {
        const membership = await base.getMembership(organizationId, userId)
        // The deletion reads the actor twice (the check, then just before deleting): the second time demoted.
        if (userId === USERS.alice.id && membership && ++reads === 2) return { ...membership, role: 'admin' }
        return membership
      },
    }))
    reads = 0
    expect(await post(alice, 'delete')).toMatchObject({ status: 409, body: { error: 'Changed' } })
    expect(await adapter.getOrganization(ACME)).not.toBeNull()
    reads = 0
    const suspended = await world((base) => ({
      async getMembership(organizationId, userId) {
        const membership = await base.getMembership(organizationId, userId)
        if (userId === USERS.alice.id && membership && ++reads === 2) return { ...membership, status: 'suspended' }
        return membership
      },
    }))
    reads = 0
    expect(await post(suspended.alice, 'delete')).toMatchObject({ status: 409, body: { error: 'Changed' } })
    const gone = await world(() => ({ deleteOrganization: async () => false }))
    expect(await post(gone.alice, 'delete')).toMatchObject({ status: 409, body: { error: 'Changed' } })
  })

  it('answers 503 when the former owner cannot step down, leaving two owners and never none', async () => {
    let changes = 0
    const { alice, adapter } = await world((base) => ({
      async changeMembership(change) {
        return ++changes === 2 ? { refused: 'Changed' as const } : base.changeMembership(change)
      },
    }))
    expect(await post(alice, 'transfer', { userId: USERS.bob.id })).toMatchObject({ status: 503 })
    expect((await adapter.getMembership(ACME, USERS.bob.id))!.role).toBe('owner')
    expect((await adapter.getMembership(ACME, USERS.alice.id))!.role).toBe('owner')
  })
})

describe('the members list', () => {
  it('shows names and addresses, leaves removed members and another organisation\'s records out, and takes its own id in the query', async () => {
    const { alice, adapter } = await world((base) => ({
      async listMemberships(organizationId) {
        const own = await base.listMemberships(organizationId)
        // A store that answers with a record of another organisation too.
        return [...own, { organizationId: GLOBEX, userId: 'u-stranger', role: 'owner', status: 'active', createdAt: new Date() }]
      },
    }))
    await adapter.createUser({ id: 'u-nameless', email: 'nameless@example.test', emailVerified: null })
    await adapter.createMembership({ organizationId: ACME, userId: 'u-nameless', role: 'member', status: 'active', createdAt: new Date('2026-01-02T00:00:00Z') })
    const listed = async (query?: Record<string, string>) => {
      const response = await alice.send({ path: '/organization/members', ...(query ? { query } : {}) })
      return { status: response.status, body: (await response.json()) as { members: Record<string, unknown>[] } }
    }
    const all = await listed({ organizationId: ACME })
    expect(all.status).toBe(200)
    expect(all.body.members.map((m) => [m.userId, m.name, m.email, m.status])).toEqual([
      [USERS.alice.id, 'Alice', USERS.alice.email, 'active'],
      [USERS.bob.id, 'Bob', USERS.bob.email, 'active'],
      ['u-nameless', null, 'nameless@example.test', 'active'],
    ])
    expect(all.body.members[0]!.createdAt).toBe('2026-01-01T00:00:00.000Z')
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'removed' })
    expect((await listed()).body.members.map((m) => m.userId)).toEqual([USERS.alice.id, 'u-nameless'])
  })
})

describe('the membership flow module', () => {
  it('runs with organisations only, and draws the chart it steps', async () => {
    expect(organizationMembershipModule.runs({ organizations: {} } as unknown as ResolvedConfig)).toBe(true)
    expect(organizationMembershipModule.runs({ organizations: undefined } as unknown as ResolvedConfig)).toBe(false)
    expect(organizationMembershipModule.id).toBe('organization-membership')
    const flow = organizationMembershipModule.flow as unknown as { notation?: () => Promise<unknown> }
    if (flow.notation) expect(await flow.notation()).toBe(organizationMembershipMachine)
  })
})
