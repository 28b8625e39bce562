/** The password adapter contract on the memory adapter and the PostgreSQL adapter (PGlite, both layouts). */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll } from 'vitest'
import { MemoryAdapter } from '../../adapters/memory.js'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { passwordAdapterContract } from './adapter-contract.js'

const memory = MemoryAdapter()
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

passwordAdapterContract('memory', () => memory)
passwordAdapterContract('PostgreSQL on PGlite', () => pg)
passwordAdapterContract('PostgreSQL on PGlite, hosted layout', () => hosted)
