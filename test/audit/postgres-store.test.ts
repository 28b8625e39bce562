/**
 * The PostgreSQL audit store on PGlite and on a PostgreSQL server: every event kind a request
 * can produce lands in `audit_events` as the sink received it (a test per kind), `migrate()` is
 * idempotent, and the retention deletes old events.
 */
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { PostgresAuditStore } from '../../adapters/postgres-audit.js'
import type { Queryable } from '../../adapters/postgres.js'
import type { AuditEvent, AuditKind } from '../../core/audit/types.js'
import { totpCode } from '../../core/second-factor/totp.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, featureConfig } from '../fixtures/http.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { PasskeyBrowser, passkeyConfig } from '../webauthn/helpers.js'
import { reauthenticateAlice } from './reauthentication.js'
import { auditTrail } from '../../core/audit.js'
import { stepUp } from '../../core/step-up.js'
import { apiKeys, createApiKey, verifyApiKey } from '../../core/api-keys.js'
import { DEVICE_CODE_GRANT, deviceAuthorization } from '../../core/device-authorization.js'

const now = () => Math.floor(Date.now() / 1000)
const good = { username: 'alice', password: 'wonderland' }

/** Drives the requests that produce one kind of event, with `audit` in the config. */
const drivers: Record<AuditKind, (audit: AuthConfig['audit']) => Promise<void>> = {
  async flow(audit) {
    await new Client(featureConfig({ audit })).signIn(good)
  },
  async 'sign-out'(audit) {
    const client = new Client(featureConfig({ audit }))
    await client.signIn(good)
    await client.signOut()
  },
  async 'rate-limited'(audit) {
    const client = new Client(featureConfig({ audit, rateLimit: { credentials: { perIdentifier: 1 } } }))
    await client.signIn({ username: 'alice', password: 'nope' })
    await client.signIn({ username: 'alice', password: 'nope' })
  },
  async 'account-linked'(audit) {
    await new Client(featureConfig({ audit, adapter: MemoryAdapter(createMemoryStore()) })).signIn(good)
  },
  async 'session-revoked'(audit) {
    const config = featureConfig({ audit, adapter: MemoryAdapter(createMemoryStore()), session: { strategy: 'database' } })
    const laptop = new Client(config)
    await laptop.signIn(good)
    await new Client(config).signIn(good)
    await laptop.send({ path: '/sessions', body: { csrfToken: await laptop.csrfToken(), revoke: 'others' } })
  },
  async 'sign-out-everywhere'(audit) {
    const config = featureConfig({ audit, adapter: MemoryAdapter(createMemoryStore()), session: { strategy: 'database' } })
    const client = new Client(config)
    await client.signIn(good)
    await client.send({ path: '/sessions', body: { csrfToken: await client.csrfToken(), revoke: 'all' } })
  },
  async 'second-factor-enrolled'(audit) {
    const client = new Client(featureConfig({ audit, adapter: MemoryAdapter(createMemoryStore()) }))
    await client.signIn(good)
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } })
  },
  async 'second-factor-removed'(audit) {
    const client = new Client(
      // The password just proven counts for turning the factor off (the default asks for a recent code).
      featureConfig({ audit, adapter: MemoryAdapter(createMemoryStore()), stepUp: stepUp({ actions: { 'remove-second-factor': { aal: 1 } } }) }),
    )
    await client.signIn(good)
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } })
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken(), action: 'disable' } })
  },
  async reauthenticated(audit) {
    await reauthenticateAlice(featureConfig({ audit }))
  },
  async 'passkey-added'(audit) {
    await new PasskeyBrowser(passkeyConfig(createMemoryStore(), { audit })).register({ email: 'grace@example.com' })
  },
  async 'api-key-created'(audit) {
    await changeApiKey(audit, ['create'])
  },
  async 'api-key-rotated'(audit) {
    await changeApiKey(audit, ['create', 'rotate'])
  },
  async 'api-key-revoked'(audit) {
    await changeApiKey(audit, ['create', 'revoke'])
  },
  async 'api-key-refused'(audit) {
    const config = featureConfig({ audit, adapter: MemoryAdapter(createMemoryStore()), apiKeys: apiKeys() })
    const { key } = await createApiKey(config, 'u-1', { name: 'ci', scopes: [] })
    await verifyApiKey(new Request('https://authchart.test/api', { headers: { authorization: `Bearer ${key}` } }), config, { scopes: ['reports:read'] })
  },
  async 'device-authorization-requested'(audit) {
    await driveDevice(audit, 'requested')
  },
  async 'device-authorization-approved'(audit) {
    await driveDevice(audit, 'approve')
  },
  async 'device-authorization-denied'(audit) {
    await driveDevice(audit, 'deny')
  },
  async 'device-authorization-redeemed'(audit) {
    await driveDevice(audit, 'redeemed')
  },
}

