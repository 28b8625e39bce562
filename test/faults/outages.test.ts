/**
 * Outages of the parts a request needs, on real servers the test starts, stops and restarts:
 * PostgreSQL (adapter and store) stopped and restarted, Redis (store) stopped and restarted, a pool
 * exhausted, a query that hangs behind a lock. During each: the requests that need the part answer
 * 503 with `Retry-After` and change no cookie, the others keep working, no session is created, no
 * single-use value is accepted; after it, full service within 5 seconds, with no restart.
 */
import pg from 'pg'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { AuthConfig } from '../../core/types.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { redisAuthStore } from '../../stores/redis.js'
import { emailConfig, EmailClient, type Outbox } from '../email/helpers.js'
import { Client, credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const FLOW_COOKIE = '__Secure-authchart.flow.email-signin'
/** Short timeouts keep the test quick; the pool's own limits sit below the adapter's. */
const AVAILABILITY = { adapterTimeout: 1000, storeTimeout: 600, retryAfter: 3 }
const POOL = { max: 4, connectionTimeoutMillis: 800, statement_timeout: 800 }
/** The bound: full service this long after the part is back. */
const RECOVERY_MS = 5000

let postgres: PostgresServer
let redis: RedisServer
let databaseUrl: string
let pool: pg.Pool
let redisClient: Redis
let alice = 0

beforeAll(async () => {
  ;[postgres, redis] = await Promise.all([startPostgres(), startRedis({ persistent: true })])
  databaseUrl = await postgres.createDatabase('outages')
  pool = postgres.pool(databaseUrl, POOL)
  await PostgresAdapter(pool).migrate()
  await postgresAuthStore(pool).migrate()
  redisClient = new Redis(redis.url)
  redisClient.on('error', () => {})
}, 120_000)
afterAll(async () => {
  redisClient?.disconnect()
  await Promise.all([postgres?.stop(), redis?.stop()])
})

/** A new user name per sign-in, so sessions and users can be counted per attempt. */
const nextUser = () => `user-${++alice}`

function credentials(options: { failOpen?: boolean } = {}) {
  return credentialsProvider((c) =>
    c.password === 'wonderland' && typeof c.username === 'string'
      ? { id: c.username, name: c.username, email: `${c.username}@example.com` }
      : null,
  )
}

/** Database sessions: adapter and store both in PostgreSQL, behind one pool. */
function databaseConfig(): AuthConfig & { logger: ReturnType<typeof spyLogger> } {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    adapter: PostgresAdapter(pool),
    store: postgresAuthStore(pool),
    session: { strategy: 'database' },
    availability: AVAILABILITY,
    providers: [credentials()],
  } as AuthConfig & { logger: ReturnType<typeof spyLogger> }
}

/** Database sessions in PostgreSQL, the store in Redis. */
function redisStoreConfig(rateLimit?: AuthConfig['rateLimit']) {
  return {
    ...databaseConfig(),
    store: redisAuthStore(redisClient),
    ...(rateLimit ? { rateLimit } : {}),
  } as AuthConfig & { logger: ReturnType<typeof spyLogger> }
}

/** JWT sessions with sign-out everywhere in Redis: a session read asks the store. */
function jwtRedisConfig() {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    store: redisAuthStore(redisClient),
    availability: AVAILABILITY,
    providers: [credentials()],
  } as AuthConfig & { logger: ReturnType<typeof spyLogger> }
}

/** JWT sessions and nothing else: a session read needs no part at all. */
function jwtOnlyConfig() {
  return { secret: SECRET, trustHost: true, logger: spyLogger(), providers: [credentials()] } as AuthConfig
}

async function countSessions(): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    return Number((await client.query('SELECT count(*)::int AS n FROM sessions')).rows[0].n)
  } finally {
    await client.end()
  }
}

/** A signed-in client (database or JWT session, as the config says). */
async function signedIn(config: AuthConfig): Promise<Client> {
  const client = new Client(config)
  const response = await client.signIn({ username: nextUser(), password: 'wonderland' })
  expect(response.headers.get('location')).not.toContain('error=')
  expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  return client
}

/** An e-mail code sign-in finished, and a copy of its spent flow cookie to replay. */
async function spentEmailFlow(config: AuthConfig, outbox: Outbox) {
  const client = new EmailClient(config)
  await client.requestLink(`${nextUser()}@example.com`)
  const cookie = client.jar.get(FLOW_COOKIE)!
  const code = outbox.at(-1)!.code!
  const done = await client.enterCode(code)
  expect(done.headers.get('location')).not.toContain('error=')
  const replay = () => {
    const attacker = new EmailClient(config)
    attacker.jar.cookies.set(FLOW_COOKIE, cookie)
    return attacker.enterCode(code)
  }
  return { replay }
}

