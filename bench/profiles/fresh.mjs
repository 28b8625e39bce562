import { Auth } from 'authchart'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const S = '__Secure-authjs.session-token'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error() {}, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const cookie = `${S}=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: S })}`
const reused = new Request('https://bench.test/auth/session', { headers: { cookie } })
async function time(name, fn, n = 20000) {
  for (let i = 0; i < 2000; i++) await fn()
  const c = process.cpuUsage(); for (let i = 0; i < n; i++) await fn(); const u = process.cpuUsage(c)
  console.log(name.padEnd(20), ((u.user + u.system) / n).toFixed(1))
}
for (let r = 0; r < 2; r++) {
  await time('reused', async () => (await Auth(reused, config)).text())
  await time('fresh', async () => (await Auth(new Request('https://bench.test/auth/session', { headers: { cookie } }), config)).text())
  await time('fresh request only', async () => new Request('https://bench.test/auth/session', { headers: { cookie } }))
  await time('fresh providers', async () => (await Auth(new Request('https://bench.test/auth/providers', { headers: { cookie } }), config)).text())
}
