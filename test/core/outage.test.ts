/**
 * Outages at the unit level and through `Auth`, without servers: which failures count as a part
 * being down, the deadline on every adapter and store call, and the answers: 503 with
 * `Retry-After` and no cookie change for what needs the part, the Auth.js behaviour for failures
 * that are not outages.
 */
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth } from '../../core/auth.js'
import { AdapterError, ServiceUnavailable } from '../../core/errors.js'
import { DEFAULT_AVAILABILITY, isOutageError, outageOf, withDeadline } from '../../core/outage.js'
import { instrumentAdapter } from '../../core/session/adapter.js'
import { guardStore, memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { raw } from '../../core/symbols.js'
import type { Adapter } from '../../core/adapters.js'
import type { AuthConfig } from '../../core/types.js'
import { readSession } from '../../integrations/shared/auth.js'
import { authRequest, Client, ORIGIN, SECRET, spyLogger, featureConfig } from '../fixtures/http.js'

const FAST = { ...DEFAULT_AVAILABILITY, adapterTimeout: 50, storeTimeout: 50, retryAfter: 7 }
const never = () => new Promise<never>(() => {})
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
const SESSION_COOKIE = '__Secure-authjs.session-token'

describe('what counts as an outage', () => {
  it.each([
    ['a refused connection', refused()],
    ['PostgreSQL terminating the connection (57P01)', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    ['a PostgreSQL connection exception (class 08)', Object.assign(new Error('connection failure'), { code: '08006' })],
    ['a statement cancelled by statement_timeout (57014)', Object.assign(new Error('canceling statement'), { code: '57014' })],
    ['pg losing its connection', new Error('Connection terminated unexpectedly')],
    ["pg-pool's connection timeout", new Error('timeout exceeded when trying to connect')],
    ['ioredis giving up on a command', Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' })],
    ['rate-limiter-flexible refusing while Redis reconnects', new Error('Redis connection is not ready')],
    ["an application's own adapter saying so", Object.assign(new Error('db down'), { code: 'ERR_UNAVAILABLE' })],
    ['a refused connection wrapped in an AdapterError', new AdapterError(refused())],
  ])('counts %s', (_, error) => {
    expect(isOutageError(error)).toBe(true)
  })

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key value'), { code: '23505' })],
    ['a syntax error', Object.assign(new Error('syntax error at or near'), { code: '42601' })],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'ECONNREFUSED'],
  ])('does not count %s', (_, error) => {
    expect(isOutageError(error)).toBe(false)
  })
})

describe('a call with a deadline', () => {
  it('answers what the call answers in time', async () => {
    await expect(withDeadline('store', 'get', FAST, async () => 'value')).resolves.toBe('value')
  })

  it('fails with ServiceUnavailable naming the part and the operation when the call does not answer', async () => {
    const failure = await withDeadline('adapter', 'getUser', FAST, never).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ServiceUnavailable)
    expect(failure).toMatchObject({ code: 'ERR_UNAVAILABLE', part: 'adapter', retryAfter: 7 })
    expect((failure as Error).message).toBe('the adapter did not answer getUser within 50 ms')
  })

  it('turns an outage into ServiceUnavailable with its cause, and leaves other failures as they are', async () => {
    const cause = refused()
    const outage = await withDeadline('store', 'claim', FAST, () => Promise.reject(cause)).catch((e: unknown) => e)
    expect(outage).toMatchObject({ part: 'store', cause })
    expect((outage as Error).message).toBe('the store is unavailable (claim): connect ECONNREFUSED 127.0.0.1:5432')
    const bug = new TypeError('bug')
    await expect(withDeadline('store', 'claim', FAST, () => Promise.reject(bug))).rejects.toBe(bug)
  })

  it('leaves no unhandled rejection when the call fails after its deadline', async () => {
    const unhandled = vi.fn()
    process.on('unhandledRejection', unhandled)
    try {
      const late = () => new Promise<never>((_, reject) => setTimeout(() => reject(refused()), 80))
      await expect(withDeadline('store', 'get', FAST, late)).rejects.toBeInstanceOf(ServiceUnavailable)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(unhandled).not.toHaveBeenCalled()
    } finally {
      process.off('unhandledRejection', unhandled)
    }
  })
})

