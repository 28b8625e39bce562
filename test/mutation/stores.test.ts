/**
 * The store's guarantees, fast enough to run once per mutant of `npm run mutate -- stores`: the
 * contract of test/store/contract.test.ts on memory, PGlite and one Redis (not the PostgreSQL
 * server, whose start would cost seconds per mutant; PGlite runs the same SQL), what each bundled
 * store adds (table and key prefixes, the lazy sweep of rows past their time, a lost Redis
 * connection), the deadline on every call of a configured store, and the attempt limits counted in
 * it (every subject counted, failing open or closed).
 */
import { randomUUID } from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import { Redis } from 'ioredis'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { DEFAULT_AVAILABILITY } from '../../core/outage.js'
import { ServiceUnavailable } from '../../core/errors.js'
import { guardStore, limiterStore, memoryAuthStore, type AuthStore, type ValueBackend } from '../../core/store/index.js'
import { admitAttempt, countAttempt } from '../../core/store/limits.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { redisAuthStore, type RedisClient } from '../../stores/redis.js'
import { endPool, startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'
import { spyLogger } from '../fixtures/http.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
// Random: under a mutation run the servers outlive this module, and keys of earlier runs are there.
const key = (name: string) => `${name}:${randomUUID()}`

/** The servers of a mutation run (test/mutation/servers.ts), or none: then this file starts its own. */
const shared = inject('mutationServers')
let ownPostgres: PostgresServer | undefined
let ownRedis: RedisServer | undefined
let pool: pg.Pool | undefined
let redisUrl: string | undefined
const clients: Redis[] = []

// Each started by the first test that needs it (a mutant's tests may need neither).
const needsPostgres = () =>
  beforeAll(async () => {
    if (pool) return
    const url = shared?.postgres ?? (await (ownPostgres = await startPostgres()).createDatabase('stores'))
    pool = new pg.Pool({ connectionString: url })
    // A connection the server ends (its shutdown after this file) is an error event on the pool:
    // without a listener it would be an uncaught exception.
    pool.on('error', () => {})
  }, 120_000)
const needsRedis = () =>
  beforeAll(async () => {
    redisUrl ??= shared?.redis ?? (ownRedis = await startRedis()).url
  }, 60_000)
const redisClient = () => {
  const client = new Redis(redisUrl!)
  client.on('error', () => {})
  clients.push(client)
  return client
}
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit().catch(() => client.disconnect())))
  // Every connection closed before the server stops (pool.end() alone resolves while they close).
  if (pool) await endPool(pool)
  await Promise.all([ownPostgres?.stop(), ownRedis?.stop()])
})
afterEach(() => {
  vi.restoreAllMocks()
})

const backends: { name: string; pair: () => Promise<[AuthStore, AuthStore]> }[] = [
  {
    name: 'memory',
    async pair() {
      const store = memoryAuthStore()
      return [store, store]
    },
  },
  {
    name: 'PostgreSQL',
    async pair() {
      const a = postgresAuthStore(pool!)
      await a.migrate()
      return [a, postgresAuthStore(pool!)]
    },
  },
  {
    name: 'Redis',
    pair: async () => [redisAuthStore(redisClient()), redisAuthStore(redisClient())],
  },
]

