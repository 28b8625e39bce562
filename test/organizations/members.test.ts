/**
 * The membership and organisation management routes through `Auth` over HTTP, from the attacker's
 * side, with two users and two organisations in every test (Alice owns Acme, Bob is a member of
 * Acme and owns Globex; Carol, where a test needs a member of Globex only, is in Globex alone).
 * Every route acts in the actor's active organisation, re-read: a forged organisation id in the
 * body or the query, another organisation's member by id, a member without the permission, a role
 * above the actor's, the last owner, and two owners racing are each refused, and nothing changes.
 */
import { describe, expect, it } from 'vitest'
import { auditTrail } from '../../core/audit.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { can, changeOrganization, listMembers, organizations } from '../../core/organizations.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { Client } from '../fixtures/http.js'
import { ACME, CUSTOM_ROLES, GLOBEX, USERS, appRequest, sessionOrganization, setActive, twoOrganizations } from './fixture.js'

const CAROL = { id: 'u-carol', name: 'Carol', email: 'carol@example.test' }

type Strategy = 'jwt' | 'database'

async function post(client: Client, segment: string, body: Record<string, unknown> = {}, query?: Record<string, string>) {
  const csrfToken = await client.csrfToken()
  const response = await client.send({ method: 'POST', path: `/organization/${segment}`, json: { ...body, csrfToken }, ...(query ? { query } : {}) })
  return { status: response.status, headers: response.headers, body: (await response.json().catch(() => null)) as Record<string, unknown> | null }
}

async function members(client: Client, query?: Record<string, string>) {
  const response = await client.send({ path: '/organization/members', ...(query ? { query } : {}) })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> | null }
}

/**
 * The world with Alice active in Acme and Bob active in `bobIn`; Bob's role in Acme `bobRole`;
 * Carol a member of Globex only.
 */
async function world(options: { bobIn?: string; bobRole?: string; strategy?: Strategy; overrides?: Parameters<typeof twoOrganizations>[1] } = {}) {
  const setup = await twoOrganizations(options.strategy ?? 'jwt', options.overrides ?? {})
  const { adapter } = setup
  await adapter.createUser({ ...CAROL, emailVerified: null })
  await adapter.createMembership({ organizationId: GLOBEX, userId: CAROL.id, role: 'member', status: 'active', createdAt: new Date('2026-01-01T00:00:00Z') })
  if (options.bobRole) await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: options.bobRole })
  expect((await setActive(setup.alice, { organizationId: ACME })).response.status).toBe(200)
  expect((await setActive(setup.bob, { organizationId: options.bobIn ?? ACME })).response.status).toBe(200)
  const membership = (organizationId: string, userId: string) => adapter.getMembership(organizationId, userId)
  /** Every membership and organisation, to show that a refusal changed nothing. */
  const snapshot = async () =>
    JSON.stringify({
      memberships: [...(await adapter.listMemberships(ACME)), ...(await adapter.listMemberships(GLOBEX))],
      organizations: [await adapter.getOrganization(ACME), await adapter.getOrganization(GLOBEX)],
    })
  return { ...setup, membership, snapshot }
}

/** Each change route with a body that would succeed for Globex's owner acting on Carol. */
const CHANGES: readonly { segment: string; body: Record<string, unknown> }[] = [
  { segment: 'suspend', body: { userId: CAROL.id } },
  { segment: 'remove', body: { userId: CAROL.id } },
  { segment: 'role', body: { userId: CAROL.id, role: 'admin' } },
  { segment: 'transfer', body: { userId: CAROL.id } },
  { segment: 'update', body: { name: 'Taken over' } },
  { segment: 'delete', body: {} },
  { segment: 'leave', body: {} },
]

