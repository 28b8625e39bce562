/**
 * Database sessions end to end on a real PostgreSQL server: the published `@auth/pg-adapter`
 * under our engine (a third-party adapter plugs in unchanged), and concurrent requests on one
 * session through our own adapter.
 */
import AuthjsPostgresAdapter from '@auth/pg-adapter'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { Auth } from '../../core/index.js'
import type { Adapter } from '../../core/adapters.js'
import Credentials from '../../providers/credentials.js'
import { authRequest, Client, CookieJar, SECRET, spyLogger } from '../fixtures/http.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'

/** The schema @auth/pg-adapter documents (integer ids, as its users have them). */
const AUTHJS_PG_SCHEMA = `
CREATE TABLE verification_token (identifier TEXT NOT NULL, expires TIMESTAMPTZ NOT NULL, token TEXT NOT NULL, PRIMARY KEY (identifier, token));
CREATE TABLE accounts (id SERIAL, "userId" INTEGER NOT NULL, type VARCHAR(255) NOT NULL, provider VARCHAR(255) NOT NULL,
  "providerAccountId" VARCHAR(255) NOT NULL, refresh_token TEXT, access_token TEXT, expires_at BIGINT, id_token TEXT,
  scope TEXT, session_state TEXT, token_type TEXT, PRIMARY KEY (id));
CREATE TABLE sessions (id SERIAL, "userId" INTEGER NOT NULL, expires TIMESTAMPTZ NOT NULL, "sessionToken" VARCHAR(255) NOT NULL, PRIMARY KEY (id));
CREATE TABLE users (id SERIAL, name VARCHAR(255), email VARCHAR(255), "emailVerified" TIMESTAMPTZ, image TEXT, PRIMARY KEY (id));`

let server: PostgresServer
const pools: pg.Pool[] = []

async function pool(database: string): Promise<pg.Pool> {
  const created = new pg.Pool({ connectionString: await server.createDatabase(database), max: 20 })
  created.on('error', () => {})
  pools.push(created)
  return created
}

function config(adapter: Adapter, extra: Record<string, unknown> = {}) {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    adapter,
    providers: [
      Credentials({
        credentials: { email: {}, password: {} },
        // No id: the user lives in the database, which assigns one.
        authorize: ({ email, password }) =>
          password === 'wonderland' ? { email: String(email), name: 'Alice' } : null,
      }),
    ],
    ...extra,
  }
}

beforeAll(async () => {
  server = await startPostgres()
}, 60_000)

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()))
  await server?.stop()
})

describe('@auth/pg-adapter under authchart', () => {
  it('signs in with a database session, reads it, and signs out', async () => {
    const db = await pool('authjs_pg')
    await db.query(AUTHJS_PG_SCHEMA)
    const client = new Client(config(AuthjsPostgresAdapter(db) as unknown as Adapter))
    const signIn = await client.signIn({ email: 'alice@example.com', password: 'wonderland' })
    expect(signIn.headers.get('location')).toBe('https://authchart.test')
    const token = client.jar.get(SESSION_COOKIE)!
    const { rows } = await db.query('SELECT s."userId", u.email FROM sessions s JOIN users u ON u.id = s."userId" WHERE "sessionToken" = $1', [token])
    expect(rows).toEqual([{ userId: expect.any(Number), email: 'alice@example.com' }])

    expect((await client.session()).body).toMatchObject({ user: { name: 'Alice', email: 'alice@example.com' } })

    await client.signOut()
    expect((await db.query('SELECT 1 FROM sessions WHERE "sessionToken" = $1', [token])).rows).toEqual([])
    expect((await client.session()).body).toBeNull()
  })

  it('signs the same user in twice without creating a second user row', async () => {
    const db = await pool('authjs_pg_twice')
    await db.query(AUTHJS_PG_SCHEMA)
    const adapter = AuthjsPostgresAdapter(db) as unknown as Adapter
    await new Client(config(adapter)).signIn({ email: 'bob@example.com', password: 'wonderland' })
    await new Client(config(adapter)).signIn({ email: 'bob@example.com', password: 'wonderland' })
    expect((await db.query('SELECT count(*)::int AS n FROM users')).rows[0].n).toBe(1)
    expect((await db.query('SELECT count(*)::int AS n FROM sessions')).rows[0].n).toBe(2)
  })
})

