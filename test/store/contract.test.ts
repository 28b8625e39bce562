/**
 * One contract, every store: the same cases run on memory, PGlite, a real PostgreSQL server and a
 * real Redis. What they prove is what the engine relies on: a claim is won once however many
 * callers race (even through different clients, as different instances would), counters and limits
 * are atomic and expire, values live for their TTL (and are read several at once), and reset forgets all three.
 */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { redisAuthStore } from '../../stores/redis.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
let unique = 0
const key = (name: string) => `${name}:${process.pid}:${++unique}`

interface Backend {
  name: string
  /** Two stores on the same storage, as two instances would hold them. */
  pair(): Promise<[AuthStore, AuthStore]>
  close(): Promise<void>
}

let postgres: PostgresServer
let redis: RedisServer
let pglite: PGlite

beforeAll(async () => {
  ;[postgres, redis] = await Promise.all([startPostgres(), startRedis()])
})
afterAll(async () => {
  // The server ends its pools, every connection closed, before it stops.
  await pglite?.close()
  await Promise.all([postgres?.stop(), redis?.stop()])
})

const backends: Backend[] = [
  {
    name: 'memory',
    async pair() {
      const store = memoryAuthStore()
      return [store, store]
    },
    close: async () => {},
  },
  {
    name: 'PGlite',
    async pair() {
      pglite ??= new PGlite()
      const a = postgresAuthStore(pglite)
      await a.migrate()
      return [a, postgresAuthStore(pglite)]
    },
    close: async () => {},
  },
  {
    name: 'PostgreSQL',
    async pair() {
      const url = await postgres.createDatabase(`store_${unique++}`)
      const [one, two] = [postgres.pool(url), postgres.pool(url)]
      const a = postgresAuthStore(one, { tablePrefix: 'app' })
      const b = postgresAuthStore(two, { tablePrefix: 'app' })
      await Promise.all([a.migrate(), b.migrate()])
      return [a, b]
    },
    close: async () => {},
  },
  {
    name: 'Redis',
    async pair() {
      return [redisAuthStore(redis.client()), redisAuthStore(redis.client())]
    },
    close: async () => {},
  },
]

describe.each(backends)('the $name store', (backend) => {
  let a: AuthStore
  let b: AuthStore
  beforeAll(async () => {
    ;[a, b] = await backend.pair()
  })

  it('grants a claim once, however many callers on however many clients race for it', async () => {
    const k = key('claim')
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claim(k, 60)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await a.claim(key('other'), 60)).toBe(true)
  })

  it('keeps a claim whatever TTL a later caller names, and releases it on reset', async () => {
    const k = key('envelope')
    expect(await a.claim(k, 900)).toBe(true)
    expect(await b.claim(k, 5)).toBe(false)
    await b.reset(k)
    expect(await a.claim(k, 900)).toBe(true)
  })

  it('counts hits atomically across clients and forgets a counter on reset', async () => {
    const k = key('attempts')
    const counts = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).increment(k, 60)))
    expect([...counts].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    await a.reset(k)
    expect(await b.increment(k, 60)).toBe(1)
  })

  it('allows a limit of points per window, then refuses with the seconds left', async () => {
    const k = key('limit')
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => (i % 2 ? a : b).consume(k, 3, 120)))
    expect(results.filter((r) => r.allowed)).toHaveLength(3)
    const refused = await a.consume(k, 3, 120)
    expect(refused).toMatchObject({ allowed: false, count: 6 })
    expect(refused.retryAfter).toBeGreaterThan(100)
    expect(refused.retryAfter).toBeLessThanOrEqual(120)
  })

  it('forgets counters and claims once their time is up', async () => {
    const [counter, claim] = [key('short'), key('short-claim')]
    await a.increment(counter, 1)
    expect(await a.claim(claim, 1)).toBe(true)
    await sleep(1100)
    expect(await b.increment(counter, 1)).toBe(1)
    expect(await b.claim(claim, 1)).toBe(true)
  })

  it('keeps a value for its TTL, shared between clients, replaced by a later put and gone on reset', async () => {
    const k = key('value')
    expect(await a.get(k)).toBeNull()
    await a.put(k, 'first', 60)
    expect(await b.get(k)).toBe('first')
    await b.put(k, 'second', 60)
    expect(await a.get(k)).toBe('second')
    await a.reset(k)
    expect(await b.get(k)).toBeNull()
    await a.put(k, 'brief', 1)
    await sleep(1100)
    expect(await b.get(k)).toBeNull()
  })

  it('reads several values in one call, in the order asked, null where there is none or its time is up', async () => {
    const [one, two, missing, brief] = [key('many-1'), key('many-2'), key('many-missing'), key('many-brief')]
    await Promise.all([a.put(one, '1', 60), b.put(two, '2', 60), a.put(brief, 'b', 1)])
    expect(await b.getMany!([two, missing, one, brief])).toEqual(['2', null, '1', 'b'])
    await sleep(1100)
    expect(await a.getMany!([brief, one])).toEqual([null, '1'])
    expect(await a.getMany!([])).toEqual([])
  })

  it('keeps a set shared between clients: members added once each, for their TTL, gone on reset', async () => {
    const k = key('set')
    expect(await a.setMembers!(k)).toEqual([])
    await Promise.all([a.addToSet!(k, 'one', 60), b.addToSet!(k, 'two', 60), a.addToSet!(k, 'one', 60)])
    expect((await b.setMembers!(k)).sort()).toEqual(['one', 'two'])
    expect(await a.setMembers!(key('another set'))).toEqual([])
    await b.reset(k)
    expect(await a.setMembers!(k)).toEqual([])
    await a.addToSet!(k, 'brief', 1)
    await sleep(1100)
    expect(await b.setMembers!(k)).toEqual([])
  })
})

describe('the PostgreSQL store', () => {
  it('refuses a table prefix that is not a plain identifier', () => {
    expect(() => postgresAuthStore(new PGlite(), { tablePrefix: 'x"; DROP TABLE users; --' })).toThrow(TypeError)
  })
})