describe('IDOR on every management route', () => {
  it.each(CHANGES)('refuses $segment with a forged organisation id in the body, and changes nothing', async ({ segment, body }) => {
    const { alice, snapshot } = await world()
    const before = await snapshot()
    expect(await post(alice, segment, { ...body, organizationId: GLOBEX })).toMatchObject({ status: 403, body: { error: 'NotActiveOrganization' } })
    expect(await snapshot()).toBe(before)
  })

  it.each(CHANGES)('refuses $segment with a forged organisation id in the query, or one that disagrees with the body', async ({ segment, body }) => {
    const { alice, snapshot } = await world()
    const before = await snapshot()
    expect(await post(alice, segment, body, { organizationId: GLOBEX })).toMatchObject({ status: 403, body: { error: 'NotActiveOrganization' } })
    expect(await post(alice, segment, { ...body, organizationId: ACME }, { organizationId: GLOBEX })).toMatchObject({ status: 403 })
    expect(await post(alice, segment, { ...body, organizationId: 42 })).toMatchObject({ status: 403 })
    expect(await snapshot()).toBe(before)
  })

  it.each(['suspend', 'reinstate', 'remove', 'role', 'transfer'])("answers %s on organisation B's member through organisation A's route as no member", async (segment) => {
    const { alice, snapshot } = await world()
    const before = await snapshot()
    expect(await post(alice, segment, { userId: CAROL.id, role: 'admin' })).toMatchObject({ status: 404, body: { error: 'NotAMember' } })
    expect(await snapshot()).toBe(before)
  })

  it('keeps Bob, active in Acme, off Globex (which he owns) by body or query, and his Globex rights off Acme', async () => {
    const { bob, snapshot } = await world()
    const before = await snapshot()
    for (const [segment, body] of [
      ['suspend', { userId: CAROL.id }],
      ['update', { name: 'Renamed' }],
      ['delete', {}],
    ] as const) {
      expect((await post(bob, segment, { ...body, organizationId: GLOBEX })).status).toBe(403)
      // In Acme Bob is a plain member: what he may do in Globex he may not do here.
      expect((await post(bob, segment, body)).status).toBe(segment === 'suspend' ? 404 : 403)
    }
    expect(await snapshot()).toBe(before)
  })

  it('lists the active organisation only: no member of another, and a forged id refused', async () => {
    const { alice, bob } = await world({ bobIn: GLOBEX })
    const listed = await members(alice)
    expect(listed.status).toBe(200)
    expect(listed.body!.organizationId).toBe(ACME)
    expect((listed.body!.members as { userId: string; role: string; email: string }[]).map((m) => [m.userId, m.role, m.email]).sort()).toEqual([
      [USERS.alice.id, 'owner', USERS.alice.email],
      [USERS.bob.id, 'member', USERS.bob.email],
    ])
    expect(JSON.stringify(listed.body)).not.toContain(CAROL.id)
    expect(await members(alice, { organizationId: GLOBEX })).toEqual({ status: 403, body: { error: 'NotActiveOrganization' } })
    const globex = await members(bob)
    expect((globex.body!.members as { userId: string }[]).map((m) => m.userId).sort()).toEqual([CAROL.id, USERS.bob.id].sort())
  })

  it('answers a signed-out request 401 and one without an active organisation 403', async () => {
    const { config, adapter, alice } = await world()
    expect((await members(new Client(config))).status).toBe(401)
    expect((await post(new Client(config), 'suspend', { userId: USERS.bob.id })).status).toBe(401)
    expect((await setActive(alice, { organizationId: null })).response.status).toBe(200)
    expect(await post(alice, 'suspend', { userId: USERS.bob.id })).toMatchObject({ status: 403, body: { error: 'NoActiveOrganization' } })
    expect(await members(alice)).toMatchObject({ status: 403, body: { error: 'NoActiveOrganization' } })
    expect((await adapter.getMembership(ACME, USERS.bob.id))!.status).toBe('active')
  })
})

