/**
 * The organisation checks at their edges, at the module and through `Auth` over HTTP: the
 * configuration each check needs, a session with no usable user or organisation, a store that
 * answers for another pair than the one asked, the role table's validation and ranks, the choice
 * cookie's value and attributes, and the management routes' bounds and races.
 */
import { createHmac, hkdfSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { ResolvedConfig, RequestContext } from '../../core/config/types.js'
import { ConfigError } from '../../core/errors.js'
import { organizations } from '../../core/organizations.js'
import { activeOrganizationOf, canIn } from '../../core/organizations/access.js'
import {
  activeOrganizationCookieName,
  signActiveOrganization,
  verifyActiveOrganization,
  withActiveOrganization,
} from '../../core/organizations/active.js'
import { permissionOf, roleAllows, roleRank, rolesOf } from '../../core/organizations/roles.js'
import type { AdapterMembership, AdapterOrganization } from '../../core/organizations/types.js'
import { Client, credentialsProvider, SECRET, testConfig } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS } from '../organizations/fixture.js'

const CREATED = new Date('2026-01-01T00:00:00Z')
const ORGANIZATION_COOKIE = '__Secure-authjs.active-organization'

/** An adapter that answers an active owner's membership, and an organisation, for whatever pair it is asked. */
function agreeableAdapter(overrides: Record<string, unknown> = {}) {
  return {
    getMembership: async (organizationId: string, userId: string): Promise<AdapterMembership> => ({ organizationId, userId, role: 'owner', status: 'active', createdAt: CREATED }),
    getOrganization: async (id: string): Promise<AdapterOrganization | null> => ({ id, slug: 'x', name: 'x', verifiedDomains: [], metadata: {}, createdAt: CREATED }),
    ...overrides,
  }
}

function resolved(adapter: unknown, withOrganizations = true): ResolvedConfig {
  return { ...(withOrganizations ? { organizations: organizations() } : {}), adapter, secrets: [SECRET, 'an-older-secret-still-accepted-for-a-while-0123'] } as unknown as ResolvedConfig
}

describe('the active organisation, at the module', () => {
  const session = { user: { id: 'u-1' }, activeOrganizationId: 'org-1' }

  it('answers for a well-formed session when the store agrees (the stand-in store works)', async () => {
    expect(await activeOrganizationOf(session, resolved(agreeableAdapter()))).toMatchObject({ organization: { id: 'org-1' }, membership: { userId: 'u-1' } })
    expect(await canIn(session, 'organization:delete', resolved(agreeableAdapter()))).toBe(true)
  })

  it('needs both organizations() and an adapter', async () => {
    for (const config of [resolved(undefined), resolved(agreeableAdapter(), false)]) {
      const refused = activeOrganizationOf(session, config)
      await expect(refused).rejects.toBeInstanceOf(ConfigError)
      await expect(refused).rejects.toMatchObject({ path: ['organizations'] })
      await expect(canIn(session, 'organization:read', config)).rejects.toBeInstanceOf(ConfigError)
    }
  })

  it('has none for an empty or non-string user or organisation id, whatever the store would answer', async () => {
    const config = resolved(agreeableAdapter())
    for (const broken of [
      { user: { id: '' }, activeOrganizationId: 'org-1' },
      { user: { id: 42 }, activeOrganizationId: 'org-1' },
      { user: { id: 'u-1' }, activeOrganizationId: '' },
      { user: { id: 'u-1' }, activeOrganizationId: 42 },
    ]) {
      expect(await activeOrganizationOf(broken as never, config), JSON.stringify(broken)).toBeNull()
    }
  })

  it('trusts no record the store gives for another user or organisation than the one asked', async () => {
    const otherUser = agreeableAdapter({ getMembership: async (organizationId: string) => ({ organizationId, userId: 'u-2', role: 'owner', status: 'active', createdAt: CREATED }) })
    const otherOrganization = agreeableAdapter({ getMembership: async (_: string, userId: string) => ({ organizationId: 'org-2', userId, role: 'owner', status: 'active', createdAt: CREATED }) })
    const noOrganization = agreeableAdapter({ getOrganization: async () => null })
    const wrongOrganization = agreeableAdapter({ getOrganization: async () => ({ id: 'org-2', slug: 'x', name: 'x', verifiedDomains: [], metadata: {}, createdAt: CREATED }) })
    for (const adapter of [otherUser, otherOrganization, noOrganization, wrongOrganization]) {
      expect(await activeOrganizationOf(session, resolved(adapter))).toBeNull()
      expect(await canIn(session, 'organization:read', resolved(adapter))).toBe(false)
    }
  })
})

