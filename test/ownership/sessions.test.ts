/**
 * Two users on one deployment, from the attacker's side: Alice, signed in, knows the public id of
 * one of Bob's sessions (a hash of its token) and uses every form of `/sessions` against it. She
 * never sees one of Bob's sessions, and never ends one, whatever her request's body names, on the
 * memory adapter, on PGlite and on a PostgreSQL server (database sessions), and with JWT sessions
 * over a shared store. The exported functions answer the same.
 */
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { Adapter } from '../../core/adapters.js'
import {
  listSessions,
  memoryAuthStore,
  revokeAllSessions,
  revokeOtherSessions,
  revokeSession,
  type AuthConfig,
  type SessionInfo,
} from '../../core/index.js'
import { routesOf, matchRoute } from '../../core/http/routes.js'
import Credentials from '../../providers/credentials.js'
import { Client, ORIGIN, SECRET, spyLogger, type AuthRequestInit } from '../fixtures/http.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { everyFlow } from '../../core/flows/catalogue.js'

/** Every route authchart ships: the built-in flows' and the optional features'. */
const routes = routesOf(everyFlow)

const HTML = { accept: 'text/html,application/xhtml+xml' }

/** Two people with passwords; `authorize` names each by a fixed account id. */
const PEOPLE = {
  alice: { id: 'alice', name: 'Alice', email: 'alice@example.com', password: 'wonderland' },
  bob: { id: 'bob', name: 'Bob', email: 'bob@example.com', password: 'builder' },
} as const
type Person = keyof typeof PEOPLE

function twoUserConfig(overrides: Partial<AuthConfig>): AuthConfig {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    providers: [
      Credentials({
        credentials: { username: {}, password: { type: 'password' } },
        authorize: ({ username, password }) => {
          const person = PEOPLE[String(username) as Person]
          if (!person || person.password !== password) return null
          return { id: person.id, name: person.name, email: person.email }
        },
      }),
    ],
    ...overrides,
  } as AuthConfig
}

/** A browser of `person`, signed in with its own user agent. */
async function browserOf(config: AuthConfig, person: Person, device: string): Promise<Client> {
  const client = new Client(config)
  const csrfToken = await client.csrfToken()
  const response = await client.send({
    path: '/callback/credentials',
    body: { csrfToken, username: person, password: PEOPLE[person].password },
    headers: { 'user-agent': `${person} ${device}` },
  })
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(ORIGIN)
  return client
}

async function signedInAs(client: Client): Promise<string | null> {
  const body = (await client.session()).body as { user?: { email?: string } } | null
  return body?.user?.email ?? null
}

async function listed(client: Client): Promise<SessionInfo[]> {
  const response = await client.send({ path: '/sessions' })
  expect(response.status).toBe(200)
  return (await response.json()) as SessionInfo[]
}

async function revoke(client: Client, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return client.send({ path: '/sessions', body: { ...fields, csrfToken: await client.csrfToken() }, headers })
}

/**
 * Fields a request might name an owner with. An attacker adds them all; a handler that takes the
 * owner from any of them ends Bob's session.
 */
const OWNER_FIELDS = ['userId', 'user', 'user_id', 'userid', 'owner', 'ownerId', 'uid', 'sub', 'id_user', 'account']

interface Deployment {
  config: AuthConfig
  /** The stored user id of `person` (created by its first sign-in). */
  userId(person: Person): Promise<string>
}

/** Alice on a laptop and a phone, Bob on his laptop, each signed in through `Auth`. */
async function aliceAndBob(deployment: Deployment) {
  const { config } = deployment
  const alice = await browserOf(config, 'alice', 'laptop')
  const alicePhone = await browserOf(config, 'alice', 'phone')
  const bob = await browserOf(config, 'bob', 'laptop')
  const [bobsSession] = await listed(bob)
  expect(bobsSession).toMatchObject({ userAgent: 'bob laptop', current: true })
  return { alice, alicePhone, bob, bobsId: bobsSession!.id, aliceId: await deployment.userId('alice'), bobId: await deployment.userId('bob') }
}

const servers: { postgres?: PostgresServer; pool?: pg.Pool; pglite?: PGlite } = {}
afterAll(async () => {
  await servers.pool?.end()
  await servers.postgres?.stop()
  await servers.pglite?.close()
})

