/**
 * Backup codes are spent in one conditional update of the factor that fails when the code is gone:
 * two different codes used at the same moment leave exactly 8 of 10, the same code used twice at
 * once signs in once, and a spent code stays spent when the server-side store forgets everything
 * (a restart with the memory store). Through `Auth`, for the memory adapter, the PostgreSQL
 * adapter (PGlite, and a PostgreSQL server) and, for an adapter that can only replace a factor's
 * secret, through a lock in the memory, Redis and PostgreSQL stores.
 */
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { PostgresAdapter, tableNames } from '../../adapters/postgres.js'
import type { Adapter, AdapterSecondFactor } from '../../core/adapters.js'
import { Auth } from '../../core/index.js'
import { spendBackupCode } from '../../core/second-factor/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { redisAuthStore } from '../../stores/redis.js'
import { authRequest, Client, ORIGIN, featureConfig } from '../fixtures/http.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'

const STEP = '/step/signin-completion'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const now = () => Math.floor(Date.now() / 1000)

let postgres: PostgresServer
let pool: pg.Pool
let redis: RedisServer
let pglite: PGlite
beforeAll(async () => {
  // PGlite compiles its WebAssembly when created: here, not in the middle of a test.
  ;[postgres, redis, pglite] = await Promise.all([startPostgres(), startRedis(), PGlite.create()])
  pool = new pg.Pool({ connectionString: await postgres.createDatabase('backup_codes'), max: 10 })
  pool.on('error', () => {})
}, 60_000)
afterAll(async () => {
  await pool?.end()
  await Promise.all([postgres?.stop(), redis?.stop(), pglite?.close()])
})

/** Where the factors live: an adapter and the user row its factors need. */
interface Backend {
  adapter: Adapter
  factors(): Promise<AdapterSecondFactor[]>
}

function memoryBackend(): Backend {
  const store = createMemoryStore()
  const adapter = MemoryAdapter(store)
  return { adapter, factors: async () => [...store.secondFactors.values()] }
}

let tables = 0
/** Fresh tables per test, so tests stay independent on one database. */
const freshPrefix = (kind: string) => `${kind}_${process.pid}_${++tables}`

async function postgresBackend(db: pg.Pool | PGlite): Promise<Backend> {
  const prefix = freshPrefix('codes')
  const adapter = PostgresAdapter(db, { tablePrefix: prefix })
  await adapter.migrate()
  return {
    adapter,
    // Read around the adapter: what the table holds.
    factors: async () => (await (db as pg.Pool).query<AdapterSecondFactor>(`SELECT * FROM ${tableNames(prefix).secondFactors}`)).rows,
  }
}

/** An adapter of someone else's: it can replace a factor's secret, not spend one code of it. */
function withoutSpend(backend: Backend): Backend {
  const { spendBackupCode: _spend, ...adapter } = backend.adapter as Required<Adapter>
  return { ...backend, adapter }
}

/** Alice, signed up with her password and enrolled; returns her backup codes. */
async function enrolled(config: AuthConfig): Promise<string[]> {
  const client = new Client(config)
  await client.signIn({ username: 'alice', password: 'wonderland' })
  await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
  const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
  const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
  const done = await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } })
  const codes = [...(await done.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!)
  expect(codes).toHaveLength(10)
  return codes
}

/** A browser that has passed the password and waits at the second factor. */
async function atSecondFactor(config: AuthConfig): Promise<{ client: Client; csrfToken: string }> {
  const client = new Client(config)
  const response = await client.signIn({ username: 'alice', password: 'wonderland' })
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
  return { client, csrfToken: await client.csrfToken() }
}

/** Sends `codes`, one per waiting browser, all at the same moment. */
async function answerAtOnce(config: AuthConfig, codes: string[]): Promise<boolean[]> {
  const browsers = await Promise.all(codes.map(() => atSecondFactor(config)))
  const responses = await Promise.all(
    browsers.map(({ client, csrfToken }, i) =>
      Auth(authRequest({ path: `/auth${STEP}`, body: { csrfToken, code: codes[i]! }, cookies: client.jar }), config),
    ),
  )
  return responses.map((r) => r.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !c.includes('Max-Age=0')))
}

const remaining = async (backend: Backend) =>
  (await backend.factors()).find((f) => f.type === 'backup-codes')!.secret.split(' ').filter(Boolean).length

