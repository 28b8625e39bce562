import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { adapterContract } from './contract.js'
import { sqlContractDb } from './sql-db.js'

const db = new PGlite()
const adapter = PostgresAdapter(db, { tablePrefix: 'authchart' })

beforeAll(async () => {
  await adapter.migrate()
})
afterAll(async () => {
  await db.close()
})

adapterContract('PostgreSQL adapter on PGlite', () => ({ adapter, db: sqlContractDb(db, 'authchart') }))

describe('PostgreSQL adapter schema', () => {
  it('migrates idempotently, creating prefixed tables', async () => {
    await adapter.migrate()
    await adapter.migrate()
    const { rows } = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    )
    expect(rows.map((r) => r.table_name)).toEqual([
      'authchart_accounts',
      'authchart_authenticators',
      'authchart_second_factors',
      'authchart_sessions',
      'authchart_users',
      'authchart_verification_token',
    ])
  })

  it('refuses a table prefix that could break out of an identifier', () => {
    expect(() => PostgresAdapter(db, { tablePrefix: 'x"; DROP TABLE users; --' })).toThrow(TypeError)
  })
})
