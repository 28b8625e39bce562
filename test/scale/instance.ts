/**
 * One `Auth` server process of the multi-instance test and the soak run: a plain node:http server
 * wrapping `Auth`, with its own memory, on a loopback port, sharing only the store (PostgreSQL or
 * Redis) the environment names. It prints `listening <port>` once ready, and stops on SIGTERM.
 *
 * Environment: STORE (`postgres` | `redis`, or `none` for no store in the config), STORE_URL, OP_ISSUER, OP_CLIENT_SECRET, AUTH_SECRET,
 * RATE_LIMIT_PER_IDENTIFIER, RATE_LIMIT_PER_ADDRESS (credentials attempts per window). With
 * ADAPTER_URL (a PostgreSQL database the test migrated), a second app with database sessions is
 * served under {@link DATABASE_BASE_PATH}, signing in at the provider as client OP_DATABASE_CLIENT_ID;
 * ADAPTER_KEEPS=rows-only gives it an adapter that keeps no provider session with its rows (as
 * Auth.js adapters), so a logout by the provider finds them through the index in the store.
 *
 * SESSION_CACHE_MAX_AGE turns on the database-session app's session cache (`session.cache.maxAge`).
 *
 * SMTP_URL adds an e-mail provider (Nodemailer, `email`) to the database-session app, which also
 * sends a one-time code with EMAIL_CODE=1. EFFECT_HOOK=1
 * turns on the test hook of the kill test: a tracer (the `telemetry` option) that notes the name of
 * every effect the flows run (listed by `/__stats`), and with KILL_AT=<effect> kills this process
 * with SIGKILL just before that effect starts (KILL_WHEN=before) or just after it finished, before
 * the flow goes on (KILL_WHEN=after, the default). CHART=next serves the next deployment of a
 * rolling upgrade (its e-mail chart changed).
 *
 * Run with `node --import ./test/scale/ts-register.mjs test/scale/instance.ts`.
 *
 * @module
 */
