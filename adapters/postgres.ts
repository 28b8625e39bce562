/**
 * A PostgreSQL adapter that runs on an embedded PGlite (no server: the demo's default) and on a
 * PostgreSQL server through `pg`. Its tables and columns are those of `@auth/pg-adapter` (with text
 * ids), so an application can move between the two without migrating data.
 *
 * ```ts
 * import { PGlite } from '@electric-sql/pglite'
 * import { PostgresAdapter } from 'authchart/adapters/postgres'
 *
 * const adapter = PostgresAdapter(new PGlite('./data'))
 * await adapter.migrate()
 * ```
 *
 * @module
 */
import type {
  Adapter,
  AdapterAccount,
  AdapterAuthenticator,
  AdapterSession,
  AdapterUser,
  VerificationToken,
} from '../core/adapters.js'

/**
 * The one method the adapter needs from a client: `pg`'s `Pool` and `Client`, and PGlite, all
 * have it. `exec` (PGlite) runs several statements at once; `pg` does so through `query` when
 * there are no parameters.
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>
  exec?(text: string): Promise<unknown>
}

/** Options of {@link PostgresAdapter}. */
export interface PostgresAdapterOptions {
  /**
   * Prefix of every table name: with `app`, tables are `app_users`, `app_sessions`, … (spec
   * §2.17). Letters, digits and underscores only.
   */
  tablePrefix?: string
}

/** The adapter with its schema migration. */
export interface PostgresAdapter extends Required<Adapter> {
  /** Creates the tables and indexes if missing. Idempotent, and safe to run concurrently. */
  migrate(): Promise<void>
}

/** The table names for a prefix. */
export function tableNames(prefix = '') {
  if (prefix && !/^[a-z_][a-z0-9_]*$/i.test(prefix)) {
    throw new TypeError(`tablePrefix must be letters, digits and underscores, got "${prefix}"`)
  }
  const p = prefix ? `${prefix}_` : ''
  return {
    users: `"${p}users"`,
    accounts: `"${p}accounts"`,
    sessions: `"${p}sessions"`,
    verificationTokens: `"${p}verification_token"`,
    authenticators: `"${p}authenticators"`,
    index: (name: string) => `"${p}${name}"`,
    lock: `${p}authchart_schema`,
  }
}

/** The schema, as one idempotent script. */
export function schema(prefix = ''): string {
  const t = tableNames(prefix)
  return `
CREATE TABLE IF NOT EXISTS ${t.users} (
  id TEXT PRIMARY KEY DEFAULT gen_random_uuid()::text,
  name TEXT,
  email TEXT,
  "emailVerified" TIMESTAMPTZ,
  image TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS ${t.index('users_email_key')} ON ${t.users} (email);
CREATE TABLE IF NOT EXISTS ${t.accounts} (
  id TEXT PRIMARY KEY DEFAULT gen_random_uuid()::text,
  "userId" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  provider TEXT NOT NULL,
  "providerAccountId" TEXT NOT NULL,
  refresh_token TEXT,
  access_token TEXT,
  expires_at BIGINT,
  id_token TEXT,
  scope TEXT,
  session_state TEXT,
  token_type TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS ${t.index('accounts_provider_key')} ON ${t.accounts} (provider, "providerAccountId");
CREATE INDEX IF NOT EXISTS ${t.index('accounts_user_idx')} ON ${t.accounts} ("userId");
CREATE TABLE IF NOT EXISTS ${t.sessions} (
  id TEXT PRIMARY KEY DEFAULT gen_random_uuid()::text,
  "userId" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  expires TIMESTAMPTZ NOT NULL,
  "sessionToken" TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS ${t.index('sessions_token_key')} ON ${t.sessions} ("sessionToken");
CREATE INDEX IF NOT EXISTS ${t.index('sessions_user_idx')} ON ${t.sessions} ("userId");
CREATE TABLE IF NOT EXISTS ${t.verificationTokens} (
  identifier TEXT NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  token TEXT NOT NULL,
  PRIMARY KEY (identifier, token)
);
CREATE TABLE IF NOT EXISTS ${t.authenticators} (
  "credentialID" TEXT PRIMARY KEY,
  "userId" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  "providerAccountId" TEXT NOT NULL,
  "credentialPublicKey" TEXT NOT NULL,
  counter BIGINT NOT NULL,
  "credentialDeviceType" TEXT NOT NULL,
  "credentialBackedUp" BOOLEAN NOT NULL,
  transports TEXT
);
CREATE INDEX IF NOT EXISTS ${t.index('authenticators_user_idx')} ON ${t.authenticators} ("userId");`
}

const AUTHENTICATOR =
  '"credentialID", "userId", "providerAccountId", "credentialPublicKey", counter, "credentialDeviceType", "credentialBackedUp", transports'

const toDate = (value: unknown): Date | null =>
  value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value))
const toNumber = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value)

