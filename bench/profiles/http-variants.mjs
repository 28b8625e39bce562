// `node bench/profiles/http-variants.mjs [seconds]`: Fastify routes with a growing share of the work (bare, + web Request, + Auth, the plugin's native answers) under autocannon, to see what the web-API boundary costs.
import Fastify from 'fastify'
import { spawn } from 'node:child_process'
import { Auth } from 'authchart'
import { fastifyAuth } from 'authchart/fastify'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
import { toWebRequest } from '../../dist/integrations/node/index.js'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error: console.error, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const cookie = `authjs.session-token=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: 'authjs.session-token' })}`
const body = '{"user":{"name":"Alice","email":"a@x.test"},"expires":"2026-12-23T22:49:37.000Z"}'
const variants = {
  bare: async (req, reply) => reply.header('content-type', 'application/json').send(body),
  webRequest: async (req, reply) => { toWebRequest({ method: req.method, headers: req.headers }, new URL(`http://${req.host}${req.url}`)); return reply.header('content-type', 'application/json').send(body) },
  authText: async (req, reply) => { const r = await Auth(toWebRequest({ method: req.method, headers: req.headers }, new URL(`http://${req.host}${req.url}`)), config); return reply.header('content-type', 'application/json').send(await r.text()) },
  authBuf: async (req, reply) => { const r = await Auth(toWebRequest({ method: req.method, headers: req.headers }, new URL(`http://${req.host}${req.url}`)), config); for (const [n, v] of r.headers) reply.header(n, v); return reply.send(Buffer.from(await r.arrayBuffer())) },
}
const apps = {}
for (const [name, handler] of Object.entries(variants)) { const app = Fastify(); app.get('/auth/session', handler); apps[name] = { app, origin: await app.listen({ port: 0, host: '127.0.0.1' }) } }
{ const app = Fastify(); await app.register(fastifyAuth, config); apps.plugin = { app, origin: await app.listen({ port: 0, host: '127.0.0.1' }) } }
async function run(url) {
  const c = process.cpuUsage()
  const child = spawn('node_modules/.bin/autocannon', ['-j', '-c', '10', '-d', process.argv[2] ?? '3', '-H', `cookie=${cookie}`, url], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''; child.stdout.on('data', (d) => (out += d))
  await new Promise((r) => child.on('exit', r))
  const u = process.cpuUsage(c)
  const res = JSON.parse(out)
  return `req/s ${res.requests.average} lat ${res.latency.average} cpu µs/req ${((u.user + u.system) / res.requests.total).toFixed(1)}`
}
for (let i = 0; i < 2; i++) for (const [name, { origin }] of Object.entries(apps)) console.log(name.padEnd(12), await run(`${origin}/auth/session`))
for (const { app } of Object.values(apps)) await app.close()
