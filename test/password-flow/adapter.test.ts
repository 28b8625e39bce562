/** The password adapter contract on the PostgreSQL adapter (PGlite, both layouts); the memory adapter's is `adapter-memory.test.ts`. */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { passwordAdapterContract } from './adapter-contract.js'

const db = new PGlite()
const pg = PostgresAdapter(db, { tablePrefix: 'pw' })
const hosted = PostgresAdapter(db, { layout: 'hosted', tablePrefix: 'pwhosted' })

beforeAll(async () => {
  await pg.migrate()
  await hosted.migrate()
})
afterAll(async () => {
  await db.close()
})

passwordAdapterContract('PostgreSQL on PGlite', () => pg)
passwordAdapterContract('PostgreSQL on PGlite, hosted layout', () => hosted)