/** One deployment per adapter, each with its own tables; sessions are database sessions. */
const ADAPTERS: [string, () => Promise<Adapter>][] = [
  ['the memory adapter', async () => MemoryAdapter(createMemoryStore())],
  [
    'the PostgreSQL adapter on PGlite',
    async () => {
      servers.pglite ??= new PGlite()
      const adapter = PostgresAdapter(servers.pglite, { tablePrefix: `owners_${Math.random().toString(36).slice(2, 8)}` })
      await adapter.migrate()
      return adapter
    },
  ],
  [
    'the PostgreSQL adapter on a PostgreSQL server',
    async () => {
      if (!servers.pool) {
        servers.postgres = await startPostgres()
        servers.pool = new pg.Pool({ connectionString: await servers.postgres.createDatabase('owners'), max: 8 })
        servers.pool.on('error', () => {})
      }
      const adapter = PostgresAdapter(servers.pool, { tablePrefix: `owners_${Math.random().toString(36).slice(2, 8)}` })
      await adapter.migrate()
      return adapter
    },
  ],
]

describe.each(ADAPTERS)("Alice and Bob's database sessions on %s", (_name, makeAdapter) => {
  let deployment: Deployment
  // A deployment of its own per test (new tables), so that each starts with no session at all.
  beforeEach(async () => {
    const adapter = await makeAdapter()
    deployment = {
      config: twoUserConfig({ adapter, session: { strategy: 'database' } }),
      userId: async (person) => (await adapter.getUserByEmail!(PEOPLE[person].email))!.id,
    }
  }, 60_000)

  it("lists only Alice's sessions to Alice: in the JSON list, on the page and through listSessions", async () => {
    const { alice, bob, bobsId, aliceId, bobId } = await aliceAndBob(deployment)
    const mine = await listed(alice)
    expect(mine.map((s) => s.userAgent).sort()).toEqual(['alice laptop', 'alice phone'])
    expect(mine.map((s) => s.id)).not.toContain(bobsId)

    const page = await (await alice.send({ path: '/sessions', headers: HTML })).text()
    expect(page).toContain('<h1>Your sessions</h1>')
    expect(page).not.toContain(bobsId)
    expect(page).not.toMatch(/bob/i)

    expect((await listSessions(deployment.config, aliceId)).map((s) => s.id)).not.toContain(bobsId)
    expect((await listSessions(deployment.config, bobId)).map((s) => s.id)).toEqual([bobsId])
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)
  })

  it("ends none of Bob's sessions by his session id, whatever owner the body names (JSON, form and page)", async () => {
    const { alice, alicePhone, bob, bobsId, aliceId, bobId } = await aliceAndBob(deployment)
    const owners = Object.fromEntries(OWNER_FIELDS.map((field) => [field, bobId]))
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [{ revoke: 'one', id: bobsId }, {}],
      [{ revoke: 'one', id: bobsId, ...owners }, {}],
      [{ revoke: 'one', id: bobsId, ...Object.fromEntries(OWNER_FIELDS.map((field) => [field, PEOPLE.bob.email])) }, {}],
      [{ revoke: 'one', id: bobsId, ...owners }, HTML],
    ]
    for (const [fields, headers] of attempts) {
      const response = await revoke(alice, fields, headers)
      if (headers === HTML) {
        expect(response.status).toBe(302)
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/sessions`)
      } else {
        expect(await response.json(), JSON.stringify(fields)).toEqual({ revoked: 0 })
      }
      expect(await signedInAs(bob), JSON.stringify(fields)).toBe(PEOPLE.bob.email)
    }
    // A JSON body too, with the owner as a nested object.
    const json = await alice.send({
      path: '/sessions',
      json: { revoke: 'one', id: bobsId, csrfToken: await alice.csrfToken(), ...owners, session: { userId: bobId } },
    })
    expect(json.status).toBeLessThan(500)
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)

    expect(await revokeSession(deployment.config, aliceId, bobsId)).toBe(false)
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)

    // Her own phone's id, the same way, does end it: the refusals above are about the owner.
    const phoneId = (await listed(alice)).find((s) => s.userAgent === 'alice phone')!.id
    expect(await (await revoke(alice, { revoke: 'one', id: phoneId, ...owners })).json()).toEqual({ revoked: 1 })
    expect(await signedInAs(alicePhone)).toBeNull()
    expect(await signedInAs(alice)).toBe(PEOPLE.alice.email)
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)
  })

  it("ends Alice's other sessions and none of Bob's on revoke=others, whatever owner the body names", async () => {
    const { alice, alicePhone, bob, bobId, aliceId } = await aliceAndBob(deployment)
    const owners = Object.fromEntries(OWNER_FIELDS.map((field) => [field, bobId]))
    expect(await (await revoke(alice, { revoke: 'others', ...owners })).json()).toEqual({ revoked: 1 })
    expect(await signedInAs(alicePhone)).toBeNull()
    expect(await signedInAs(alice)).toBe(PEOPLE.alice.email)
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)

    const again = await browserOf(deployment.config, 'alice', 'tablet')
    expect(await revokeOtherSessions(deployment.config, aliceId, again.jar.get('__Secure-authjs.session-token')!)).toBe(1)
    expect(await signedInAs(alice)).toBeNull()
    expect(await signedInAs(again)).toBe(PEOPLE.alice.email)
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)
  })

  it("ends every session of Alice's and none of Bob's on revoke=all, from the route and from revokeAllSessions", async () => {
    const { alice, alicePhone, bob, bobId, aliceId } = await aliceAndBob(deployment)
    const owners = Object.fromEntries(OWNER_FIELDS.map((field) => [field, bobId]))
    expect(await (await revoke(alice, { revoke: 'all', ...owners })).json()).toEqual({ revoked: 'all' })
    expect(await signedInAs(alice)).toBeNull()
    expect(await signedInAs(alicePhone)).toBeNull()
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)

    const again = await browserOf(deployment.config, 'alice', 'tablet')
    await revokeAllSessions(deployment.config, aliceId)
    expect(await signedInAs(again)).toBeNull()
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)
  })
})

describe.each(ADAPTERS)('the CSRF check of POST /sessions on %s', (_name, makeAdapter) => {
  let adapter: Adapter
  beforeEach(async () => {
    adapter = await makeAdapter()
  }, 60_000)

  it('refuses every revoke form without this browser\'s CSRF pair (none, another browser\'s, in JSON), revoking nothing', async () => {
    const config = twoUserConfig({ adapter, session: { strategy: 'database' } })
    const alice = await browserOf(config, 'alice', 'laptop')
    const alicePhone = await browserOf(config, 'alice', 'phone')
    const bob = await browserOf(config, 'bob', 'laptop')
    const phoneId = (await listed(alice)).find((s) => s.userAgent === 'alice phone')!.id
    // The attacker's own pair: a valid token, but bound to the attacker's CSRF cookie, not Alice's.
    const foreignToken = await bob.csrfToken()
    const forms: Record<string, string>[] = [{ revoke: 'one', id: phoneId }, { revoke: 'others' }, { revoke: 'all' }]
    for (const form of forms) {
      const attempts: Omit<AuthRequestInit, 'path' | 'cookies' | 'origin'>[] = [
        { body: form, headers: { origin: 'https://evil.example' } },
        { body: { ...form, csrfToken: foreignToken }, headers: {} },
        { body: { ...form, csrfToken: foreignToken }, headers: HTML },
        { json: { ...form, csrfToken: foreignToken }, headers: {} },
      ]
      for (const attempt of attempts) {
        const response = await alice.send({ path: '/sessions', ...attempt })
        expect(response.status, JSON.stringify(attempt)).toBe(400)
        expect(response.headers.getSetCookie().some((c) => c.startsWith('__Secure-authjs.session-token=')), JSON.stringify(attempt)).toBe(false)
      }
    }
    expect(await signedInAs(alice)).toBe(PEOPLE.alice.email)
    expect(await signedInAs(alicePhone)).toBe(PEOPLE.alice.email)
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)
    expect(await listed(alice)).toHaveLength(2)
  })
})

describe('the revoking route in the routing table', () => {
  it('carries the CSRF flag, so no handler behind it runs without the check', () => {
    const route = matchRoute(routes, 'POST', 'sessions', undefined)
    expect(route?.csrf).toBe(true)
    expect(typeof route?.serve).toBe('function')
  })
})

describe("Alice and Bob's JWT sessions over a shared store", () => {
  it("lists Alice's own session only, and her sign-out everywhere leaves Bob signed in", async () => {
    const config = twoUserConfig({ store: memoryAuthStore() })
    const alice = await browserOf(config, 'alice', 'laptop')
    const alicePhone = await browserOf(config, 'alice', 'phone')
    const bob = await browserOf(config, 'bob', 'laptop')
    const [bobs] = await listed(bob)
    const mine = await listed(alice)
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({ current: true })
    expect(mine[0]!.id).not.toBe(bobs!.id)

    // Single JWT sessions cannot be revoked; one of Bob's is not Alice's to name either.
    const one = await revoke(alice, { revoke: 'one', id: bobs!.id, userId: 'bob', sub: 'bob' })
    expect(one.status).toBe(400)
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)

    const all = await revoke(alice, { revoke: 'all', userId: 'bob', sub: 'bob', user: 'bob' })
    expect(await all.json()).toEqual({ revoked: 'all' })
    // The cookie of another of Alice's browsers still decodes, but names a session ended at sign-out everywhere.
    expect(await signedInAs(alicePhone)).toBeNull()
    expect(await signedInAs(bob)).toBe(PEOPLE.bob.email)
  })
})
