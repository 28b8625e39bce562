/**
 * The management routes through `Auth` over HTTP, from the attacker's side: two users (Alice owns
 * Acme, Bob is a member of Acme and owns Globex) and two organisations in every test. Every change
 * acts in the actor's active organisation, re-read: IDOR by a forged organisation id, escalation,
 * acting on a higher-ranked member, and the last owner leaving or being demoted are refused.
 */
import { describe, expect, it } from 'vitest'
import { can } from '../../core/organizations.js'
import { Client } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS, appRequest, sessionOrganization, setActive, twoOrganizations } from './fixture.js'

async function post(client: Client, segment: string, body: Record<string, unknown>, options: { csrf?: boolean } = {}) {
  const csrfToken = options.csrf === false ? undefined : await client.csrfToken()
  const response = await client.send({ method: 'POST', path: `/organization/${segment}`, json: { ...body, ...(csrfToken ? { csrfToken } : {}) } })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> | null }
}

/** The world with both users' active organisations set: Alice in Acme, Bob in `bobIn`. */
async function world(bobIn: string = ACME, bobRoleInAcme = 'member') {
  const setup = await twoOrganizations()
  if (bobRoleInAcme !== 'member') await setup.adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: bobRoleInAcme })
  expect((await setActive(setup.alice, { organizationId: ACME })).response.status).toBe(200)
  expect((await setActive(setup.bob, { organizationId: bobIn })).response.status).toBe(200)
  const membership = (organizationId: string, user: keyof typeof USERS) => setup.adapter.getMembership(organizationId, USERS[user].id)
  return { ...setup, membership }
}

describe('POST /organization/create', () => {
  it('creates an organisation whose owner is its creator, and nobody else a member', async () => {
    const { config, alice, bob } = await world()
    const created = await post(alice, 'create', { slug: 'initech', name: 'Initech' })
    expect(created.status).toBe(201)
    const id = (created.body!.organization as { id: string }).id
    expect(created.body).toEqual({ organization: { id, slug: 'initech', name: 'Initech' }, role: 'owner' })
    expect((await setActive(alice, { organizationId: id })).response.status).toBe(200)
    expect(await can(appRequest(alice), 'organization:delete', config)).toBe(true)
    expect((await setActive(bob, { organizationId: id })).response.status).toBe(403)
  })

  it('refuses a taken slug, a malformed one, a signed-out request and one without the CSRF token', async () => {
    const { adapter, config, alice } = await world()
    expect((await post(alice, 'create', { slug: 'acme', name: 'Acme again' })).status).toBe(409)
    for (const slug of ['A', 'Acme', '-x', 'x-', 'a b', 'x'.repeat(60), 42]) expect((await post(alice, 'create', { slug, name: 'X' })).status).toBe(400)
    expect((await post(new Client(config), 'create', { slug: 'stranger', name: 'S' })).status).toBe(401)
    expect((await post(alice, 'create', { slug: 'nocsrf', name: 'N' }, { csrf: false })).status).not.toBe(201)
    expect(await adapter.getOrganizationBySlug('nocsrf')).toBeNull()
    expect(await adapter.getOrganizationBySlug('stranger')).toBeNull()
  })
})