describe('permission and rank', () => {
  it('refuses a plain member every change of another member and of the organisation', async () => {
    const { bob, snapshot } = await world()
    const before = await snapshot()
    for (const [segment, body] of [
      ['suspend', { userId: USERS.alice.id }],
      ['remove', { userId: USERS.alice.id }],
      ['role', { userId: USERS.bob.id, role: 'admin' }],
      ['transfer', { userId: USERS.alice.id }],
      ['update', { name: 'Mine now' }],
      ['delete', {}],
    ] as const) {
      expect(await post(bob, segment, body), segment).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    }
    expect(await snapshot()).toBe(before)
  })

  it('refuses an admin acting on the owner, granting a role above their own, deleting or handing over', async () => {
    const { bob, snapshot } = await world({ bobRole: 'admin' })
    const before = await snapshot()
    for (const [segment, body] of [
      ['suspend', { userId: USERS.alice.id }],
      ['remove', { userId: USERS.alice.id }],
      ['role', { userId: USERS.alice.id, role: 'member' }],
      ['role', { userId: USERS.bob.id, role: 'owner' }],
      // The custom role holds invoice permissions no admin has.
      ['role', { userId: USERS.bob.id, role: 'billing' }],
      ['transfer', { userId: USERS.bob.id }],
      ['delete', {}],
    ] as const) {
      expect((await post(bob, segment, body)).body, `${segment} ${JSON.stringify(body)}`).toEqual({ error: 'Forbidden' })
    }
    expect(await snapshot()).toBe(before)
  })

  it('refuses deleting and handing over to a custom role whose statements name them: those are an owner\'s', async () => {
    const roles = { ...CUSTOM_ROLES, steward: { organization: ['read', 'update', 'delete', 'transfer'], member: ['read'] } }
    const { bob, alice, adapter } = await world({ bobRole: 'steward', overrides: { organizations: organizations({ roles }) } })
    expect((await post(bob, 'delete')).body).toEqual({ error: 'Forbidden' })
    expect((await post(bob, 'transfer', { userId: USERS.alice.id })).body).toEqual({ error: 'Forbidden' })
    expect((await post(bob, 'update', { name: 'Stewarded' })).status).toBe(200)
    expect(await adapter.getOrganization(ACME)).toMatchObject({ name: 'Stewarded' })
    expect((await adapter.getMembership(ACME, USERS.alice.id))!.role).toBe('owner')
    expect((await members(alice)).status).toBe(200)
  })

  it('refuses the members list to a role without member:read', async () => {
    const { bob } = await world({ bobRole: 'billing' })
    expect(await members(bob)).toEqual({ status: 403, body: { error: 'Forbidden' } })
  })
})

/**
 * The world's adapter with `changeMembership` held until `parties` calls have arrived: every
 * request racing has passed its check before any writes, so only the compare-and-set decides.
 */
function racing(parties: number) {
  return (adapter: Awaited<ReturnType<typeof twoOrganizations>>['adapter']) => {
    let arrived = 0
    let release!: () => void
    const allHere = new Promise<void>((resolve) => (release = resolve))
    const held = {
      ...adapter,
      async changeMembership(change: Parameters<typeof adapter.changeMembership>[0]) {
        if (++arrived >= parties) release()
        await allHere
        return adapter.changeMembership(change)
      },
    }
    return { adapter: held }
  }
}

