/**
 * The server-side store: the counters and one-time claims that a sealed cookie cannot hold safely,
 * because its holder can always replay an older copy (an attempt counter kept in the cookie would
 * reset with every replay). One small interface; the default keeps everything in this process's
 * memory, and a shared implementation (PostgreSQL, Redis) makes the guarantees hold across several
 * instances.
 *
 * @module
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible'

/** Counters and one-time claims that outlive a request, kept on the server. */
export interface AuthStore {
  /**
   * Claims `key` for `ttlSeconds`, atomically: `true` for the first caller, `false` for every other
   * while the claim lives (a one-time value spent once, however many requests race).
   */
  claim(key: string, ttlSeconds: number): Promise<boolean>
  /**
   * Adds one to the counter `key` and returns the new count, atomically. The counter starts when
   * it is first incremented and is forgotten `ttlSeconds` later.
   */
  increment(key: string, ttlSeconds: number): Promise<number>
  /** Forgets the counter or claim `key`. */
  reset(key: string): Promise<void>
}

/**
 * A store in this process's memory, through rate-limiter-flexible's in-memory limiter (atomic within
 * the process, expiring on its own). The default when the config names no `store`: right for one
 * process; several instances need a shared store.
 */
export function memoryAuthStore(): AuthStore {
  // One limiter per kind, whatever the TTL: a key is one key, however long its callers ask it to
  // live (each call's TTL applies when the key is created).
  const claims = new RateLimiterMemory({ points: 1, duration: 1 })
  const counters = new RateLimiterMemory({ points: Number.MAX_SAFE_INTEGER, duration: 1 })
  const seconds = (ttl: number) => ({ customDuration: Math.max(1, Math.ceil(ttl)) })
  return {
    async claim(key, ttlSeconds) {
      try {
        await claims.consume(key, 1, seconds(ttlSeconds))
        return true
      } catch (refused) {
        if (refused instanceof RateLimiterRes) return false
        throw refused
      }
    },
    async increment(key, ttlSeconds) {
      return (await counters.consume(key, 1, seconds(ttlSeconds))).consumedPoints
    },
    async reset(key) {
      await Promise.all([counters.delete(key), claims.delete(key)])
    },
  }
}
