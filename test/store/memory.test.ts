import { describe, expect, it } from 'vitest'
import { memoryAuthStore } from '../../core/store/index.js'
import { assertConfig } from '../../core/index.js'
import { testConfig } from '../fixtures/http.js'

describe('the in-memory store', () => {
  it('grants a claim once, however many requests race for it', async () => {
    const store = memoryAuthStore()
    const results = await Promise.all(Array.from({ length: 20 }, () => store.claim('jti-1', 60)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await store.claim('jti-2', 60)).toBe(true)
  })

  it('keeps a claim whatever TTL a later caller names for the same key', async () => {
    // A replayed envelope is claimed a second later, with a TTL one second shorter.
    const store = memoryAuthStore()
    expect(await store.claim('envelope:x', 900)).toBe(true)
    expect(await store.claim('envelope:x', 899)).toBe(false)
    expect(await store.claim('envelope:x', 5)).toBe(false)
    await store.increment('count', 60)
    expect(await store.increment('count', 30)).toBe(2)
  })

  it('counts hits per key and forgets a counter when reset', async () => {
    const store = memoryAuthStore()
    expect(await store.increment('attempts:a', 60)).toBe(1)
    expect(await store.increment('attempts:a', 60)).toBe(2)
    expect(await store.increment('attempts:b', 60)).toBe(1)
    await store.reset('attempts:a')
    expect(await store.increment('attempts:a', 60)).toBe(1)
  })

  it('forgets a counter once its time is up', async () => {
    const store = memoryAuthStore()
    await store.increment('short', 1)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(await store.increment('short', 1)).toBe(1)
  })

  it('is created once per config when none is configured, and the configured one is the one called', async () => {
    const config = testConfig()
    expect(assertConfig(config).store).toBe(assertConfig(config).store)
    const own = memoryAuthStore()
    // The configured store is called through a deadline (config.availability), not replaced.
    const resolved = assertConfig(testConfig({ store: own })).store
    await resolved.put('key', 'value', 60)
    expect(await own.get('key')).toBe('value')
  })
})
