// `node bench/profiles/http-native.mjs [seconds]`: the Fastify plugin (native answers) next to a bare Fastify route under autocannon.
import Fastify from 'fastify'
import { spawn } from 'node:child_process'
import { encode } from 'authchart/jwt'
import { fastifyAuth } from 'authchart/fastify'
import Credentials from 'authchart/providers/credentials'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error: console.error, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const cookie = `authjs.session-token=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: 'authjs.session-token' })}`
const body = '{"user":{"name":"Alice","email":"a@x.test"},"expires":"2026-12-23T22:49:37.000Z"}'
const apps = {}
{ const app = Fastify(); app.get('/auth/session', async (req, reply) => reply.header('content-type', 'application/json').send(body)); apps.bare = { app, origin: await app.listen({ port: 0, host: '127.0.0.1' }) } }
{ const app = Fastify(); await app.register(fastifyAuth, config); apps.plugin = { app, origin: await app.listen({ port: 0, host: '127.0.0.1' }) } }
async function run(url) {
  const c = process.cpuUsage()
  const child = spawn('node_modules/.bin/autocannon', ['-j', '-c', '10', '-d', process.argv[2] ?? '3', '-H', `cookie=${cookie}`, url], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''; child.stdout.on('data', (d) => (out += d))
  await new Promise((r) => child.on('exit', r))
  const u = process.cpuUsage(c)
  const res = JSON.parse(out)
  return { rps: res.requests.average, cpu: (u.user + u.system) / res.requests.total }
}
const rounds = Number(process.argv[3] ?? 3)
const got = { bare: [], plugin: [] }
for (let i = 0; i < rounds; i++) for (const [name, { origin }] of Object.entries(apps)) { const r = await run(`${origin}/auth/session`); got[name].push(r); console.log(name.padEnd(8), `req/s ${r.rps.toFixed(0)} cpu µs/req ${r.cpu.toFixed(1)}`) }
console.log('fractions', got.plugin.map((p, i) => (p.rps / got.bare[i].rps).toFixed(2)).join(' '))
for (const { app } of Object.values(apps)) await app.close()
