import Fastify from 'fastify'
import { fastifyAuth } from 'authchart/fastify'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error: console.error, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const app = Fastify()
await app.register(fastifyAuth, config)
const cookie = `authjs.session-token=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: 'authjs.session-token' })}`
const N = Number(process.argv[2] ?? 3000)
for (let i = 0; i < 500; i++) await app.inject({ url: '/auth/session', headers: { cookie } })
const c = process.cpuUsage()
for (let i = 0; i < N; i++) { const r = await app.inject({ url: '/auth/session', headers: { cookie } }); if (i === 0) console.log(r.statusCode, r.body.slice(0, 80)) }
const u = process.cpuUsage(c); console.log('cpu µs/op', ((u.user + u.system) / N).toFixed(1))
await app.close()
