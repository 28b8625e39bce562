/**
 * The server-side store's interface: counters and one-time claims shared by every instance. A
 * leaf, so the config types can name it without an import circle.
 *
 * @module
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible'

/** The answer of {@link AuthStore.consume}: whether the attempt is within the limit, and when to retry. */
export interface LimitResult {
  /** `true` while the count is within the limit. */
  allowed: boolean
  /** Attempts counted in the current window, this one included. */
  count: number
  /** Seconds until the window ends (at least 1). */
  retryAfter: number
}

/** Counters, limits, one-time claims and short-lived values that outlive a request, kept on the server. */
export interface AuthStore {
  /**
   * Claims `key` for `ttlSeconds`, atomically: `true` for the first caller, `false` for every other
   * while the claim lives (a one-time value spent once, however many requests race). A claim is
   * also a lock: {@link AuthStore.reset} releases it early.
   */
  claim(key: string, ttlSeconds: number): Promise<boolean>
  /**
   * Adds one to the counter `key` and returns the new count, atomically. The counter starts when
   * it is first incremented and is forgotten `ttlSeconds` later.
   */
  increment(key: string, ttlSeconds: number): Promise<number>
  /**
   * Counts one attempt against a limit of `points` per `windowSeconds` (a fixed window that starts
   * with the first attempt), atomically.
   */
  consume(key: string, points: number, windowSeconds: number): Promise<LimitResult>
  /** Keeps `value` under `key` for `ttlSeconds`, replacing what was there. */
  put(key: string, value: string, ttlSeconds: number): Promise<void>
  /** The value kept under `key`, or `null` when there is none or its time is up. */
  get(key: string): Promise<string | null>
  /** Forgets the counter, claim or value `key`. */
  reset(key: string): Promise<void>
  /**
   * Optional: the values kept under each of `keys` (in their order, `null` where there is none),
   * in one round trip. The session cache checks its revocation markers with it on every read; a
   * store without it is asked key by key (in parallel). The bundled stores have it.
   */
  getMany?(keys: readonly string[]): Promise<(string | null)[]>
  /**
   * Optional: adds `member` to the set `key`, atomically, kept at least `ttlSeconds` from now (the
   * set may live as long as its newest member). An index from a provider's user or session to ours
   * (back-channel logout) needs it; the bundled stores have it.
   */
  addToSet?(key: string, member: string, ttlSeconds: number): Promise<void>
  /** Optional, with {@link AuthStore.addToSet}: the members of the set `key` (none when it is gone). */
  setMembers?(key: string): Promise<string[]>
}

/** Where a store built on rate-limiter-flexible keeps its short-lived values. */
export interface ValueBackend {
  put(key: string, value: string, ttlSeconds: number): Promise<void>
  get(key: string): Promise<string | null>
  /** Optional: see {@link AuthStore.getMany}. */
  getMany?(keys: readonly string[]): Promise<(string | null)[]>
  delete(key: string): Promise<void>
  /** Optional: see {@link AuthStore.addToSet}. */
  addToSet?(key: string, member: string, ttlSeconds: number): Promise<void>
  /** Optional: see {@link AuthStore.setMembers}. */
  setMembers?(key: string): Promise<string[]>
}

/** What {@link limiterStore} builds a store from. */
export interface LimiterBackend {
  /** A rate-limiter-flexible limiter allowing `points` per key (its duration is given per call). */
  limiter(points: number): RateLimiterAbstract | Promise<RateLimiterAbstract>
  /** Forgets `key` in every limiter (`delete` on one of them when they share their storage). */
  forget(key: string): Promise<void>
  values: ValueBackend
}