describe('the deadlines of many calls (one timer per timeout)', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  // Each test its own timeout: calls under one timeout share one timer.

  it('answers a call that answers at once, or throws at once, as it would have later', async () => {
    await expect(withDeadline('store', 'get', FAST, () => null)).resolves.toBeNull()
    const outage = await withDeadline('adapter', 'getUser', FAST, () => {
      throw refused()
    }).catch((e: unknown) => e)
    expect(outage).toMatchObject({ part: 'adapter', message: 'the adapter is unavailable (getUser): connect ECONNREFUSED 127.0.0.1:5432' })
    const bug = new TypeError('bug')
    await expect(
      withDeadline('store', 'get', FAST, () => {
        throw bug
      }),
    ).rejects.toBe(bug)
  })

  it('fails the oldest waiting call at its own deadline while newer calls keep arriving', async () => {
    const availability = { ...FAST, storeTimeout: 60 }
    const order: string[] = []
    const oldest = withDeadline('store', 'get', availability, never).catch(() => order.push('oldest failed'))
    const arriving = setInterval(() => void withDeadline('store', 'get', availability, never).catch(() => {}), 10)
    await sleep(180)
    order.push('newer calls still arriving')
    clearInterval(arriving)
    await oldest
    expect(order).toEqual(['oldest failed', 'newer calls still arriving'])
  })

  it('fails no call before its own deadline, whichever call the timer was armed for', async () => {
    const availability = { ...FAST, storeTimeout: 70 }
    // The timer is armed for this call's deadline, which the next call does not share.
    await withDeadline('store', 'get', availability, async () => 'first')
    await sleep(40)
    const started = performance.now()
    const failure = await withDeadline('store', 'get', availability, never).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(ServiceUnavailable)
    expect(performance.now() - started).toBeGreaterThanOrEqual(70)
  })

  it("still fails a hanging call after the timer was lost to a test's fake timers", async () => {
    const availability = { ...FAST, storeTimeout: 40 }
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    let first: Promise<unknown>
    try {
      first = withDeadline('store', 'get', availability, never).catch((e: unknown) => e)
    } finally {
      vi.useRealTimers()
    }
    // The fake timer armed for the first call never fires: the next call finds it overdue.
    await sleep(100)
    const failure = await withDeadline('store', 'get', availability, never).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(ServiceUnavailable)
    expect(await first).toBeInstanceOf(ServiceUnavailable)
  })
})

describe('the guarded store and adapter', () => {
  it('fails a store call that hangs with the store timeout', async () => {
    const hanging: AuthStore = { ...memoryAuthStore(), claim: never }
    const failure = await guardStore(hanging, FAST).claim('envelope:1', 60).catch((e: unknown) => e)
    expect(failure).toMatchObject({ code: 'ERR_UNAVAILABLE', part: 'store' })
  })

  it('logs an adapter outage once, as the AdapterError Auth.js logs, with the outage as its cause', async () => {
    const logger = spyLogger()
    const adapter = instrumentAdapter({ ...MemoryAdapter(createMemoryStore()), getUser: () => Promise.reject(refused()) }, logger, FAST)
    const failure = await Promise.resolve(adapter.getUser!('u-1')).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(AdapterError)
    expect(outageOf(failure)).toMatchObject({ part: 'adapter', message: expect.stringContaining('getUser') })
    expect(logger.error).toHaveBeenCalledTimes(1)
    expect(logger.error.mock.calls[0]![0]).toBe(failure)
  })
})

/** A database-session config whose adapter's `getSessionAndUser` is replaced. */
function databaseConfig(getSessionAndUser: Adapter['getSessionAndUser']) {
  const adapter = MemoryAdapter(createMemoryStore())
  return featureConfig({
    adapter: { ...adapter, getSessionAndUser },
    session: { strategy: 'database' },
    availability: { adapterTimeout: 50, retryAfter: 7 },
  })
}