describe('roles, at the module', () => {
  const roles = rolesOf({ auditor: { organization: ['read', 'delete'] }, deputy: { organization: ['read', 'update'], member: ['read'] } })

  it('allows nothing to a role that is not configured', () => {
    expect(roleAllows(roles, 'nobody', { resource: 'organization', action: 'read' })).toBe(false)
  })

  it('ranks a custom role by all of its permissions, not by some', () => {
    expect(roleRank(roles, 'auditor')).toBe(2)
    expect(roleRank(roles, 'deputy')).toBe(1)
  })

  it("ranks a built-in role by its place, whatever table it is asked with", () => {
    expect([roleRank({}, 'member'), roleRank({}, 'admin'), roleRank({}, 'owner')]).toEqual([0, 1, 2])
  })

  it('refuses statements that are not an object of non-empty action names, saying where', () => {
    expect(() => rolesOf({ x: null as never })).toThrow('organizations.roles.x: expected { resource: actions[] }')
    expect(() => rolesOf({ x: 'read' as never })).toThrow('organizations.roles.x: expected { resource: actions[] }')
    for (const actions of [[42], [''], ['read', ''], [['read']]]) {
      expect(() => rolesOf({ x: { invoice: actions as never } }), JSON.stringify(actions)).toThrow('organizations.roles.x.invoice: expected a list of action names')
    }
  })

  it('says how a permission is written when it is not', () => {
    expect(() => permissionOf('invoice')).toThrow('a permission is written "resource:action", got "invoice"')
    expect(() => permissionOf('invoice:pay:now')).toThrow(TypeError)
  })
})

describe('the choice cookie, at the module', () => {
  const config = resolved(agreeableAdapter())

  it('is named after the session cookie', () => {
    const named = (name: string) => activeOrganizationCookieName({ cookies: { sessionToken: { name } } } as never)
    expect(named('__Secure-authjs.session-token')).toBe('__Secure-authjs.active-organization')
    expect(named('app-session')).toBe('app-session-active-organization')
  })

  it('carries the organisation and a MAC keyed from the first secret, over the user and the organisation', async () => {
    const key = Buffer.from(hkdfSync('sha256', SECRET, 'authchart.active-organization', 'authchart active organisation cookie', 32))
    const expected = createHmac('sha256', key).update(`${USERS.alice.id.length}:${USERS.alice.id}|org/ä`).digest('hex')
    expect(await signActiveOrganization(config, USERS.alice.id, 'org/ä')).toBe(`${encodeURIComponent('org/ä')}.${expected}`)
  })

  it('names nothing without an organisation before the MAC, even one signed for the empty id', async () => {
    const signedEmpty = await signActiveOrganization(config, 'u-1', '')
    expect(signedEmpty.startsWith('.')).toBe(true)
    expect(await verifyActiveOrganization(config, 'u-1', signedEmpty)).toBeUndefined()
    expect(await verifyActiveOrganization(config, 'u-1', signedEmpty.slice(1))).toBeUndefined()
    expect(await verifyActiveOrganization(config, 'u-1', await signActiveOrganization(config, 'u-1', 'org-1'))).toBe('org-1')
  })

  it('passes a session that is no object through, and drops the claim of a session with no user id', async () => {
    const ctx = {
      config,
      cookies: { sessionToken: { name: '__Secure-authjs.session-token', options: {} } },
      request: { cookies: { [ORGANIZATION_COOKIE]: await signActiveOrganization(config, 'u-1', 'org-1') } },
    } as unknown as RequestContext
    expect(await withActiveOrganization(ctx, 'u-1', null)).toBeNull()
    expect(await withActiveOrganization(ctx, 'u-1', 'text')).toBe('text')
    expect(await withActiveOrganization(ctx, undefined, { a: 1, activeOrganizationId: 'org-1' })).toEqual({ a: 1 })
    expect(await withActiveOrganization(ctx, 'u-1', { a: 1, activeOrganizationId: 'forged' })).toEqual({ a: 1, activeOrganizationId: 'org-1' })
  })
})

