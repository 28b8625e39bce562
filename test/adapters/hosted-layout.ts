/**
 * The hosted layout of the SQL adapter (spec §2.17) on any PostgreSQL: the adapter contract, the
 * exact tables and columns the spec lists, the link tables kept in step with accounts and
 * sessions, rows written by another client of the layout read back, and a real sign-in on it.
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter, type Queryable } from '../../adapters/postgres.js'
import type { AdapterUser } from '../../core/adapters.js'
import Credentials from '../../providers/credentials.js'
import { Client, featureConfig } from '../fixtures/http.js'
import { adapterContract } from './contract.js'
import { sqlContractDb } from './sql-db.js'

/** Spec §2.17, table by table: the fields each record has besides its id (and our passkey table). */
const SPEC_TABLES: Record<string, string[]> = {
  users: ['email', 'emailVerified', 'image', 'name'],
  accounts: [
    'access_token', 'expires_at', 'id_token', 'provider', 'providerAccountId', 'refresh_token', 'scope',
    'session_state', 'token_type', 'type', 'user',
  ],
  sessions: ['expires', 'sessionToken', 'user'],
  users_accounts: ['account', 'user'],
  users_sessions: ['session', 'user'],
  verificationTokens: ['expires', 'identifier', 'token'],
}

/** Runs the hosted-layout checks on the database `client()` returns, with table prefix `prefix`. */
export function hostedLayoutSuite(name: string, client: () => Queryable, prefix: string): void {
  const count = async (table: string, where = 'TRUE', params: unknown[] = []) =>
    Number((await client().query(`SELECT count(*)::int AS n FROM "${prefix}_${table}" WHERE ${where}`, params)).rows[0]!.n)
  let adapter: PostgresAdapter

  beforeAll(async () => {
    adapter = PostgresAdapter(client(), { layout: 'hosted', tablePrefix: prefix })
    await adapter.migrate()
  })

  adapterContract(`${name}, hosted layout (spec §2.17)`, () => ({
    adapter,
    db: sqlContractDb(client(), prefix, 'hosted'),
  }))

  describe(`${name}, hosted layout (spec §2.17)`, () => {
    it('creates exactly the tables and camel-case columns the spec lists, idempotently', async () => {
      await adapter.migrate()
      const { rows } = await client().query(
        `SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name LIKE $1 ORDER BY table_name, column_name`,
        [`${prefix}\\_%`],
      )
      const tables: Record<string, string[]> = {}
      for (const row of rows as { table_name: string; column_name: string }[]) {
        ;(tables[row.table_name.slice(prefix.length + 1)] ??= []).push(row.column_name)
      }
      // Ours beside the spec's: passkeys and second factors, linked to their user the same way, and
      // the amr of multi-factor sessions, and the session details (sign-in time, last seen, user agent,
      // when each factor was last proven).
      // And the sign-in steps each user completed (keyed by the same user column), and the provider
      // session each session was signed in with (logout by the provider).
      // And the sealed DPoP key pair an account's tokens are bound to, keyed by the account.
      // And each user's password hash, keyed by the same user column.
      // And the organisations, their memberships and invitations (`organizations()`), beside them.
      // And the API keys (`apiKeys()`) and service accounts (`serviceAccounts()`), keyed by the same
      // user column and by organisation.
      const {
        api_keys: keys,
        service_accounts: serviceAccounts,
        completed_steps: completedSteps,
        session_provider: sessionProvider,
        account_keys: accountKeys,
        user_passwords: passwords,
        organizations,
        memberships,
        invitations,
        ...withoutSteps
      } = tables
      expect(keys).toEqual([
        'createdAt',
        'expiresAt',
        'hash',
        'id',
        'lastUsedAt',
        'name',
        'organizationId',
        'previousHash',
        'previousUntil',
        'revokedAt',
        'scopes',
        'user',
      ])
      expect(serviceAccounts).toEqual(['createdAt', 'id', 'name', 'organizationId', 'publicJwk', 'revokedAt', 'scopes', 'secretHash', 'user'])
      expect(organizations).toEqual(['createdAt', 'id', 'metadata', 'name', 'slug', 'verifiedDomains'])
      expect(memberships).toEqual(['createdAt', 'organizationId', 'role', 'status', 'userId'])
      expect(invitations).toEqual(['createdAt', 'email', 'expires', 'id', 'inviterId', 'organizationId', 'role', 'status'])
      expect(passwords).toEqual(['hash', 'updatedAt', 'user'])
      expect(accountKeys).toEqual(['account', 'dpop_key'])
      expect(completedSteps).toEqual(['completedAt', 'stepId', 'user', 'version'])
      expect(sessionProvider).toEqual(['provider', 'sessionToken', 'sid', 'sub'])
      const { authenticators, second_factors: secondFactors, session_amr: sessionAmr, session_details: sessionDetails, ...spec } = withoutSteps
      expect(sessionDetails).toEqual(['createdAt', 'fva', 'lastSeenAt', 'sessionToken', 'userAgent'])
      expect(spec).toEqual(
        Object.fromEntries(Object.entries(SPEC_TABLES).map(([table, fields]) => [table, ['id', ...fields].sort()])),
      )
      expect(authenticators).toContain('user')
      expect(secondFactors).toEqual(['createdAt', 'id', 'secret', 'type', 'user'])
      expect(sessionAmr).toEqual(['amr', 'sessionToken'])
    })

    it('keeps the link tables in step with accounts and sessions', async () => {
      const user = await adapter.createUser({ email: `${randomUUID()}@hosted.test`, emailVerified: null } as AdapterUser)
      const other = await adapter.createUser({ email: `${randomUUID()}@hosted.test`, emailVerified: null } as AdapterUser)
      const account = await adapter.linkAccount({ userId: user.id, type: 'oauth', provider: 'p', providerAccountId: randomUUID() })
      const session = await adapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: new Date(Date.now() + 60_000) })
      const accountId = (account as unknown as { id: string }).id
      const sessionId = (session as unknown as { id: string }).id
      expect(await count('users_accounts', 'account = $1 AND "user" = $2', [accountId, user.id])).toBe(1)
      expect(await count('users_sessions', 'session = $1 AND "user" = $2', [sessionId, user.id])).toBe(1)

      await adapter.updateSession({ sessionToken: session.sessionToken, userId: other.id })
      expect(await count('users_sessions', 'session = $1 AND "user" = $2', [sessionId, other.id])).toBe(1)
      expect(await count('users_sessions', 'session = $1', [sessionId])).toBe(1)

      await adapter.deleteSession(session.sessionToken)
      expect(await count('users_sessions', 'session = $1', [sessionId])).toBe(0)
      await adapter.unlinkAccount({ provider: 'p', providerAccountId: account!.providerAccountId })
      expect(await count('users_accounts', 'account = $1', [accountId])).toBe(0)

      await adapter.linkAccount({ userId: other.id, type: 'oauth', provider: 'p', providerAccountId: randomUUID() })
      await adapter.createSession({ sessionToken: randomUUID(), userId: other.id, expires: new Date(Date.now() + 60_000) })
      await adapter.deleteUser(other.id)
      expect(await count('users_accounts', '"user" = $1', [other.id])).toBe(0)
      expect(await count('users_sessions', '"user" = $1', [other.id])).toBe(0)
      expect(await count('accounts', '"user" = $1', [other.id])).toBe(0)
    })

    it('links the account of a user created with it, in the same statement', async () => {
      const { user, account } = await adapter.createUserAndAccount(
        { id: randomUUID(), email: `${randomUUID()}@hosted.test`, emailVerified: null } as AdapterUser,
        { userId: '', type: 'oauth', provider: 'p', providerAccountId: randomUUID() },
      )
      const accountId = (account as unknown as { id: string }).id
      expect(account.userId).toBe(user.id)
      expect(await count('users_accounts', 'account = $1 AND "user" = $2', [accountId, user.id])).toBe(1)
    })

    it('reads records another client of the layout wrote, with its own record ids', async () => {
      const tag = randomUUID()
      const q = (text: string, params: unknown[]) => client().query(text, params)
      await q(`INSERT INTO "${prefix}_users" (id, email, name) VALUES ($1, $2, 'Rec Ord')`, [`rec_u_${tag}`, `${tag}@hosted.test`])
      await q(
        `INSERT INTO "${prefix}_accounts" (id, provider, "providerAccountId", type, "user") VALUES ($1, 'github', $2, 'oauth', $3)`,
        [`rec_a_${tag}`, tag, `rec_u_${tag}`],
      )
      await q(`INSERT INTO "${prefix}_users_accounts" (id, account, "user") VALUES ($1, $2, $3)`, [`rec_ua_${tag}`, `rec_a_${tag}`, `rec_u_${tag}`])
      await q(
        `INSERT INTO "${prefix}_sessions" (id, "sessionToken", expires, "user") VALUES ($1, $2, now() + interval '1 day', $3)`,
        [`rec_s_${tag}`, `token-${tag}`, `rec_u_${tag}`],
      )
      await q(`INSERT INTO "${prefix}_users_sessions" (id, session, "user") VALUES ($1, $2, $3)`, [`rec_us_${tag}`, `rec_s_${tag}`, `rec_u_${tag}`])

      expect(await adapter.getUserByAccount({ provider: 'github', providerAccountId: tag })).toMatchObject({
        id: `rec_u_${tag}`,
        name: 'Rec Ord',
      })
      const found = await adapter.getSessionAndUser(`token-${tag}`)
      expect(found?.session).toMatchObject({ id: `rec_s_${tag}`, userId: `rec_u_${tag}`, sessionToken: `token-${tag}` })
      expect(found?.user.email).toBe(`${tag}@hosted.test`)
    })

    it('carries a real sign-in with a database session', async () => {
      const config = featureConfig({
        adapter,
        session: { strategy: 'database' },
        providers: [Credentials({ credentials: { email: {} }, authorize: ({ email }) => ({ email: String(email), name: 'Hosted' }) })],
      } as never)
      const browser = new Client(config)
      const email = `${randomUUID()}@hosted.test`
      await browser.signIn({ email })
      expect((await browser.session()).body).toMatchObject({ user: { email, name: 'Hosted' } })
      const user = await adapter.getUserByEmail(email)
      expect(await count('users_sessions', '"user" = $1', [user!.id])).toBe(1)
      await browser.signOut()
      expect((await browser.session()).body).toBeNull()
      expect(await count('users_sessions', '"user" = $1', [user!.id])).toBe(0)
    })
  })
}
