/**
 * The PostgreSQL adapter as Bun and Deno run it: `pg` over TCP to the test's throwaway server.
 *
 * @module
 */
import pg from 'pg'
import { PostgresAdapter } from 'authchart/adapters/postgres'

/** An adapter on `url`, its tables created. */
export async function postgresAdapter(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  // An idle connection the server ends would otherwise be an uncaught error that kills the runtime.
  pool.on('error', (error) => console.error(`adapter pool: ${error.message}`))
  const adapter = PostgresAdapter(pool)
  await adapter.migrate()
  return adapter
}
