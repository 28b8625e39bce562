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
  AdapterSecondFactor,
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
    secondFactors: `"${p}second_factors"`,
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
ALTER TABLE ${t.sessions} ADD COLUMN IF NOT EXISTS amr TEXT;
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
CREATE INDEX IF NOT EXISTS ${t.index('authenticators_user_idx')} ON ${t.authenticators} ("userId");
CREATE TABLE IF NOT EXISTS ${t.secondFactors} (
  id TEXT PRIMARY KEY,
  "userId" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  secret TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ${t.index('second_factors_user_idx')} ON ${t.secondFactors} ("userId");`
}

const USER = 'id, name, email, "emailVerified", image'
const SESSION = '"sessionToken", "userId", expires, amr'
const ACCOUNT =
  'id, "userId", type, provider, "providerAccountId", refresh_token, access_token, expires_at, id_token, scope, session_state, token_type'
const SECOND_FACTOR = 'id, "userId", type, secret, "createdAt"'
const AUTHENTICATOR =
  '"credentialID", "userId", "providerAccountId", "credentialPublicKey", counter, "credentialDeviceType", "credentialBackedUp", transports'

const toDate = (value: unknown): Date | null =>
  value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value))
const toNumber = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value)

/** Drops SQL nulls, so records look like those of other adapters (absent, not null). */
function withoutNulls<T extends Record<string, unknown>>(row: T): T {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) if (value !== null) out[key] = value
  return out as T
}

const toUser = (row: Record<string, unknown>): AdapterUser => ({
  id: String(row.id),
  name: (row.name as string | null) ?? null,
  email: row.email as string,
  emailVerified: toDate(row.emailVerified),
  image: (row.image as string | null) ?? null,
})
const toSession = (row: Record<string, unknown>): AdapterSession => ({
  sessionToken: row.sessionToken as string,
  userId: String(row.userId),
  expires: toDate(row.expires)!,
  // How the user signed in, when a second factor was used (ours; space-separated in the row).
  ...(typeof row.amr === 'string' ? { amr: row.amr.split(' ') } : {}),
})
const toAccount = (row: Record<string, unknown>): AdapterAccount =>
  withoutNulls({
    ...row,
    id: String(row.id),
    userId: String(row.userId),
    expires_at: toNumber(row.expires_at),
  }) as unknown as AdapterAccount
const toSecondFactor = (row: Record<string, unknown>): AdapterSecondFactor => ({
  id: String(row.id),
  userId: String(row.userId),
  type: row.type as AdapterSecondFactor['type'],
  secret: row.secret as string,
  createdAt: toDate(row.createdAt)!,
})
const toAuthenticator = (row: Record<string, unknown>): AdapterAuthenticator => ({
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
         VALUES (COALESCE($1, gen_random_uuid()::text), $2, $3, $4, $5) RETURNING ${USER}`,
        [user.id ?? null, user.name ?? null, user.email, user.emailVerified ?? null, user.image ?? null],
      )
      return toUser(row!)
    },
    async getUser(id) {
      const row = await first(`SELECT ${USER} FROM ${t.users} WHERE id = $1`, [id])
      return row ? toUser(row) : null
    },
    async getUserByEmail(email) {
      const row = await first(`SELECT ${USER} FROM ${t.users} WHERE email = $1`, [email])
      return row ? toUser(row) : null
    },
    async getUserByAccount({ provider, providerAccountId }) {
      const row = await first(
        `SELECT u.id, u.name, u.email, u."emailVerified", u.image FROM ${t.users} u
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
          ? `UPDATE ${t.users} SET ${assignments.join(', ')} WHERE id = $1 RETURNING ${USER}`
          : `SELECT ${USER} FROM ${t.users} WHERE id = $1`,
        [user.id, ...fields.map((f) => user[f] ?? null)],
      )
      if (!row) throw new Error(`user ${user.id} does not exist`)
      return toUser(row)
    },
    async deleteUser(userId) {
      const row = await first(`DELETE FROM ${t.users} WHERE id = $1 RETURNING ${USER}`, [userId])
      return row ? toUser(row) : null
    },
    async linkAccount(account) {
      const row = await first(
        `INSERT INTO ${t.accounts} ("userId", type, provider, "providerAccountId", refresh_token,
           access_token, expires_at, id_token, scope, session_state, token_type)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${ACCOUNT}`,
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
          ? `SELECT ${ACCOUNT} FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2`
          : `UPDATE ${t.accounts} SET ${fields.map((f, i) => `${f} = $${i + 3}`).join(', ')}
             WHERE provider = $1 AND "providerAccountId" = $2 RETURNING ${ACCOUNT}`,
        [account.provider, account.providerAccountId, ...fields.map((f) => account[f] ?? null)],
      )
      return row ? toAccount(row) : null
    },
    async listAccounts(userId) {
      return (await rows(`SELECT ${ACCOUNT} FROM ${t.accounts} WHERE "userId" = $1`, [userId])).map(toAccount)
    },
    async unlinkAccount({ provider, providerAccountId }) {
      const row = await first(
        `DELETE FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2 RETURNING ${ACCOUNT}`,
        [provider, providerAccountId],
      )
      return row ? toAccount(row) : undefined
    },
    async createSession({ sessionToken, userId, expires, amr }) {
      const row = await first(
        `INSERT INTO ${t.sessions} ("sessionToken", "userId", expires, amr) VALUES ($1, $2, $3, $4) RETURNING ${SESSION}`,
        [sessionToken, userId, expires, amr?.join(' ') ?? null],
      )
      return toSession(row!)
    },
    async getSessionAndUser(sessionToken) {
      const row = await first(
        `SELECT s."sessionToken", s."userId", s.expires, s.amr,
                u.id, u.name, u.email, u."emailVerified", u.image
         FROM ${t.sessions} s JOIN ${t.users} u ON u.id = s."userId"
         WHERE s."sessionToken" = $1`,
        [sessionToken],
      )
      return row ? { session: toSession(row), user: toUser(row) } : null
    },
    async updateSession(session) {
      const row = await first(
        `UPDATE ${t.sessions} SET expires = COALESCE($2, expires), "userId" = COALESCE($3, "userId")
         WHERE "sessionToken" = $1 RETURNING ${SESSION}`,
        [session.sessionToken, session.expires ?? null, session.userId ?? null],
      )
      return row ? toSession(row) : null
    },
    async deleteSession(sessionToken) {
      const row = await first(
        `DELETE FROM ${t.sessions} WHERE "sessionToken" = $1 RETURNING ${SESSION}`,
        [sessionToken],
      )
      return row ? toSession(row) : null
    },
    async createVerificationToken(token) {
      const row = await first(
        `INSERT INTO ${t.verificationTokens} (identifier, expires, token) VALUES ($1, $2, $3)
         RETURNING identifier, expires, token`,
        [token.identifier, token.expires, token.token],
      )
      return toToken(row!)
    },
    async useVerificationToken({ identifier, token }) {
      // DELETE … RETURNING consumes the token atomically: of two concurrent uses, one gets it.
      const row = await first(
        `DELETE FROM ${t.verificationTokens} WHERE identifier = $1 AND token = $2
         RETURNING identifier, expires, token`,
        [identifier, token],
      )
      return row ? toToken(row) : null
    },
    async getAccount(providerAccountId, provider) {
      const row = await first(
        `SELECT ${ACCOUNT} FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2`,
        [provider, providerAccountId],
      )
      return row ? toAccount(row) : null
    },
    async getAuthenticator(credentialID) {
      const row = await first(
        `SELECT ${AUTHENTICATOR} FROM ${t.authenticators} WHERE "credentialID" = $1`,
        [credentialID],
      )
      return row ? toAuthenticator(row) : null
    },
    async createAuthenticator(a) {
      const row = await first(
        `INSERT INTO ${t.authenticators} (${AUTHENTICATOR}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING ${AUTHENTICATOR}`,
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
        await rows(`SELECT ${AUTHENTICATOR} FROM ${t.authenticators} WHERE "userId" = $1`, [userId])
      ).map(toAuthenticator)
    },
    async updateAuthenticatorCounter(credentialID, counter) {
      const row = await first(
        `UPDATE ${t.authenticators} SET counter = $2 WHERE "credentialID" = $1 RETURNING ${AUTHENTICATOR}`,
        [credentialID, counter],
      )
      if (!row) throw new Error(`authenticator ${credentialID} does not exist`)
      return toAuthenticator(row)
    },
    async listSecondFactors(userId) {
      return (
        await rows(`SELECT ${SECOND_FACTOR} FROM ${t.secondFactors} WHERE "userId" = $1 ORDER BY "createdAt"`, [userId])
      ).map(toSecondFactor)
    },
    async createSecondFactor(factor) {
      const row = await first(
        `INSERT INTO ${t.secondFactors} (${SECOND_FACTOR}) VALUES ($1, $2, $3, $4, $5) RETURNING ${SECOND_FACTOR}`,
        [factor.id, factor.userId, factor.type, factor.secret, factor.createdAt],
      )
      return toSecondFactor(row!)
    },
    async updateSecondFactor({ id, secret }) {
      const row = await first(`UPDATE ${t.secondFactors} SET secret = $2 WHERE id = $1 RETURNING ${SECOND_FACTOR}`, [
        id,
        secret,
      ])
      return row ? toSecondFactor(row) : null
    },
    async deleteSecondFactor(id) {
      await rows(`DELETE FROM ${t.secondFactors} WHERE id = $1`, [id])
    },
  }
}
