/**
 * The management functions the application's own routes call, from the attacker's side, with two
 * users and two organisations (Alice owns Acme, Bob is a member of Acme and owns Globex) and two
 * instances over one adapter: organisation-owned keys are managed by the roles that allow it, re-read
 * on every change, and a key is usable only in the organisation that owns it.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { apiKeys, createApiKey, listApiKeys, revokeApiKey, rotateApiKey, verifyApiKey } from '../../core/api-keys.js'
import { organizations } from '../../core/organizations.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { ORIGIN, testConfig } from '../fixtures/http.js'

const ALICE = 'u-alice'
const BOB = 'u-bob'
const ACME = 'org-acme'
const GLOBEX = 'org-globex'

async function world() {
  const adapter = MemoryAdapter(createMemoryStore())
  const createdAt = new Date('2026-01-01T00:00:00Z')
  for (const id of [ALICE, BOB]) await adapter.createUser({ id, email: `${id}@example.test`, emailVerified: null })
  for (const id of [ACME, GLOBEX]) await adapter.createOrganization({ id, slug: id.slice(4), name: id, verifiedDomains: [], metadata: {}, createdAt })
  const member = (organizationId: string, userId: string, role: string) => adapter.createMembership({ organizationId, userId, role, status: 'active', createdAt })
  await member(ACME, ALICE, 'owner')
  await member(ACME, BOB, 'member')
  await member(GLOBEX, BOB, 'owner')
  const store = memoryAuthStore()
  const make = (): AuthConfig => testConfig({ adapter, store, apiKeys: apiKeys(), organizations: organizations() })
  return { adapter, first: make(), second: make() }
}

async function status(key: string, config: AuthConfig, options: Parameters<typeof verifyApiKey>[2] = {}) {
  const answer = await verifyApiKey(new Request(`${ORIGIN}/api`, { headers: { authorization: `Bearer ${key}` } }), config, options)
  return answer.ok ? 200 : answer.status
}

describe('organisation-owned keys (module level)', () => {
  it('are created only by a member whose role allows apiKey:create, in an organisation of theirs', async () => {
    const { adapter, first } = await world()
    expect(await createApiKey(first, ALICE, { name: 'x', scopes: [], organizationId: GLOBEX })).toBeNull()
    expect(await createApiKey(first, BOB, { name: 'x', scopes: [], organizationId: ACME })).toBeNull()
    expect(await adapter.listApiKeys(ALICE)).toEqual([])
    expect(await adapter.listApiKeys(BOB)).toEqual([])
    const issued = (await createApiKey(first, BOB, { name: 'deploy', scopes: ['reports:read'], organizationId: GLOBEX }))!
    expect(issued.apiKey).toMatchObject({ organizationId: GLOBEX, prefix: `ak_${issued.apiKey.id}` })
  })

  it('are usable only in the organisation that owns them, on every instance', async () => {
    const { first, second } = await world()
    const issued = (await createApiKey(first, ALICE, { name: 'deploy', scopes: [], organizationId: ACME }))!
    expect(await status(issued.key, second, { organizationId: ACME })).toBe(200)
    expect(await status(issued.key, second, { organizationId: GLOBEX })).toBe(403)
    const verified = await verifyApiKey(new Request(ORIGIN, { headers: { authorization: `Bearer ${issued.key}` } }), second)
    expect(verified.ok && verified.key.organizationId).toBe(ACME)
  })

  it('are revoked and rotated only by a role that allows it, the membership re-read each time', async () => {
    const { adapter, first, second } = await world()
    const issued = (await createApiKey(first, ALICE, { name: 'deploy', scopes: [], organizationId: ACME }))!
    const { id } = issued.apiKey
    expect(await revokeApiKey(first, BOB, id)).toBe(false)
    expect(await rotateApiKey(first, BOB, id)).toBeNull()
    expect(await status(issued.key, second)).toBe(200)
    // Alice demoted: the key she made is no longer hers to manage.
    await adapter.createMembership({ organizationId: ACME, userId: 'u-carol', role: 'owner', status: 'active', createdAt: new Date() })
    await adapter.updateMembership({ organizationId: ACME, userId: ALICE, role: 'member' })
    expect(await revokeApiKey(first, ALICE, id)).toBe(false)
    await adapter.updateMembership({ organizationId: ACME, userId: BOB, role: 'admin' })
    expect(await rotateApiKey(first, BOB, id, 0)).not.toBeNull()
    expect(await status(issued.key, second)).toBe(401)
    expect(await revokeApiKey(second, BOB, id)).toBe(true)
    expect(await listApiKeys(first, BOB)).toEqual([])
  })

  it('are listed for a role that may read them: only that organisation’s', async () => {
    const { first } = await world()
    await createApiKey(first, ALICE, { name: 'acme', scopes: [], organizationId: ACME })
    await createApiKey(first, BOB, { name: 'globex', scopes: [], organizationId: GLOBEX })
    await createApiKey(first, ALICE, { name: 'mine', scopes: [] })
    expect((await listApiKeys(first, ALICE, ACME))!.map((key) => key.name)).toEqual(['acme'])
    expect((await listApiKeys(first, BOB, GLOBEX))!.map((key) => key.name)).toEqual(['globex'])
    expect(await listApiKeys(first, ALICE, GLOBEX)).toBeNull()
    expect(await listApiKeys(first, BOB, ACME)).toBeNull()
    expect((await listApiKeys(first, ALICE)).map((key) => key.name)).toEqual(['acme', 'mine'])
  })

  it('bound a non-owner’s key to the scopes their role allows', async () => {
    const { adapter, first } = await world()
    await adapter.updateMembership({ organizationId: ACME, userId: BOB, role: 'admin' })
    expect(await createApiKey(first, BOB, { name: 'x', scopes: ['organization:delete'], organizationId: ACME })).toBeNull()
    expect(await createApiKey(first, BOB, { name: 'x', scopes: ['member:remove'], organizationId: ACME })).not.toBeNull()
  })

  it('are refused without the organisations feature', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    await adapter.createUser({ id: ALICE, email: 'a@example.test', emailVerified: null })
    const config = testConfig({ adapter, apiKeys: apiKeys() })
    expect(await createApiKey(config, ALICE, { name: 'x', scopes: [], organizationId: ACME })).toBeNull()
  })

  it('trusts no record the store answers for another id than the one asked', async () => {
    const { adapter, first } = await world()
    const alices = await createApiKey(first, ALICE, { name: 'alice', scopes: [] })
    const bobs = await createApiKey(first, BOB, { name: 'bob', scopes: [] })
    const confused = testConfig({
      adapter: { ...adapter, getApiKey: async () => adapter.getApiKey(bobs.apiKey.id) },
      apiKeys: apiKeys(),
      organizations: organizations(),
    })
    expect(await revokeApiKey(confused, BOB, alices.apiKey.id)).toBe(false)
    expect(await rotateApiKey(confused, BOB, alices.apiKey.id)).toBeNull()
    expect((await adapter.getApiKey(bobs.apiKey.id))!.revokedAt).toBeNull()
    expect((await adapter.getApiKey(alices.apiKey.id))!.revokedAt).toBeNull()
  })
})