/** Faults a test may inject into the store under the world below. */
type Faults = Partial<Record<'createOrganization' | 'getMembership' | 'updateMembership' | 'changeMembership', (...args: never[]) => Promise<unknown>>>

/** Alice owns Acme, Bob is a member of it and owns Globex, Carol is a member of Acme (never signed in); both active in Acme. */
async function world(bobRoleInAcme = 'member') {
  const base = MemoryAdapter(createMemoryStore())
  const faults: Faults = {}
  const calls = { createOrganization: 0 }
  const adapter = {
    ...base,
    createOrganization: (organization: AdapterOrganization) => {
      calls.createOrganization++
      return faults.createOrganization ? faults.createOrganization(organization as never) : base.createOrganization(organization)
    },
    getMembership: (organizationId: string, userId: string) =>
      faults.getMembership ? faults.getMembership(organizationId as never, userId as never) : base.getMembership(organizationId, userId),
    updateMembership: (update: Parameters<typeof base.updateMembership>[0]) => (faults.updateMembership ? faults.updateMembership(update as never) : base.updateMembership(update)),
    changeMembership: (change: Parameters<typeof base.changeMembership>[0]) => (faults.changeMembership ? faults.changeMembership(change as never) : base.changeMembership(change)),
  } as typeof base
  for (const user of Object.values(USERS)) await base.createUser({ ...user, emailVerified: null })
  for (const [id, slug] of [[ACME, 'acme'], [GLOBEX, 'globex']] as const) await base.createOrganization({ id, slug, name: slug, verifiedDomains: [], metadata: {}, createdAt: CREATED })
  const member = (organizationId: string, userId: string, role: string) => base.createMembership({ organizationId, userId, role, status: 'active', createdAt: CREATED })
  await member(ACME, USERS.alice.id, 'owner')
  await member(ACME, USERS.bob.id, bobRoleInAcme)
  await member(ACME, 'u-carol', 'member')
  await member(GLOBEX, USERS.bob.id, 'owner')
  const config = testConfig({
    adapter,
    session: { strategy: 'jwt' },
    providers: [credentialsProvider((c) => (c.password === 'pw' && (c.username === 'alice' || c.username === 'bob') ? { ...USERS[c.username] } : null))],
    organizations: organizations(),
  })
  const signedIn = async (username: 'alice' | 'bob') => {
    const client = new Client(config)
    expect((await client.signIn({ username, password: 'pw' })).status).toBe(302)
    expect((await post(client, 'active', { organizationId: ACME })).status).toBe(200)
    return client
  }
  return { base, faults, calls, alice: await signedIn('alice'), bob: await signedIn('bob') }
}

async function post(client: Client, segment: string, body: Record<string, unknown>) {
  const response = await client.send({ method: 'POST', path: `/organization/${segment}`, json: { ...body, csrfToken: await client.csrfToken() } })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> | null, cookies: response.headers.getSetCookie() }
}