/** A device asks for codes; Alice approves or denies them, and (`redeemed`) the device polls for its session. */
async function driveDevice(audit: AuthConfig['audit'], until: 'requested' | 'approve' | 'deny' | 'redeemed') {
  const config = featureConfig({ audit, adapter: MemoryAdapter(createMemoryStore()), deviceAuthorization: deviceAuthorization({ clients: [{ clientId: 'cli', name: 'CLI' }] }) })
  const device = new Client(config)
  const issued = (await (await device.send({ path: '/device_authorization', body: { client_id: 'cli' } })).json()) as { device_code: string; user_code: string }
  if (until === 'requested') return
  const client = new Client(config)
  await client.signIn(good)
  const action = until === 'deny' ? 'deny' : 'approve'
  await client.send({ path: '/device', body: { action, user_code: issued.user_code, csrfToken: await client.csrfToken() } })
  if (until === 'redeemed') await device.send({ path: '/oauth/token', body: { grant_type: DEVICE_CODE_GRANT, device_code: issued.device_code, client_id: 'cli' } })
}

/** Signs Alice in and posts `actions` to `{basePath}/api-keys`, in order, on one key. */
async function changeApiKey(audit: AuthConfig['audit'], actions: readonly ('create' | 'rotate' | 'revoke')[]) {
  const client = new Client(featureConfig({ audit, adapter: MemoryAdapter(createMemoryStore()), apiKeys: apiKeys() }))
  await client.signIn(good)
  let id: string | undefined
  for (const action of actions) {
    const response = await client.send({ path: '/api-keys', json: { action, id, name: 'ci', scopes: [], csrfToken: await client.csrfToken() } })
    id ??= ((await response.json()) as { apiKey: { id: string } }).apiKey.id
  }
}

function storeSuite(name: string, connect: () => Promise<{ db: Queryable; close: () => Promise<void> }>) {
  describe(`audit_events on ${name}`, () => {
    let db: Queryable
    let close: () => Promise<void>
    const store = () => PostgresAuditStore(db, { tablePrefix: 'audit_test' })
    beforeAll(async () => {
      ;({ db, close } = await connect())
      await store().migrate()
      await store().migrate()
    }, 180_000)
    afterAll(() => close?.())

    for (const [kind, drive] of Object.entries(drivers)) {
      it(`stores the "${kind}" event as the sink received it`, async () => {
        const received: AuditEvent[] = []
        const sink = store()
        // Storage is under test here, not the bound on a slow sink: wait for the database.
        await drive(auditTrail({ sink: [sink, (event) => void received.push(event)], timeout: 10_000 }))
        const expected = received.filter((event) => event.kind === kind)
        expect(expected.length).toBeGreaterThan(0)
        const { rows } = await db.query(`SELECT kind, "userId", event FROM "audit_test_audit_events" WHERE id = ANY($1)`, [
          expected.map((event) => event.id),
        ])
        expect(rows).toHaveLength(expected.length)
        for (const row of rows) {
          const event = row.event as AuditEvent
          expect(event).toEqual(expected.find((candidate) => candidate.id === event.id))
          expect(row.kind).toBe(kind)
          expect(row.userId).toBe(event.userId ?? null)
        }
      })
    }

    it('lists a user\'s events newest first and prunes what is past the retention', async () => {
      const short = PostgresAuditStore(db, { tablePrefix: 'audit_test', retention: 3600 })
      const base = { v: 1, requestId: 'r', kind: 'sign-out', userId: 'prune-user', client: {} } as const
      await short.write({ ...base, id: 'old', time: new Date(Date.now() - 7200_000).toISOString() })
      await short.write({ ...base, id: 'new', time: new Date().toISOString() })
      expect((await short.listForUser('prune-user', { limit: 10 })).map((event) => event.id)).toEqual(['new'])
      await short.write({ ...base, id: 'older', time: new Date(Date.now() - 7200_000).toISOString() })
      expect((await short.listForUser('prune-user', { limit: 10 })).map((event) => event.id)).toEqual(['new', 'older'])
      expect(await short.prune()).toBe(1)
      expect((await short.listForUser('prune-user', { limit: 1 })).map((event) => event.id)).toEqual(['new'])
    })
  })
}

storeSuite('PGlite', async () => {
  const db = new PGlite()
  return { db, close: () => db.close() }
})

let server: PostgresServer | undefined
storeSuite('a PostgreSQL server', async () => {
  server = await startPostgres()
  const pool = new pg.Pool({ connectionString: await server.createDatabase('audit'), max: 5 })
  pool.on('error', () => {})
  return {
    db: pool as unknown as Queryable,
    close: async () => {
      await pool.end()
      await server?.stop()
    },
  }
})

describe('PostgresAuditStore options', () => {
  it('refuses a table prefix that is not letters, digits and underscores, and a retention that is not positive', () => {
    const db = {} as Queryable
    expect(() => PostgresAuditStore(db, { tablePrefix: 'x"; DROP TABLE users; --' })).toThrow(TypeError)
    expect(() => PostgresAuditStore(db, { retention: 0 })).toThrow(TypeError)
  })
})
