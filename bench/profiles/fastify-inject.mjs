// `node bench/profiles/fastify-inject.mjs [rounds] [--baseline <checkout>]` after `npm run build`:
// the Fastify plugin's session read in process (`app.inject`, no sockets, no load generator), next
// to a bare route and the floor route (bare + node:crypto decryption of the cookie, as bench/http.js
// has them), interleaved rounds, cheapest round in CPU µs/request. With `--baseline`, that build's
// plugin runs in the same rounds. The session read ÷ the floor route is the HTTP target's ratio
// (≤ 1.5×) without the loopback and autocannon's noise.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import { openSessionToken, sessionKey } from '../floor.js'

const { values, positionals } = parseArgs({ options: { baseline: { type: 'string' } }, allowPositionals: true })
const rounds = Number(positionals[0] ?? 14)
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const COOKIE = 'authjs.session-token'
const here = resolve(new URL('../..', import.meta.url).pathname)

async function pluginApp(root) {
  const load = (path) => import(pathToFileURL(resolve(root, 'dist', path)).href)
  const [{ fastifyAuth }, { encode }, { default: Credentials }] = await Promise.all([load('integrations/fastify/index.js'), load('core/jwt.js'), load('providers/credentials.js')])
  const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error() {}, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
  const app = Fastify()
  await app.register(fastifyAuth, config)
  await app.ready()
  const token = await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: COOKIE })
  const headers = { cookie: `${COOKIE}=${token}`, host: 'localhost' }
  const read = () => app.inject({ url: '/auth/session', headers })
  if (!(await read()).body.includes('Alice')) throw new Error(`${root}: no session`)
  return { read, headers }
}

const b = await pluginApp(here)
const a = values.baseline ? await pluginApp(resolve(values.baseline)) : undefined
const key = sessionKey(SECRET, COOKIE)
const bare = Fastify()
bare.get('/bare', async () => ({ ok: true }))
bare.get('/floor', async (request) => {
  const claims = openSessionToken(/authjs\.session-token=([^;]+)/.exec(request.headers.cookie)[1], key)
  return { user: { name: claims.name, email: claims.email }, expires: new Date(claims.exp * 1000).toISOString() }
})
await bare.ready()
const ops = {
  bare: () => bare.inject({ url: '/bare', headers: b.headers }),
  floor: () => bare.inject({ url: '/floor', headers: b.headers }),
  session: b.read,
  ...(a ? { 'baseline session': a.read } : {}),
}
const best = {}
for (let round = 0; round < rounds; round++) {
  for (const [name, op] of Object.entries(ops)) {
    const c = process.cpuUsage()
    for (let i = 0; i < 1000; i++) await op()
    const u = process.cpuUsage(c)
    if (round > 1) best[name] = Math.min(best[name] ?? Infinity, (u.user + u.system) / 1000)
  }
}
for (const [name, us] of Object.entries(best)) console.log(name.padEnd(17), us.toFixed(1))
console.log('session ÷ floor route', (best.session / best.floor).toFixed(2))
if (a) console.log('session B/A', (best.session / best['baseline session']).toFixed(3))
