import { randomUUID } from 'node:crypto'
import AuthjsPostgresAdapter from '@auth/pg-adapter'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { AdapterUser } from '../../core/adapters.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { adapterContract } from './contract.js'
import { hostedLayoutSuite } from './hosted-layout.js'
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
hostedLayoutSuite('PostgreSQL adapter on a PostgreSQL server', () => pool, 'hosted')

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
      // users, accounts, sessions, verification tokens, authenticators, second factors, session amr,
      // session details, session provider (logout by the provider), completed steps, account keys (DPoP)
      // user passwords, organisations, memberships and invitations, API keys and service accounts
      expect(rows[0].n).toBe(17)
    } finally {
      await Promise.all(pools.map((p) => p.end()))
    }
  })
})

describe('PostgreSQL adapter against @auth/pg-adapter on the same rows', () => {
  let db: pg.Pool
  let ours: PostgresAdapter
  let theirs: ReturnType<typeof AuthjsPostgresAdapter>

  beforeAll(async () => {
    db = new pg.Pool({ connectionString: await server.createDatabase('differential'), max: 4 })
    db.on('error', () => {})
    ours = PostgresAdapter(db)
    await ours.migrate()
    // An application column: @auth/pg-adapter reads rows with SELECT *, so it reaches callbacks.
    await db.query(`ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'member'`)
    theirs = AuthjsPostgresAdapter(db)
  })
  afterAll(() => db?.end())

  const fixture = () => ({
    name: 'Fill Murray',
    email: `${randomUUID()}@murray.test`,
    image: 'https://img.test/fill.png',
    emailVerified: new Date(Math.floor(Date.now() / 1000) * 1000),
  })

  it('reads users, sessions, accounts and tokens exactly as @auth/pg-adapter does', async () => {
    const user = await ours.createUser(fixture() as AdapterUser)
    // @auth/pg-adapter's createUser returns five named columns; ours the whole row (a superset).
    const theirsUser = await theirs.createUser!(fixture() as AdapterUser)
    expect(user).toEqual({ ...theirsUser, id: user.id, email: user.email, role: 'member' })
    expect(await ours.getUser(user.id)).toEqual(await theirs.getUser!(user.id))
    expect(await ours.getUser(user.id)).toMatchObject({ role: 'member' })
    expect(await ours.getUserByEmail(user.email)).toEqual(await theirs.getUserByEmail!(user.email))

    const account = {
      userId: user.id, type: 'oauth' as const, provider: 'github', providerAccountId: randomUUID(),
      access_token: 'a', refresh_token: 'r', expires_at: 2_000_000_000, id_token: 'i', scope: 's',
      session_state: 'st', token_type: 'bearer' as const,
    }
    const linked = await ours.linkAccount(account)
    const other = await theirs.linkAccount!({ ...account, providerAccountId: randomUUID() })
    expect(linked).toEqual({ ...other, id: linked!.id, providerAccountId: account.providerAccountId })
    const key = { provider: account.provider, providerAccountId: account.providerAccountId }
    expect(await ours.getUserByAccount(key)).toEqual(await theirs.getUserByAccount!(key))

    const session = { sessionToken: randomUUID(), userId: user.id, expires: fixture().emailVerified }
    const created = await ours.createSession(session)
    const theirsCreated = await theirs.createSession!({ ...session, sessionToken: randomUUID() })
    expect(created).toEqual({ ...theirsCreated, id: (created as { id?: string }).id, sessionToken: session.sessionToken })
    expect(await ours.getSessionAndUser(session.sessionToken)).toEqual(await theirs.getSessionAndUser!(session.sessionToken))

    expect(await ours.updateUser({ id: user.id, name: 'Renamed' })).toEqual(
      { ...(await theirs.updateUser!({ id: user.id, name: 'Renamed' })), role: 'member' },
    )

    for (const adapter of [ours, theirs]) {
      const token = { identifier: user.email, token: randomUUID(), expires: session.expires }
      await adapter.createVerificationToken!(token)
      expect(await adapter.useVerificationToken!(token)).toEqual(token)
    }
  })
})