describe("the session callback sees the stored session's id, as under Auth.js", () => {
  // The callback exposes what it was given: `session.id` comes from the row the adapter read.
  const exposeId = { callbacks: { session: ({ session }: { session: { id?: unknown } }) => ({ ...session, rowId: session.id ?? null }) } }

  it.each([
    ['authchart', async (db: pg.Pool) => {
      const adapter = PostgresAdapter(db)
      await adapter.migrate()
      return adapter as Adapter
    }],
    ['@auth/pg-adapter', async (db: pg.Pool) => {
      await db.query(AUTHJS_PG_SCHEMA)
      return AuthjsPostgresAdapter(db) as unknown as Adapter
    }],
  ])('with the %s adapter', async (name, makeAdapter) => {
    const db = await pool(`session_id_${name.replace(/\W/g, '_')}`)
    const client = new Client(config(await makeAdapter(db), exposeId))
    await client.signIn({ email: 'erin@example.com', password: 'wonderland' })
    const token = client.jar.get(SESSION_COOKIE)!
    const { rows } = await db.query('SELECT id FROM sessions WHERE "sessionToken" = $1', [token])
    expect(rows).toHaveLength(1)
    const body = (await client.session()).body as { rowId: unknown; user: { email: string } }
    expect(body.user.email).toBe('erin@example.com')
    expect(body.rowId).toBe(rows[0].id)
  })
})

describe('concurrent requests on one database session (PostgreSQL)', () => {
  it('serves 50 concurrent GET /session without losing or duplicating the row', async () => {
    const db = await pool('concurrency_reads')
    const adapter = PostgresAdapter(db)
    await adapter.migrate()
    // updateAge 0: every read extends the row, the most write-heavy case.
    const cfg = config(adapter, { session: { updateAge: 0 } })
    const client = new Client(cfg)
    await client.signIn({ email: 'carol@example.com', password: 'wonderland' })
    const token = client.jar.get(SESSION_COOKIE)!
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: token } }), cfg),
      ),
    )
    const bodies = await Promise.all(responses.map((r) => r.json()))
    expect(bodies.every((b) => b?.user?.email === 'carol@example.com')).toBe(true)
    const { rows } = await db.query('SELECT expires FROM sessions WHERE "sessionToken" = $1', [token])
    expect(rows).toHaveLength(1)
    expect((await db.query('SELECT count(*)::int AS n FROM sessions')).rows[0].n).toBe(1)
    // Every response's cookie names the one row.
    expect(responses.every((r) => r.headers.getSetCookie().every((c) => c.includes(token)))).toBe(true)
  })

  it('leaves exactly one valid session cookie after two racing updates', async () => {
    const db = await pool('concurrency_updates')
    const adapter = PostgresAdapter(db)
    await adapter.migrate()
    const cfg = config(adapter, { session: { updateAge: 0 } })
    const client = new Client(cfg)
    await client.signIn({ email: 'dave@example.com', password: 'wonderland' })
    const csrfToken = await client.csrfToken()
    const [a, b] = await Promise.all(
      ['dark', 'light'].map((theme) =>
        Auth(authRequest({ path: '/auth/session', json: { csrfToken, data: { theme } }, cookies: client.jar }), cfg),
      ),
    )
    const jar = new CookieJar(Object.fromEntries(client.jar.cookies))
    jar.store(a!).store(b!)
    const sessionCookies = [...jar.cookies.keys()].filter((name) => name.startsWith(SESSION_COOKIE))
    expect(sessionCookies).toEqual([SESSION_COOKIE])
    const after = await Auth(authRequest({ path: '/auth/session', cookies: jar }), cfg)
    expect((await after.json())?.user?.email).toBe('dave@example.com')
    expect((await db.query('SELECT count(*)::int AS n FROM sessions')).rows[0].n).toBe(1)
  })
})
