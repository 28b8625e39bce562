/**
 * The membership compare-and-set on a real PostgreSQL server, over a pool of several connections:
 * two owners demoting each other, or both leaving, are two statements in flight at once on two
 * connections, and one owner always remains (PGlite, one connection, cannot race). Through `Auth`,
 * on two instances sharing the database and the store, a suspension made on one is seen by the
 * other's next request.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { Adapter } from '../../core/adapters.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { organizations } from '../../core/organizations.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { Client, credentialsProvider, testConfig } from '../fixtures/http.js'
import { membershipChangeContract, twoOwners } from './adapter-contract.js'
import { CUSTOM_ROLES, USERS, setActive, sessionOrganization } from './fixture.js'

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

describe('membership changes through Auth over PostgreSQL, on two instances', () => {
  it("refuses another organisation's member, keeps the last owner, and makes a suspension seen on the other instance", async () => {
    const pgAdapter = PostgresAdapter(pool, { tablePrefix: 'cas_auth' })
    await (pgAdapter as { migrate(): Promise<void> }).migrate()
    const createdAt = new Date('2026-01-01T00:00:00Z')
    for (const user of Object.values(USERS)) await pgAdapter.createUser!({ ...user, emailVerified: null })
    for (const id of ['pg-acme', 'pg-globex']) await pgAdapter.createOrganization!({ id, slug: id, name: id, verifiedDomains: [], metadata: {}, createdAt })
    await pgAdapter.createMembership!({ organizationId: 'pg-acme', userId: USERS.alice.id, role: 'owner', status: 'active', createdAt })
    await pgAdapter.createMembership!({ organizationId: 'pg-acme', userId: USERS.bob.id, role: 'admin', status: 'active', createdAt })
    await pgAdapter.createMembership!({ organizationId: 'pg-globex', userId: USERS.bob.id, role: 'owner', status: 'active', createdAt })
    const store = memoryAuthStore()
    const instance = () =>
      testConfig({
        adapter: pgAdapter,
        store,
        session: { strategy: 'jwt' },
        providers: [credentialsProvider((c) => (c.password === 'pw' && (c.username === 'alice' || c.username === 'bob') ? { ...USERS[c.username] } : null))],
        organizations: organizations({ roles: CUSTOM_ROLES }),
      })
    const [first, second] = [instance(), instance()]
    const signedIn = async (config: ReturnType<typeof instance>, username: 'alice' | 'bob', organizationId: string) => {
      const client = new Client(config)
      expect((await client.signIn({ username, password: 'pw' })).status).toBe(302)
      expect((await setActive(client, { organizationId })).response.status).toBe(200)
      return client
    }
    const post = async (client: Client, segment: string, body: Record<string, unknown>) => {
      const response = await client.send({ method: 'POST', path: `/organization/${segment}`, json: { ...body, csrfToken: await client.csrfToken() } })
      return { status: response.status, body: await response.json() }
    }
    const alice = await signedIn(first, 'alice', 'pg-acme')
    const bobThere = await signedIn(second, 'bob', 'pg-acme')
    expect(await post(alice, 'suspend', { userId: USERS.bob.id, organizationId: 'pg-globex' })).toMatchObject({ status: 403 })
    expect(await post(bobThere, 'suspend', { userId: USERS.alice.id })).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect(await post(alice, 'leave', {})).toMatchObject({ status: 409, body: { error: 'LastOwner' } })
    expect(await sessionOrganization(bobThere)).toBe('pg-acme')
    expect(await post(alice, 'suspend', { userId: USERS.bob.id })).toMatchObject({ status: 200, body: { membership: { status: 'suspended' } } })
    expect(await sessionOrganization(bobThere)).toBeUndefined()
    expect(await pgAdapter.getMembership!('pg-globex', USERS.bob.id)).toMatchObject({ role: 'owner', status: 'active' })
  })
})
