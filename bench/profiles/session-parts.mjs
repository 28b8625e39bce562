// `node bench/profiles/session-parts.mjs [rounds]` after `npm run build`: the in-process session read
// taken apart, in interleaved rounds (cheapest round, CPU µs/op): `Auth()` end to end, the same
// request answered without a web `Response` (`answerRequest`), the trivial route both ways, the
// floor's decryption, and a bare `new Response(json).text()`. Says which part of the session read
// is the library's and which the web objects'.
import { answerRequest } from '../../dist/core/auth.js'
import { webRequestSource } from '../../dist/core/http/request.js'
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
const sessionJson = await (await Auth(session, config)).text()
const ops = {
  'Auth session': async () => (await Auth(session, config)).text(),
  'Auth providers': async () => (await Auth(providers, config)).text(),
  'answer session': async () => (await answerRequest(webRequestSource(session), config)).body,
  'answer providers': async () => (await answerRequest(webRequestSource(providers), config)).body,
  decrypt: async () => openSessionToken(token, key),
  'Response.text': async () => new Response(sessionJson, { headers: [['content-type', 'application/json']] }).text(),
}
const best = {}
const rounds = Number(process.argv[2] ?? 15)
for (let round = 0; round < rounds; round++) {
  for (const [name, op] of Object.entries(ops)) {
    const c = process.cpuUsage(); for (let i = 0; i < 3000; i++) await op(); const u = process.cpuUsage(c)
    const us = (u.user + u.system) / 3000
    if (round > 1) best[name] = Math.min(best[name] ?? Infinity, us)
  }
}
for (const [k, v] of Object.entries(best)) console.log(k.padEnd(18), v.toFixed(1))
console.log('session ÷ (providers + decrypt)', (best['Auth session'] / (best['Auth providers'] + best.decrypt)).toFixed(2))