const BACKENDS: [string, () => Promise<Backend>, () => Promise<AuthStore>][] = [
  ['the memory adapter', async () => memoryBackend(), async () => memoryAuthStore()],
  ['the PostgreSQL adapter on PGlite', () => postgresBackend(pglite), async () => memoryAuthStore()],
  ['the PostgreSQL adapter on a server', () => postgresBackend(pool), async () => memoryAuthStore()],
  ['an adapter without spendBackupCode, the memory store', async () => withoutSpend(memoryBackend()), async () => memoryAuthStore()],
  [
    'an adapter without spendBackupCode, the Redis store',
    async () => withoutSpend(memoryBackend()),
    async () => redisAuthStore(redis.client(), { keyPrefix: freshPrefix('store') }),
  ],
  [
    'an adapter without spendBackupCode, the PostgreSQL store',
    async () => withoutSpend(memoryBackend()),
    async () => {
      const store = postgresAuthStore(pool, { tablePrefix: freshPrefix('store') })
      await store.migrate()
      return store
    },
  ],
]

describe.each(BACKENDS)('backup codes with %s', (_name, makeBackend, makeStore) => {
  it('two different codes used at the same moment leave exactly 8 of 10', async () => {
    const backend = await makeBackend()
    const config = featureConfig({ adapter: backend.adapter, store: await makeStore() })
    const codes = await enrolled(config)
    expect(await answerAtOnce(config, [codes[0]!, codes[1]!])).toEqual([true, true])
    expect(await remaining(backend)).toBe(8)
  })

  it('one code used twice at the same moment signs in once', async () => {
    const backend = await makeBackend()
    const config = featureConfig({ adapter: backend.adapter, store: await makeStore() })
    const codes = await enrolled(config)
    expect((await answerAtOnce(config, [codes[2]!, codes[2]!, codes[2]!])).filter(Boolean)).toHaveLength(1)
    expect(await remaining(backend)).toBe(9)
  })

  it('a spent code stays spent when the store forgets everything (a restart)', async () => {
    const backend = await makeBackend()
    const config = featureConfig({ adapter: backend.adapter, store: await makeStore() })
    const codes = await enrolled(config)
    expect(await answerAtOnce(config, [codes[3]!, codes[4]!, codes[5]!])).toEqual([true, true, true])
    const restarted = featureConfig({ adapter: backend.adapter, store: memoryAuthStore() })
    expect(await answerAtOnce(restarted, [codes[3]!, codes[4]!, codes[5]!])).toEqual([false, false, false])
    expect(await answerAtOnce(restarted, [codes[6]!])).toEqual([true])
    expect(await remaining(backend)).toBe(6)
  })
})

describe('spendBackupCode for an adapter that can only replace a secret', () => {
  async function factorWith(hashes: string[]) {
    const backend = withoutSpend(memoryBackend())
    const memory = backend.adapter as Required<Adapter>
    await memory.createUser({ id: 'u', email: 'u@example.com', emailVerified: null })
    const factor = { id: 'f', userId: 'u', type: 'backup-codes' as const, secret: hashes.join(' '), createdAt: new Date() }
    await memory.createSecondFactor(factor)
    return { backend, factor }
  }

  it('takes turns under the store lock: ten different codes at once are all removed, each once', async () => {
    const hashes = Array.from({ length: 10 }, (_, i) => `h${i}`)
    const { backend, factor } = await factorWith(hashes)
    const store = memoryAuthStore()
    const spent = await Promise.all([...hashes, ...hashes].map((hash) => spendBackupCode(backend.adapter, store, factor, hash)))
    expect(spent.filter(Boolean)).toHaveLength(10)
    expect((await backend.factors())[0]!.secret).toBe('')
    // The lock is released: a later spend is not kept waiting.
    expect(await store.claim('2fa:backup-lock:f', 1)).toBe(true)
  })

  it('gives up, spending nothing, when the lock stays taken (a holder that never lets go)', async () => {
    const { backend, factor } = await factorWith(['h1'])
    const stuck: AuthStore = { ...memoryAuthStore(), claim: async () => false }
    await expect(spendBackupCode(backend.adapter, stuck, factor, 'h1')).rejects.toThrow('locked')
    expect((await backend.factors())[0]!.secret).toBe('h1')
  })
})
