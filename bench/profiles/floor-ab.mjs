// `node bench/profiles/floor-ab.mjs [rounds]` after `npm run build`. Interleaved short rounds, minimum CPU µs/op per operation: the least noisy view on a loaded machine.
import { Auth } from 'authchart'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
import { openSessionToken, sessionKey } from '../floor.js'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const S = '__Secure-authjs.session-token'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error() {}, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const token = await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: S })
const key = sessionKey(SECRET, S)
const session = new Request('https://bench.test/auth/session', { headers: { cookie: `${S}=${token}` } })
const providers = new Request('https://bench.test/auth/providers')
const ops = {
  session: async () => (await Auth(session, config)).text(),
  providers: async () => (await Auth(providers, config)).text(),
  decrypt: async () => openSessionToken(token, key),
}
const best = {}
for (let round = 0; round < Number(process.argv[2] ?? 20); round++) {
  for (const [name, op] of Object.entries(ops)) {
    const c = process.cpuUsage(); for (let i = 0; i < 3000; i++) await op(); const u = process.cpuUsage(c)
    const us = (u.user + u.system) / 3000
    if (round > 1) best[name] = Math.min(best[name] ?? Infinity, us)
  }
}
console.log(Object.entries(best).map(([k, v]) => `${k} ${v.toFixed(1)}`).join('  '), ' multiple', (best.session / (best.providers + best.decrypt)).toFixed(2))