describe('the answer while a part is down, through Auth', () => {
  it('answers a session read 503 with Retry-After and JSON, and keeps the session cookie', async () => {
    const config = databaseConfig(never)
    const response = await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: 'token' } }), config)
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('7')
    expect(response.headers.getSetCookie()).toEqual([])
    expect(await response.json()).toEqual({ message: 'Service unavailable. Try again later.' })
    // Logged by the adapter (AdapterError) and by the session read (SessionTokenError), as Auth.js
    // logs an adapter failure; the answer adds no third line.
    expect(config.logger.error.mock.calls.map(([error]) => (error as { type?: string }).type)).toEqual([
      'AdapterError',
      'SessionTokenError',
    ])
  })

  it('answers 503 on the paths that act for the signed-in user, not "sign in first", while no session can be read', async () => {
    for (const path of ['/auth/two-factor', '/auth/sessions']) {
      const config = databaseConfig(never)
      const response = await Auth(authRequest({ path, cookies: { [SESSION_COOKIE]: 'token' } }), config)
      expect(response.status, path).toBe(503)
      expect(response.headers.get('retry-after')).toBe('7')
      expect(response.headers.get('location')).toBeNull()
      expect(response.headers.getSetCookie().filter((cookie) => cookie.startsWith(SESSION_COOKIE))).toEqual([])
    }
  })

  it('answers a failure that is not an outage as Auth.js does (no session, cookie kept)', async () => {
    const config = databaseConfig(() => Promise.reject(new TypeError('bug in the adapter')))
    const response = await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: 'token' } }), config)
    expect(response.status).toBe(200)
    expect(await response.json()).toBeNull()
  })

  it('shows a browser the 503 page linking back to the sign-in page with the callback URL', async () => {
    const store: AuthStore = { ...memoryAuthStore(), consume: () => Promise.reject(refused()) }
    const config = featureConfig({ store, availability: { retryAfter: 7 } })
    const client = new Client(config)
    const response = await client.signIn({ username: 'alice', password: 'wonderland' }, { callbackUrl: `${ORIGIN}/dashboard` })
    expect(response.status).toBe(503)
    expect(response.headers.get('content-type')).toBe('text/html')
    const html = await response.text()
    expect(html).toContain('Service unavailable')
    expect(html).toContain('Try again in 7 seconds.')
    expect(html).toContain(`href="${ORIGIN}/auth/signin?callbackUrl=${encodeURIComponent(`${ORIGIN}/dashboard`)}"`)
    expect(html).not.toContain('ECONNREFUSED')
  })

  it('gives a client that asked for the redirect as JSON the sign-in page with error=ServiceUnavailable', async () => {
    const store: AuthStore = { ...memoryAuthStore(), consume: () => Promise.reject(refused()) }
    const config = featureConfig({ store })
    const client = new Client(config)
    const csrfToken = await client.csrfToken()
    const response = await client.send({
      path: '/callback/credentials',
      body: { username: 'alice', password: 'wonderland', csrfToken },
      headers: { 'x-auth-return-redirect': '1' },
    })
    expect(response.status).toBe(503)
    expect(await response.json()).toEqual({ url: `${ORIGIN}/auth/signin?error=ServiceUnavailable` })
  })

  it('lets a credentials attempt through uncounted when its limit fails open, with a warning', async () => {
    const store: AuthStore = { ...memoryAuthStore(), consume: () => Promise.reject(refused()) }
    const config = featureConfig({ store, rateLimit: { credentials: { failOpen: true } } })
    const response = await new Client(config).signIn({ username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(config.logger.warn).toHaveBeenCalledWith('rate-limit-unchecked')
  })

  it('throws the outage to a server-side session read instead of reporting no session', async () => {
    const config = databaseConfig(never) as AuthConfig
    await expect(readSession({ origin: ORIGIN, cookie: `${SESSION_COOKIE}=token`, headers: new Headers() }, config)).rejects.toBeInstanceOf(ServiceUnavailable)
    const internal = Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: 'token' } }), { ...config, raw })
    await expect(internal).rejects.toMatchObject({ code: 'ERR_UNAVAILABLE' })
  })

  it('needs no part for the providers, a CSRF token, or a JWT session without a store', async () => {
    const config = { secret: SECRET, trustHost: true, logger: spyLogger(), providers: featureConfig().providers } as AuthConfig
    const client = new Client(config)
    expect((await client.send({ path: '/providers' })).status).toBe(200)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect((await client.session()).body).toMatchObject({ user: { name: 'Alice' } })
  })
})