describe('the switch route, over HTTP', () => {
  it('sets the choice with the session cookie’s attributes, and clears it with an empty, expired cookie', async () => {
    const { alice } = await world()
    const chosen = await post(alice, 'active', { organizationId: ACME })
    const set = chosen.cookies.find((c) => c.startsWith(`${ORGANIZATION_COOKIE}=`))!
    expect(set).toMatch(new RegExp(`^${ORGANIZATION_COOKIE}=${ACME}\\.[0-9a-f]{64}; Path=/; HttpOnly; Secure; SameSite=Lax$`))
    const cleared = await post(alice, 'active', { organizationId: null })
    expect(cleared.cookies).toContain(`${ORGANIZATION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax`)
  })

  it('answers 404 under another segment, read or posted', async () => {
    const { alice } = await world()
    const read = await alice.send({ path: '/organization/elsewhere' })
    expect([read.status, await read.json()]).toEqual([404, { error: 'NotFound' }])
    expect(await post(alice, 'elsewhere', { organizationId: ACME })).toMatchObject({ status: 404, body: { error: 'NotFound' } })
  })

  it('looks up an id of up to 256 characters, and refuses a longer one as malformed', async () => {
    const { alice } = await world()
    expect(await post(alice, 'active', { organizationId: 'x'.repeat(256) })).toMatchObject({ status: 403, body: { error: 'NotAMember' } })
    expect(await post(alice, 'active', { organizationId: 'x'.repeat(257) })).toMatchObject({ status: 400, body: { error: 'InvalidOrganization' } })
  })
})

describe('creating an organisation, over HTTP', () => {
  it('takes a slug of up to 48 characters and a name of up to 200, and nothing empty, longer, missing or not a string', async () => {
    const { alice } = await world()
    expect((await post(alice, 'create', { slug: 'a'.repeat(48), name: 'n'.repeat(200) })).status).toBe(201)
    for (const body of [
      { slug: 'initech', name: 'n'.repeat(201) },
      { slug: 'initech', name: '' },
      { slug: 'initech' },
      { slug: ['initech'], name: 'Initech' },
      { slug: 'initech', name: ['Initech'] },
      { slug: 'acme!', name: 'Acme' },
      { slug: 'ab cd', name: 'Ab' },
    ]) {
      expect(await post(alice, 'create', body), JSON.stringify(body)).toMatchObject({ status: 400, body: { error: 'InvalidRequest' } })
    }
  })

  it('creates it now, with no verified domain and no metadata', async () => {
    const { base, alice } = await world()
    const created = await post(alice, 'create', { slug: 'initech', name: 'Initech' })
    const organization = (await base.getOrganizationBySlug('initech'))!
    expect(organization).toMatchObject({ id: (created.body!.organization as { id: string }).id, verifiedDomains: [], metadata: {} })
    expect(Math.abs(organization.createdAt.getTime() - Date.now())).toBeLessThan(60_000)
    const owner = (await base.getMembership(organization.id, USERS.alice.id))!
    expect(Math.abs(owner.createdAt.getTime() - Date.now())).toBeLessThan(60_000)
  })

  it('refuses a taken slug before writing anything', async () => {
    const { calls, alice } = await world()
    expect(await post(alice, 'create', { slug: 'acme', name: 'Acme' })).toMatchObject({ status: 409, body: { error: 'SlugTaken' } })
    expect(calls.createOrganization).toBe(0)
  })

  it('answers SlugTaken when a concurrent creation took the slug between the read and the write, and makes no membership', async () => {
    const { base, faults, alice } = await world()
    faults.createOrganization = async () => {
      await base.createOrganization({ id: 'org-rival', slug: 'initech', name: 'Rival', verifiedDomains: [], metadata: {}, createdAt: CREATED })
      throw new Error('duplicate slug')
    }
    expect(await post(alice, 'create', { slug: 'initech', name: 'Initech' })).toMatchObject({ status: 409, body: { error: 'SlugTaken' } })
    expect(await base.listMemberships('org-rival')).toEqual([])
  })

  it('does not answer SlugTaken when the store failed for another reason', async () => {
    const { base, faults, alice } = await world()
    faults.createOrganization = async () => {
      throw new Error('store down')
    }
    const failed = await post(alice, 'create', { slug: 'initech', name: 'Initech' })
    expect(failed.status).not.toBe(201)
    expect(failed.body).not.toEqual({ error: 'SlugTaken' })
    expect(await base.getOrganizationBySlug('initech')).toBeNull()
  })
})

