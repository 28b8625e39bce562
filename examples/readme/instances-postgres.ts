import pg from 'pg'
import type { AuthConfig } from 'authchart'
import { PostgresAdapter } from 'authchart/adapters/postgres'
import { postgresAuthStore } from 'authchart/stores/postgres'
import { config as credentials } from './auth.js'

// One pool for both: the adapter's tables and the store's live in the same database.
export const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
export const adapter = PostgresAdapter(pool)
export const store = postgresAuthStore(pool)
await adapter.migrate()
await store.migrate() // its own two tables; safe to run from every instance at start-up

export const config = {
  ...credentials,
  adapter,
  store,
  session: { strategy: 'database', absoluteMaxAge: 7 * 24 * 60 * 60 },
} satisfies AuthConfig