describe.each(backends)('the $name store', (backend) => {
  let a: AuthStore
  let b: AuthStore
  if (backend.name === 'PostgreSQL') needsPostgres()
  if (backend.name === 'Redis') needsRedis()
  beforeAll(async () => {
    ;[a, b] = await backend.pair()
  }, 60_000)

  it('grants a claim once across clients, keeps it whatever TTL a later caller names, and releases it on reset', async () => {
    const k = key('claim')
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).claim(k, 60)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await b.claim(k, 1)).toBe(false)
    expect(await a.claim(key('other'), 60)).toBe(true)
    await b.reset(k)
    expect(await a.claim(k, 60)).toBe(true)
  })

  it('counts hits per key across clients and forgets a counter on reset', async () => {
    const k = key('count')
    const counts = await Promise.all(Array.from({ length: 4 }, (_, i) => (i % 2 ? a : b).increment(k, 60)))
    expect([...counts].sort()).toEqual([1, 2, 3, 4])
    expect(await a.increment(key('another'), 60)).toBe(1)
    await a.reset(k)
    expect(await b.increment(k, 60)).toBe(1)
  })

  it('allows a limit of points per window, then refuses with the count and the seconds left', async () => {
    const k = key('limit')
    expect(await a.consume(k, 2, 120)).toMatchObject({ allowed: true, count: 1 })
    const second = await b.consume(k, 2, 120)
    expect(second).toMatchObject({ allowed: true, count: 2 })
    expect(second.retryAfter).toBeGreaterThan(100)
    expect(second.retryAfter).toBeLessThanOrEqual(120)
    const refused = await a.consume(k, 2, 120)
    expect(refused).toMatchObject({ allowed: false, count: 3 })
    expect(refused.retryAfter).toBeGreaterThan(100)
    expect(refused.retryAfter).toBeLessThanOrEqual(120)
    // A window under a second counts as one whole second, never zero.
    const brief = await a.consume(key('brief'), 1, 0.2)
    expect(brief.allowed).toBe(true)
    expect(brief.retryAfter).toBe(1)
  })

  it('keeps a value shared between clients, replaced by a later put, gone on reset; a set likewise', async () => {
    const k = key('value')
    expect(await a.get(k)).toBeNull()
    await a.put(k, 'first', 60)
    expect(await b.get(k)).toBe('first')
    await b.put(k, 'second', 60)
    expect(await a.get(k)).toBe('second')
    expect(await a.get(key('unknown'))).toBeNull()
    const s = key('set')
    expect(await a.setMembers!(s)).toEqual([])
    await Promise.all([a.addToSet!(s, 'one', 60), b.addToSet!(s, 'two', 60), a.addToSet!(s, 'one', 60)])
    expect((await b.setMembers!(s)).sort()).toEqual(['one', 'two'])
    expect(await a.setMembers!(key('another set'))).toEqual([])
    // One reset forgets a claim, a counter, a value and a set kept under the same key.
    const all = key('all')
    await a.claim(all, 60)
    await a.increment(all, 60)
    await a.put(all, 'value', 60)
    await a.addToSet!(all, 'member', 60)
    await b.reset(all)
    expect(await a.get(all)).toBeNull()
    expect(await a.setMembers!(all)).toEqual([])
    expect(await a.claim(all, 60)).toBe(true)
    await b.reset(k)
    expect(await a.get(k)).toBeNull()
  })

  it('reads many values in one call, each in its place, null for one unknown or gone; none for no keys', async () => {
    const [first, second, unknown, brief] = [key('many'), key('many'), key('many'), key('many')]
    await a.put(first, 'one', 60)
    await b.put(second, 'two', 60)
    await a.put(brief, 'brief', 1)
    expect(await b.getMany!([second, unknown, first])).toEqual(['two', null, 'one'])
    expect(await a.getMany!([first, first])).toEqual(['one', 'one'])
    expect(await a.getMany!([])).toEqual([])
    await sleep(1150)
    expect(await b.getMany!([brief, first])).toEqual([null, 'one'])
    await a.reset(first)
    expect(await b.getMany!([first, second])).toEqual([null, 'two'])
  })

  it('forgets claims, counters, values and set members once their time is up, not before', async () => {
    const [claim, counter, value, set, kept] = [key('c'), key('n'), key('v'), key('s'), key('k')]
    expect(await a.claim(claim, 1)).toBe(true)
    await a.increment(counter, 1)
    await a.put(value, 'brief', 1)
    await a.put(kept, 'kept', 60)
    await a.addToSet!(set, 'member', 1)
    // A fraction of a second lives a whole second.
    await a.put(key('fraction'), 'x', 0.2)
    await sleep(1150)
    expect(await b.claim(claim, 60)).toBe(true)
    expect(await b.increment(counter, 60)).toBe(1)
    expect(await b.get(value)).toBeNull()
    expect(await b.setMembers!(set)).toEqual([])
    expect(await b.get(kept)).toBe('kept')
  })
})

