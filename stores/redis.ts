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
  del(...keys: string[]): Promise<number>
  sadd(key: string, ...members: string[]): Promise<number>
  smembers(key: string): Promise<string[]>
  expire(key: string, seconds: number): Promise<number>
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void
}

/** Options of {@link redisAuthStore}. */
export interface RedisAuthStoreOptions {
  /** Prefix of every key the store writes (default `authchart`). */
  keyPrefix?: string
}

/**
 * A store in Redis. Counting is rate-limiter-flexible's `RateLimiterRedis` (one Lua script per
 * attempt, atomic in Redis); values are plain keys with `EX`, sets Redis sets with `EXPIRE`.
 *
 * @see https://github.com/animir/node-rate-limiter-flexible/wiki/Redis
 */
export function redisAuthStore(client: RedisClient, options: RedisAuthStoreOptions = {}): AuthStore {
  const prefix = options.keyPrefix ?? 'authchart'
  const valueKey = (key: string) => `${prefix}:value:${key}`
  const setKey = (key: string) => `${prefix}:set:${key}`
  return limiterStore({
    limiter: (points) => new RateLimiterRedis({ storeClient: client, points, duration: 1, keyPrefix: prefix }),
    forget: async (key) => {
      await client.del(`${prefix}:${key}`)
    },
    values: {
      async put(key, value, ttlSeconds) {
        await client.set(valueKey(key), value, 'EX', ttlSeconds)
      },
      get: (key) => client.get(valueKey(key)),
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
}