describe('the last owner', () => {
  it('can neither leave, be removed, suspended nor demoted; can once there is another owner', async () => {
    const { alice, bob, membership } = await world()
    expect(await post(alice, 'leave')).toMatchObject({ status: 409, body: { error: 'LastOwner' } })
    expect(await post(alice, 'remove', { userId: USERS.alice.id })).toMatchObject({ status: 409, body: { error: 'LastOwner' } })
    expect(await post(alice, 'role', { userId: USERS.alice.id, role: 'admin' })).toMatchObject({ status: 409, body: { error: 'LastOwner' } })
    // Nobody suspends themselves: the owner's own suspension is no change that can be made.
    expect(await post(alice, 'suspend', { userId: USERS.alice.id })).toMatchObject({ status: 409, body: { error: 'NotApplicable' } })
    expect(await membership(ACME, USERS.alice.id)).toMatchObject({ role: 'owner', status: 'active' })
    expect((await post(alice, 'role', { userId: USERS.bob.id, role: 'owner' })).status).toBe(200)
    expect(await post(bob, 'suspend', { userId: USERS.alice.id })).toMatchObject({ status: 200, body: { membership: { status: 'suspended' } } })
    // Alice suspended, Bob is the last active owner.
    expect(await post(bob, 'leave')).toMatchObject({ status: 409, body: { error: 'LastOwner' } })
    expect((await post(bob, 'reinstate', { userId: USERS.alice.id })).status).toBe(200)
    expect(await post(alice, 'leave')).toMatchObject({ status: 200, body: { membership: { userId: USERS.alice.id, status: 'removed' } } })
  })

  it('keeps one owner when two owners demote each other at once, on both session strategies', async () => {
    for (const strategy of ['jwt', 'database'] as const) {
      const { alice, bob, adapter } = await world({ bobRole: 'owner', strategy, overrides: racing(2) })
      const answers = await Promise.all([post(alice, 'role', { userId: USERS.bob.id, role: 'admin' }), post(bob, 'role', { userId: USERS.alice.id, role: 'admin' })])
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409])
      const owners = (await adapter.listMemberships(ACME)).filter((m) => m.role === 'owner' && m.status === 'active')
      expect(owners).toHaveLength(1)
    }
  })

  it('keeps one owner when both owners leave at once, or suspend each other at once', async () => {
    for (const [segment, body] of [
      ['leave', () => ({})],
      ['suspend', (other: string) => ({ userId: other })],
    ] as const) {
      const { alice, bob, adapter } = await world({ bobRole: 'owner', overrides: racing(2) })
      const answers = await Promise.all([post(alice, segment, body(USERS.bob.id)), post(bob, segment, body(USERS.alice.id))])
      expect(answers.map((answer) => answer.status).sort(), segment).toEqual([200, 409])
      expect((await adapter.listMemberships(ACME)).filter((m) => m.role === 'owner' && m.status === 'active')).toHaveLength(1)
    }
  })
})

describe.each(['jwt', 'database'] as const)('a suspended or removed member\'s next request (%s sessions)', (strategy) => {
  it('has no organisation and no permission once suspended, and has them again once reinstated', async () => {
    const { config, alice, bob } = await world({ bobRole: 'admin', strategy })
    expect(await can(appRequest(bob), 'member:update', config)).toBe(true)
    expect(await post(alice, 'suspend', { userId: USERS.bob.id })).toMatchObject({ status: 200, body: { membership: { userId: USERS.bob.id, status: 'suspended' } } })
    expect(await sessionOrganization(bob)).toBeUndefined()
    expect(await can(appRequest(bob), 'member:read', config)).toBe(false)
    expect(await post(bob, 'suspend', { userId: USERS.alice.id })).toMatchObject({ status: 403, body: { error: 'NoActiveOrganization' } })
    expect((await members(bob)).status).toBe(403)
    // Suspending twice is no change; reinstating an active member neither.
    expect(await post(alice, 'suspend', { userId: USERS.bob.id })).toMatchObject({ status: 409, body: { error: 'NotApplicable' } })
    expect((await post(alice, 'reinstate', { userId: USERS.bob.id })).body).toEqual({ membership: { organizationId: ACME, userId: USERS.bob.id, role: 'admin', status: 'active' } })
    expect(await post(alice, 'reinstate', { userId: USERS.bob.id })).toMatchObject({ status: 409, body: { error: 'NotApplicable' } })
    expect(await sessionOrganization(bob)).toBe(ACME)
    expect(await can(appRequest(bob), 'member:update', config)).toBe(true)
  })

  it('has no organisation once removed, and cannot switch back to it', async () => {
    const { config, alice, bob } = await world({ strategy })
    expect(await post(alice, 'remove', { userId: USERS.bob.id })).toMatchObject({ status: 200, body: { membership: { status: 'removed' } } })
    expect(await sessionOrganization(bob)).toBeUndefined()
    expect(await can(appRequest(bob), 'organization:read', config)).toBe(false)
    expect((await setActive(bob, { organizationId: ACME })).response.status).toBe(403)
    expect(await post(alice, 'reinstate', { userId: USERS.bob.id })).toMatchObject({ status: 404, body: { error: 'NotAMember' } })
  })

  it('is seen at once by another instance sharing the store', async () => {
    const { config, alice, bob } = await world({ strategy, overrides: { store: memoryAuthStore() } })
    const otherInstance = { ...config }
    const bobThere = new Client(otherInstance)
    for (const [name, value] of bob.jar.cookies) bobThere.jar.cookies.set(name, value)
    expect(await sessionOrganization(bobThere)).toBe(ACME)
    expect((await post(alice, 'suspend', { userId: USERS.bob.id })).status).toBe(200)
    expect(await sessionOrganization(bobThere)).toBeUndefined()
    expect(await can(appRequest(bobThere), 'member:read', otherInstance)).toBe(false)
    expect((await post(alice, 'reinstate', { userId: USERS.bob.id })).status).toBe(200)
    expect((await post(alice, 'remove', { userId: USERS.bob.id })).status).toBe(200)
    expect(await sessionOrganization(bobThere)).toBeUndefined()
    expect(await can(appRequest(bobThere), 'organization:read', otherInstance)).toBe(false)
  })
})

