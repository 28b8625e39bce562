/**
 * An audit store on PostgreSQL (a server through `pg`, or PGlite): the `audit_events` table, its
 * own {@link PostgresAuditStore.migrate}, and a retention after which events are deleted. Pass it
 * as an audit sink; `GET {basePath}/audit` then lists a user's own events from it.
 *
 * ```ts
 * import { PostgresAuditStore } from 'authchart/adapters/postgres-audit'
 * import { auditTrail } from 'authchart/audit'
 *
 * const audit = PostgresAuditStore(pool, { retention: 90 * 24 * 3600 })
 * await audit.migrate()
 * Auth(request, { ...config, audit: auditTrail({ sink: audit }) })
 * ```
 *
 * @module
 */
import type { AuditEvent, AuditStore } from '../core/audit/types.js'
import type { Queryable } from './postgres.js'

/** Options of {@link PostgresAuditStore}. */
export interface PostgresAuditStoreOptions {
  /** Prefix of the table name, as the adapter's `tablePrefix`: `app` gives `app_audit_events`. */
  tablePrefix?: string
  /** Seconds an event is kept (default 90 days); older ones are deleted as new ones arrive. */
  retention?: number
}

/** The store with its migration and pruning. */
export interface PostgresAuditStore extends AuditStore {
  /** Creates the table and its indexes if missing. Idempotent, and safe to run concurrently. */
  migrate(): Promise<void>
  /** Deletes events older than the retention; returns how many. */
  prune(now?: Date): Promise<number>
}

/** Ninety days, in seconds. */
export const DEFAULT_AUDIT_RETENTION = 90 * 24 * 3600

/** How often writes also prune, at most (milliseconds). */
const PRUNE_INTERVAL = 60 * 60 * 1000

/**
 * Creates the store over a PGlite or `pg` client. Run {@link PostgresAuditStore.migrate} once.
 *
 * @throws {TypeError} when `tablePrefix` is not letters, digits and underscores, or `retention`
 *   not a positive number of seconds.
 */
export function PostgresAuditStore(client: Queryable, options: PostgresAuditStoreOptions = {}): PostgresAuditStore {
  const prefix = options.tablePrefix ?? ''
  // Spliced into SQL: letters, digits and underscores only.
  if (prefix && !/^[a-z_][a-z0-9_]*$/i.test(prefix)) {
    throw new TypeError(`tablePrefix must be letters, digits and underscores, got "${prefix}"`)
  }
  const retention = options.retention ?? DEFAULT_AUDIT_RETENTION
  if (!Number.isFinite(retention) || retention <= 0) throw new TypeError('retention must be a positive number of seconds')
  const p = prefix ? `${prefix}_` : ''
  const table = `"${p}audit_events"`
  let prunedAt = 0

  const store: PostgresAuditStore = {
    async migrate() {
      const script = `SELECT pg_advisory_xact_lock(hashtext('${p}authchart_audit_schema'));
CREATE TABLE IF NOT EXISTS ${table} (
  id text PRIMARY KEY,
  time timestamptz NOT NULL,
  kind text NOT NULL,
  "userId" text,
  event jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS "${p}audit_events_user_time" ON ${table} ("userId", time DESC);
CREATE INDEX IF NOT EXISTS "${p}audit_events_time" ON ${table} (time);`
      if (client.exec) await client.exec(script)
      else await client.query(script)
    },

    async write(event: AuditEvent) {
      await client.query(`INSERT INTO ${table} (id, time, kind, "userId", event) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`, [
        event.id,
        event.time,
        event.kind,
        event.userId ?? null,
        JSON.stringify(event),
      ])
      const now = Date.now()
      if (now - prunedAt >= PRUNE_INTERVAL) {
        prunedAt = now
        await store.prune(new Date(now))
      }
    },

    async listForUser(userId: string, { limit }: { limit: number }) {
      const { rows } = await client.query(`SELECT event FROM ${table} WHERE "userId" = $1 ORDER BY time DESC, id LIMIT $2`, [userId, limit])
      return rows.map((row) => (typeof row.event === 'string' ? JSON.parse(row.event) : row.event) as AuditEvent)
    },

    async prune(now = new Date()) {
      const cutoff = new Date(now.getTime() - retention * 1000)
      const { rows } = await client.query(`WITH gone AS (DELETE FROM ${table} WHERE time < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`, [cutoff.toISOString()])
      return Number(rows[0]?.n ?? 0)
    },
  }
  return store
}
