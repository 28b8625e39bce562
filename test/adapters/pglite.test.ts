import { randomUUID } from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import { object } from 'superstruct'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter, tableNames } from '../../adapters/postgres.js'
import { adapterContract } from './contract.js'
import { hostedLayoutSuite } from './hosted-layout.js'
import { sqlContractDb } from './sql-db.js'
import { CONTINUE } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { Client, ORIGIN, featureConfig } from '../fixtures/http.js'

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
      'authchart_account_keys',
      'authchart_accounts',
      'authchart_api_keys',
      'authchart_authenticators',
      'authchart_completed_steps',
      'authchart_invitations',
      'authchart_memberships',
      'authchart_organizations',
      'authchart_second_factors',
      'authchart_service_accounts',
      'authchart_session_amr',
      'authchart_session_details',
      'authchart_session_provider',
      'authchart_sessions',
      'authchart_user_passwords',
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

describe('completed sign-in steps on PostgreSQL', () => {
  it('are recorded durably: after a restart (a new adapter and config) a completed step is not asked again', async () => {
    const first = PostgresAdapter(db, { tablePrefix: 'steps' })
    await first.migrate()
    const welcome = defineExtension({
      id: 'welcome',
      version: '1',
      at: 'afterFirstSignIn',
      initial: 'welcoming',
      states: {
        welcoming: { tags: 'awaitsRequest', meta: { step: { page: 'welcome', events: { 'welcome.done': object() } } }, on: { 'welcome.done': CONTINUE } },
      },
      pages: { welcome: () => ({ title: 'Welcome', html: '<h1>Welcome</h1>' }) },
    })
    const configOver = (adapter: PostgresAdapter) => featureConfig({ adapter, session: { strategy: 'database' }, extensions: [welcome] })
    const client = new Client(configOver(first))
    expect((await client.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
    const done = await client.send({ path: '/step/signin-completion', body: { csrfToken: await client.csrfToken(), event: 'welcome.done' } })
    expect(done.headers.get('location')).toBe(ORIGIN)
    const restarted = new Client(configOver(PostgresAdapter(db, { tablePrefix: 'steps' })))
    expect((await restarted.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(ORIGIN)
  })
})

describe('factor verification times on PostgreSQL', () => {
  it('adds the fva column to a session_details table created before it, and keeps the times with the row', async () => {
    const old = PostgresAdapter(db, { tablePrefix: 'fva_old' })
    await old.migrate()
    // A schema from before the column: the migration adds it to the existing table.
    await db.exec(`ALTER TABLE "fva_old_session_details" DROP COLUMN fva`)
    await old.migrate()
    const user = await old.createUser({ id: randomUUID(), email: 'fva@example.com', emailVerified: null })
    const created = await old.createSession({
      sessionToken: 'fva-token',
      userId: user.id,
      expires: new Date(Date.now() + 60_000),
      createdAt: new Date(),
      fva: { pwd: 1000 },
    })
    expect(created.fva).toEqual({ pwd: 1000 })
    expect((await old.getSessionAndUser('fva-token'))?.session.fva).toEqual({ pwd: 1000 })
  })

  it('updates the times of the same row on a re-authentication, and lists them', async () => {
    const user = await adapter.createUser({ id: randomUUID(), email: 'fva-update@example.com', emailVerified: null })
    await adapter.createSession({ sessionToken: 'fva-update', userId: user.id, expires: new Date(Date.now() + 60_000), createdAt: new Date(), fva: { pwd: 1 } })
    const updated = await adapter.updateSession({ sessionToken: 'fva-update', fva: { pwd: 1, otp: 2 } })
    expect(updated?.fva).toEqual({ pwd: 1, otp: 2 })
    expect((await adapter.getSessionAndUser('fva-update'))?.session.fva).toEqual({ pwd: 1, otp: 2 })
    expect((await adapter.listSessions(user.id)).map((s) => s.fva)).toEqual([{ pwd: 1, otp: 2 }])
  })

  it('reads an unreadable stored fva as no times (the session then asks again)', async () => {
    const user = await adapter.createUser({ id: randomUUID(), email: 'fva-bad@example.com', emailVerified: null })
    await adapter.createSession({ sessionToken: 'fva-bad', userId: user.id, expires: new Date(Date.now() + 60_000), createdAt: new Date() })
    await db.query(`UPDATE "authchart_session_details" SET fva = '{not json' WHERE "sessionToken" = 'fva-bad'`)
    expect((await adapter.getSessionAndUser('fva-bad'))?.session.fva).toEqual({})
  })
})
