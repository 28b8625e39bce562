/**
 * One `Auth` server process of the multi-instance test and the soak run: a plain node:http server
 * wrapping `Auth`, with its own memory, on a loopback port, sharing only the store (PostgreSQL or
 * Redis) the environment names. It prints `listening <port>` once ready, and stops on SIGTERM.
 *
 * Environment: STORE (`postgres` | `redis`), STORE_URL, OP_ISSUER, OP_CLIENT_SECRET, AUTH_SECRET,
 * RATE_LIMIT_PER_IDENTIFIER, RATE_LIMIT_PER_ADDRESS (credentials attempts per window).
 *
 * Run with `node --import ./test/scale/ts-register.mjs test/scale/instance.ts`.
 *
 * @module
 */
import { createServer, type IncomingMessage } from 'node:http'
import pg from 'pg'
import { Redis } from 'ioredis'
import { Auth, setClientAddress } from '../../core/index.js'
import type { AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import Credentials from '../../providers/credentials.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { redisAuthStore } from '../../stores/redis.js'
import { readBody } from '../../integrations/node/index.js'

/** The public origin every instance serves (the test's cookie names and OAuth callbacks use it). */
export const PUBLIC_ORIGIN = 'https://authchart.test'

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

const { store, close } = await storeFromEnv()
let authorizeCalls = 0

const config: AuthConfig = {
  secret: env('AUTH_SECRET'),
  trustHost: true,
  store,
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
    ...(process.env.OP_ISSUER
      ? [
          {
            id: 'op',
            name: 'OP',
            type: 'oidc' as const,
            issuer: process.env.OP_ISSUER,
            clientId: 'op',
            clientSecret: env('OP_CLIENT_SECRET'),
            client: { token_endpoint_auth_method: 'client_secret_basic' },
            refreshTokens: true,
          },
        ]
      : []),
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
    if (req.url === '/__stats') {
      const memory = process.memoryUsage()
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ pid: process.pid, authorizeCalls, rss: memory.rss, heapUsed: memory.heapUsed }))
      return
    }
    const response = await Auth(toRequest(req, await readBody(req)), config)
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
process.on('SIGTERM', () => {
  server.close()
  server.closeAllConnections()
  void close().finally(() => process.exit(0))
})
