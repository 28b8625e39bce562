import { PGlite } from '@electric-sql/pglite'
import { exportJWK, generateKeyPair } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { organizations } from '../../core/organizations.js'
import {
  createServiceAccount,
  listServiceAccounts,
  revokeServiceAccount,
  rotateServiceAccountSecret,
  serviceAccountRoutes,
  serviceAccounts,
  verifyServiceToken,
} from '../../core/service-accounts.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { ORIGIN, testConfig } from '../fixtures/http.js'

const ISSUER = `${ORIGIN}/auth`
const db = new PGlite()
const adapter = PostgresAdapter(db, { tablePrefix: 'sa' })
const store = memoryAuthStore()
// Two instances over one database.
const first = testConfig({ adapter, store, serviceAccounts: serviceAccounts({ issuer: ISSUER }) })
const second = testConfig({ adapter: PostgresAdapter(db, { tablePrefix: 'sa' }), store, serviceAccounts: serviceAccounts({ issuer: ISSUER }) })

const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`

async function token(config: typeof first, id: string, secret: string): Promise<Response> {
  const request = new Request(`${ISSUER}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(id, secret) },
    body: 'grant_type=client_credentials',
  })
  return (await serviceAccountRoutes(request, config))!
}

const api = (accessToken: string) => new Request(`${ORIGIN}/api`, { headers: { authorization: `Bearer ${accessToken}` } })

beforeAll(async () => {
  await adapter.migrate()
  // Idempotent: a second boot runs the same script.
  await adapter.migrate()
  for (const id of ['alice', 'bob']) await adapter.createUser({ id, email: `${id}@example.com`, emailVerified: null })
})
afterAll(async () => {
  await db.close()
})

describe('service accounts on PostgreSQL (PGlite)', () => {
  it('stores the secret as its hash, reads the account back field for field, and issues tokens from it', async () => {
    const { publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' })
    const publicJwk = (await exportJWK(publicKey)) as never
    const issued = (await createServiceAccount(first, 'alice', { name: 'sync', scopes: ['reports:read'], publicJwk, clientSecret: true }))!
    const stored = (await adapter.getServiceAccount(issued.clientId))!
    expect(stored).toMatchObject({ id: issued.clientId, userId: 'alice', organizationId: null, name: 'sync', scopes: ['reports:read'], revokedAt: null, publicJwk })
    expect(stored.createdAt).toBeInstanceOf(Date)
    const { rows } = await db.query<Record<string, unknown>>('SELECT * FROM "sa_service_accounts" WHERE id = $1', [issued.clientId])
    expect(JSON.stringify(rows)).not.toContain(issued.clientSecret)
    const response = await token(second, issued.clientId, issued.clientSecret!)
    expect(response.status).toBe(200)
    const { access_token } = (await response.json()) as { access_token: string }
    expect((await verifyServiceToken(api(access_token), second, { scopes: ['reports:read'] })).ok).toBe(true)
    expect(await adapter.getServiceAccount('no-such-account')).toBeNull()
    expect(await adapter.updateServiceAccount({ id: 'no-such-account', revokedAt: new Date() })).toBeNull()
  })

  it("refuses an account revoked on another instance, and B's attempts on A's account change nothing", async () => {
    const issued = (await createServiceAccount(first, 'alice', { name: 'deploy', scopes: [] }))!
    const { access_token } = (await (await token(first, issued.clientId, issued.clientSecret!)).json()) as { access_token: string }
    expect(await revokeServiceAccount(second, 'bob', issued.clientId)).toBe(false)
    expect(await rotateServiceAccountSecret(second, 'bob', issued.clientId)).toBeNull()
    expect((await verifyServiceToken(api(access_token), second)).ok).toBe(true)
    expect(await revokeServiceAccount(first, 'alice', issued.clientId)).toBe(true)
    expect((await verifyServiceToken(api(access_token), second)).ok).toBe(false)
    expect((await token(second, issued.clientId, issued.clientSecret!)).status).toBe(401)
    expect((await listServiceAccounts(first, 'bob'))!).toEqual([])
  })

  it('keeps the owning organisation, for members whose role allows it', async () => {
    await adapter.createOrganization({ id: 'org-acme', slug: 'acme', name: 'Acme', verifiedDomains: [], metadata: {}, createdAt: new Date() })
    await adapter.createMembership({ organizationId: 'org-acme', userId: 'alice', role: 'owner', status: 'active', createdAt: new Date() })
    await adapter.createMembership({ organizationId: 'org-acme', userId: 'bob', role: 'member', status: 'active', createdAt: new Date() })
    const config = testConfig({ adapter, store, serviceAccounts: serviceAccounts({ issuer: ISSUER }), organizations: organizations() })
    const issued = (await createServiceAccount(config, 'alice', { name: 'etl', scopes: ['reports:read'], organizationId: 'org-acme' }))!
    expect((await adapter.getServiceAccount(issued.clientId))!.organizationId).toBe('org-acme')
    expect((await adapter.listOrganizationServiceAccounts('org-acme')).map((account) => account.id)).toEqual([issued.clientId])
    expect((await listServiceAccounts(config, 'alice', 'org-acme'))!.map((account) => account.id)).toEqual([issued.clientId])
    // A plain member may neither list, create nor revoke the organisation's accounts.
    expect(await listServiceAccounts(config, 'bob', 'org-acme')).toBeNull()
    expect(await createServiceAccount(config, 'bob', { name: 'mine', scopes: [], organizationId: 'org-acme' })).toBeNull()
    expect(await revokeServiceAccount(config, 'bob', issued.clientId)).toBe(false)
    const { access_token } = (await (await token(config, issued.clientId, issued.clientSecret!)).json()) as { access_token: string }
    const verified = await verifyServiceToken(api(access_token), config)
    expect(verified.ok && verified.token.organizationId).toBe('org-acme')
  })
})