describe('handing over and deleting', () => {
  it('hands the organisation to an active member, the former owner an admin', async () => {
    const { config, alice, bob, membership } = await world()
    const transferred = await post(alice, 'transfer', { userId: USERS.bob.id })
    expect(transferred).toMatchObject({
      status: 200,
      body: {
        membership: { organizationId: ACME, userId: USERS.bob.id, role: 'owner', status: 'active' },
        formerOwner: { organizationId: ACME, userId: USERS.alice.id, role: 'admin', status: 'active' },
      },
    })
    expect(await can(appRequest(bob), 'organization:delete', config)).toBe(true)
    expect(await can(appRequest(alice), 'organization:delete', config)).toBe(false)
    expect((await membership(ACME, USERS.alice.id))!.role).toBe('admin')
  })

  it('refuses a handover to a suspended member, a non-member and oneself', async () => {
    const { alice, adapter, snapshot } = await world()
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'suspended' })
    const before = await snapshot()
    expect(await post(alice, 'transfer', { userId: USERS.bob.id })).toMatchObject({ status: 409, body: { error: 'NotApplicable' } })
    expect(await post(alice, 'transfer', { userId: CAROL.id })).toMatchObject({ status: 404 })
    expect(await post(alice, 'transfer', { userId: USERS.alice.id })).toMatchObject({ status: 409, body: { error: 'NotApplicable' } })
    expect(await post(alice, 'transfer', {})).toMatchObject({ status: 400 })
    expect(await snapshot()).toBe(before)
  })

  it('deletes the organisation with its memberships, for its owner only', async () => {
    const { config, alice, bob, adapter } = await world()
    expect((await post(bob, 'delete')).status).toBe(403)
    expect(await post(alice, 'delete')).toEqual(expect.objectContaining({ status: 200, body: { deleted: { id: ACME } } }))
    expect(await adapter.getOrganization(ACME)).toBeNull()
    expect(await adapter.getMembership(ACME, USERS.bob.id)).toBeNull()
    expect(await sessionOrganization(bob)).toBeUndefined()
    expect(await can(appRequest(alice), 'organization:read', config)).toBe(false)
    expect(await adapter.getOrganization(GLOBEX)).not.toBeNull()
  })

  it('asks a session with no recent proof to sign in again before deleting or handing over, and changes nothing', async () => {
    // A database session of the fixture records no sign-in time: it has proven nothing recently.
    const { alice, snapshot } = await world({ strategy: 'database' })
    const before = await snapshot()
    for (const segment of ['delete', 'transfer']) {
      const answer = await post(alice, segment, { userId: USERS.bob.id })
      expect(answer.status, segment).not.toBe(200)
      expect(answer.body, segment).not.toHaveProperty('deleted')
    }
    expect(await snapshot()).toBe(before)
    // The other changes are no sensitive action.
    expect((await post(alice, 'update', { name: 'Still mine' })).status).toBe(200)
  })
})

