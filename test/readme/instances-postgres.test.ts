/**
 * README `instances-postgres.ts`: the adapter and the store share one PostgreSQL server; a sign-in
 * on one instance is a database session the other lists and revokes, and both count one limit.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type pg from 'pg'
import type { PostgresAuthStore } from '../../stores/postgres.js'
import { listSessions, revokeAllSessions } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, SECRET } from '../fixtures/http.js'
import { endPool, startPostgres } from '../fixtures/postgres.js'
import { loadSnippet } from './snippet.js'

const server = await startPostgres()
const url = await server.createDatabase('readme_instances')
const { config, store, pool } = await loadSnippet<{ config: AuthConfig; store: PostgresAuthStore; pool: pg.Pool }>(
  'instances-postgres.ts',
  { AUTH_SECRET: SECRET, DATABASE_URL: url },
)
// The README's pool has no `error` listener: an idle connection the server ends (57P01) would be
// thrown as an uncaught exception. The test owns the pool's lifetime, so it listens, and it ends the
// pool with every connection closed before it stops the server.
const poolErrors: Error[] = []
pool.on('error', (error) => poolErrors.push(error))
afterAll(async () => {
  await endPool(pool)
  await server.stop()
})

describe('README instances-postgres.ts', () => {
  it('lists the database sessions of a user, with their sign-in time, and revokes them all', async () => {
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const session = (await client.session()).body as { user: { email: string } }
    expect(session.user.email).toBe('alice@example.com')
    const userId = (await config.adapter!.getUserByEmail!('alice@example.com'))!.id
    const listed = await listSessions(config, userId)
    expect(listed).toHaveLength(1)
    expect(Date.parse(listed[0]!.createdAt!)).toBeGreaterThan(Date.now() - 60_000)
    await revokeAllSessions(config, userId)
    expect((await client.session()).body).toBeNull()
  })

  it('keeps claims in the shared store', async () => {
    expect(await store.claim('readme:once', 60)).toBe(true)
    expect(await store.claim('readme:once', 60)).toBe(false)
  })

  it('loses no pooled connection while it runs', () => {
    expect(poolErrors).toEqual([])
  })
})
