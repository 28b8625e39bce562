import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { organizationAdapterContract, organizationRecord } from './adapter-contract.js'

const store = createMemoryStore()
organizationAdapterContract('memory adapter', () => MemoryAdapter(store))

const db = new PGlite()
const postgres = PostgresAdapter(db, { tablePrefix: 'orgs' })
beforeAll(async () => {
  await postgres.migrate()
})
afterAll(async () => {
  await db.close()
})
organizationAdapterContract('PostgreSQL adapter on PGlite', () => postgres)

describe('the organisation tables', () => {
  it('are created by migrate(), idempotently, under the prefix', async () => {
    await postgres.migrate()
    const { rows } = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_name IN ('orgs_organizations', 'orgs_memberships', 'orgs_invitations') ORDER BY table_name`,
    )
    expect(rows.map((row) => row.table_name)).toEqual(['orgs_invitations', 'orgs_memberships', 'orgs_organizations'])
  })

  it('are shared by two memory adapters over one store, and not by another store', async () => {
    const organization = organizationRecord()
    await MemoryAdapter(store).createOrganization(organization)
    expect(await MemoryAdapter(store).getOrganization(organization.id)).toMatchObject({ slug: organization.slug })
    expect(await MemoryAdapter(createMemoryStore()).getOrganization(organization.id)).toBeNull()
  })

  it('hand out copies: changing a returned record changes nothing stored', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const organization = organizationRecord()
    const stored = await adapter.createOrganization(organization)
    stored.verifiedDomains.push('evil.test')
    ;(stored.metadata as Record<string, unknown>).plan = 'free'
    expect(await adapter.getOrganization(organization.id)).toMatchObject({ verifiedDomains: ['acme.test'], metadata: { plan: 'team' } })
  })
})
