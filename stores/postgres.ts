/// <reference path="../core/deep-imports.d.ts" />
/**
 * A shared {@link AuthStore} in PostgreSQL: on a server through `pg` (`Pool` or `Client`) or in an
 * embedded PGlite, the same database object the SQL adapter takes. Every instance that shares the
 * database shares the claims, counters, limits and values.
 *
 * ```ts
 * import pg from 'pg'
 * import { postgresAuthStore } from 'authchart/stores/postgres'
 *
 * const store = postgresAuthStore(new pg.Pool({ connectionString: process.env.DATABASE_URL }))
 * await store.migrate()
 * ```
 *
 * Its tables (`authchart_limits`, `authchart_values`, `authchart_sets`, with the adapter's
 * `tablePrefix` when given) are created by its own `migrate()`, idempotent and safe to run from every instance at
 * start-up; the adapter's `migrate()` does not touch them, so a store can live in another database.
 *
 * @module
 */
// One file per limiter: the package index requires `cluster`, which an ESM bundle cannot load.
import RateLimiterPostgres from 'rate-limiter-flexible/lib/RateLimiterPostgres.js'
import type { Queryable } from '../adapters/postgres.js'
import { limiterStore, type AuthStore, type ValueBackend } from '../core/store/index.js'

/** Options of {@link postgresAuthStore}. */
export interface PostgresAuthStoreOptions {
  /** Prefix of the table names (letters, digits and underscores), as the adapter's `tablePrefix`. */
  tablePrefix?: string
}

/** The store with its schema migration. */
export interface PostgresAuthStore extends AuthStore {
  /** Creates the store's tables if missing. Idempotent, and safe to run concurrently. */
  migrate(): Promise<void>
}

/** How often rows past their time are deleted (lazily, on a later write: no timer). */
const SWEEP_EVERY_MS = 5 * 60_000

/**
 * The store's table names (quoted).
 *
 * @throws {TypeError} when `prefix` is not letters, digits and underscores (it is spliced into SQL).
 */
function storeTables(prefix: string | undefined) {
  // Stryker disable next-line ConditionalExpression: eq#store-postgres-prefix-undefined
  if (prefix !== undefined && !/^[a-z_][a-z0-9_]*$/i.test(prefix)) {
    throw new TypeError(`tablePrefix must be letters, digits and underscores, got "${prefix}"`)
  }
  const p = prefix ? `${prefix}_` : ''
  return {
    limits: `${p}authchart_limits`,
    values: `"${p}authchart_values"`,
    sets: `"${p}authchart_sets"`,
    // Stryker disable next-line StringLiteral: eq#store-postgres-lock-name
    lock: `${p}authchart_store_schema`,
  }
}

function postgresValues(db: Queryable, table: string, setTable: string): ValueBackend {
  let sweptAt = 0
  let setsSweptAt = 0
  return {
    async addToSet(key, member, ttlSeconds) {
      const now = Date.now()
      // One statement: a member added twice keeps the later expiry.
      await db.query(
        `INSERT INTO ${setTable} (key, member, expires) VALUES ($1, $2, $3)
         ON CONFLICT (key, member) DO UPDATE SET expires = GREATEST(${setTable}.expires, EXCLUDED.expires)`,
        [key, member, now + ttlSeconds * 1000],
      )
      if (now - setsSweptAt < SWEEP_EVERY_MS) return
      setsSweptAt = now
      await db.query(`DELETE FROM ${setTable} WHERE expires <= $1`, [now])
    },
    async setMembers(key) {
      const { rows } = await db.query(`SELECT member FROM ${setTable} WHERE key = $1 AND expires > $2`, [key, Date.now()])
      return rows.map((row) => String(row.member))
    },
    async put(key, value, ttlSeconds) {
      const now = Date.now()
      await db.query(
        `INSERT INTO ${table} (key, value, expires) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires`,
        [key, value, now + ttlSeconds * 1000],
      )
      if (now - sweptAt < SWEEP_EVERY_MS) return
      sweptAt = now
      await db.query(`DELETE FROM ${table} WHERE expires <= $1`, [now])
    },
    async get(key) {
      const { rows } = await db.query(`SELECT value FROM ${table} WHERE key = $1 AND expires > $2`, [key, Date.now()])
      return rows[0] ? String(rows[0].value) : null
    },
    async getMany(keys) {
      const { rows } = await db.query(`SELECT key, value FROM ${table} WHERE key = ANY($1::text[]) AND expires > $2`, [keys, Date.now()])
      const found = new Map(rows.map((row) => [String(row.key), String(row.value)]))
      return keys.map((key) => found.get(key) ?? null)
    },
    async delete(key) {
      await db.query(`DELETE FROM ${table} WHERE key = $1`, [key])
      await db.query(`DELETE FROM ${setTable} WHERE key = $1`, [key])
    },
  }
}

/**
 * A store in PostgreSQL (`pg` or PGlite). Counting is rate-limiter-flexible's `RateLimiterPostgres`
 * (one atomic `INSERT … ON CONFLICT … RETURNING` per attempt); values are rows with an expiry.
 * Call `migrate()` once before use.
 *
 * @throws {TypeError} when `tablePrefix` is not letters, digits and underscores.
 * @see https://github.com/animir/node-rate-limiter-flexible/wiki/PostgreSQL
 */
export function postgresAuthStore(db: Queryable, options: PostgresAuthStoreOptions = {}): PostgresAuthStore {
  const tables = storeTables(options.tablePrefix)
  // RateLimiterPostgres sends pg's config-object form, query({ text, values, name }); PGlite only
  // takes query(text, params). This shim is the whole difference, so both run the library's SQL.
  const client = {
    query: (q: { text: string; values?: unknown[] }) => db.query(q.text, q.values),
  }
  let limiters = 0
  const store = limiterStore({
    limiter: (points) =>
      new RateLimiterPostgres({
        storeClient: client,
        // Stryker disable next-line StringLiteral: eq#store-postgres-client-type
        storeType: 'client',
        tableName: tables.limits,
        tableCreated: true,
        points,
        duration: 1,
        keyPrefix: 'authchart',
        // One limiter sweeps rows that expired an hour ago (every 5 minutes, an unref'd timer).
        // Stryker disable next-line UpdateOperator: eq#store-postgres-one-sweeper
        clearExpiredByTimeout: limiters++ === 0,
      }),
    forget: async (key) => {
      await db.query(`DELETE FROM "${tables.limits}" WHERE key = $1`, [`authchart:${key}`])
    },
    values: postgresValues(db, tables.values, tables.sets),
  })
  return {
    ...store,
    async migrate() {
      // One simple query is one implicit transaction; its advisory lock queues instances booting at
      // once instead of letting CREATE TABLE IF NOT EXISTS race against itself.
      const sql = `SELECT pg_advisory_xact_lock(hashtext('${tables.lock}'));
CREATE TABLE IF NOT EXISTS "${tables.limits}" (
  key VARCHAR(255) PRIMARY KEY,
  points INTEGER NOT NULL DEFAULT 0,
  expire BIGINT
);
CREATE TABLE IF NOT EXISTS ${tables.values} (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  expires BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS ${tables.sets} (
  key TEXT NOT NULL,
  member TEXT NOT NULL,
  expires BIGINT NOT NULL,
  PRIMARY KEY (key, member)
);`
      if (db.exec) await db.exec(sql)
      else await db.query(sql)
    },
  }
}
