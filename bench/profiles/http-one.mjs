import Fastify from 'fastify'
import { spawn } from 'node:child_process'
import { Auth } from 'authchart'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
import { toWebRequest } from '../../dist/integrations/node/index.js'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error: console.error, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const cookie = `authjs.session-token=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: 'authjs.session-token' })}`
const app = Fastify()
let n = 0, cpu = 0
app.get('/auth/session', async (req, reply) => { const c = process.cpuUsage(); const r = await Auth(toWebRequest({ method: req.method, headers: req.headers }, new URL(`http://${req.host}${req.url}`)), config); const t = await r.text(); const u = process.cpuUsage(c); n++; cpu += u.user + u.system; return reply.header('content-type', 'application/json').send(t) })
const origin = await app.listen({ port: 0, host: '127.0.0.1' })
const c = process.cpuUsage()
const child = spawn('node_modules/.bin/autocannon', ['-j', '-c', process.argv[3] ?? '10', '-d', process.argv[2] ?? '3', '-H', `cookie=${cookie}`, `${origin}/auth/session`], { stdio: ['ignore', 'pipe', 'inherit'] })
let out = ''; child.stdout.on('data', (d) => (out += d))
await new Promise((r) => child.on('exit', r))
const u = process.cpuUsage(c)
const res = JSON.parse(out)
console.log(`req/s ${res.requests.average} lat ${res.latency.average} cpu µs/req ${((u.user + u.system) / res.requests.total).toFixed(1)}; inside handler (overlapping) ${(cpu / n).toFixed(1)}`)
await app.close()
