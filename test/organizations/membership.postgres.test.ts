/**
 * The membership compare-and-set on a real PostgreSQL server, over a pool of several connections:
 * two owners demoting each other, or both leaving, are two statements in flight at once on two
 * connections, and one owner always remains (PGlite, one connection, cannot race).
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { Adapter } from '../../core/adapters.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { membershipChangeContract, twoOwners } from './adapter-contract.js'

let server: PostgresServer
let pool: pg.Pool
let adapter: Adapter
let users = 0

const newUser = async (on: Adapter) => {
  const id = `pg-user-${process.pid}-${++users}`
  await on.createUser!({ id, email: `${id}@example.test`, emailVerified: null })
  return id
}

beforeAll(async () => {
  server = await startPostgres()
  pool = server.pool(await server.createDatabase('memberships'), { max: 6 })
  adapter = PostgresAdapter(pool, { tablePrefix: 'cas' })
  await (adapter as { migrate(): Promise<void> }).migrate()
}, 60_000)
afterAll(async () => {
  await server?.stop()
})

describe('the PostgreSQL adapter on a server', () => {
  membershipChangeContract(() => adapter, newUser)

  it('keeps one owner in every one of many rounds of two owners demoting each other on two connections', async () => {
    for (let round = 0; round < 20; round++) {
      const { organizationId, a, b, owners } = await twoOwners(adapter, newUser)
      const from = { role: 'owner', status: 'active' } as const
      const results = await Promise.all([
        adapter.changeMembership!({ organizationId, userId: b, from, to: { role: round % 2 ? 'member' : 'admin' }, actor: { userId: a, role: 'owner' } }),
        adapter.changeMembership!({ organizationId, userId: a, from, to: round % 2 ? { status: 'suspended' } : { status: 'removed' }, actor: { userId: b, role: 'owner' } }),
      ])
      expect(results.filter((result) => 'changed' in result)).toHaveLength(1)
      expect(await owners()).toHaveLength(1)
    }
  })
})
