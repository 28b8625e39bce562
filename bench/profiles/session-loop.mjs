// `node bench/profiles/session-loop.mjs session|providers [n]`: a tight loop to profile with `node --cpu-prof`.
import { Auth } from 'authchart'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error() {}, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const cookie = `${SESSION_COOKIE}=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: SESSION_COOKIE })}`
const which = process.argv[2] ?? 'session'
const get = new Request(`https://bench.test/auth/${which === 'session' ? 'session' : 'providers'}`, { headers: { cookie } })
const N = Number(process.argv[3] ?? 30000)
for (let i = 0; i < 3000; i++) await (await Auth(get, config)).text()
const c = process.cpuUsage(); const t = performance.now()
for (let i = 0; i < N; i++) await (await Auth(get, config)).text()
const u = process.cpuUsage(c)
console.log(which, 'cpu µs/op', ((u.user + u.system) / N).toFixed(1), 'wall µs/op', ((performance.now() - t) * 1000 / N).toFixed(1))
