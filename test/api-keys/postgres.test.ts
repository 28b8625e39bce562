import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { apiKeys, createApiKey, listApiKeys, revokeApiKey, rotateApiKey, verifyApiKey } from '../../core/api-keys.js'
import { organizations } from '../../core/organizations.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { ORIGIN, testConfig } from '../fixtures/http.js'

const db = new PGlite()
const adapter = PostgresAdapter(db, { tablePrefix: 'keys' })
const store = memoryAuthStore()
// Two instances over one database.
const first = testConfig({ adapter, store, apiKeys: apiKeys() })
const second = testConfig({ adapter: PostgresAdapter(db, { tablePrefix: 'keys' }), store, apiKeys: apiKeys() })

const request = (key: string) => new Request(`${ORIGIN}/api`, { headers: { authorization: `Bearer ${key}` } })

beforeAll(async () => {
  await adapter.migrate()
  for (const id of ['alice', 'bob']) await adapter.createUser({ id, email: `${id}@example.com`, emailVerified: null })
})
afterAll(async () => {
  await db.close()
})

describe('API keys on PostgreSQL (PGlite)', () => {
  it('stores a key as its hash and reads it back field for field', async () => {
    const { key, apiKey } = await createApiKey(first, 'alice', { name: 'ci', scopes: ['reports:read', 'reports:write'], expiresIn: 3600 })
    const stored = (await adapter.getApiKey(apiKey.id))!
    expect(stored).toMatchObject({ id: apiKey.id, userId: 'alice', name: 'ci', scopes: ['reports:read', 'reports:write'], revokedAt: null })
    expect(stored.expiresAt).toBeInstanceOf(Date)
    const { rows } = await db.query<Record<string, unknown>>('SELECT * FROM "keys_api_keys" WHERE id = $1', [apiKey.id])
    expect(JSON.stringify(rows)).not.toContain(key.split('_').slice(2).join('_'))
    expect((await verifyApiKey(request(key), first, { scopes: ['reports:write'] })).ok).toBe(true)
    expect(await adapter.getApiKey('no-such-key')).toBeNull()
  })

  it('refuses a key revoked on another instance, and B revoking A’s key changes nothing', async () => {
    const { key, apiKey } = await createApiKey(first, 'alice', { name: 'deploy', scopes: [] })
    expect(await revokeApiKey(second, 'bob', apiKey.id)).toBe(false)
    expect((await verifyApiKey(request(key), second)).ok).toBe(true)
    expect(await revokeApiKey(first, 'alice', apiKey.id)).toBe(true)
    const verified = await verifyApiKey(request(key), second)
    expect(verified.ok ? 200 : verified.status).toBe(401)
  })

  it('lists only the user’s own keys, and rotation keeps the old secret for the overlap', async () => {
    const { key: old, apiKey } = await createApiKey(first, 'bob', { name: 'bot', scopes: [] })
    const rotated = (await rotateApiKey(first, 'bob', apiKey.id, 60))!
    expect((await verifyApiKey(request(old), second)).ok).toBe(true)
    expect((await verifyApiKey(request(rotated.key), second)).ok).toBe(true)
    expect((await rotateApiKey(first, 'bob', apiKey.id, 0))!.apiKey.previousSecretUntil).toBeNull()
    expect((await verifyApiKey(request(rotated.key), second)).ok).toBe(false)
    expect((await listApiKeys(first, 'bob')).map((key) => key.name)).toEqual(['bot'])
    expect(await adapter.updateApiKey({ id: 'no-such-key', revokedAt: new Date() })).toBeNull()
  })

  it('keeps the owning organisation, and deletes its keys with it', async () => {
    await adapter.createOrganization({ id: 'org-acme', slug: 'acme', name: 'Acme', verifiedDomains: [], metadata: {}, createdAt: new Date() })
    await adapter.createMembership({ organizationId: 'org-acme', userId: 'alice', role: 'owner', status: 'active', createdAt: new Date() })
    const withOrganizations = testConfig({ adapter, store, apiKeys: apiKeys(), organizations: organizations() })
    const { key, apiKey } = (await createApiKey(withOrganizations, 'alice', { name: 'deploy', scopes: [], organizationId: 'org-acme' }))!
    expect((await adapter.getApiKey(apiKey.id))!.organizationId).toBe('org-acme')
    expect((await adapter.listApiKeys('alice')).find((stored) => stored.id === apiKey.id)!.organizationId).toBe('org-acme')
    expect((await adapter.listOrganizationApiKeys('org-acme')).map((stored) => stored.id)).toEqual([apiKey.id])
    expect(await adapter.listOrganizationApiKeys('org-globex')).toEqual([])
    expect((await verifyApiKey(request(key), second, { organizationId: 'org-acme' })).ok).toBe(true)
    expect((await verifyApiKey(request(key), second, { organizationId: 'org-globex' })).ok).toBe(false)
    // A personal key reads back as no organisation's.
    const personal = await createApiKey(first, 'alice', { name: 'mine', scopes: [] })
    expect((await adapter.getApiKey(personal.apiKey.id))!.organizationId).toBeNull()
    await db.query('DELETE FROM "keys_organizations" WHERE id = $1', ['org-acme'])
    expect(await adapter.getApiKey(apiKey.id)).toBeNull()
  })

  it('has its table from migrate(): the methods create none on first use', async () => {
    const fresh = new PGlite()
    try {
      const unmigrated = PostgresAdapter(fresh, { tablePrefix: 'keys' })
      await expect(unmigrated.getApiKey('any')).rejects.toThrow(/keys_api_keys/)
      await unmigrated.migrate()
      expect(await unmigrated.getApiKey('any')).toBeNull()
    } finally {
      await fresh.close()
    }
  })

  it('deletes a user’s keys with the user', async () => {
    await adapter.deleteUser('bob')
    expect(await listApiKeys(first, 'bob')).toEqual([])
  })
})
