import { PGlite } from '@electric-sql/pglite'
import type { AuthConfig } from 'authchart'
import { PostgresAdapter } from 'authchart/adapters/postgres'
import { config as credentials } from './auth.js'

// An embedded PostgreSQL in a folder; on a server: PostgresAdapter(new pg.Pool({ connectionString })).
export const adapter = PostgresAdapter(new PGlite(process.env.AUTH_DATA_DIR ?? './auth-data'))
await adapter.migrate() // creates the tables if missing

export const config = { ...credentials, adapter, session: { strategy: 'database' } } satisfies AuthConfig
