/// <reference path="../deep-imports.d.ts" />
/**
 * The server-side store: the counters, limits, one-time claims and short-lived values that a
 * sealed cookie cannot hold safely, because its holder can always replay an older copy (an attempt
 * counter kept in the cookie would reset with every replay). One small interface; the default keeps
 * everything in this process's memory, and a shared implementation (`authchart/stores/postgres`,
 * `authchart/stores/redis`) makes the guarantees hold across several instances.
 *
 * Counting is rate-limiter-flexible's in every implementation (its memory, PostgreSQL and Redis
 * limiters, atomic in their engine); only the short-lived values (a refresh result, a not-before
 * time) are the implementation's own, one keyed row or one Redis key each.
 *
 * @module
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
// One file per limiter: the package index requires `cluster` (see ../deep-imports.d.ts).
import type RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js'
import type RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js'
import type { ResolvedAvailability } from '../config/types.js'
import { withDeadline } from '../outage.js'
import type { AuthStore, LimiterBackend, LimitResult, ValueBackend } from './types.js'

export type { AuthStore, LimiterBackend, LimitResult, ValueBackend }


const wholeSeconds = (ttl: number) => Math.max(1, Math.ceil(ttl))

// rate-limiter-flexible is CommonJS: loaded at the first count, not at start (a session read counts nothing).
let resultClass: Promise<typeof RateLimiterRes> | undefined
/** The class of a refusal of rate-limiter-flexible's limiters. */
const limiterResult = () => (resultClass ??= import('rate-limiter-flexible/lib/RateLimiterRes.js').then((module) => module.default))

/**
 * An {@link AuthStore} on rate-limiter-flexible limiters: claims are a limit of one, counters a
 * limit that is never reached, limits what they say. Each call names its own window (a key keeps
 * the window it was created with, whatever later callers ask).
 *
 * @see https://github.com/animir/node-rate-limiter-flexible
 */
export function limiterStore(backend: LimiterBackend): AuthStore {
  const limiters = new Map<number, Promise<RateLimiterAbstract>>()
  const limiter = (points: number) => {
    let found = limiters.get(points)
    if (!found) limiters.set(points, (found = Promise.resolve(backend.limiter(points))))
    return found
  }
  const consume = async (key: string, points: number, windowSeconds: number): Promise<LimitResult> => {
    const options = { customDuration: wholeSeconds(windowSeconds) }
    try {
      const res = await (await limiter(points)).consume(key, 1, options)
      return { allowed: true, count: res.consumedPoints, retryAfter: wholeSeconds(res.msBeforeNext / 1000) }
    } catch (refused) {
      if (!(refused instanceof (await limiterResult()))) throw refused
      return { allowed: false, count: refused.consumedPoints, retryAfter: wholeSeconds(refused.msBeforeNext / 1000) }
    }
  }
  const { values } = backend
  return {
    claim: async (key, ttlSeconds) => (await consume(key, 1, ttlSeconds)).allowed,
    increment: async (key, ttlSeconds) => (await consume(key, Number.MAX_SAFE_INTEGER, ttlSeconds)).count,
    consume,
    put: (key, value, ttlSeconds) => values.put(key, value, wholeSeconds(ttlSeconds)),
    get: (key) => values.get(key),
    ...(values.getMany ? { getMany: (keys: readonly string[]) => values.getMany!(keys) } : {}),
    async reset(key) {
      await Promise.all([backend.forget(key), values.delete(key)])
    },
    ...(values.addToSet && values.setMembers
      ? {
          addToSet: (key: string, member: string, ttlSeconds: number) => values.addToSet!(key, member, wholeSeconds(ttlSeconds)),
          setMembers: (key: string) => values.setMembers!(key),
        }
      : {}),
  }
}