describe('changing roles and removing members, over HTTP', () => {
  it('accepts a body that names the active organisation itself', async () => {
    const { alice } = await world()
    expect((await post(alice, 'role', { organizationId: ACME, userId: USERS.bob.id, role: 'admin' })).status).toBe(200)
    expect((await post(alice, 'remove', { organizationId: ACME, userId: USERS.bob.id })).status).toBe(200)
  })

  it('answers InvalidRequest without a user id', async () => {
    const { alice } = await world()
    expect(await post(alice, 'role', { role: 'admin' })).toMatchObject({ status: 400, body: { error: 'InvalidRequest' } })
    expect(await post(alice, 'remove', {})).toMatchObject({ status: 400, body: { error: 'InvalidRequest' } })
  })

  it('refuses a plain member any role change, even to the role they have, and removing another member', async () => {
    const { base, bob } = await world()
    expect(await post(bob, 'role', { userId: USERS.bob.id, role: 'member' })).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect(await post(bob, 'role', { userId: 'u-carol', role: 'member' })).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect(await post(bob, 'remove', { userId: 'u-carol' })).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect((await base.getMembership(ACME, 'u-carol'))!.status).toBe('active')
  })

  it('lets the last owner keep the owner role', async () => {
    const { alice } = await world()
    expect(await post(alice, 'role', { userId: USERS.alice.id, role: 'owner' })).toMatchObject({ status: 200, body: { membership: { role: 'owner' } } })
  })

  it('counts a suspended owner as no owner: the last active one can neither leave nor step down', async () => {
    const { base, alice } = await world('owner')
    await base.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'suspended' })
    expect(await post(alice, 'remove', { userId: USERS.alice.id })).toMatchObject({ status: 409, body: { error: 'LastOwner' } })
    expect(await post(alice, 'role', { userId: USERS.alice.id, role: 'admin' })).toMatchObject({ status: 409, body: { error: 'LastOwner' } })
    expect((await base.getMembership(ACME, USERS.alice.id))!).toMatchObject({ role: 'owner', status: 'active' })
  })

  it('lets an admin leave even when no owner is active', async () => {
    const { base, bob } = await world('admin')
    await base.updateMembership({ organizationId: ACME, userId: USERS.alice.id, status: 'suspended' })
    expect(await post(bob, 'remove', { userId: USERS.bob.id })).toMatchObject({ status: 200, body: { membership: { status: 'removed' } } })
  })

  it('trusts no membership the store gives for another organisation or user than the one asked', async () => {
    const { faults, base, alice } = await world()
    const real = base.getMembership.bind(base)
    // Bob's membership of Globex for Bob in Acme; Bob's membership of Acme for Carol.
    for (const [target, forged] of [
      [USERS.bob.id, (organizationId: string, userId: string) => (userId === USERS.alice.id ? real(organizationId, userId) : real(GLOBEX, userId))],
      ['u-carol', (organizationId: string, userId: string) => (userId === USERS.alice.id ? real(organizationId, userId) : real(ACME, USERS.bob.id))],
    ] as const) {
      faults.getMembership = forged as never
      expect(await post(alice, 'role', { userId: target, role: 'admin' })).toMatchObject({ status: 404, body: { error: 'NotAMember' } })
      expect(await post(alice, 'remove', { userId: target })).toMatchObject({ status: 404, body: { error: 'NotAMember' } })
    }
    faults.getMembership = undefined
    expect((await base.getMembership(GLOBEX, USERS.bob.id))!).toMatchObject({ role: 'owner', status: 'active' })
    expect((await base.getMembership(ACME, USERS.bob.id))!).toMatchObject({ role: 'member', status: 'active' })
  })

  it('answers NotAMember when the member went away between the read and the write', async () => {
    const { faults, alice } = await world()
    faults.changeMembership = async () => ({ refused: 'NotFound' })
    expect(await post(alice, 'role', { userId: USERS.bob.id, role: 'admin' })).toMatchObject({ status: 404, body: { error: 'NotAMember' } })
    expect(await post(alice, 'remove', { userId: USERS.bob.id })).toMatchObject({ status: 404, body: { error: 'NotAMember' } })
  })
})