describe('POST /organization/role', () => {
  it("lets an owner change a member's role, seen at once by can()", async () => {
    const { config, alice, bob } = await world()
    expect(await can(appRequest(bob), 'member:update', config)).toBe(false)
    const changed = await post(alice, 'role', { userId: USERS.bob.id, role: 'admin' })
    expect(changed).toEqual({ status: 200, body: { membership: { organizationId: ACME, userId: USERS.bob.id, role: 'admin', status: 'active' } } })
    expect(await can(appRequest(bob), 'member:update', config)).toBe(true)
  })

  it('refuses a forged organisation id in the body: an owner of Acme cannot reach Globex (IDOR)', async () => {
    const { alice, membership } = await world()
    const forged = await post(alice, 'role', { organizationId: GLOBEX, userId: USERS.bob.id, role: 'member' })
    expect(forged).toEqual({ status: 403, body: { error: 'NotActiveOrganization' } })
    expect((await membership(GLOBEX, 'bob'))!.role).toBe('owner')
  })

  it('acts only in the active organisation: Bob, active in Globex, cannot touch Acme by naming Alice', async () => {
    const { bob, membership } = await world(GLOBEX)
    expect((await post(bob, 'role', { userId: USERS.alice.id, role: 'member' })).status).toBe(404)
    expect((await post(bob, 'role', { organizationId: ACME, userId: USERS.alice.id, role: 'member' })).status).toBe(403)
    expect((await membership(ACME, 'alice'))!.role).toBe('owner')
  })

  it('refuses a plain member, a role above the granter\'s own, and an admin acting on an owner', async () => {
    const member = await world()
    expect((await post(member.bob, 'role', { userId: USERS.bob.id, role: 'admin' })).status).toBe(403)
    const admin = await world(ACME, 'admin')
    expect((await post(admin.bob, 'role', { userId: USERS.bob.id, role: 'owner' })).body).toEqual({ error: 'Forbidden' })
    expect((await post(admin.bob, 'role', { userId: USERS.alice.id, role: 'member' })).body).toEqual({ error: 'Forbidden' })
    // The custom role holds invoice permissions no admin has.
    expect((await post(admin.bob, 'role', { userId: USERS.bob.id, role: 'billing' })).body).toEqual({ error: 'Forbidden' })
    expect((await admin.membership(ACME, 'alice'))!.role).toBe('owner')
    expect((await admin.membership(ACME, 'bob'))!.role).toBe('admin')
  })

  it('refuses an unknown role, and grants a custom one only from an owner', async () => {
    const { alice, membership } = await world()
    expect((await post(alice, 'role', { userId: USERS.bob.id, role: 'root' })).body).toEqual({ error: 'UnknownRole' })
    expect((await post(alice, 'role', { userId: USERS.bob.id, role: 'constructor' })).body).toEqual({ error: 'UnknownRole' })
    expect((await post(alice, 'role', { userId: USERS.bob.id, role: 'billing' })).status).toBe(200)
    expect((await membership(ACME, 'bob'))!.role).toBe('billing')
  })

  it('never demotes the last owner, and does once there is another', async () => {
    const { alice, membership } = await world()
    expect((await post(alice, 'role', { userId: USERS.alice.id, role: 'admin' })).body).toEqual({ error: 'LastOwner' })
    expect((await membership(ACME, 'alice'))!.role).toBe('owner')
    expect((await post(alice, 'role', { userId: USERS.bob.id, role: 'owner' })).status).toBe(200)
    expect((await post(alice, 'role', { userId: USERS.alice.id, role: 'admin' })).status).toBe(200)
    expect((await membership(ACME, 'alice'))!.role).toBe('admin')
  })
})

describe('POST /organization/remove', () => {
  it("removes a member, whose next request has no organisation and no permission", async () => {
    const { config, alice, bob, membership } = await world()
    expect(await sessionOrganization(bob)).toBe(ACME)
    expect((await post(alice, 'remove', { userId: USERS.bob.id })).body).toEqual({
      membership: { organizationId: ACME, userId: USERS.bob.id, role: 'member', status: 'removed' },
    })
    expect((await membership(ACME, 'bob'))!.status).toBe('removed')
    expect(await sessionOrganization(bob)).toBeUndefined()
    expect(await can(appRequest(bob), 'organization:read', config)).toBe(false)
    // Removed twice is no member; Globex is untouched.
    expect((await post(alice, 'remove', { userId: USERS.bob.id })).status).toBe(404)
    expect((await membership(GLOBEX, 'bob'))!.status).toBe('active')
  })

  it('refuses a forged organisation id and a user of another organisation (IDOR)', async () => {
    const { bob, membership } = await world(GLOBEX)
    expect((await post(bob, 'remove', { organizationId: ACME, userId: USERS.alice.id })).status).toBe(403)
    expect((await post(bob, 'remove', { userId: USERS.alice.id })).status).toBe(404)
    expect((await membership(ACME, 'alice'))!.status).toBe('active')
  })

  it('refuses a plain member removing another, and an admin removing an owner', async () => {
    const member = await world()
    expect((await post(member.bob, 'remove', { userId: USERS.alice.id })).body).toEqual({ error: 'Forbidden' })
    const admin = await world(ACME, 'admin')
    expect((await post(admin.bob, 'remove', { userId: USERS.alice.id })).body).toEqual({ error: 'Forbidden' })
    expect((await admin.membership(ACME, 'alice'))!.status).toBe('active')
  })

  it('lets a member leave, but never the last owner', async () => {
    const { alice, bob, membership } = await world()
    expect((await post(alice, 'remove', { userId: USERS.alice.id })).body).toEqual({ error: 'LastOwner' })
    expect((await membership(ACME, 'alice'))!.status).toBe('active')
    expect((await post(bob, 'remove', { userId: USERS.bob.id })).status).toBe(200)
    expect((await membership(ACME, 'bob'))!.status).toBe('removed')
  })

  it("gives a removed admin's next request no power", async () => {
    const { adapter, bob, membership } = await world(ACME, 'admin')
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'removed' })
    expect((await post(bob, 'remove', { userId: USERS.alice.id })).body).toEqual({ error: 'NoActiveOrganization' })
    expect((await post(bob, 'role', { userId: USERS.bob.id, role: 'admin' })).body).toEqual({ error: 'NoActiveOrganization' })
    expect((await membership(ACME, 'alice'))!.status).toBe('active')
  })
})
