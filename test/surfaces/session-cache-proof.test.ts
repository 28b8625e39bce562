/**
 * The session cache after a re-authentication (issue #48 item 4): with `session.cache` and a store
 * shared by two instances, the action a re-authentication resumes sees the fresh proof at once,
 * on whichever instance it lands, instead of being asked again until the cached copy (minted
 * before the proof) expires. A copy of the cookies from before the proof (another tab's request in
 * flight) is refused too, as a revocation refuses it. Over the memory store shared in-process and
 * over a real Redis server; the module-level check is the last test.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig } from '../../core/index.js'
import type { RequestContext } from '../../core/http/context.js'
import { readSessionCache, refreshCachedSessionAfterProof, writeSessionCache } from '../../core/session/cache.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { redisAuthStore } from '../../stores/redis.js'
import { Client, featureConfig } from '../fixtures/http.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'

const HTML = { accept: 'text/html' }
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0)
const ELEVEN_MINUTES = 11 * 60
const at = (seconds: number) => vi.setSystemTime(T0 + seconds * 1000)

/** Two instances of one application: the same database rows, the same shared store. */
function twoInstances(store: AuthStore): [AuthConfig, AuthConfig] {
  const rows = createMemoryStore()
  const instance = () =>
    featureConfig({
      adapter: MemoryAdapter(rows),
      store,
      session: { strategy: 'database', cache: { maxAge: 60 } },
    })
  return [instance(), instance()]
}

/** The same browser (one cookie jar) talking to `config`'s instance. */
function on(config: AuthConfig, browser: Client): Client {
  const client = new Client(config)
  Object.defineProperty(client, 'jar', { value: browser.jar })
  return client
}

const askToEnrol = async (client: Client) => client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() }, headers: HTML })
const REAUTH = 'https://authchart.test/auth/step/reauthenticate'

/** Alice signs in on A, her proof grows old, B caches her session and asks her to re-authenticate. */
async function staleAndAsked(a: AuthConfig, b: AuthConfig) {
  at(0)
  const browser = new Client(a)
  await browser.signIn({ username: 'alice', password: 'wonderland' })
  at(ELEVEN_MINUTES)
  const onB = on(b, browser)
  expect((await onB.session()).body, 'signed in, the session now cached').not.toBeNull()
  expect(browser.jar.get('__Secure-authjs.session-cache'), 'a cached copy').toBeDefined()
  const asked = await askToEnrol(onB)
  expect(asked.headers.get('location')).toBe(REAUTH)
  return { browser, onA: on(a, browser), onB }
}

async function prove(client: Client) {
  const proven = await client.send({
    path: '/step/reauthenticate',
    body: { event: 'reauth.password', username: 'alice', password: 'wonderland', csrfToken: await client.csrfToken() },
    headers: HTML,
  })
  expect(proven.status, 'the proof is accepted: the resume page').toBe(200)
}

function scenarios(name: string, storeOf: () => AuthStore) {
  describe(`re-authentication with a session cache (${name})`, () => {
    it('lets the resumed action through on the other instance at once, not after the cached copy expires', async () => {
      const [a, b] = twoInstances(storeOf())
      const { onA, onB } = await staleAndAsked(a, b)
      await prove(onA)
      at(ELEVEN_MINUTES + 1)
      const resumed = await askToEnrol(onB)
      expect(resumed.headers.get('location'), 'not asked to re-authenticate again').not.toBe(REAUTH)
      expect(resumed.headers.get('location')).toMatch(/\/auth\/step\/totp-enrolment$/)
    })

    it('refuses the cached copy from before the proof on every instance, as a revocation does', async () => {
      const [a, b] = twoInstances(storeOf())
      const { browser, onA } = await staleAndAsked(a, b)
      // Another tab's cookies, taken before the proof: the old cached copy with the old proof time.
      const before = new Client(b)
      for (const [cookie, value] of browser.jar.cookies) before.jar.cookies.set(cookie, value)
      await prove(onA)
      at(ELEVEN_MINUTES + 2)
      const resumed = await askToEnrol(before)
      expect(resumed.headers.get('location'), 'the old copy is not served').not.toBe(REAUTH)
    })
  })
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

scenarios('memory store shared in-process', () => memoryAuthStore())

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await redis?.stop()
})
let prefix = 0
scenarios('Redis', () => redisAuthStore(redis.client(), { keyPrefix: `cache-proof-${++prefix}` }))

/** A request context with what the cache reads: the resolved config, cookies, the clock. */
function contextOf(config: AuthConfig, cookies: Record<string, string> = {}): RequestContext {
  const resolved = assertConfig(config)
  return {
    config: resolved,
    cookies: resolved.cookies.secure,
    request: { cookies } as never,
    at: Math.floor(Date.now() / 1000),
    logger: resolved.logger,
    setCookies: [],
  } as unknown as RequestContext
}

describe('refreshCachedSessionAfterProof', () => {
  it('refuses an entry minted before the proof on an instance that shares the store, and clears the cookie', async () => {
    at(0)
    const [a, b] = twoInstances(memoryAuthStore())
    const token = 'session-token-1'
    const row = { sessionToken: token, userId: 'u-1', expires: new Date(T0 + 3600_000) }
    const minting = contextOf(a)
    await writeSessionCache(minting, token, {
      session: row as never,
      user: { id: 'u-1', email: 'alice@example.com', emailVerified: null },
      expires: T0 / 1000 + 3600,
      endsByLifetime: false,
    })
    const cookies = Object.fromEntries(minting.setCookies.map((cookie) => [cookie.name, cookie.value]))
    expect(await readSessionCache(contextOf(b, cookies), token), 'served before the proof').not.toBeNull()

    at(10)
    const proving = contextOf(a, cookies)
    await refreshCachedSessionAfterProof(proving, token)
    const cleared = proving.setCookies.filter((cookie) => cookie.name.startsWith('__Secure-authjs.session-cache'))
    expect(cleared.length, 'the cookie is cleared in the answer').toBeGreaterThan(0)
    expect(cleared.every((cookie) => cookie.value === '')).toBe(true)
    expect(await readSessionCache(contextOf(b, cookies), token), 'the old copy is refused on the other instance').toBeNull()
    expect(await readSessionCache(contextOf(a, cookies), token), 'and on this one').toBeNull()
  })
})
