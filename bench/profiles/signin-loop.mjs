// `node bench/profiles/signin-loop.mjs [n]`: credentials sign-in (csrf + POST) in a loop, to profile.
import { Auth } from 'authchart'
import Credentials from 'authchart/providers/credentials'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error() {}, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: (c) => (c.username === 'alice' && c.password === 'pw' ? { id: '1', name: 'Alice', email: 'a@x.test' } : null) })] }
const csrfRequest = new Request('https://bench.test/auth/csrf')
async function signIn() {
  const csrf = await Auth(csrfRequest, config)
  const cookie = csrf.headers.getSetCookie().map((c) => c.slice(0, c.indexOf(';'))).join('; ')
  const { csrfToken } = await csrf.json()
  const r = await Auth(new Request('https://bench.test/auth/callback/credentials', { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `username=alice&password=pw&csrfToken=${csrfToken}` }), config)
  await r.arrayBuffer(); return r
}
const r = await signIn(); if (r.headers.get('location') !== 'https://bench.test') throw new Error(r.headers.get('location'))
const N = Number(process.argv[2] ?? 20000)
for (let i = 0; i < 2000; i++) await signIn()
const c = process.cpuUsage(); for (let i = 0; i < N; i++) await signIn(); const u = process.cpuUsage(c)
console.log('signin cpu µs/op', ((u.user + u.system) / N).toFixed(1))
