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
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { limiterStore, type AuthStore } from '../core/store/index.js'

/**
 * What the store calls on its client: `ioredis`'s `Redis` (and `Cluster`) have all of it.
 * rate-limiter-flexible also defines its Lua script on it (`defineCommand`).
 */
export interface RedisClient {
  set(key: string, value: string, mode: 'EX', seconds: number): Promise<unknown>
  get(key: string): Promise<string | null>
  del(...keys: string[]): Promise<number>
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
 * A store in Redis. Counting is rate-limiter-flexible's `RateLimiterRedis` (one Lua script per
 * attempt, atomic in Redis); values are plain keys with `EX`.
 *
 * While the client is not connected (Redis restarting, the network gone), every call fails at
 * once instead of waiting in ioredis's offline queue: the request is answered 503 without waiting
 * for the store timeout, and no claim or count is sent later on behalf of a request that was
 * already answered.
 *
 * @see https://github.com/animir/node-rate-limiter-flexible/wiki/Redis
 */
export function redisAuthStore(client: RedisClient, options: RedisAuthStoreOptions = {}): AuthStore {
  const prefix = options.keyPrefix ?? 'authchart'
  const valueKey = (key: string) => `${prefix}:value:${key}`
  // rate-limiter-flexible's own check (rejectIfRedisNotReady) fails with this message too.
  const whenReady = <T>(call: () => Promise<T>): Promise<T> =>
    client.status === undefined || client.status === 'ready'
      ? call()
      : Promise.reject(new Error('Redis connection is not ready'))
  return limiterStore({
    limiter: (points) =>
      new RateLimiterRedis({ storeClient: client, points, duration: 1, keyPrefix: prefix, rejectIfRedisNotReady: true }),
    forget: (key) => whenReady(async () => void (await client.del(`${prefix}:${key}`))),
    values: {
      put: (key, value, ttlSeconds) => whenReady(async () => void (await client.set(valueKey(key), value, 'EX', ttlSeconds))),
      get: (key) => whenReady(() => client.get(valueKey(key))),
      delete: (key) => whenReady(async () => void (await client.del(valueKey(key)))),
    },
  })
}
