import Fastify from 'fastify'
import { spawn } from 'node:child_process'
import { fastifyAuth } from 'authchart/fastify'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error: console.error, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const app = Fastify()
await app.register(fastifyAuth, config)
const origin = await app.listen({ port: 0, host: '127.0.0.1' })
const bare = Fastify()
const body = '{"user":{"name":"Alice","email":"a@x.test"},"expires":"2026-12-23T22:49:37.000Z"}'
bare.get('/auth/session', (_q, reply) => reply.header('content-type', 'application/json').send(process.env.BUF ? Buffer.from(body) : body))
const bareOrigin = await bare.listen({ port: 0, host: '127.0.0.1' })
const cookie = `authjs.session-token=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: 'authjs.session-token' })}`
async function run(url) {
  const c = process.cpuUsage()
  const child = spawn('node_modules/.bin/autocannon', ['-j', '-c', '10', '-d', process.argv[2] ?? '3', '-H', `cookie=${cookie}`, url], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''; child.stdout.on('data', (d) => (out += d))
  await new Promise((r) => child.on('exit', r))
  const u = process.cpuUsage(c)
  const res = JSON.parse(out)
  return `req/s ${res.requests.average} lat ${res.latency.average} cpu µs/req ${((u.user + u.system) / res.requests.total).toFixed(1)}`
}
for (let i = 0; i < 2; i++) {
  console.log('auth', await run(`${origin}/auth/session`))
  console.log('bare', await run(`${bareOrigin}/auth/session`))
}
await app.close(); await bare.close()