/** A 503 with Retry-After that leaves every cookie as it was. */
function expectUnavailable(response: Response) {
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe(String(AVAILABILITY.retryAfter))
  expect(response.headers.get('cache-control')).toBe('no-store')
  expect(response.headers.getSetCookie()).toEqual([])
}

/** Polls a fresh sign-in and a session read until both work; the time it took. */
async function timeToRecovery(config: AuthConfig): Promise<number> {
  const began = Date.now()
  for (;;) {
    const client = new Client(config)
    const response = await client.signIn({ username: nextUser(), password: 'wonderland' })
    if (response.status === 302 && !response.headers.get('location')!.includes('error=')) {
      const { response: read, body } = await client.session()
      if (read.status === 200 && (body as { user?: unknown } | null)?.user) return Date.now() - began
    }
    if (Date.now() - began > 3 * RECOVERY_MS) throw new Error(`no recovery within ${3 * RECOVERY_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('PostgreSQL stopped and restarted (adapter and store)', () => {
  it('answers 503 for what needs it, serves the rest, creates nothing, and recovers within 5 s', async () => {
    const config = databaseConfig()
    const { config: emailCfg, outbox } = emailConfig({
      provider: { code: true },
      overrides: { adapter: PostgresAdapter(pool), store: postgresAuthStore(pool), availability: AVAILABILITY },
    })
    const before = await signedIn(config)
    const { replay } = await spentEmailFlow(emailCfg, outbox)
    const jwtOnly = await signedIn(jwtOnlyConfig())
    const sessionCookie = before.jar.get(SESSION_COOKIE)

    const sessionsBefore = await countSessions()
    await postgres.halt()
    try {
      // What needs the database: a sign-in, a session read, a sign-out, the spent flow's replay.
      const attempt = new Client(config)
      expectUnavailable(await attempt.signIn({ username: nextUser(), password: 'wonderland' }))
      const read = await before.send({ path: '/session' })
      expectUnavailable(read)
      expect(await read.json()).toEqual({ message: expect.stringMatching(/unavailable/i) })
      const csrfToken = await before.csrfToken()
      expectUnavailable(await before.send({ path: '/signout', body: { csrfToken } }))
      expect(before.jar.get(SESSION_COOKIE)).toBe(sessionCookie)
      expectUnavailable(await replay())
      // What does not: the providers, a CSRF token, a JWT session with no store.
      expect((await new Client(config).send({ path: '/providers' })).status).toBe(200)
      expect((await new Client(config).send({ path: '/csrf' })).status).toBe(200)
      const { response, body } = await jwtOnly.session()
      expect(response.status).toBe(200)
      expect(body).toMatchObject({ user: { email: expect.any(String) } })
      // Logged as Auth.js logs an adapter failure, naming the cause.
      const logged = config.logger.error.mock.calls.map(([error]) => error as Error & { type?: string })
      expect(logged.some((error) => error.type === 'AdapterError')).toBe(true)
    } finally {
      await postgres.restart()
    }
    expect(await countSessions()).toBe(sessionsBefore)
    const recovery = await timeToRecovery(config)
    expect(recovery).toBeLessThan(RECOVERY_MS)
    // The session from before the outage was never lost; the replay is still refused.
    expect((await before.session()).body).toMatchObject({ user: { name: expect.any(String) } })
    const replayed = await replay()
    expect(replayed.headers.get('location')).toContain('error=')
    expect(replayed.headers.getSetCookie().some((c) => c.startsWith(SESSION_COOKIE))).toBe(false)
    expect(postgres.idleErrors.length).toBeGreaterThan(0)
  })
})

describe('Redis stopped and restarted (the store)', () => {
  it('refuses what needs the store with 503, keeps database sessions working, and recovers within 5 s', async () => {
    const config = redisStoreConfig()
    const failOpen = redisStoreConfig({ credentials: { failOpen: true } })
    const jwt = jwtRedisConfig()
    const { config: emailCfg, outbox } = emailConfig({
      provider: { code: true },
      overrides: { adapter: PostgresAdapter(pool), store: redisAuthStore(redisClient), availability: AVAILABILITY },
    })
    const databaseSession = await signedIn(config)
    const jwtSession = await signedIn(jwt)
    const { replay } = await spentEmailFlow(emailCfg, outbox)
    const sessionsBefore = await countSessions()

    await redis.halt()
    try {
      // A rate limit that cannot be counted refuses the attempt (fail closed)…
      expectUnavailable(await new Client(config).signIn({ username: nextUser(), password: 'wonderland' }))
      // …unless that limit was configured to fail open: through uncounted, with a warning.
      const through = await new Client(failOpen).signIn({ username: nextUser(), password: 'wonderland' })
      expect(through.headers.get('location')).not.toContain('error=')
      expect(failOpen.logger.warn).toHaveBeenCalledWith('rate-limit-unchecked')
      // An e-mail whose send cannot be counted is not sent.
      const sent = outbox.length
      expectUnavailable(await new EmailClient(emailCfg).requestLink(`${nextUser()}@example.com`))
      expect(outbox).toHaveLength(sent)
      // A JWT session read asks the store whether its user signed out everywhere: 503, cookie kept.
      expectUnavailable(await jwtSession.send({ path: '/session' }))
      // A database session needs no store.
      expect((await databaseSession.session()).body).toMatchObject({ user: { name: expect.any(String) } })
      // The spent flow cannot be claimed, so it is not accepted.
      expectUnavailable(await replay())
    } finally {
      await redis.restart()
    }
    // The one session made meanwhile is the fail-open sign-in's.
    expect(await countSessions()).toBe(sessionsBefore + 1)
    expect(await timeToRecovery(config)).toBeLessThan(RECOVERY_MS)
    expect((await jwtSession.session()).body).toMatchObject({ user: { name: expect.any(String) } })
    // The claim outlived the restart (Redis with an append-only file): the replay is still refused.
    const replayed = await replay()
    expect(replayed.headers.get('location')).toContain('error=')
    expect(replayed.headers.getSetCookie().some((c) => c.startsWith(SESSION_COOKIE))).toBe(false)
  })
})

describe('a connection pool exhausted', () => {
  it('answers 503 once the pool wait times out, creates nothing, and recovers when connections return', async () => {
    const config = databaseConfig()
    const before = await signedIn(config)
    const sessionsBefore = await countSessions()
    // Every connection of the application's pool is taken (a burst, a leak elsewhere in the app).
    const held = await Promise.all(Array.from({ length: POOL.max }, () => pool.connect()))
    try {
      expectUnavailable(await new Client(config).signIn({ username: nextUser(), password: 'wonderland' }))
      expectUnavailable(await before.send({ path: '/session' }))
      expect((await new Client(config).send({ path: '/csrf' })).status).toBe(200)
    } finally {
      for (const client of held) client.release()
    }
    expect(await countSessions()).toBe(sessionsBefore)
    expect(await timeToRecovery(config)).toBeLessThan(RECOVERY_MS)
    expect((await before.session()).body).toMatchObject({ user: { name: expect.any(String) } })
  })
})

describe('a query that hangs', () => {
  it('answers 503 at the timeout when a table is locked, and nothing the hung request wrote lands later', async () => {
    const config = redisStoreConfig()
    const before = await signedIn(config)
    const sessionsBefore = await countSessions()
    const release = await postgres.lock(databaseUrl, 'sessions')
    try {
      const began = Date.now()
      // The sign-in gets as far as creating its session row, which waits for the lock.
      expectUnavailable(await new Client(config).signIn({ username: nextUser(), password: 'wonderland' }))
      expect(Date.now() - began).toBeLessThan(AVAILABILITY.adapterTimeout + 1000)
      expectUnavailable(await before.send({ path: '/session' }))
    } finally {
      await release()
    }
    // The pool's statement_timeout cancelled the waiting INSERT: no session for a 503.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await countSessions()).toBe(sessionsBefore)
    expect(await timeToRecovery(config)).toBeLessThan(RECOVERY_MS)
  })

  it('answers 503 at the store timeout while Redis does not answer, then serves again', async () => {
    const config = redisStoreConfig()
    const jwt = jwtRedisConfig()
    const jwtSession = await signedIn(jwt)
    await redis.pause(1500)
    const began = Date.now()
    expectUnavailable(await new Client(config).signIn({ username: nextUser(), password: 'wonderland' }))
    expectUnavailable(await jwtSession.send({ path: '/session' }))
    expect(Date.now() - began).toBeLessThan(1500 + 2 * AVAILABILITY.storeTimeout)
    expect(await timeToRecovery(config)).toBeLessThan(RECOVERY_MS)
    expect((await jwtSession.session()).body).toMatchObject({ user: { name: expect.any(String) } })
  })
})
