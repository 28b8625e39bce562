import Fastify from 'fastify'
import { spawnSync, spawn } from 'node:child_process'
import { fastifyAuth } from 'authchart/fastify'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error: console.error, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const app = Fastify()
await app.register(fastifyAuth, config)
const origin = await app.listen({ port: 0, host: '127.0.0.1' })
const cookie = `authjs.session-token=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: 'authjs.session-token' })}`
const c = process.cpuUsage()
const child = spawn('node_modules/.bin/autocannon', ['-j', '-c', '10', '-d', process.argv[2] ?? '4', '-H', `cookie=${cookie}`, `${origin}/auth/session`], { stdio: ['ignore', 'pipe', 'inherit'] })
let out = ''; child.stdout.on('data', (d) => (out += d))
await new Promise((r) => child.on('exit', r))
const u = process.cpuUsage(c)
const res = JSON.parse(out)
console.log('req/s', res.requests.average, 'total', res.requests.total, 'non2xx', res.non2xx, 'cpu µs/req', ((u.user + u.system) / res.requests.total).toFixed(1))
await app.close()
