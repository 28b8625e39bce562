import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter, tableNames } from '../../adapters/postgres.js'
import { adapterContract } from './contract.js'
import { hostedLayoutSuite } from './hosted-layout.js'
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
hostedLayoutSuite('PostgreSQL adapter on PGlite', () => db, 'hosted')

describe('PostgreSQL adapter schema', () => {
  it('migrates idempotently, creating prefixed tables', async () => {
    await adapter.migrate()
    await adapter.migrate()
    const { rows } = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'authchart\\_%' ORDER BY table_name`,
    )
    expect(rows.map((r) => r.table_name)).toEqual([
      'authchart_accounts',
      'authchart_authenticators',
      'authchart_second_factors',
      'authchart_session_amr',
      'authchart_sessions',
      'authchart_users',
      'authchart_verification_token',
    ])
  })

  it('refuses a table prefix that could break out of an identifier, in either layout', () => {
    expect(() => PostgresAdapter(db, { tablePrefix: 'x"; DROP TABLE users; --' })).toThrow(TypeError)
    expect(() => PostgresAdapter(db, { layout: 'hosted', tablePrefix: 'x"; --' })).toThrow(TypeError)
  })

  it("gives the hosted layout the prefix of that adapter's schema when none is given", () => {
    expect(tableNames(undefined, 'hosted')).toMatchObject({ users: '"nextauth_users"', verificationTokens: '"nextauth_verificationTokens"' })
    expect(tableNames(undefined)).toMatchObject({ users: '"users"', verificationTokens: '"verification_token"' })
  })
})