/** Drops SQL nulls, so accounts look like those of other adapters (absent, not null). */
function withoutNulls<T extends Record<string, unknown>>(row: T): T {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) if (value !== null) out[key] = value
  return out as T
}

// Rows are returned whole (`SELECT *`, `RETURNING *`), as @auth/pg-adapter returns them: the
// session's `id` and any column the application added reach its callbacks; only the types the
// adapter interface fixes are normalised.
const toUser = (row: Record<string, unknown>): AdapterUser => ({
  ...row,
  id: String(row.id),
  name: (row.name as string | null) ?? null,
  email: row.email as string,
  emailVerified: toDate(row.emailVerified),
  image: (row.image as string | null) ?? null,
})
const toSession = (row: Record<string, unknown>): AdapterSession => ({
  ...row,
  ...(row.id === undefined ? {} : { id: String(row.id) }),
  sessionToken: row.sessionToken as string,
  userId: String(row.userId),
  expires: toDate(row.expires)!,
})
const toAccount = (row: Record<string, unknown>): AdapterAccount =>
  withoutNulls({
    ...row,
    id: String(row.id),
    userId: String(row.userId),
    expires_at: toNumber(row.expires_at),
  }) as unknown as AdapterAccount
const toAuthenticator = (row: Record<string, unknown>): AdapterAuthenticator => ({
  ...row,
  credentialID: row.credentialID as string,
  userId: String(row.userId),
  providerAccountId: row.providerAccountId as string,
  credentialPublicKey: row.credentialPublicKey as string,
  counter: Number(row.counter),
  credentialDeviceType: row.credentialDeviceType as string,
  credentialBackedUp: Boolean(row.credentialBackedUp),
  transports: (row.transports as string | null) ?? null,
})
const toToken = (row: Record<string, unknown>): VerificationToken => ({
  ...row,
  identifier: row.identifier as string,
  token: row.token as string,
  expires: toDate(row.expires)!,
})

