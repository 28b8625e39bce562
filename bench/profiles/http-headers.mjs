import Fastify from 'fastify'
import http from 'node:http'
import { fastifyAuth } from 'authchart/fastify'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error: console.error, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const app = Fastify()
await app.register(fastifyAuth, config)
const origin = await app.listen({ port: 0, host: '127.0.0.1' })
const cookie = `authjs.session-token=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: 'authjs.session-token' })}`
const agent = new http.Agent({ keepAlive: true })
await new Promise((resolve) => http.get(`${origin}/auth/session`, { headers: { cookie }, agent }, (res) => { console.log(res.statusCode, res.rawHeaders); res.resume(); res.on('end', resolve) }))
await app.close(); agent.destroy()