import { createServer, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeHeapSnapshot } from 'node:v8'
import pg from 'pg'
import { Redis } from 'ioredis'
import { Auth, setClientAddress } from '../../core/index.js'
import type { AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import Credentials from '../../providers/credentials.js'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { Adapter } from '../../core/adapters.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { redisAuthStore } from '../../stores/redis.js'
import { readBody } from '../../integrations/node/index.js'
import Nodemailer from '../../providers/nodemailer.js'
import type { TelemetryOptions } from '../../core/telemetry/types.js'

/** The public origin every instance serves (the test's cookie names and OAuth callbacks use it). */
export const PUBLIC_ORIGIN = 'https://authchart.test'
/** Where the database-session app is served, when ADAPTER_URL is set. */
export const DATABASE_BASE_PATH = '/db/auth'

const env = (name: string) => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

async function storeFromEnv(): Promise<{ store: AuthStore; close: () => Promise<void> }> {
  if (env('STORE') === 'redis') {
    const client = new Redis(env('STORE_URL'))
    return { store: redisAuthStore(client), close: async () => void (await client.quit()) }
  }
  const pool = new pg.Pool({ connectionString: env('STORE_URL'), max: 10 })
  // An idle connection the server ends would otherwise be an uncaught error that kills the instance.
  pool.on('error', (error) => console.error(`store pool: ${error.message}`))
  const store = postgresAuthStore(pool)
  await store.migrate()
  return { store, close: () => pool.end() }
}

/** The database-session app's adapter, over a pool of its own, when the environment names one. */
function adapterFromEnv(): { adapter: Adapter; close: () => Promise<void> } | null {
  if (!process.env.ADAPTER_URL) return null
  const pool = new pg.Pool({ connectionString: process.env.ADAPTER_URL, max: 5 })
  pool.on('error', (error) => console.error(`adapter pool: ${error.message}`))
  const { deleteProviderSessions, ...rowsOnly } = PostgresAdapter(pool)
  const adapter: Adapter = process.env.ADAPTER_KEEPS === 'rows-only' ? rowsOnly : { ...rowsOnly, deleteProviderSessions }
  return { adapter, close: () => pool.end() }
}

// STORE=none: no store in the config (each instance keeps its own in memory, as an app that names none).
const shared = process.env.STORE === 'none' ? null : await storeFromEnv()
const store = shared?.store
const database = adapterFromEnv()
const close = async () => {
  await Promise.all([shared?.close(), database?.close()])
}
let authorizeCalls = 0
/** The effects the flows ran, in order (EFFECT_HOOK=1). */
const effectsRun: string[] = []

/** The kill test's hook: a tracer whose effect spans name each effect as it starts and ends. */
async function effectHook(): Promise<TelemetryOptions | undefined> {
  if (process.env.EFFECT_HOOK !== '1') return undefined
  const { KILL_AT: killAt, KILL_WHEN: killWhen = 'after' } = process.env
  const quiet = { setAttribute() {}, setStatus() {}, recordException() {}, end() {} }
  return {
    api: await import('@opentelemetry/api'),
    tracer: {
      startSpan(name) {
        if (!name.startsWith('authchart.effect ')) return quiet
        const effect = name.slice('authchart.effect '.length)
        if (effect === killAt && killWhen === 'before') process.kill(process.pid, 'SIGKILL')
        return {
          ...quiet,
          end() {
            effectsRun.push(effect)
            if (effect === killAt && killWhen === 'after') process.kill(process.pid, 'SIGKILL')
          },
        }
      },
    },
  }
}
const hook = await effectHook()
const telemetry = hook ? (await import('../../core/telemetry.js')).openTelemetry(hook) : undefined

/**
 * The handler. CHART=next is the deployment after a rolling upgrade whose e-mail chart changed
 * without a migration (its version moved on): e-mail flows sealed by the previous deployment
 * restart with the page that says so; sessions and every other flow carry over.
 */
async function handlerFromEnv(): Promise<(request: Request, config: AuthConfig) => Promise<Response>> {
  if (process.env.CHART !== 'next') return Auth
  const [{ createMachine }, { createHandler }, { defineFlow }, { emailSignInFlow }, { routes }] = await Promise.all([
    import('xstate'),
    import('../../core/auth.js'),
    import('../../core/engine/flow.js'),
    import('../../core/flows/email/flow.js'),
    import('../../core/http/routes.js'),
  ])
  const machine = emailSignInFlow.machine
  const next = createMachine({ ...machine.config, version: `${machine.version}-next` }, machine.implementations as never)
  const flow = defineFlow({ ...emailSignInFlow, machine: next } as never)
  const table = routes.map((route) =>
    route.provider === 'email' && typeof route.serve !== 'function' ? ({ ...route, serve: { ...route.serve, flow } } as typeof route) : route,
  )
  return createHandler(table) as (request: Request, config: AuthConfig) => Promise<Response>
}
const handle = await handlerFromEnv()

const opProvider = (clientId: string) => ({
  id: 'op',
  name: 'OP',
  type: 'oidc' as const,
  issuer: process.env.OP_ISSUER,
  clientId,
  clientSecret: env('OP_CLIENT_SECRET'),
  client: { token_endpoint_auth_method: 'client_secret_basic' },
  refreshTokens: true,
})

const config: AuthConfig = {
  secret: env('AUTH_SECRET'),
  trustHost: true,
  ...(store ? { store } : {}),
  ...(telemetry ? { telemetry } : {}),
  rateLimit: {
    credentials: {
      perIdentifier: Number(process.env.RATE_LIMIT_PER_IDENTIFIER ?? 1000),
      perAddress: Number(process.env.RATE_LIMIT_PER_ADDRESS ?? 100),
    },
  },
  providers: [
    Credentials({
      credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
      authorize: async (credentials) => {
        authorizeCalls++
        const username = String(credentials.username ?? '')
        return credentials.password === 'wonderland' && /^[a-z0-9-]+$/.test(username)
          ? { id: username, name: username, email: `${username}@example.com` }
          : null
      },
    }),
    ...(process.env.OP_ISSUER ? [opProvider('op')] : []),
  ] as AuthConfig['providers'],
}

const databaseConfig: AuthConfig | null = database && {
  ...config,
  basePath: DATABASE_BASE_PATH,
  adapter: database.adapter,
  session: {
    strategy: 'database',
    ...(process.env.SESSION_CACHE_MAX_AGE ? { cache: { maxAge: Number(process.env.SESSION_CACHE_MAX_AGE) } } : {}),
  },
  providers: [
    opProvider(env('OP_DATABASE_CLIENT_ID')),
    ...(process.env.SMTP_URL ? [Nodemailer({ server: process.env.SMTP_URL, from: 'authchart <no-reply@authchart.test>', code: process.env.EMAIL_CODE === '1' })] : []),
  ] as AuthConfig['providers'],
}

function toRequest(req: IncomingMessage, body: Uint8Array): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
  }
  const hasBody = req.method === 'POST' && body.length > 0
  const request = new Request(new URL(req.url ?? '/', PUBLIC_ORIGIN), {
    method: req.method ?? 'GET',
    headers,
    ...(hasBody ? { body: body as BodyInit } : {}),
  })
  // The proxy in front names the client; the instance trusts it (loopback only).
  const forwarded = String(req.headers['x-forwarded-for'] ?? '').split(',')[0]?.trim()
  return setClientAddress(request, forwarded || req.socket.remoteAddress || '')
}

const server = createServer((req, res) => {
  void (async () => {
    if (req.url === '/__heap-snapshot') {
      // For a soak run that found a leak: a V8 heap snapshot to compare in DevTools.
      globalThis.gc?.()
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ path: writeHeapSnapshot(join(tmpdir(), `authchart-${process.pid}-${Date.now()}.heapsnapshot`)) }))
      return
    }
    if (req.url === '/__stats' || req.url === '/__stats?gc=1') {
      // After a full collection (the process runs with --expose-gc), heapUsed is what is still held.
      if (req.url.endsWith('?gc=1')) globalThis.gc?.()
      const memory = process.memoryUsage()
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ pid: process.pid, authorizeCalls, effectsRun, rss: memory.rss, heapUsed: memory.heapUsed }))
      return
    }
    const app = databaseConfig && req.url?.startsWith(`${DATABASE_BASE_PATH}/`) ? databaseConfig : config
    const response = await handle(toRequest(req, await readBody(req)), app)
    res.statusCode = response.status
    res.setHeader('x-instance', String(process.pid))
    for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value)
    const cookies = response.headers.getSetCookie()
    if (cookies.length) res.setHeader('set-cookie', cookies)
    res.end(Buffer.from(await response.arrayBuffer()))
  })().catch((error: unknown) => {
    console.error(error)
    res.statusCode = 500
    res.end()
  })
})
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number }
  console.log(`listening ${port}`)
})
// A graceful stop, as a deploy's: no new connections, the requests in flight answered, then out
// (anything still open after 10 s is cut).
process.on('SIGTERM', () => {
  server.close(() => void close().finally(() => process.exit(0)))
  server.closeIdleConnections()
  setTimeout(() => server.closeAllConnections(), 10_000).unref()
})
