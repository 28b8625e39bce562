import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { adapterContract } from './contract.js'
import { sqlContractDb } from './sql-db.js'

let server: PostgresServer
let pool: pg.Pool
let adapter: PostgresAdapter

beforeAll(async () => {
  server = await startPostgres()
  pool = new pg.Pool({ connectionString: await server.createDatabase('contract'), max: 20 })
  // Idle connections learn of the server's shutdown as an error event; it is expected here.
  pool.on('error', () => {})
  adapter = PostgresAdapter(pool)
  await adapter.migrate()
}, 60_000)

afterAll(async () => {
  await pool?.end()
  await server?.stop()
})

adapterContract('PostgreSQL adapter on a PostgreSQL server', () => ({ adapter, db: sqlContractDb(pool) }))

describe('PostgreSQL adapter migrations on a server', () => {
  it('lets five processes migrate at once without a race', async () => {
    const url = await server.createDatabase('concurrent_migrate')
    const pools = Array.from({ length: 5 }, () => new pg.Pool({ connectionString: url, max: 1 }))
    for (const p of pools) p.on('error', () => {})
    try {
      await Promise.all(pools.map((p) => PostgresAdapter(p, { tablePrefix: 'app' }).migrate()))
      const { rows } = await pools[0]!.query(
        `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name LIKE 'app\\_%'`,
      )
      // users, accounts, sessions, verification tokens, authenticators, second factors
      expect(rows[0].n).toBe(6)
    } finally {
      await Promise.all(pools.map((p) => p.end()))
    }
  })
})
