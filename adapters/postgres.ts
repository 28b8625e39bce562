/**
 * A PostgreSQL adapter that runs on an embedded PGlite (no server: the demo's default) and on a
 * PostgreSQL server (or a hosted Postgres-compatible platform) through `pg`. By default its tables
 * and columns are those of `@auth/pg-adapter` (with text ids), so an application can move between
 * the two without migrating data; `layout: 'hosted'` uses spec §2.17's tables instead.
 *
 * ```ts
 * import { PGlite } from '@electric-sql/pglite'
 * import { PostgresAdapter } from 'authchart/adapters/postgres'
 *
 * const adapter = PostgresAdapter(new PGlite('./data'))
 * await adapter.migrate()
 *
 * const hosted = PostgresAdapter(new pg.Pool({ connectionString }), { layout: 'hosted', tablePrefix: 'nextauth' })
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
import { organizationsSchema, postgresOrganizations } from './postgres-organizations.js'
import type { PasswordMethods } from '../core/flows/password/adapter.js'
import { apiKeysTable, postgresApiKeyMethods } from './postgres-api-keys.js'
import { postgresServiceAccountMethods, serviceAccountsTable } from './postgres-service-accounts.js'

/**
 * The one method the adapter needs from a client: `pg`'s `Pool` and `Client`, and PGlite, all
 * have it. `exec` (PGlite) runs several statements at once; `pg` does so through `query` when
 * there are no parameters.
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>
  exec?(text: string): Promise<unknown>
}

/**
 * How the tables are laid out.
 *
 * - `'pg-adapter'` (default): `@auth/pg-adapter`'s tables (`users`, `accounts`, `sessions`,
 *   `verification_token`) with text ids; rows point to their user through `"userId"`.
 * - `'hosted'`: spec §2.17, the schema of the hosted-database adapter: `<prefix>_users`,
 *   `_accounts`, `_sessions`, `_verificationTokens` with camel-case columns, a record link
 *   `"user"` on accounts and sessions, and the link tables `_users_accounts` / `_users_sessions`
 *   (kept in step by the adapter). Every record has a text `id`. Hosted Postgres-compatible
 *   platforms speak the wire protocol, so `pg` reaches them as it reaches PostgreSQL. Passkeys add
 *   `_authenticators` (not part of §2.17).
 */
export type PostgresLayout = 'pg-adapter' | 'hosted'

/** Options of {@link PostgresAdapter}. */
export interface PostgresAdapterOptions {
  /**
   * Prefix of every table name: with `app`, tables are `app_users`, `app_sessions`, … (spec
   * §2.17). Letters, digits and underscores only. The hosted layout defaults to `nextauth`, the
   * prefix that adapter's schema uses.
   */
  tablePrefix?: string
  /** The table layout (default `'pg-adapter'`). */
  layout?: PostgresLayout
}

/** The adapter with its schema migration. */
export interface PostgresAdapter extends Required<Adapter> {
  /** Creates the tables and indexes of its layout if missing. Idempotent, and safe to run concurrently. */
  migrate(): Promise<void>
}

/** The prefix the hosted layout uses when none is given. */
export const HOSTED_DEFAULT_PREFIX = 'nextauth'

/**
 * The table names (quoted) of a layout, and the column that links a row to its user.
 *
 * @throws {TypeError} when `prefix` is not letters, digits and underscores (it is spliced into SQL).
 */
export function tableNames(prefix?: string, layout: PostgresLayout = 'pg-adapter') {
  const hosted = layout === 'hosted'
  const chosen = prefix ?? (hosted ? HOSTED_DEFAULT_PREFIX : '')
  if (chosen && !/^[a-z_][a-z0-9_]*$/i.test(chosen)) {
    throw new TypeError(`tablePrefix must be letters, digits and underscores, got "${chosen}"`)
  }
  if (hosted && !chosen) throw new TypeError('the hosted layout needs a tablePrefix')
  const p = chosen ? `${chosen}_` : ''
  return {
    users: `"${p}users"`,
    accounts: `"${p}accounts"`,
    sessions: `"${p}sessions"`,
    verificationTokens: hosted ? `"${p}verificationTokens"` : `"${p}verification_token"`,
    authenticators: `"${p}authenticators"`,
    completedSteps: `"${p}completed_steps"`,
    secondFactors: `"${p}second_factors"`,
    sessionAmr: `"${p}session_amr"`,
    sessionDetails: `"${p}session_details"`,
    sessionProvider: `"${p}session_provider"`,
    accountKeys: `"${p}account_keys"`,
    passwords: `"${p}user_passwords"`,
    /** Link tables of the hosted layout: one row per account / session, naming its user. */
    usersAccounts: hosted ? `"${p}users_accounts"` : null,
    usersSessions: hosted ? `"${p}users_sessions"` : null,
    /** The column of accounts, sessions and authenticators that names their user (unquoted). */
    userLink: hosted ? 'user' : 'userId',
    index: (name: string) => `"${p}${name}"`,
    lock: `${p}authchart_schema`,
  }
}