/** Short-lived values (and sets) in Maps, swept of expired entries as they grow. */
function memoryValues(): ValueBackend {
  const values = new Map<string, { value: string; until: number }>()
  const sets = new Map<string, Map<string, number>>()
  let sweepAt = 1024
  let setSweepAt = 1024
  const liveValue = (key: string): string | null => {
    const found = values.get(key)
    if (!found) return null
    if (found.until > Date.now()) return found.value
    values.delete(key)
    return null
  }
  const liveMembers = (key: string): string[] => {
    const members = sets.get(key)
    if (!members) return []
    const now = Date.now()
    for (const [member, until] of members) if (until <= now) members.delete(member)
    // Stryker disable next-line ConditionalExpression: eq#store-memory-sweep
    if (members.size === 0) sets.delete(key)
    return [...members.keys()]
  }
  return {
    async addToSet(key, member, ttlSeconds) {
      let members = sets.get(key)
      if (!members) sets.set(key, (members = new Map()))
      members.set(member, Date.now() + ttlSeconds * 1000)
      // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#store-memory-sweep
      if (sets.size < setSweepAt) return
      // Stryker disable next-line ArrayDeclaration: eq#store-memory-sweep
      for (const k of [...sets.keys()]) liveMembers(k)
      // Stryker disable next-line MethodExpression,ArithmeticOperator: eq#store-memory-sweep
      setSweepAt = Math.max(1024, sets.size * 2)
    },
    async setMembers(key) {
      return liveMembers(key)
    },
    async put(key, value, ttlSeconds) {
      values.set(key, { value, until: Date.now() + ttlSeconds * 1000 })
      // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#store-memory-sweep
      if (values.size < sweepAt) return
      const now = Date.now()
      // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#store-memory-sweep
      for (const [k, v] of values) if (v.until <= now) values.delete(k)
      // Stryker disable next-line MethodExpression,ArithmeticOperator: eq#store-memory-sweep
      sweepAt = Math.max(1024, values.size * 2)
    },
    async get(key) {
      return liveValue(key)
    },
    async getMany(keys) {
      return keys.map(liveValue)
    },
    async delete(key) {
      values.delete(key)
      sets.delete(key)
    },
  }
}

/**
 * The application's store as the engine calls it: every call has the store's deadline, and a call
 * that times out or finds the store unreachable fails with `ServiceUnavailable` (the request is
 * answered 503). A claim that cannot be made, or a count that cannot be read, therefore refuses the
 * request: nothing is ever treated as "not yet claimed" because the store did not answer.
 */
export function guardStore(store: AuthStore, availability: ResolvedAvailability): AuthStore {
  const call = <T>(operation: string, run: () => Promise<T>) => withDeadline('store', operation, availability, run)
  return {
    claim: (key, ttlSeconds) => call('claim', () => store.claim(key, ttlSeconds)),
    increment: (key, ttlSeconds) => call('increment', () => store.increment(key, ttlSeconds)),
    consume: (key, points, windowSeconds) => call('consume', () => store.consume(key, points, windowSeconds)),
    put: (key, value, ttlSeconds) => call('put', () => store.put(key, value, ttlSeconds)),
    get: (key) => call('get', () => store.get(key)),
    reset: (key) => call('reset', () => store.reset(key)),
    ...(store.getMany ? { getMany: (keys: readonly string[]) => call('getMany', () => store.getMany!(keys)) } : {}),
    // The provider-logout index (optional): a store that keeps sets keeps them behind the same deadline.
    ...(store.addToSet && store.setMembers
      ? {
          addToSet: (key: string, member: string, ttlSeconds: number) =>
            call('addToSet', () => store.addToSet!(key, member, ttlSeconds)),
          setMembers: (key: string) => call('setMembers', () => store.setMembers!(key)),
        }
      : {}),
  }
}

/**
 * A store in this process's memory, through rate-limiter-flexible's in-memory limiter (atomic within
 * the process, expiring on its own). The default when the config names no `store`: right for one
 * process; several instances need a shared store.
 */
export function memoryAuthStore(): AuthStore {
  // Each in-memory limiter has its own storage: a reset forgets the key in all of them.
  const made: RateLimiterMemory[] = []
  return limiterStore({
    async limiter(points) {
      const { default: Limiter } = await import('rate-limiter-flexible/lib/RateLimiterMemory.js')
      const limiter = new Limiter({ points, duration: 1 })
      made.push(limiter)
      return limiter
    },
    async forget(key) {
      await Promise.all(made.map((limiter) => limiter.delete(key)))
    },
    values: memoryValues(),
  })
}
