/// <reference path="../core/deep-imports.d.ts" />
/**
 * A shared {@link AuthStore} in Redis, through an `ioredis` client. Every instance connected to the
 * same Redis shares the claims, counters, limits and values; Redis expires them on its own.
 *
 * ```ts
 * import { Redis } from 'ioredis'
 * import { redisAuthStore } from 'authchart/stores/redis'
 *
 * const store = redisAuthStore(new Redis(process.env.REDIS_URL!))
 * ```
 *
 * @module
 */
// One file per limiter: the package index requires `cluster`, which an ESM bundle cannot load.
import RateLimiterRedis from 'rate-limiter-flexible/lib/RateLimiterRedis.js'
import { limiterStore, type AuthStore } from '../core/store/index.js'

/**
 * What the store calls on its client: `ioredis`'s `Redis` (and `Cluster`) have all of it.
 * rate-limiter-flexible also defines its Lua script on it (`defineCommand`).
 */
export interface RedisClient {
  set(key: string, value: string, mode: 'EX', seconds: number): Promise<unknown>
  get(key: string): Promise<string | null>
  /** Optional (ioredis has it): several values in one command, for the session cache's markers. */
  mget?(...keys: string[]): Promise<(string | null)[]>
  del(...keys: string[]): Promise<number>
  sadd(key: string, ...members: string[]): Promise<number>
  smembers(key: string): Promise<string[]>
  expire(key: string, seconds: number): Promise<number>
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void
  /** ioredis's connection state; a command is sent only while it is `ready`. */
  readonly status?: string
}

/** Options of {@link redisAuthStore}. */
export interface RedisAuthStoreOptions {
  /** Prefix of every key the store writes (default `authchart`). */
  keyPrefix?: string
}

/**
 * Statuses in which ioredis would keep a command in its offline queue until the connection comes
 * back: a client that lost its connection. (A client still making its first connection, `wait` or
 * `connecting`, is let through: it is booting, not down.)
 */
const DISCONNECTED: ReadonlySet<string> = new Set(['reconnecting', 'close', 'end'])

/**
 * A store in Redis. Counting is rate-limiter-flexible's `RateLimiterRedis` (one Lua script per
 * attempt, atomic in Redis); values are plain keys with `EX`, sets Redis sets with `EXPIRE`.
 *
 * While the client has lost its connection (Redis restarting, the network gone), every call fails
 * at once instead of waiting in ioredis's offline queue: the request is answered 503 without
 * waiting for the store timeout, and no claim or count is sent later on behalf of a request that
 * was already answered.
 *
 * @see https://github.com/animir/node-rate-limiter-flexible/wiki/Redis
 */
export function redisAuthStore(client: RedisClient, options: RedisAuthStoreOptions = {}): AuthStore {
  const prefix = options.keyPrefix ?? 'authchart'
  const valueKey = (key: string) => `${prefix}:value:${key}`
  const setKey = (key: string) => `${prefix}:set:${key}`
  const store = limiterStore({
    limiter: (points) => new RateLimiterRedis({ storeClient: client, points, duration: 1, keyPrefix: prefix }),
    forget: async (key) => {
      await client.del(`${prefix}:${key}`)
    },
    values: {
      async put(key, value, ttlSeconds) {
        await client.set(valueKey(key), value, 'EX', ttlSeconds)
      },
      get: (key) => client.get(valueKey(key)),
      // MGET needs at least one key.
      ...(client.mget
        ? { getMany: async (keys: readonly string[]) => (keys.length === 0 ? [] : client.mget!(...keys.map(valueKey))) }
        : {}),
      async delete(key) {
        await client.del(valueKey(key), setKey(key))
      },
      async addToSet(key, member, ttlSeconds) {
        await client.sadd(setKey(key), member)
        // Every member is added with the same lifetime: the newest one's keeps the older ones too.
        await client.expire(setKey(key), ttlSeconds)
      },
      setMembers: (key) => client.smembers(setKey(key)),
    },
  })
  const connected = <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      // Stryker disable next-line ConditionalExpression: eq#store-redis-status-undefined
      client.status !== undefined && DISCONNECTED.has(client.status)
        ? // The message rate-limiter-flexible uses for the same condition.
          Promise.reject(new Error('Redis connection is not ready'))
        : call(...args)
  return {
    claim: connected(store.claim),
    increment: connected(store.increment),
    consume: connected(store.consume),
    put: connected(store.put),
    get: connected(store.get),
    ...(store.getMany ? { getMany: connected(store.getMany) } : {}),
    reset: connected(store.reset),
    addToSet: connected(store.addToSet!),
    setMembers: connected(store.setMembers!),
  }
}
