/**
 * README `database.ts`: the embedded PostgreSQL is created in the folder the environment names,
 * and a sign-in there is a database session whose row the adapter finds.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { PostgresAdapter } from '../../adapters/postgres.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, SECRET } from '../fixtures/http.js'
import { loadSnippet } from './snippet.js'

const dir = mkdtempSync(join(tmpdir(), 'authchart-readme-db-'))
const { adapter, config } = await loadSnippet<{ adapter: PostgresAdapter; config: AuthConfig }>('database.ts', {
  AUTH_SECRET: SECRET,
  AUTH_DATA_DIR: join(dir, 'auth-data'),
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('README database.ts', () => {
  it('keeps the database in the configured folder and signs in with a database session', async () => {
    expect(existsSync(join(dir, 'auth-data'))).toBe(true)
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const token = client.jar.get('__Secure-authjs.session-token')!
    expect(token).toMatch(/^[0-9a-f-]{36}$/)
    const stored = await adapter.getSessionAndUser(token)
    expect(stored?.user).toMatchObject({ name: 'Alice', email: 'alice@example.com' })
    expect((await client.session()).body).toMatchObject({ user: { name: 'Alice' } })
  })
})