type Tables = ReturnType<typeof tableNames>

/** The schema of a layout, as one idempotent script. */
export function schema(prefix?: string, layout: PostgresLayout = 'pg-adapter'): string {
  return layout === 'hosted' ? hostedSchema(tableNames(prefix, layout)) : pgAdapterSchema(tableNames(prefix, layout))
}

function pgAdapterSchema(t: Tables): string {
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
${completedStepsTable(t)}
${authenticatorsTable(t)}
${secondFactorsTable(t)}
${accountKeysTable(t)}
${passwordsTable(t)}`
}

// Spec §2.17: every field nullable, records carry an id, accounts and sessions link to their user
// both through a `user` column and through a link table. Deleting a user, an account or a session
// cascades to the rows that link to it, so the link tables never point at nothing.
function hostedSchema(t: Tables): string {
  const id = 'id TEXT PRIMARY KEY DEFAULT gen_random_uuid()::text'
  const userLink = `"user" TEXT REFERENCES ${t.users} (id) ON DELETE CASCADE`
  return `
CREATE TABLE IF NOT EXISTS ${t.users} (
  ${id},
  email TEXT,
  "emailVerified" TIMESTAMPTZ,
  image TEXT,
  name TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS ${t.index('users_email_key')} ON ${t.users} (email);
CREATE TABLE IF NOT EXISTS ${t.accounts} (
  ${id},
  access_token TEXT,
  expires_at BIGINT,
  id_token TEXT,
  provider TEXT,
  "providerAccountId" TEXT,
  refresh_token TEXT,
  scope TEXT,
  session_state TEXT,
  token_type TEXT,
  type TEXT,
  ${userLink}
);
CREATE UNIQUE INDEX IF NOT EXISTS ${t.index('accounts_provider_key')} ON ${t.accounts} (provider, "providerAccountId");
CREATE INDEX IF NOT EXISTS ${t.index('accounts_user_idx')} ON ${t.accounts} ("user");
CREATE TABLE IF NOT EXISTS ${t.sessions} (
  ${id},
  expires TIMESTAMPTZ,
  "sessionToken" TEXT,
  ${userLink}
);
CREATE UNIQUE INDEX IF NOT EXISTS ${t.index('sessions_token_key')} ON ${t.sessions} ("sessionToken");
CREATE INDEX IF NOT EXISTS ${t.index('sessions_user_idx')} ON ${t.sessions} ("user");
CREATE TABLE IF NOT EXISTS ${t.usersAccounts} (
  ${id},
  account TEXT REFERENCES ${t.accounts} (id) ON DELETE CASCADE,
  ${userLink}
);
CREATE INDEX IF NOT EXISTS ${t.index('users_accounts_account_idx')} ON ${t.usersAccounts} (account);
CREATE TABLE IF NOT EXISTS ${t.usersSessions} (
  ${id},
  session TEXT REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
  ${userLink}
);
CREATE INDEX IF NOT EXISTS ${t.index('users_sessions_session_idx')} ON ${t.usersSessions} (session);
CREATE TABLE IF NOT EXISTS ${t.verificationTokens} (
  ${id},
  expires TIMESTAMPTZ,
  identifier TEXT,
  token TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS ${t.index('verificationTokens_key')} ON ${t.verificationTokens} (identifier, token);
${completedStepsTable(t)}
${authenticatorsTable(t)}
${secondFactorsTable(t)}
${accountKeysTable(t)}
${passwordsTable(t)}`
}

// Ours: the sign-in steps (extensions at afterFirstSignIn) each user has completed, per step
// version; both layouts have it. No foreign key: a user the application keeps itself (credentials
// with JWT sessions) has no row in users, and its steps are recorded under the id authorize
// returned. deleteUser deletes a user's rows here itself.
function completedStepsTable(t: Tables): string {
  return `CREATE TABLE IF NOT EXISTS ${t.completedSteps} (
  "${t.userLink}" TEXT NOT NULL,
  "stepId" TEXT NOT NULL,
  version TEXT NOT NULL,
  "completedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("${t.userLink}", "stepId", version)
);`
}

function authenticatorsTable(t: Tables): string {
  return `CREATE TABLE IF NOT EXISTS ${t.authenticators} (
  "credentialID" TEXT PRIMARY KEY,
  "${t.userLink}" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  "providerAccountId" TEXT NOT NULL,
  "credentialPublicKey" TEXT NOT NULL,
  counter BIGINT NOT NULL,
  "credentialDeviceType" TEXT NOT NULL,
  "credentialBackedUp" BOOLEAN NOT NULL,
  transports TEXT
);
CREATE INDEX IF NOT EXISTS ${t.index('authenticators_user_idx')} ON ${t.authenticators} ("${t.userLink}");`
}

// Ours: a user's second factors (a TOTP secret sealed with the auth secret, or the hashes of the
// remaining backup codes), and how each multi-factor session was signed in to (its `amr`, kept
// beside the sessions table so that table stays exactly Auth.js's), and each session's sign-in
// time, last extension and user agent (session_details, beside it for the same reason), and the
// OpenID Connect provider session it was signed in with (session_provider, which back-channel
// logout looks sessions up by); both layouts have them. A session without details (created by
// another adapter) has no absolute lifetime check. Its \`fva\` (added later, hence the ALTER) is
// when each factor was last proven in the session, as JSON: step-up policies read it.
function secondFactorsTable(t: Tables): string {
  return `CREATE TABLE IF NOT EXISTS ${t.secondFactors} (
  id TEXT PRIMARY KEY,
  "${t.userLink}" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  secret TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ${t.index('second_factors_user_idx')} ON ${t.secondFactors} ("${t.userLink}");
CREATE TABLE IF NOT EXISTS ${t.sessionAmr} (
  "sessionToken" TEXT PRIMARY KEY REFERENCES ${t.sessions} ("sessionToken") ON DELETE CASCADE,
  amr TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t.sessionDetails} (
  "sessionToken" TEXT PRIMARY KEY REFERENCES ${t.sessions} ("sessionToken") ON DELETE CASCADE,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "lastSeenAt" TIMESTAMPTZ,
  "userAgent" TEXT
);
ALTER TABLE ${t.sessionDetails} ADD COLUMN IF NOT EXISTS fva TEXT;
CREATE TABLE IF NOT EXISTS ${t.sessionProvider} (
  "sessionToken" TEXT PRIMARY KEY REFERENCES ${t.sessions} ("sessionToken") ON DELETE CASCADE,
  provider TEXT NOT NULL,
  sub TEXT NOT NULL,
  sid TEXT
);
CREATE INDEX IF NOT EXISTS ${t.index('session_provider_sid_idx')} ON ${t.sessionProvider} (provider, sid);
CREATE INDEX IF NOT EXISTS ${t.index('session_provider_sub_idx')} ON ${t.sessionProvider} (provider, sub);`
}

// Ours: each user's password hash (a PHC string, or an imported format), in a table of its own
// beside the users table, so that table stays exactly Auth.js's and no read of a user carries the
// hash to the callbacks or the session; gone with its user.
function passwordsTable(t: Tables): string {
  return `CREATE TABLE IF NOT EXISTS ${t.passwords} (
  "${t.userLink}" TEXT PRIMARY KEY REFERENCES ${t.users} (id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);`
}

// Ours: the sealed DPoP key pair an account's tokens are bound to (a provider with `dpop: true`),
// beside the accounts table so that table stays exactly Auth.js's; gone with its account.
function accountKeysTable(t: Tables): string {
  return `CREATE TABLE IF NOT EXISTS ${t.accountKeys} (
  account TEXT PRIMARY KEY REFERENCES ${t.accounts} (id) ON DELETE CASCADE,
  dpop_key TEXT NOT NULL
);`
}

/** A stored `fva` column; an unreadable one is no times at all (the session then asks again). */
function parseFactorTimes(text: string): AdapterSession['fva'] {
  try {
    const parsed: unknown = JSON.parse(text)
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as AdapterSession['fva']) : {}
  } catch {
    return {}
  }
}

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

type Row = Record<string, unknown>

/**
 * Row → record converters for a layout. Rows are returned whole (`SELECT *`, `RETURNING *`), as
 * @auth/pg-adapter returns them: the session's `id` and any column the application added reach
 * its callbacks; only the types the adapter interface fixes are normalised, and the hosted
 * layout's `user` link is reported as `userId`.
 */
function converters(userLink: string) {
  const linked = (row: Row): Row & { userId: string } => {
    const { [userLink]: user, ...rest } = row
    return { ...rest, userId: String(user) }
  }
  return {
    user: (row: Row): AdapterUser => ({
      ...row,
      id: String(row.id),
      name: (row.name as string | null) ?? null,
      email: row.email as string,
      emailVerified: toDate(row.emailVerified),
      image: (row.image as string | null) ?? null,
    }),
    session: (row: Row): AdapterSession => {
      const { amr, createdAt, lastSeenAt, userAgent, fva, providerSessionProvider, providerSessionSub, providerSessionSid, ...rest } =
        linked(row)
      return {
        ...rest,
        ...(row.id === undefined ? {} : { id: String(row.id) }),
        sessionToken: row.sessionToken as string,
        expires: toDate(row.expires)!,
        // How the user signed in, after a second factor (ours, from the session_amr table).
        ...(typeof amr === 'string' ? { amr: amr.split(' ') } : {}),
        // Ours, from session_details (absent for a session another adapter created).
        ...(createdAt ? { createdAt: toDate(createdAt)! } : {}),
        ...(lastSeenAt ? { lastSeenAt: toDate(lastSeenAt)! } : {}),
        ...(userAgent !== undefined && createdAt ? { userAgent: (userAgent as string | null) ?? null } : {}),
        ...(typeof fva === 'string' ? { fva: parseFactorTimes(fva) } : {}),
        // Ours, from session_provider (absent for a session signed in otherwise).
        ...(typeof providerSessionProvider === 'string'
          ? {
              providerSession: {
                provider: providerSessionProvider,
                sub: String(providerSessionSub),
                ...(typeof providerSessionSid === 'string' ? { sid: providerSessionSid } : {}),
              },
            }
          : {}),
      }
    },
    secondFactor: (row: Row): AdapterSecondFactor => ({
      id: String(row.id),
      userId: String(linked(row).userId),
      type: row.type as AdapterSecondFactor['type'],
      secret: row.secret as string,
      createdAt: toDate(row.createdAt)!,
    }),
    account: (row: Row): AdapterAccount =>
      withoutNulls({ ...linked(row), id: String(row.id), expires_at: toNumber(row.expires_at) }) as unknown as AdapterAccount,
    authenticator: (row: Row): AdapterAuthenticator => ({
      ...linked(row),
      credentialID: row.credentialID as string,
      providerAccountId: row.providerAccountId as string,
      credentialPublicKey: row.credentialPublicKey as string,
      counter: Number(row.counter),
      credentialDeviceType: row.credentialDeviceType as string,
      credentialBackedUp: Boolean(row.credentialBackedUp),
      transports: (row.transports as string | null) ?? null,
    }),
  }
}

const toToken = (row: Row): VerificationToken => ({
  identifier: row.identifier as string,
  token: row.token as string,
  expires: toDate(row.expires)!,
})

/** The session_provider columns a session is read with, named apart from the session's own. */
const PROVIDER_SESSION_COLUMNS =
  'p.provider AS "providerSessionProvider", p.sub AS "providerSessionSub", p.sid AS "providerSessionSid"'

/** A verification token's own columns (the hosted layout's record id is not part of it). */
const TOKEN = 'identifier, expires, token'

/** An account's columns after the link, in the order of the account inserts. */
function accountValues(account: AdapterAccount): unknown[] {
  return [
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
  ]
}

/**
 * Creates the adapter over a PGlite or `pg` client. Run {@link PostgresAdapter.migrate} once.
 *
 * @throws {TypeError} when `tablePrefix` is not letters, digits and underscores.
 */
export function PostgresAdapter(
  client: Queryable,
  options: PostgresAdapterOptions = {},
): PostgresAdapter {
  const layout = options.layout ?? 'pg-adapter'
  const t = tableNames(options.tablePrefix, layout)
  const to = converters(t.userLink)
  const link = `"${t.userLink}"`
  const rows = async (text: string, params: unknown[] = []) => (await client.query(text, params)).rows
  const first = async (text: string, params: unknown[] = []) => (await rows(text, params))[0] ?? null
  /**
   * `statement` (an INSERT or UPDATE … RETURNING *) with, in the hosted layout, the matching
   * link-table write in the same statement, so the row and its link exist together or not at all.
   */
  const withLink = (statement: string, table: string | null, column: 'account' | 'session', kind: 'insert' | 'update') => {
    if (!table) return statement
    const write =
      kind === 'insert'
        ? `INSERT INTO ${table} (${column}, "user") SELECT id, "user" FROM changed`
        : `UPDATE ${table} l SET "user" = changed."user" FROM changed WHERE l.${column} = changed.id`
    return `WITH changed AS (${statement}), linked AS (${write}) SELECT * FROM changed`
  }
  /** Keeps the sealed DPoP key pair `account`'s tokens are bound to, when it has one. */
  const keepAccountKey = async (account: Pick<AdapterAccount, 'provider' | 'providerAccountId'> & { dpop_key?: unknown }) => {
    if (typeof account.dpop_key !== 'string') return
    await rows(
      `INSERT INTO ${t.accountKeys} (account, dpop_key)
       SELECT id, $3 FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2
       ON CONFLICT (account) DO UPDATE SET dpop_key = EXCLUDED.dpop_key`,
      [account.provider, account.providerAccountId, account.dpop_key],
    )
  }

  return {
    ...postgresOrganizations(client, t),
    async migrate() {
      // Several statements in one simple query run as one implicit transaction; the advisory lock
      // it takes makes two processes booting at once queue instead of racing on CREATE TABLE IF
      // NOT EXISTS (which is not atomic against itself in PostgreSQL).
      const script = `SELECT pg_advisory_xact_lock(hashtext('${t.lock}'));
${schema(options.tablePrefix, layout)}
${organizationsSchema(t)}
${apiKeysTable(t)}
${serviceAccountsTable(t)}`
      if (client.exec) await client.exec(script)
      else await client.query(script)
    },

    async createUser(user) {
      const row = await first(
        `INSERT INTO ${t.users} (id, name, email, "emailVerified", image)
         VALUES (COALESCE($1, gen_random_uuid()::text), $2, $3, $4, $5) RETURNING *`,
        [user.id ?? null, user.name ?? null, user.email, user.emailVerified ?? null, user.image ?? null],
      )
      return to.user(row!)
    },
    async getUser(id) {
      const row = await first(`SELECT * FROM ${t.users} WHERE id = $1`, [id])
      return row ? to.user(row) : null
    },
    async getUserByEmail(email) {
      const row = await first(`SELECT * FROM ${t.users} WHERE email = $1`, [email])
      return row ? to.user(row) : null
    },
    async getUserByAccount({ provider, providerAccountId }) {
      const row = await first(
        `SELECT u.* FROM ${t.users} u JOIN ${t.accounts} a ON a.${link} = u.id
         WHERE a.provider = $1 AND a."providerAccountId" = $2`,
        [provider, providerAccountId],
      )
      return row ? to.user(row) : null
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
      return to.user(row)
    },
    async deleteUser(userId) {
      const row = await first(
        `WITH steps AS (DELETE FROM ${t.completedSteps} WHERE ${link} = $1) DELETE FROM ${t.users} WHERE id = $1 RETURNING *`,
        [userId],
      )
      return row ? to.user(row) : null
    },
    async createUserAndAccount(user, account) {
      // One statement, so one transaction: the user and its account (and, in the hosted layout,
      // the link row) exist together or not at all, whatever happens to the process meanwhile.
      const linkRow = t.usersAccounts
        ? `, linked AS (INSERT INTO ${t.usersAccounts} (account, "user") SELECT id, "user" FROM account)`
        : ''
      const row = await first(
        `WITH created AS (
           INSERT INTO ${t.users} (id, name, email, "emailVerified", image)
           VALUES (COALESCE($1, gen_random_uuid()::text), $2, $3, $4, $5) RETURNING *
         ), account AS (
           INSERT INTO ${t.accounts} (${link}, type, provider, "providerAccountId", refresh_token,
             access_token, expires_at, id_token, scope, session_state, token_type)
           SELECT id, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15 FROM created RETURNING *
         )${linkRow}
         SELECT (SELECT row_to_json(created) FROM created) AS "user", (SELECT row_to_json(account) FROM account) AS account`,
        [
          user.id ?? null,
          user.name ?? null,
          user.email,
          user.emailVerified ?? null,
          user.image ?? null,
          ...accountValues(account),
        ],
      )
      await keepAccountKey(account)
      return { user: to.user(row!.user as Row), account: to.account(row!.account as Row) }
    },
    async linkAccount(account) {
      const row = await first(
        withLink(
          `INSERT INTO ${t.accounts} (${link}, type, provider, "providerAccountId", refresh_token,
             access_token, expires_at, id_token, scope, session_state, token_type)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
          t.usersAccounts,
          'account',
          'insert',
        ),
        [
          account.userId,
          ...accountValues(account),
        ],
      )
      await keepAccountKey(account)
      return to.account(row!)
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
      if (row) await keepAccountKey(account)
      return row ? to.account(row) : null
    },
    async listAccounts(userId) {
      const accounts = await rows(
        `SELECT a.*, k.dpop_key FROM ${t.accounts} a LEFT JOIN ${t.accountKeys} k ON k.account = a.id WHERE a.${link} = $1`,
        [userId],
      )
      return accounts.map(to.account)
    },
    async unlinkAccount({ provider, providerAccountId }) {
      const row = await first(
        `DELETE FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2 RETURNING *`,
        [provider, providerAccountId],
      )
      return row ? to.account(row) : undefined
    },
    async createSession({ sessionToken, userId, expires, amr, createdAt, userAgent, fva, providerSession }) {
      // One statement, so one transaction: the session with its link (hosted layout), its amr and
      // its details, or nothing. A session without its details would escape the absolute lifetime.
      const params: unknown[] = [sessionToken, userId, expires]
      const parts = [`s AS (INSERT INTO ${t.sessions} ("sessionToken", ${link}, expires) VALUES ($1, $2, $3) RETURNING *)`]
      if (t.usersSessions) parts.push(`l AS (INSERT INTO ${t.usersSessions} (session, "user") SELECT id, "user" FROM s)`)
      if (amr) {
        params.push(amr.join(' '))
        parts.push(`a AS (INSERT INTO ${t.sessionAmr} ("sessionToken", amr) SELECT "sessionToken", $${params.length} FROM s)`)
      }
      // Lifecycle details only when the engine gives them: the row is otherwise exactly what was given.
      if (providerSession) {
        params.push(providerSession.provider, providerSession.sub, providerSession.sid ?? null)
        const [provider, sub, sid] = [params.length - 2, params.length - 1, params.length]
        parts.push(
          `p AS (INSERT INTO ${t.sessionProvider} ("sessionToken", provider, sub, sid) SELECT "sessionToken", $${provider}, $${sub}, $${sid} FROM s)`,
        )
      }
      if (createdAt) {
        params.push(createdAt, userAgent ?? null, fva ? JSON.stringify(fva) : null)
        const [at, agent, proofs] = [params.length - 2, params.length - 1, params.length]
        parts.push(
          `d AS (INSERT INTO ${t.sessionDetails} ("sessionToken", "createdAt", "lastSeenAt", "userAgent", fva)
           SELECT "sessionToken", $${at}, $${at}, $${agent}, $${proofs} FROM s RETURNING "createdAt", "lastSeenAt", "userAgent", fva)`,
        )
      }
      const details = createdAt ? ', d."createdAt", d."lastSeenAt", d."userAgent", d.fva' : ''
      const row = await first(`WITH ${parts.join(', ')} SELECT s.*${details} FROM s${createdAt ? ', d' : ''}`, params)
      return to.session({
        ...row!,
        ...(amr ? { amr: amr.join(' ') } : {}),
        ...(providerSession
          ? {
              providerSessionProvider: providerSession.provider,
              providerSessionSub: providerSession.sub,
              providerSessionSid: providerSession.sid ?? null,
            }
          : {}),
      })
    },
    async getSessionAndUser(sessionToken) {
      // Two rows that both have an `id`: one JOIN would have to rename columns it cannot know.
      const row = await first(
        `SELECT s.*, a.amr, d."createdAt", d."lastSeenAt", d."userAgent", d.fva, ${PROVIDER_SESSION_COLUMNS} FROM ${t.sessions} s
         LEFT JOIN ${t.sessionAmr} a ON a."sessionToken" = s."sessionToken"
         LEFT JOIN ${t.sessionDetails} d ON d."sessionToken" = s."sessionToken"
         LEFT JOIN ${t.sessionProvider} p ON p."sessionToken" = s."sessionToken"
         WHERE s."sessionToken" = $1`,
        [sessionToken],
      )
      if (!row) return null
      const session = to.session(row)
      const user = await first(`SELECT * FROM ${t.users} WHERE id = $1`, [session.userId])
      return user ? { session, user: to.user(user) } : null
    },
    async updateSession(session) {
      const row = await first(
        withLink(
          `UPDATE ${t.sessions} SET expires = COALESCE($2, expires), ${link} = COALESCE($3, ${link})
           WHERE "sessionToken" = $1 RETURNING *`,
          t.usersSessions,
          'session',
          'update',
        ),
        [session.sessionToken, session.expires ?? null, session.userId ?? null],
      )
      if (row && session.expires) {
        // An extension is a sign of life: it moves the session's last-seen time.
        await rows(`UPDATE ${t.sessionDetails} SET "lastSeenAt" = now() WHERE "sessionToken" = $1`, [session.sessionToken])
      }
      // A re-authentication: the same row, with the factor's new verification time.
      const fva = row && session.fva
        ? await first(`UPDATE ${t.sessionDetails} SET fva = $2 WHERE "sessionToken" = $1 RETURNING fva`, [
            session.sessionToken,
            JSON.stringify(session.fva),
          ])
        : undefined
      return row ? to.session({ ...row, ...fva }) : null
    },
    async getCompletedSteps(userId) {
      const found = await rows(`SELECT "stepId", version FROM ${t.completedSteps} WHERE ${link} = $1 ORDER BY "completedAt"`, [userId])
      return found.map((row) => ({ stepId: row.stepId as string, version: row.version as string }))
    },
    async recordCompletedStep(userId, stepId, version) {
      await rows(
        `INSERT INTO ${t.completedSteps} (${link}, "stepId", version) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [userId, stepId, version],
      )
    },
    async listSessions(userId) {
      const found = await rows(
        `SELECT s.*, a.amr, d."createdAt", d."lastSeenAt", d."userAgent", d.fva, ${PROVIDER_SESSION_COLUMNS} FROM ${t.sessions} s
         LEFT JOIN ${t.sessionAmr} a ON a."sessionToken" = s."sessionToken"
         LEFT JOIN ${t.sessionDetails} d ON d."sessionToken" = s."sessionToken"
         LEFT JOIN ${t.sessionProvider} p ON p."sessionToken" = s."sessionToken"
         WHERE s."${t.userLink}" = $1 ORDER BY d."createdAt" NULLS FIRST`,
        [userId],
      )
      return found.map(to.session)
    },
    async deleteSession(sessionToken) {
      const row = await first(`DELETE FROM ${t.sessions} WHERE "sessionToken" = $1 RETURNING *`, [sessionToken])
      return row ? to.session(row) : null
    },
    async deleteProviderSessions({ provider, sid, sub }) {
      // One statement: the sessions and (cascading) their details go together.
      const deleted = await rows(
        `DELETE FROM ${t.sessions} WHERE "sessionToken" IN (
           SELECT "sessionToken" FROM ${t.sessionProvider}
           WHERE provider = $1 AND ($2::text IS NULL OR sid = $2) AND ($3::text IS NULL OR sub = $3)
         ) RETURNING "sessionToken"`,
        [provider, sid ?? null, sub ?? null],
      )
      return deleted.length
    },
    async createVerificationToken(token) {
      const row = await first(
        `INSERT INTO ${t.verificationTokens} (identifier, expires, token) VALUES ($1, $2, $3) RETURNING ${TOKEN}`,
        [token.identifier, token.expires, token.token],
      )
      return toToken(row!)
    },
    async useVerificationToken({ identifier, token }) {
      // DELETE … RETURNING consumes the token atomically: of two concurrent uses, one gets it.
      const row = await first(
        `DELETE FROM ${t.verificationTokens} WHERE identifier = $1 AND token = $2 RETURNING ${TOKEN}`,
        [identifier, token],
      )
      return row ? toToken(row) : null
    },
    async getAccount(providerAccountId, provider) {
      const row = await first(
        `SELECT * FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2`,
        [provider, providerAccountId],
      )
      return row ? to.account(row) : null
    },
    async getAuthenticator(credentialID) {
      const row = await first(`SELECT * FROM ${t.authenticators} WHERE "credentialID" = $1`, [credentialID])
      return row ? to.authenticator(row) : null
    },
    async createAuthenticator(a) {
      const row = await first(
        `INSERT INTO ${t.authenticators} ("credentialID", ${link}, "providerAccountId", "credentialPublicKey",
           counter, "credentialDeviceType", "credentialBackedUp", transports)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
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
      return to.authenticator(row!)
    },
    async listAuthenticatorsByUserId(userId) {
      return (await rows(`SELECT * FROM ${t.authenticators} WHERE ${link} = $1`, [userId])).map(to.authenticator)
    },
    async updateAuthenticatorCounter(credentialID, counter) {
      const row = await first(
        `UPDATE ${t.authenticators} SET counter = $2 WHERE "credentialID" = $1 RETURNING *`,
        [credentialID, counter],
      )
      if (!row) throw new Error(`authenticator ${credentialID} does not exist`)
      return to.authenticator(row)
    },
    async listSecondFactors(userId) {
      return (await rows(`SELECT * FROM ${t.secondFactors} WHERE ${link} = $1 ORDER BY "createdAt"`, [userId])).map(
        to.secondFactor,
      )
    },
    async createSecondFactor(factor) {
      const row = await first(
        `INSERT INTO ${t.secondFactors} (id, ${link}, type, secret, "createdAt") VALUES ($1, $2, $3, $4, $5) RETURNING *`,
        [factor.id, factor.userId, factor.type, factor.secret, factor.createdAt],
      )
      return to.secondFactor(row!)
    },
    async updateSecondFactor({ id, secret }) {
      const row = await first(`UPDATE ${t.secondFactors} SET secret = $2 WHERE id = $1 RETURNING *`, [id, secret])
      return row ? to.secondFactor(row) : null
    },
    async spendBackupCode({ id, hash }) {
      // One statement: a concurrent spend of the same row waits for this one and re-checks the
      // WHERE on the row it left, so two codes are both removed and one code is removed once.
      const row = await first(
        `UPDATE ${t.secondFactors}
            SET secret = array_to_string(array_remove(string_to_array(secret, ' '), $2::text), ' ')
          WHERE id = $1 AND type = 'backup-codes' AND $2::text = ANY (string_to_array(secret, ' '))
      RETURNING id`,
        [id, hash],
      )
      return row !== null
    },
    async deleteSecondFactor(id) {
      await rows(`DELETE FROM ${t.secondFactors} WHERE id = $1`, [id])
    },
    ...passwordMethods(t, link, first, rows),
    ...postgresApiKeyMethods(client, t),
    ...postgresServiceAccountMethods(client, t),
  }
}

/** The password methods (see `core/flows/password/adapter.ts`) over the layout's passwords table. */
function passwordMethods(
  t: Tables,
  link: string,
  first: (text: string, params: unknown[]) => Promise<Record<string, unknown> | null>,
  rows: (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>,
): PasswordMethods {
  return {
    async getUserPassword(userId) {
      const row = await first(`SELECT hash FROM ${t.passwords} WHERE ${link} = $1`, [userId])
      return row ? String(row.hash) : null
    },
    async setUserPassword(userId, hash) {
      if (hash === null) {
        await rows(`DELETE FROM ${t.passwords} WHERE ${link} = $1`, [userId])
        return
      }
      await rows(
        `INSERT INTO ${t.passwords} (${link}, hash, "updatedAt") VALUES ($1, $2, now())
         ON CONFLICT (${link}) DO UPDATE SET hash = EXCLUDED.hash, "updatedAt" = EXCLUDED."updatedAt"`,
        [userId, hash],
      )
    },
  }
}