/** Creates the adapter over a PGlite or `pg` client. Run {@link PostgresAdapter.migrate} once. */
export function PostgresAdapter(
  client: Queryable,
  options: PostgresAdapterOptions = {},
): PostgresAdapter {
  const t = tableNames(options.tablePrefix)
  const rows = async (text: string, params: unknown[] = []) => (await client.query(text, params)).rows
  const first = async (text: string, params: unknown[] = []) => (await rows(text, params))[0] ?? null

  return {
    async migrate() {
      // Several statements in one simple query run as one implicit transaction; the advisory lock
      // it takes makes two processes booting at once queue instead of racing on CREATE TABLE IF
      // NOT EXISTS (which is not atomic against itself in PostgreSQL).
      const script = `SELECT pg_advisory_xact_lock(hashtext('${t.lock}'));
${schema(options.tablePrefix)}`
      if (client.exec) await client.exec(script)
      else await client.query(script)
    },

    async createUser(user) {
      const row = await first(
        `INSERT INTO ${t.users} (id, name, email, "emailVerified", image)
         VALUES (COALESCE($1, gen_random_uuid()::text), $2, $3, $4, $5) RETURNING *`,
        [user.id ?? null, user.name ?? null, user.email, user.emailVerified ?? null, user.image ?? null],
      )
      return toUser(row!)
    },
    async getUser(id) {
      const row = await first(`SELECT * FROM ${t.users} WHERE id = $1`, [id])
      return row ? toUser(row) : null
    },
    async getUserByEmail(email) {
      const row = await first(`SELECT * FROM ${t.users} WHERE email = $1`, [email])
      return row ? toUser(row) : null
    },
    async getUserByAccount({ provider, providerAccountId }) {
      const row = await first(
        `SELECT u.* FROM ${t.users} u
         JOIN ${t.accounts} a ON a."userId" = u.id
         WHERE a.provider = $1 AND a."providerAccountId" = $2`,
        [provider, providerAccountId],
      )
      return row ? toUser(row) : null
    },
    async updateUser(user) {
      const fields = (['name', 'email', 'emailVerified', 'image'] as const).filter((f) => f in user)
      const assignments = fields.map((f, i) => `"${f}" = $${i + 2}`)
      const row = await first(
        assignments.length > 0
          ? `UPDATE ${t.users} SET ${assignments.join(', ')} WHERE id = $1 RETURNING *`
          : `SELECT * FROM ${t.users} WHERE id = $1`,
        [user.id, ...fields.map((f) => user[f] ?? null)],
      )
      if (!row) throw new Error(`user ${user.id} does not exist`)
      return toUser(row)
    },
    async deleteUser(userId) {
      const row = await first(`DELETE FROM ${t.users} WHERE id = $1 RETURNING *`, [userId])
      return row ? toUser(row) : null
    },
    async linkAccount(account) {
      const row = await first(
        `INSERT INTO ${t.accounts} ("userId", type, provider, "providerAccountId", refresh_token,
           access_token, expires_at, id_token, scope, session_state, token_type)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
        [
          account.userId,
          account.type,
          account.provider,
          account.providerAccountId,
          account.refresh_token ?? null,
          account.access_token ?? null,
          account.expires_at ?? null,
          account.id_token ?? null,
          account.scope ?? null,
          (account.session_state as string | undefined) ?? null,
          account.token_type ?? null,
        ],
      )
      return toAccount(row!)
    },
    async updateAccount(account) {
      const fields = (
        ['refresh_token', 'access_token', 'expires_at', 'id_token', 'scope', 'session_state', 'token_type'] as const
      ).filter((f) => f in account)
      const row = await first(
        fields.length === 0
          ? `SELECT * FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2`
          : `UPDATE ${t.accounts} SET ${fields.map((f, i) => `${f} = $${i + 3}`).join(', ')}
             WHERE provider = $1 AND "providerAccountId" = $2 RETURNING *`,
        [account.provider, account.providerAccountId, ...fields.map((f) => account[f] ?? null)],
      )
      return row ? toAccount(row) : null
    },
    async listAccounts(userId) {
      return (await rows(`SELECT * FROM ${t.accounts} WHERE "userId" = $1`, [userId])).map(toAccount)
    },
    async unlinkAccount({ provider, providerAccountId }) {
      const row = await first(
        `DELETE FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2 RETURNING *`,
        [provider, providerAccountId],
      )
      return row ? toAccount(row) : undefined
    },
    async createSession({ sessionToken, userId, expires }) {
      const row = await first(
        `INSERT INTO ${t.sessions} ("sessionToken", "userId", expires) VALUES ($1, $2, $3) RETURNING *`,
        [sessionToken, userId, expires],
      )
      return toSession(row!)
    },
    async getSessionAndUser(sessionToken) {
      // Two rows that both have an `id`: one JOIN would have to rename columns it cannot know.
      const session = await first(`SELECT * FROM ${t.sessions} WHERE "sessionToken" = $1`, [sessionToken])
      if (!session) return null
      const user = await first(`SELECT * FROM ${t.users} WHERE id = $1`, [session.userId])
      return user ? { session: toSession(session), user: toUser(user) } : null
    },
    async updateSession(session) {
      const row = await first(
        `UPDATE ${t.sessions} SET expires = COALESCE($2, expires), "userId" = COALESCE($3, "userId")
         WHERE "sessionToken" = $1 RETURNING *`,
        [session.sessionToken, session.expires ?? null, session.userId ?? null],
      )
      return row ? toSession(row) : null
    },
    async deleteSession(sessionToken) {
      const row = await first(
        `DELETE FROM ${t.sessions} WHERE "sessionToken" = $1 RETURNING *`,
        [sessionToken],
      )
      return row ? toSession(row) : null
    },
    async createVerificationToken(token) {
      const row = await first(
        `INSERT INTO ${t.verificationTokens} (identifier, expires, token) VALUES ($1, $2, $3)
         RETURNING *`,
        [token.identifier, token.expires, token.token],
      )
      return toToken(row!)
    },
    async useVerificationToken({ identifier, token }) {
      // DELETE … RETURNING consumes the token atomically: of two concurrent uses, one gets it.
      const row = await first(
        `DELETE FROM ${t.verificationTokens} WHERE identifier = $1 AND token = $2
         RETURNING *`,
        [identifier, token],
      )
      return row ? toToken(row) : null
    },
    async getAccount(providerAccountId, provider) {
      const row = await first(
        `SELECT * FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2`,
        [provider, providerAccountId],
      )
      return row ? toAccount(row) : null
    },
    async getAuthenticator(credentialID) {
      const row = await first(
        `SELECT * FROM ${t.authenticators} WHERE "credentialID" = $1`,
        [credentialID],
      )
      return row ? toAuthenticator(row) : null
    },
    async createAuthenticator(a) {
      const row = await first(
        `INSERT INTO ${t.authenticators} (${AUTHENTICATOR}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING *`,
        [
          a.credentialID,
          a.userId,
          a.providerAccountId,
          a.credentialPublicKey,
          a.counter,
          a.credentialDeviceType,
          a.credentialBackedUp,
          a.transports ?? null,
        ],
      )
      return toAuthenticator(row!)
    },
    async listAuthenticatorsByUserId(userId) {
      return (
        await rows(`SELECT * FROM ${t.authenticators} WHERE "userId" = $1`, [userId])
      ).map(toAuthenticator)
    },
    async updateAuthenticatorCounter(credentialID, counter) {
      const row = await first(
        `UPDATE ${t.authenticators} SET counter = $2 WHERE "credentialID" = $1 RETURNING *`,
        [credentialID, counter],
      )
      if (!row) throw new Error(`authenticator ${credentialID} does not exist`)
      return toAuthenticator(row)
    },
  }
}
