/**
 * The better-auth migration guide's steps, run as a reader runs them: better-auth's tables (as its
 * CLI generates them for PostgreSQL) with users hashed by better-auth itself, then the guide's SQL
 * (or its export query fed to the import), then a sign-in's password check against what landed.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { hashPassword as betterAuthHashPassword } from 'better-auth/crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { passwordHasher } from '../../core/password/hashing.js'
import { importUsers } from '../../core/password/import-users.js'

const page = readFileSync(join(process.cwd(), 'docs', 'migration', 'better-auth.md'), 'utf8')
const GUIDE_SQL = /```sql\n([\s\S]*?)```/.exec(page)![1]!
const EXPORT_QUERY = /-c \\\n\s+"(select json_build_object[^\n]*)" \\\n/.exec(page)![1]!.replace(/\\"/g, '"')

const BETTER_AUTH_SCHEMA = `
CREATE TABLE "user" (id text PRIMARY KEY, name text NOT NULL, email text NOT NULL UNIQUE, "emailVerified" boolean NOT NULL,
  image text, "createdAt" timestamptz NOT NULL, "updatedAt" timestamptz NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, "expiresAt" timestamptz NOT NULL, token text NOT NULL UNIQUE, "createdAt" timestamptz NOT NULL,
  "updatedAt" timestamptz NOT NULL, "ipAddress" text, "userAgent" text, "userId" text NOT NULL REFERENCES "user" (id));
CREATE TABLE account (id text PRIMARY KEY, "accountId" text NOT NULL, "providerId" text NOT NULL, "userId" text NOT NULL REFERENCES "user" (id),
  "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" timestamptz, "refreshTokenExpiresAt" timestamptz,
  scope text, password text, "createdAt" timestamptz NOT NULL, "updatedAt" timestamptz NOT NULL);
CREATE TABLE verification (id text PRIMARY KEY, identifier text NOT NULL, value text NOT NULL, "expiresAt" timestamptz NOT NULL,
  "createdAt" timestamptz, "updatedAt" timestamptz);
CREATE TABLE organization (id text PRIMARY KEY, name text NOT NULL, slug text UNIQUE, logo text, "createdAt" timestamptz NOT NULL, metadata text);
CREATE TABLE member (id text PRIMARY KEY, "organizationId" text NOT NULL REFERENCES organization (id), "userId" text NOT NULL REFERENCES "user" (id),
  role text NOT NULL, "createdAt" timestamptz NOT NULL);`

const PASSWORD = 'correct horse battery staple'
const hasher = passwordHasher()

async function betterAuthDatabase() {
  const db = new PGlite()
  await db.exec(BETTER_AUTH_SCHEMA)
  const hash = await betterAuthHashPassword(PASSWORD)
  await db.query(`INSERT INTO "user" VALUES ('u-alice', 'Alice', 'Alice@Example.com', true, NULL, now(), now()), ('u-bob', 'Bob', 'bob@example.com', false, NULL, now(), now())`)
  await db.query(`INSERT INTO account (id, "accountId", "providerId", "userId", password, "createdAt", "updatedAt") VALUES ('a1', 'u-alice', 'credential', 'u-alice', $1, now(), now())`, [hash])
  await db.query(
    `INSERT INTO account (id, "accountId", "providerId", "userId", "accessToken", "accessTokenExpiresAt", scope, "createdAt", "updatedAt")
     VALUES ('a2', '4242', 'github', 'u-bob', 'gho_token', '2030-01-01T00:00:00Z', 'read:user', now(), now())`,
  )
  await db.query(`INSERT INTO organization VALUES ('o1', 'Acme', 'acme', NULL, now(), '{"plan":"pro"}')`)
  await db.query(`INSERT INTO member VALUES ('m1', 'o1', 'u-alice', 'owner', now()), ('m2', 'o1', 'u-bob', 'admin,member', now())`)
  const adapter = PostgresAdapter(db)
  await adapter.migrate()
  return { db, adapter, hash }
}

describe('migrating from better-auth with the guide', () => {
  describe('its SQL', () => {
    let setup: Awaited<ReturnType<typeof betterAuthDatabase>>
    beforeAll(async () => {
      setup = await betterAuthDatabase()
      await setup.db.exec(GUIDE_SQL)
    }, 60_000)

    it('copies the password hash as it is, and it verifies with the right password only', async () => {
      const alice = await setup.adapter.getUserByEmail('alice@example.com')
      expect(alice?.id).toBe('u-alice')
      expect(alice?.emailVerified).toBeInstanceOf(Date)
      const stored = await setup.adapter.getUserPassword('u-alice')
      expect(stored).toBe(setup.hash)
      expect(await hasher.verify(stored!, PASSWORD)).toMatchObject({ valid: true, needsRehash: true })
      expect((await hasher.verify(stored!, `${PASSWORD}!`)).valid).toBe(false)
    })

    it('links the OAuth account to its user, and leaves an unverified address unverified', async () => {
      const bob = await setup.adapter.getUserByAccount({ provider: 'github', providerAccountId: '4242' })
      expect(bob?.id).toBe('u-bob')
      expect(bob?.emailVerified).toBeNull()
      expect(await setup.adapter.getUserPassword('u-bob')).toBeNull()
      const { rows } = await setup.db.query(`SELECT access_token, expires_at, type FROM accounts WHERE provider = 'github'`)
      expect(rows).toEqual([{ access_token: 'gho_token', expires_at: 1893456000, type: 'oauth' }])
    })

    it('copies organisations and memberships, a member of several roles keeping the highest', async () => {
      const { rows } = await setup.db.query(`SELECT "userId", role, status FROM memberships ORDER BY "userId"`)
      expect(rows).toEqual([
        { userId: 'u-alice', role: 'owner', status: 'active' },
        { userId: 'u-bob', role: 'admin', status: 'active' },
      ])
      expect((await setup.adapter.getOrganizationBySlug('acme'))?.metadata).toEqual({ plan: 'pro' })
    })

    it('can be run again without copying anything twice', async () => {
      await setup.db.exec(GUIDE_SQL)
      const { rows } = await setup.db.query(`SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM accounts)::int AS accounts, (SELECT count(*) FROM memberships)::int AS members`)
      expect(rows).toEqual([{ users: 2, accounts: 1, members: 2 }])
    })
  })

  it('its export query gives the import what it reads: users, linked accounts and the hashes', async () => {
    const { db, adapter, hash } = await betterAuthDatabase()
    const { rows } = await db.query<{ json_build_object: unknown }>(EXPORT_QUERY)
    const report = await importUsers({ adapter, text: JSON.stringify(rows[0]!.json_build_object), keepIds: true })
    expect(report.format).toBe('better-auth')
    expect(report.counts).toMatchObject({ read: 2, created: 2, failed: 0, passwordsSet: 1, accountsLinked: 1 })
    expect(report.hashFormats).toEqual({ 'better-auth-scrypt': 1 })
    expect(await adapter.getUserPassword('u-alice')).toBe(hash)
    expect((await adapter.getUserByAccount({ provider: 'github', providerAccountId: '4242' }))?.id).toBe('u-bob')
  }, 60_000)
})
