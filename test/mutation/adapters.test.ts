/**
 * The bundled adapters' session, verification-token and authenticator methods, down to what the
 * mutation group of adapters/memory.ts and adapters/postgres.ts changes, beyond the shared contract
 * (test/adapters/contract.ts): what a delete answers, a session whose user is gone, a credential
 * registered twice, and that what a method returns is a copy, not the stored row.
 */
import { randomUUID } from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { PostgresAdapter, type Queryable } from '../../adapters/postgres.js'
import type { Adapter, AdapterAuthenticator, AdapterUser } from '../../core/adapters.js'
import { adapterContract } from '../adapters/contract.js'
import { sqlContractDb } from '../adapters/sql-db.js'

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000)

const authenticator = (userId: string, credentialID = randomUUID()): AdapterAuthenticator => ({
  credentialID,
  userId,
  providerAccountId: credentialID,
  credentialPublicKey: 'cHVibGljLWtleQ==',
  counter: 1,
  credentialDeviceType: 'singleDevice',
  credentialBackedUp: false,
  transports: 'usb',
})

/**
 * The PostgreSQL adapter's database: under `npm run mutate` the server of test/mutation/servers.ts
 * (started once per run; tables of their own for each run of this module, which the server
 * outlives), otherwise a PGlite.
 */
const shared = inject('mutationServers')
const prefix = shared ? `mut_${randomUUID().replaceAll('-', '').slice(0, 12)}` : 'mut'
let db: (Queryable & { end?: () => Promise<void>; close?: () => Promise<void> }) | undefined
let postgres: PostgresAdapter | undefined
const needsPostgres = () =>
  beforeAll(async () => {
    if (postgres) return
    db = shared ? new pg.Pool({ connectionString: shared.postgres }) : new PGlite()
    postgres = PostgresAdapter(db, { tablePrefix: prefix })
    await postgres.migrate()
  }, 120_000)
afterAll(async () => {
  await (db?.end ?? db?.close)?.call(db)
})

const adapters: [string, () => Required<Adapter>][] = [
  ['memory', () => MemoryAdapter(createMemoryStore()) as Required<Adapter>],
  ['PostgreSQL', () => postgres as Required<Adapter>],
]

// Under a mutation run, the adapter contract on the same server: outside one, the suite runs it in
// test/adapters/pglite.test.ts and postgres.test.ts already.
if (shared) {
  describe('the PostgreSQL adapter contract', () => {
    needsPostgres()
    adapterContract('PostgreSQL adapter (mutation run)', () => ({ adapter: postgres as Required<Adapter>, db: sqlContractDb(db!, prefix) }))
  })
}

describe.each(adapters)('the %s adapter', (name, make) => {
  if (name === 'PostgreSQL') needsPostgres()
  const newUser = (adapter: Required<Adapter>) =>
    adapter.createUser({ id: randomUUID(), email: `${randomUUID()}@example.test`, emailVerified: null } as AdapterUser)

  it('answers a deleted session with the row it deleted, and null for a token it does not hold', async () => {
    const adapter = make()
    const user = await newUser(adapter)
    const session = { sessionToken: randomUUID(), userId: user.id, expires: inDays(7) }
    await adapter.createSession(session)
    expect(await adapter.deleteSession(session.sessionToken)).toMatchObject(session)
    expect(await adapter.deleteSession(session.sessionToken)).toBeNull()
  })

  it('refuses to register a credential id twice, keeping the first registration', async () => {
    const adapter = make()
    const [alice, mallory] = [await newUser(adapter), await newUser(adapter)]
    const first = authenticator(alice.id)
    await adapter.createAuthenticator(first)
    await expect(adapter.createAuthenticator({ ...first, userId: mallory.id })).rejects.toThrow()
    expect(await adapter.getAuthenticator(first.credentialID)).toEqual(first)
    expect(await adapter.listAuthenticatorsByUserId(mallory.id)).toEqual([])
  })

  it('stores the counter of the credential named, and no other', async () => {
    const adapter = make()
    const user = await newUser(adapter)
    const [one, two] = [authenticator(user.id), authenticator(user.id)]
    await adapter.createAuthenticator(one)
    await adapter.createAuthenticator(two)
    await adapter.updateAuthenticatorCounter(one.credentialID, 9)
    expect((await adapter.getAuthenticator(one.credentialID))?.counter).toBe(9)
    expect((await adapter.getAuthenticator(two.credentialID))?.counter).toBe(1)
    await expect(adapter.updateAuthenticatorCounter(randomUUID(), 3)).rejects.toThrow(/does not exist/)
  })

  it('returns copies: changing what a method returned changes nothing stored', async () => {
    const adapter = make()
    const user = await newUser(adapter)
    const session = await adapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: inDays(7) })
    const read = (await adapter.getSessionAndUser(session.sessionToken))!
    read.session.userId = 'someone-else'
    read.user.email = 'someone@else.test'
    const listed = await adapter.listSessions(user.id)
    listed[0]!.userId = 'someone-else'
    const again = (await adapter.getSessionAndUser(session.sessionToken))!
    expect(again.session.userId).toBe(user.id)
    expect(again.user.email).toBe(user.email)

    const passkey = authenticator(user.id)
    ;(await adapter.createAuthenticator(passkey)).counter = 99
    ;(await adapter.getAuthenticator(passkey.credentialID))!.counter = 99
    ;(await adapter.listAuthenticatorsByUserId(user.id))[0]!.counter = 99
    ;(await adapter.updateAuthenticatorCounter(passkey.credentialID, 2)).counter = 99
    expect((await adapter.getAuthenticator(passkey.credentialID))?.counter).toBe(2)

    const token = { identifier: 'a@example.test', token: randomUUID(), expires: inDays(1) }
    await adapter.createVerificationToken(token)
    const used = (await adapter.useVerificationToken(token))!
    expect(used).toEqual(token)
  })
})

describe('the memory adapter', () => {
  it('answers no session for a row whose user is gone (the row outlived its user)', async () => {
    const store: MemoryStore = createMemoryStore()
    const adapter = MemoryAdapter(store)
    const user = await adapter.createUser({ id: 'u-1', email: 'u1@example.test', emailVerified: null } as AdapterUser)
    const session = await adapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: inDays(7) })
    store.users.delete(user.id)
    expect(await adapter.getSessionAndUser(session.sessionToken)).toBeNull()
  })

  it('says why it refuses a credential id registered before (the reason the operator reads in the log)', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const user = await adapter.createUser({ id: 'u-1', email: 'u1@example.test', emailVerified: null } as AdapterUser)
    const passkey = authenticator(user.id)
    await adapter.createAuthenticator!(passkey)
    await expect(adapter.createAuthenticator!({ ...passkey, userId: 'u-2' })).rejects.toThrow('this credential is already registered')
  })
})