describe('the memory store', () => {
  it('keeps a value for a fraction of a second for a whole second', async () => {
    const store = memoryAuthStore()
    const start = Date.now()
    vi.spyOn(Date, 'now').mockReturnValue(start)
    await store.put('v', 'x', 0.2)
    await store.addToSet!('s', 'm', 0.2)
    vi.spyOn(Date, 'now').mockReturnValue(start + 900)
    expect(await store.get('v')).toBe('x')
    expect(await store.setMembers!('s')).toEqual(['m'])
    vi.spyOn(Date, 'now').mockReturnValue(start + 1000)
    expect(await store.get('v')).toBeNull()
    expect(await store.setMembers!('s')).toEqual([])
  })

  it('keeps each set member for its own time', async () => {
    const store = memoryAuthStore()
    const start = Date.now()
    vi.spyOn(Date, 'now').mockReturnValue(start)
    await store.addToSet!('s', 'short', 10)
    await store.addToSet!('s', 'long', 60)
    vi.spyOn(Date, 'now').mockReturnValue(start + 10_000)
    expect(await store.setMembers!('s')).toEqual(['long'])
    expect(await store.setMembers!('s')).toEqual(['long'])
  })

  it('still answers every live value after thousands of keys have come and gone', async () => {
    const store = memoryAuthStore()
    const start = Date.now()
    vi.spyOn(Date, 'now').mockReturnValue(start)
    for (let i = 0; i < 1100; i++) await store.put(`old:${i}`, 'x', 1)
    for (let i = 0; i < 1100; i++) await store.addToSet!(`old:${i}`, 'x', 1)
    await store.put('live', 'kept', 60)
    await store.addToSet!('live', 'kept', 60)
    vi.spyOn(Date, 'now').mockReturnValue(start + 2000)
    for (let i = 0; i < 1100; i++) await store.put(`new:${i}`, 'y', 60)
    for (let i = 0; i < 1100; i++) await store.addToSet!(`new:${i}`, 'y', 60)
    expect(await store.get('live')).toBe('kept')
    expect(await store.setMembers!('live')).toEqual(['kept'])
    expect(await store.get('new:1099')).toBe('y')
    expect(await store.get('old:0')).toBeNull()
  })
})

