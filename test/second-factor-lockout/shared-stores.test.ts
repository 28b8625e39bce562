/**
 * Issue #48 item 3's acceptance: the documented second-factor limits hold exactly under 50
 * concurrent wrong codes on one instance and on three instances sharing a PostgreSQL store or a
 * Redis store (each instance its own connection, the counters in the shared server), and the
 * owner's right code from another address is checked while the wrong codes keep coming.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CLEAN_CLIENT_CODES,
  MAX_CLEAN_CLIENT_CHECKS,
  MAX_CODE_ATTEMPTS,
  MAX_USER_ATTEMPTS,
  type CodeCheck,
} from '../../core/second-factor/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { redisAuthStore } from '../../stores/redis.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'
import { wrongCode } from './codes.js'
import { enrolledUser } from './enrolled.js'

/** A fixed minute: every code of a test falls in the same late-check slot. */
const AT = Math.floor(Date.now() / 1000 / 3600) * 3600 + 5

let postgres: PostgresServer
let redis: RedisServer
const pools: pg.Pool[] = []
beforeAll(async () => {
  ;[postgres, redis] = await Promise.all([startPostgres(), startRedis()])
}, 60_000)
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()))
  await Promise.all([postgres?.stop(), redis?.stop()])
})

let runs = 0
/** Three instances' stores over one shared server (or one memory store, one instance). */
const SHARED: [string, () => Promise<AuthStore[]>][] = [
  ['one instance (memory store)', async () => [memoryAuthStore()]],
  [
    'three instances sharing Redis',
    async () => {
      const keyPrefix = `lockout_${process.pid}_${++runs}`
      return [0, 1, 2].map(() => redisAuthStore(redis.client(), { keyPrefix }))
    },
  ],
  [
    'three instances sharing PostgreSQL',
    async () => {
      const url = await postgres.createDatabase(`lockout_${process.pid}_${++runs}`)
      const stores = [0, 1, 2].map(() => {
        const pool = new pg.Pool({ connectionString: url, max: 5 })
        pool.on('error', () => {})
        pools.push(pool)
        return postgresAuthStore(pool)
      })
      await stores[0]!.migrate()
      return stores
    },
  ],
]

describe.each(SHARED)('50 wrong codes at once, %s', (_name, instances) => {
  /** Sends one code per element of `clients` at once, round-robin over the instances. */
  async function atOnce(clients: { address: string; challenge?: string }[], code: (secret: string) => string) {
    const stores = await instances()
    const user = await enrolledUser(stores[0]!)
    const results: CodeCheck[] = await Promise.all(
      clients.map(({ address, challenge }, i) => user.sendAt(code(user.secret), AT, { address }, challenge, stores[i % stores.length]!)),
    )
    return { ...user, stores, results }
  }

  it('checks five of one sign-in', async () => {
    const { checked } = await atOnce(Array.from({ length: 50 }, () => ({ address: '203.0.113.7', challenge: 'one' })), (s) => wrongCode(s, AT))
    expect(checked()).toBe(MAX_CODE_ATTEMPTS)
  })

  it("checks the user's ten, the address's three and the minute's one from one address", async () => {
    const { checked } = await atOnce(Array.from({ length: 50 }, () => ({ address: '203.0.113.7' })), (s) => wrongCode(s, AT))
    expect(checked()).toBe(MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 1)
  })

  it("checks the user's ten, the clean clients' ten and the minute's one from fifty addresses", async () => {
    const { checked } = await atOnce(Array.from({ length: 50 }, (_, i) => ({ address: `192.0.2.${i + 1}` })), (s) => wrongCode(s, AT))
    expect(checked()).toBe(MAX_USER_ATTEMPTS + MAX_CLEAN_CLIENT_CHECKS + 1)
  })

  it("checks the owner's right code from another address while the wrong codes come", async () => {
    const stores = await instances()
    const user = await enrolledUser(stores[0]!)
    const wrong = Array.from({ length: 50 }, (_, i) => user.sendAt(wrongCode(user.secret, AT), AT, { address: '203.0.113.7' }, undefined, stores[i % stores.length]!))
    const owner = user.sendAt(totpCode(user.secret, AT), AT, { address: '198.51.100.2' }, undefined, stores[stores.length - 1]!)
    const [ownerResult] = await Promise.all([owner, ...wrong])
    expect(ownerResult).toEqual({ ok: true, method: 'otp' })
  })
})