describe('POST /organization/update', () => {
  it('changes the name, slug and metadata, and refuses a taken slug and malformed input', async () => {
    const { alice, adapter, snapshot } = await world()
    expect(await post(alice, 'update', { name: 'Acme Corp', slug: 'acme-corp', metadata: { plan: 'team' } })).toEqual(
      expect.objectContaining({ status: 200, body: { organization: { id: ACME, slug: 'acme-corp', name: 'Acme Corp', metadata: { plan: 'team' } } } }),
    )
    const before = await snapshot()
    expect(await post(alice, 'update', { slug: 'globex' })).toMatchObject({ status: 409, body: { error: 'SlugTaken' } })
    for (const body of [{}, { slug: 'Not A Slug' }, { name: '' }, { name: 'x'.repeat(201) }, { name: 7 }, { metadata: 'plan' }, { metadata: [1] }, { metadata: { blob: 'x'.repeat(5000) } }]) {
      expect((await post(alice, 'update', body)).status, JSON.stringify(body).slice(0, 60)).toBe(400)
    }
    expect(await snapshot()).toBe(before)
    expect(await adapter.getOrganizationBySlug('acme-corp')).toMatchObject({ id: ACME })
  })
})

describe('the audit trail', () => {
  it('records every change as a run of the membership chart, by the actor', async () => {
    const events: AuditEvent[] = []
    const { alice } = await world({ overrides: { store: memoryAuthStore(), audit: auditTrail({ sink: (event) => void events.push(event) }) } })
    expect((await post(alice, 'suspend', { userId: USERS.bob.id })).status).toBe(200)
    expect((await post(alice, 'update', { organizationId: GLOBEX, name: 'x' })).status).toBe(403)
    const runs = events.filter((event) => event.flow === 'organization-membership')
    expect(runs.map((event) => [event.userId, event.states?.at(-1)])).toEqual([
      [USERS.alice.id, 'organization-membership:suspended'],
      [USERS.alice.id, 'organization-membership:forbidden'],
    ])
  })
})

describe('the server functions', () => {
  it('change and list as the routes do, with the same refusals', async () => {
    const { config, alice, bob, adapter } = await world()
    expect(await changeOrganization(appRequest(bob), 'suspend', { userId: USERS.alice.id }, config)).toEqual({ status: 403, body: { error: 'Forbidden' } })
    expect(await changeOrganization(appRequest(alice), 'suspend', { userId: USERS.bob.id, organizationId: GLOBEX }, config)).toEqual({
      status: 403,
      body: { error: 'NotActiveOrganization' },
    })
    expect(await changeOrganization(appRequest(alice), 'suspend', { userId: CAROL.id }, config)).toEqual({ status: 404, body: { error: 'NotAMember' } })
    expect(await changeOrganization(appRequest(alice), 'leave', {}, config)).toEqual({ status: 409, body: { error: 'LastOwner' } })
    expect(await changeOrganization(appRequest(alice), 'suspend', { userId: USERS.bob.id }, config)).toMatchObject({ status: 200, body: { membership: { status: 'suspended' } } })
    expect(await listMembers(appRequest(bob), config)).toBeNull()
    expect((await listMembers(appRequest(alice), config))!.map((member) => [member.userId, member.status]).sort()).toEqual([
      [USERS.alice.id, 'active'],
      [USERS.bob.id, 'suspended'],
    ])
    expect(await changeOrganization(new Request('https://authchart.test/app'), 'leave', {}, config)).toEqual({ status: 401, body: null })
    await expect(changeOrganization(appRequest(alice), 'promote' as never, {}, config)).rejects.toThrow(TypeError)
    expect((await adapter.getMembership(ACME, USERS.alice.id))!.role).toBe('owner')
  })

  it('delete and hand over only after a recent proof of a factor', async () => {
    const stale = await world({ strategy: 'database' })
    expect(await changeOrganization(appRequest(stale.alice), 'delete', {}, stale.config)).toEqual({ status: 401, body: { error: 'RecentAuthRequired' } })
    expect(await changeOrganization(appRequest(stale.alice), 'transfer', { userId: USERS.bob.id }, stale.config)).toEqual({ status: 401, body: { error: 'RecentAuthRequired' } })
    expect(await stale.adapter.getOrganization(ACME)).not.toBeNull()
    const fresh = await world()
    expect(await changeOrganization(appRequest(fresh.alice), 'delete', {}, fresh.config)).toEqual({ status: 200, body: { deleted: { id: ACME } } })
    expect(await fresh.adapter.getOrganization(ACME)).toBeNull()
  })
})
