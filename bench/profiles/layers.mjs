import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
import { parseRequest } from '../../dist/core/http/request.js'
import { dispatch } from '../../dist/core/http/dispatch.js'
import { toResponse, Auth } from '../../dist/core/auth.js'
import { resolveConfig } from '../../dist/core/config/resolve-config.js'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error() {}, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const cookie = `${SESSION_COOKIE}=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: SESSION_COOKIE })}`
const sget = new Request(`https://bench.test/auth/session`, { headers: { cookie } })
const pget = new Request(`https://bench.test/auth/providers`)
const resolved = resolveConfig(config).config
const sp = await parseRequest(sget, '/auth'), pp = await parseRequest(pget, '/auth')
const si = (await dispatch(sget, sp, resolved)).response, pi = (await dispatch(pget, pp, resolved)).response
async function time(name, fn, n = 30000) {
  for (let i = 0; i < 3000; i++) await fn()
  const c = process.cpuUsage(); for (let i = 0; i < n; i++) await fn(); const u = process.cpuUsage(c)
  return ((u.user + u.system) / n)
}
const tests = {
  'resolveConfig': () => resolveConfig(config),
  'parse session': () => parseRequest(sget, '/auth'),
  'parse providers': () => parseRequest(pget, '/auth'),
  'dispatch session': () => dispatch(sget, sp, resolved),
  'dispatch providers': () => dispatch(pget, pp, resolved),
  'toResponse session': () => toResponse(si).text(),
  'toResponse providers': () => toResponse(pi).text(),
  'Auth session': async () => (await Auth(sget, config)).text(),
  'Auth providers': async () => (await Auth(pget, config)).text(),
}
const acc = {}
for (let r = 0; r < 3; r++) for (const [k, f] of Object.entries(tests)) (acc[k] ??= []).push(await time(k, f))
for (const [k, v] of Object.entries(acc)) console.log(k.padEnd(24), v.map(x => x.toFixed(1)).join(' '), ' min', Math.min(...v).toFixed(1))
