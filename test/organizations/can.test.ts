/**
 * `can()`: what the signed-in user may do in their active organisation, the membership re-read
 * from the adapter on every call. Two users and two organisations in every test.
 */
import { describe, expect, it } from 'vitest'
import { can } from '../../core/organizations.js'
import { testConfig } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS, appRequest, setActive, twoOrganizations } from './fixture.js'

const as = (user: keyof typeof USERS, activeOrganizationId: string) => ({ user: { id: USERS[user].id }, activeOrganizationId })

describe('can(session, permission)', () => {
  it('answers from the role of the membership in the active organisation', async () => {
    const { config } = await twoOrganizations()
    expect(await can(as('alice', ACME), 'member:remove', config)).toBe(true)
    expect(await can(as('bob', ACME), 'member:remove', config)).toBe(false)
    expect(await can(as('bob', ACME), 'organization:read', config)).toBe(true)
    expect(await can(as('bob', GLOBEX), 'member:remove', config)).toBe(true)
  })

  it('gives nothing in an organisation the user is not a member of, whatever the session claims', async () => {
    const { config } = await twoOrganizations()
    expect(await can(as('alice', GLOBEX), 'organization:read', config)).toBe(false)
    // A role or status carried by the session object is not read.
    expect(await can({ ...as('alice', GLOBEX), role: 'owner', status: 'active' } as never, 'organization:read', config)).toBe(false)
    expect(await can({ user: { id: USERS.alice.id } }, 'organization:read', config)).toBe(false)
    expect(await can({ activeOrganizationId: ACME }, 'organization:read', config)).toBe(false)
    expect(await can(null, 'organization:read', config)).toBe(false)
  })

  it('answers a custom role from its statements', async () => {
    const { adapter, config } = await twoOrganizations()
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'billing' })
    expect(await can(as('bob', ACME), 'invoice:pay', config)).toBe(true)
    expect(await can(as('bob', ACME), { resource: 'invoice', action: 'read' }, config)).toBe(true)
    expect(await can(as('bob', ACME), 'member:read', config)).toBe(false)
    // The owner of Acme has no billing permission of the custom role's resources.
    expect(await can(as('alice', ACME), 'invoice:pay', config)).toBe(false)
  })

  it('gives a removed, suspended or invited member nothing, at once', async () => {
    const { adapter, config } = await twoOrganizations()
    expect(await can(as('bob', ACME), 'organization:read', config)).toBe(true)
    for (const status of ['suspended', 'removed', 'invited'] as const) {
      await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status })
      expect(await can(as('bob', ACME), 'organization:read', config)).toBe(false)
    }
    // Bob's other organisation is untouched.
    expect(await can(as('bob', GLOBEX), 'organization:read', config)).toBe(true)
  })

  it('sees a demotion at once', async () => {
    const { adapter, config } = await twoOrganizations()
    expect(await can(as('bob', GLOBEX), 'organization:delete', config)).toBe(true)
    await adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.bob.id, role: 'member' })
    expect(await can(as('bob', GLOBEX), 'organization:delete', config)).toBe(false)
  })

  it('is refused without organizations() configured, and for a permission not written resource:action', async () => {
    const { config } = await twoOrganizations()
    await expect(can(as('alice', ACME), 'organization:read', testConfig())).rejects.toThrow(/organizations/)
    await expect(can(as('alice', ACME), 'organization', config)).rejects.toThrow(TypeError)
  })
})

describe('can(request, permission)', () => {
  for (const strategy of ['jwt', 'database'] as const) {
    it(`reads the user from the session cookie and the organisation they made active (${strategy})`, async () => {
      const { config, alice, bob } = await twoOrganizations(strategy)
      // Nothing is active yet.
      expect(await can(appRequest(alice), 'organization:read', config)).toBe(false)
      expect((await setActive(alice, { organizationId: ACME })).response.status).toBe(200)
      expect((await setActive(bob, { organizationId: ACME })).response.status).toBe(200)
      expect(await can(appRequest(alice), 'member:remove', config)).toBe(true)
      expect(await can(appRequest(bob), 'member:remove', config)).toBe(false)
      expect(await can(appRequest(bob), 'organization:read', config)).toBe(true)
    })

    it(`gives a removed or suspended member's next request nothing (${strategy})`, async () => {
      const { adapter, config, bob } = await twoOrganizations(strategy)
      await setActive(bob, { organizationId: ACME })
      expect(await can(appRequest(bob), 'organization:read', config)).toBe(true)
      await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'suspended' })
      expect(await can(appRequest(bob), 'organization:read', config)).toBe(false)
      await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'removed' })
      expect(await can(appRequest(bob), 'organization:read', config)).toBe(false)
    })
  }

  it('gives a signed-out request nothing, nor one whose session was signed out', async () => {
    const { config, alice } = await twoOrganizations()
    await setActive(alice, { organizationId: ACME })
    const before = appRequest(alice)
    expect(await can(new Request('https://authchart.test/app'), 'organization:read', config)).toBe(false)
    await alice.signOut()
    expect(await can(appRequest(alice), 'organization:read', config)).toBe(false)
    // The request as it was before signing out still names a JWT: it is still Alice's (JWTs are
    // stateless), and still a member; what matters is that the organisation cookie alone is no one.
    const organizationCookieOnly = new Request('https://authchart.test/app', {
      headers: { cookie: (before.headers.get('cookie') ?? '').split('; ').filter((c) => c.includes('active-organization')).join('; ') },
    })
    expect(await can(organizationCookieOnly, 'organization:read', config)).toBe(false)
  })
})