describe('the PostgreSQL store', () => {
  needsPostgres()
  const count = async (table: string, k: string) =>
    Number((await pool!.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE key = $1`, [k])).rows[0]!.n)

  it('refuses a table prefix that is not a plain identifier, and keeps a prefixed store apart', async () => {
    expect(() => postgresAuthStore(pool!, { tablePrefix: 'x"; DROP TABLE users; --' })).toThrow(TypeError)
    expect(() => postgresAuthStore(pool!, { tablePrefix: '1abc' })).toThrow(/tablePrefix must be letters, digits and underscores, got "1abc"/)
    expect(() => postgresAuthStore(pool!, { tablePrefix: 'ab-c' })).toThrow(TypeError)
    expect(() => postgresAuthStore(pool!, { tablePrefix: 'abc ' })).toThrow(TypeError)
    const prefixed = postgresAuthStore(pool!, { tablePrefix: 'App_2' })
    await prefixed.migrate()
    await prefixed.migrate()
    const plain = postgresAuthStore(pool!)
    await plain.migrate()
    const k = key('prefixed')
    await prefixed.put(k, 'app', 60)
    await prefixed.addToSet!(k, 'app', 60)
    expect(await prefixed.claim(k, 60)).toBe(true)
    expect(await plain.get(k)).toBeNull()
    expect(await plain.setMembers!(k)).toEqual([])
    expect(await plain.claim(k, 60)).toBe(true)
    expect(await count('"App_2_authchart_values"', k)).toBe(1)
    expect(await count('"App_2_authchart_sets"', k)).toBe(1)
    expect(await count('"App_2_authchart_limits"', `authchart:${k}`)).toBe(1)
    expect(await count('"authchart_limits"', `authchart:${k}`)).toBe(1)
    // reset deletes the limiter's row of that key only
    await prefixed.reset(k)
    expect(await count('"App_2_authchart_limits"', `authchart:${k}`)).toBe(0)
    expect(await count('"App_2_authchart_values"', k)).toBe(0)
    expect(await count('"App_2_authchart_sets"', k)).toBe(0)
    expect(await count('"authchart_limits"', `authchart:${k}`)).toBe(1)
  })

  it('migrates with exec where the client has it (PGlite, whose query runs one statement)', async () => {
    const pglite = await PGlite.create()
    try {
      const store = postgresAuthStore(pglite)
      await store.migrate()
      const k = key('pglite')
      await store.put(k, 'v', 60)
      expect(await store.get(k)).toBe('v')
      expect(await store.claim(k, 60)).toBe(true)
      expect(await store.claim(k, 60)).toBe(false)
    } finally {
      await pglite.close()
    }
  }, 120_000)

  it('deletes rows past their time on a write at most every five minutes, never a live one', async () => {
    const store = postgresAuthStore(pool!, { tablePrefix: 'sweep' })
    await store.migrate()
    const start = Date.now()
    const at = (ms: number) => vi.spyOn(Date, 'now').mockReturnValue(start + ms)
    const [gone, live] = [key('gone'), key('live')]
    at(0)
    await store.put(gone, 'x', 1)
    await store.addToSet!(gone, 'x', 1)
    await store.put(live, 'y', 3600)
    await store.addToSet!(live, 'y', 3600)
    at(2000)
    expect(await store.get(gone)).toBeNull()
    expect(await store.setMembers!(gone)).toEqual([])
    await store.put(key('other'), 'z', 60)
    await store.addToSet!(key('other'), 'z', 60)
    // Within five minutes of the last sweep, the expired rows stay (unread).
    expect(await count('"sweep_authchart_values"', gone)).toBe(1)
    expect(await count('"sweep_authchart_sets"', gone)).toBe(1)
    at(5 * 60_000 - 1)
    await store.put(key('other'), 'z', 60)
    await store.addToSet!(key('other'), 'z', 60)
    expect(await count('"sweep_authchart_values"', gone)).toBe(1)
    expect(await count('"sweep_authchart_sets"', gone)).toBe(1)
    at(5 * 60_000)
    await store.put(key('other'), 'z', 60)
    await store.addToSet!(key('other'), 'z', 60)
    expect(await count('"sweep_authchart_values"', gone)).toBe(0)
    expect(await count('"sweep_authchart_sets"', gone)).toBe(0)
    expect(await count('"sweep_authchart_values"', live)).toBe(1)
    expect(await count('"sweep_authchart_sets"', live)).toBe(1)
    expect(await store.get(live)).toBe('y')
    expect(await store.setMembers!(live)).toEqual(['y'])
  })

  it('sweeps counter rows that ended an hour ago every five minutes, one sweep per store whatever its limits', async () => {
    const statements: string[] = []
    const pending: Promise<unknown>[] = []
    const db = {
      query: (text: string, params?: unknown[]) => {
        statements.push(text)
        const result = pool!.query(text, params)
        pending.push(result)
        return result
      },
    }
    const migrated = postgresAuthStore(pool!, { tablePrefix: 'timer' })
    await migrated.migrate()
    const [old, recent] = [key('old'), key('recent')]
    await pool!.query(`INSERT INTO "timer_authchart_limits" (key, points, expire) VALUES ($1, 1, $2), ($3, 1, $4)`, [
      `authchart:${old}`,
      Date.now() - 2 * 3_600_000,
      `authchart:${recent}`,
      Date.now() - 60_000,
    ])
    const sweeps = () => statements.filter((text) => /^DELETE FROM "?timer_authchart_limits"? WHERE expire </.test(text)).length
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const store = postgresAuthStore(db as never, { tablePrefix: 'timer' })
      await store.consume(key('three'), 3, 60)
      await Promise.all(pending)
      await vi.advanceTimersByTimeAsync(300_000)
      await Promise.all(pending)
      expect(sweeps()).toBe(1)
      // A second limit (another number of points) adds no sweep of its own.
      await store.consume(key('five'), 5, 60)
      await Promise.all(pending)
      await vi.advanceTimersByTimeAsync(300_000)
      await Promise.all(pending)
      expect(sweeps()).toBe(2)
    } finally {
      vi.useRealTimers()
    }
    const left = await pool!.query(`SELECT key FROM "timer_authchart_limits" WHERE key IN ($1, $2)`, [`authchart:${old}`, `authchart:${recent}`])
    expect(left.rows.map((row) => row.key)).toEqual([`authchart:${recent}`])
  })

  it('keeps the later expiry of a set member added twice', async () => {
    const store = postgresAuthStore(pool!)
    await store.migrate()
    const start = Date.now()
    const s = key('twice')
    vi.spyOn(Date, 'now').mockReturnValue(start)
    await store.addToSet!(s, 'm', 60)
    await store.addToSet!(s, 'm', 10)
    vi.spyOn(Date, 'now').mockReturnValue(start + 30_000)
    expect(await store.setMembers!(s)).toEqual(['m'])
    vi.spyOn(Date, 'now').mockReturnValue(start + 60_000)
    expect(await store.setMembers!(s)).toEqual([])
  })
})

describe('the Redis store', () => {
  needsRedis()
  it('writes its keys under the default prefix "authchart", or the one given, apart from each other', async () => {
    const raw = redisClient()
    const plain = redisAuthStore(raw)
    const other = redisAuthStore(redisClient(), { keyPrefix: 'app' })
    const k = key('prefix')
    await plain.put(k, 'plain', 60)
    await plain.addToSet!(k, 'plain', 60)
    await plain.claim(k, 60)
    expect(await raw.get(`authchart:value:${k}`)).toBe('plain')
    expect(await raw.smembers(`authchart:set:${k}`)).toEqual(['plain'])
    expect(await raw.exists(`authchart:${k}`)).toBe(1)
    expect(await other.get(k)).toBeNull()
    expect(await other.setMembers!(k)).toEqual([])
    expect(await other.claim(k, 60)).toBe(true)
    await other.put(k, 'app', 60)
    expect(await raw.get(`app:value:${k}`)).toBe('app')
    expect(await other.getMany!([k])).toEqual(['app'])
    expect(await plain.getMany!([k])).toEqual(['plain'])
    // A set lives as long as its newest member's time.
    expect(await raw.ttl(`authchart:set:${k}`)).toBeGreaterThan(50)
    await plain.reset(k)
    expect(await raw.exists(`authchart:${k}`, `authchart:value:${k}`, `authchart:set:${k}`)).toBe(0)
    expect(await other.get(k)).toBe('app')
  })

  it('reads many values only with a client that has MGET', async () => {
    expect(redisAuthStore({} as RedisClient).getMany).toBeUndefined()
    expect(redisAuthStore(redisClient() as unknown as RedisClient).getMany).toBeTypeOf('function')
  })

  it('fails every call at once while its client has lost the connection, and lets a booting client through', async () => {
    const client = redisClient()
    await client.ping()
    let status = 'ready'
    const view = new Proxy(client, {
      // Commands go to the real client (connected); only the status it reports is ours.
      get: (target, property) => {
        if (property === 'status') return status
        const value = Reflect.get(target, property, target) as unknown
        return typeof value === 'function' ? value.bind(target) : value
      },
    }) as unknown as RedisClient
    const store = redisAuthStore(view)
    const k = key('status')
    const calls = [
      () => store.claim(k, 60),
      () => store.increment(k, 60),
      () => store.consume(k, 5, 60),
      () => store.put(k, 'v', 60),
      () => store.get(k),
      () => store.getMany!([k]),
      () => store.reset(k),
      () => store.addToSet!(k, 'm', 60),
      () => store.setMembers!(k),
    ]
    for (const down of ['reconnecting', 'close', 'end']) {
      status = down
      for (const call of calls) await expect(call()).rejects.toThrow('Redis connection is not ready')
    }
    for (const up of ['ready', 'connecting', 'wait']) {
      status = up
      for (const call of calls) await expect(call()).resolves.not.toThrow()
    }
    // Nothing was sent while the client was down: the first claim of the key was the one made while up.
    expect(await redisAuthStore(client).claim(key('fresh'), 60)).toBe(true)
  })
})

describe('a store on limiters of its own', () => {
  /** Values without sets, kept by a memory store. */
  const values = (): ValueBackend => {
    const memory = memoryAuthStore()
    return { put: memory.put, get: memory.get, delete: memory.reset }
  }
  const failing = { consume: () => Promise.reject(new Error('connection lost')) }

  it('fails a count the limiter could not make, rather than answering it as refused', async () => {
    const store = limiterStore({ limiter: () => failing as never, forget: async () => {}, values: values() })
    await expect(store.consume('k', 3, 60)).rejects.toThrow('connection lost')
    await expect(store.claim('k', 60)).rejects.toThrow('connection lost')
    await expect(store.increment('k', 60)).rejects.toThrow('connection lost')
  })

  it('reads many values only when its values can, through them', async () => {
    const backend = { limiter: () => failing as never, forget: async () => {} }
    expect(limiterStore({ ...backend, values: values() }).getMany).toBeUndefined()
    const asked: (readonly string[])[] = []
    const many = limiterStore({ ...backend, values: { ...values(), getMany: async (keys) => (asked.push(keys), keys.map((k) => `value of ${k}`)) } })
    expect(await many.getMany!(['a', 'b'])).toEqual(['value of a', 'value of b'])
    expect(asked).toEqual([['a', 'b']])
  })

  it('keeps sets only when its values keep them, both operations', async () => {
    const backend = { limiter: () => failing as never, forget: async () => {} }
    const plain = limiterStore({ ...backend, values: values() })
    expect(plain.addToSet).toBeUndefined()
    expect(plain.setMembers).toBeUndefined()
    const halfway = limiterStore({ ...backend, values: { ...values(), addToSet: async () => {} } })
    expect(halfway.addToSet).toBeUndefined()
    expect(halfway.setMembers).toBeUndefined()
  })
})

describe('the guarded store', () => {
  const FAST = { ...DEFAULT_AVAILABILITY, storeTimeout: 50 }
  const hanging: AuthStore = {
    claim: () => new Promise(() => {}),
    increment: () => new Promise(() => {}),
    consume: () => new Promise(() => {}),
    put: () => new Promise(() => {}),
    get: () => new Promise(() => {}),
    getMany: () => new Promise(() => {}),
    reset: () => new Promise(() => {}),
    addToSet: () => new Promise(() => {}),
    setMembers: () => new Promise(() => {}),
  }

  it('passes every call and its arguments to the store and answers what it answers', async () => {
    const inner = memoryAuthStore()
    const store = guardStore(inner, FAST)
    expect(await store.claim('c', 60)).toBe(true)
    expect(await inner.claim('c', 60)).toBe(false)
    expect(await store.increment('n', 60)).toBe(1)
    expect(await inner.increment('n', 60)).toBe(2)
    expect(await store.consume('l', 1, 60)).toMatchObject({ allowed: true, count: 1 })
    expect(await store.consume('l', 1, 60)).toMatchObject({ allowed: false, count: 2 })
    await store.put('v', 'value', 60)
    expect(await inner.get('v')).toBe('value')
    expect(await store.get('v')).toBe('value')
    expect(await store.getMany!(['v', 'unknown'])).toEqual(['value', null])
    await store.addToSet!('s', 'member', 60)
    expect(await store.setMembers!('s')).toEqual(['member'])
    await store.reset('v')
    await store.reset('s')
    expect(await inner.get('v')).toBeNull()
    expect(await inner.setMembers!('s')).toEqual([])
  })

  it('fails each call that does not answer in time with ServiceUnavailable naming the operation', async () => {
    const store = guardStore(hanging, FAST)
    const calls: [string, () => Promise<unknown>][] = [
      ['claim', () => store.claim('k', 60)],
      ['increment', () => store.increment('k', 60)],
      ['consume', () => store.consume('k', 1, 60)],
      ['put', () => store.put('k', 'v', 60)],
      ['get', () => store.get('k')],
      ['getMany', () => store.getMany!(['k'])],
      ['reset', () => store.reset('k')],
      ['addToSet', () => store.addToSet!('k', 'm', 60)],
      ['setMembers', () => store.setMembers!('k')],
    ]
    for (const [operation, call] of calls) {
      const failure = (await call().catch((error: unknown) => error)) as ServiceUnavailable
      expect(failure).toBeInstanceOf(ServiceUnavailable)
      expect(failure.message).toContain(operation)
      // The part the outage is logged and answered under.
      expect(failure.part).toBe('store')
    }
  })

  it('reads many values only when the store can', () => {
    const { getMany: _many, ...withoutMany } = memoryAuthStore()
    expect(guardStore(withoutMany, FAST).getMany).toBeUndefined()
  })

  it('has no set operations when the store has none', () => {
    const { addToSet: _add, setMembers: _members, ...withoutSets } = memoryAuthStore()
    const store = guardStore(withoutSets, FAST)
    expect(store.addToSet).toBeUndefined()
    expect(store.setMembers).toBeUndefined()
    expect(guardStore({ ...withoutSets, addToSet: hanging.addToSet }, FAST).addToSet).toBeUndefined()
  })
})

describe('attempt limits in the store', () => {
  const limit = (points: number, window = 60, failOpen = false) => ({ points, window, failOpen })
  const down = (): AuthStore => ({
    ...memoryAuthStore(),
    consume: () => Promise.reject(new ServiceUnavailable('store', 'consume timed out', 5)),
    increment: () => Promise.reject(new ServiceUnavailable('store', 'increment timed out', 5)),
  })

  it('admits an attempt while every subject is within its limit, and counts every subject even when one is over', async () => {
    const store = memoryAuthStore()
    const user = { kind: 'user', value: 'alice', limit: limit(1, 300) }
    const client = { kind: 'client', value: '192.0.2.1', limit: limit(3, 60) }
    expect(await admitAttempt(store, 'signin', 's', [user, client])).toEqual({ allowed: true })
    const second = await admitAttempt(store, 'signin', 's', [user, client])
    expect(second.allowed).toBe(false)
    expect((second as { retryAfter: number }).retryAfter).toBeGreaterThan(250)
    // Two limits refusing: the longest wait of the two.
    const address = { kind: 'client', value: '192.0.2.9', limit: limit(1, 60) }
    await admitAttempt(store, 'signin', 's', [address])
    const both = await admitAttempt(store, 'signin', 's', [address, user])
    expect(both.allowed).toBe(false)
    expect((both as { retryAfter: number }).retryAfter).toBeGreaterThan(250)
    const reversed = await admitAttempt(store, 'signin', 's', [user, address])
    expect((reversed as { retryAfter: number }).retryAfter).toBeGreaterThan(250)
    // The client was counted on the refused attempt too: its third attempt is its last.
    expect(await admitAttempt(store, 'signin', 's', [client])).toEqual({ allowed: true })
    expect((await admitAttempt(store, 'signin', 's', [client])).allowed).toBe(false)
    expect(await admitAttempt(store, 'signin', 's', [])).toEqual({ allowed: true })
  })

  it('counts a subject apart by scope, kind, value and secret, and keys it by a hash, never in clear', async () => {
    const store = memoryAuthStore()
    const consumed: string[] = []
    const spy = { ...store, consume: (k: string, p: number, w: number) => (consumed.push(k), store.consume(k, p, w)) }
    const one = (scope: string, kind: string, value: string, secret: string) =>
      admitAttempt(spy, scope, secret, [{ kind, value, limit: limit(1) }])
    expect((await one('a', 'user', 'alice', 's')).allowed).toBe(true)
    expect((await one('b', 'user', 'alice', 's')).allowed).toBe(true)
    expect((await one('a', 'client', 'alice', 's')).allowed).toBe(true)
    expect((await one('a', 'user', 'bob', 's')).allowed).toBe(true)
    expect((await one('a', 'user', 'alice', 't')).allowed).toBe(true)
    expect((await one('a', 'user', 'alice', 's')).allowed).toBe(false)
    expect(consumed[0]).toMatch(/^limit:a:user:[0-9a-f]{64}$/)
    expect(consumed.join()).not.toContain('alice')
  })

  it('lets an attempt through uncounted with a warning when a limit fails open and the store is down, and refuses otherwise', async () => {
    const logger = spyLogger()
    const open = [{ kind: 'user', value: 'alice', limit: limit(1, 60, true) }]
    expect(await admitAttempt(down(), 'signin', 's', open, logger)).toEqual({ allowed: true })
    expect(logger.warn).toHaveBeenCalledWith('rate-limit-unchecked')
    const closed = [{ kind: 'user', value: 'alice', limit: limit(1, 60, false) }]
    await expect(admitAttempt(down(), 'signin', 's', closed, logger)).rejects.toBeInstanceOf(ServiceUnavailable)
    // A failure that is not an outage is a bug: never let through.
    const broken = { ...memoryAuthStore(), consume: () => Promise.reject(new TypeError('bug')) }
    await expect(admitAttempt(broken, 'signin', 's', open, logger)).rejects.toBeInstanceOf(TypeError)
    // Without a logger, failing open still lets it through.
    expect(await admitAttempt(down(), 'signin', 's', open)).toEqual({ allowed: true })
  })

  it('counts a send like increment, as the first of its window when the store is down and the limit fails open', async () => {
    const logger = spyLogger()
    const store = memoryAuthStore()
    expect(await countAttempt(store, 'send:x', 60, false, logger)).toBe(1)
    expect(await countAttempt(store, 'send:x', 60, false, logger)).toBe(2)
    expect(logger.warn).not.toHaveBeenCalled()
    expect(await countAttempt(down(), 'send:x', 60, true, logger)).toBe(1)
    expect(logger.warn).toHaveBeenCalledWith('rate-limit-unchecked')
    await expect(countAttempt(down(), 'send:x', 60, false, logger)).rejects.toBeInstanceOf(ServiceUnavailable)
    const broken = { ...memoryAuthStore(), increment: () => Promise.reject(new TypeError('bug')) }
    await expect(countAttempt(broken, 'send:x', 60, true, logger)).rejects.toBeInstanceOf(TypeError)
  })
})
