// `node bench/profiles/signin-split.mjs [rounds] [--baseline <dir>]` after `npm run build`: the
// credentials sign-in (GET /csrf then POST /callback/credentials, a new token each time, as the
// bench's scenario) and its two requests timed apart, next to the trivial route and the session
// read, and the floor's node:crypto parts; interleaved short rounds, each one's cheapest round in
// CPU µs/op (on a loaded machine noise only adds). With `--baseline`, a previous build (its `dist`)
// runs in the same rounds. `--only <csrf|post|signin> [n]` loops one of them, for
// `node --cpu-prof --cpu-prof-dir=bench/profiles bench/profiles/signin-split.mjs --only post`.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { Auth } from 'authchart'
import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
import { csrfHash, sealSessionToken, sessionKey } from '../floor.js'

const { values, positionals } = parseArgs({ options: { baseline: { type: 'string' }, only: { type: 'string' } }, allowPositionals: true })
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const S = '__Secure-authjs.session-token'
const ORIGIN = 'https://bench.test'

/** The operations of one build. */
async function opsOf(lib, prefix) {
  const config = {
    secret: SECRET,
    trustHost: true,
    basePath: '/auth',
    logger: { error() {}, warn() {}, debug() {} },
    // Counted as by default, never reached: every timed sign-in succeeds.
    rateLimit: { credentials: { perIdentifier: 2 ** 31 - 1, perAddress: 2 ** 31 - 1 } },
    providers: [lib.Credentials({ credentials: { username: {}, password: {} }, authorize: (c) => (c.username === 'alice' && c.password === 'pw' ? { id: '1', name: 'Alice', email: 'a@x.test' } : null) })],
  }
  const csrfRequest = new Request(`${ORIGIN}/auth/csrf`)
  const providers = new Request(`${ORIGIN}/auth/providers`)
  const session = new Request(`${ORIGIN}/auth/session`, { headers: { cookie: `${S}=${await lib.encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: S })}` } })
  const post = (cookie, csrfToken) =>
    new Request(`${ORIGIN}/auth/callback/credentials`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=alice&password=pw&csrfToken=${csrfToken}`,
    })
  const csrf = async () => {
    const response = await lib.Auth(csrfRequest, config)
    const cookie = response.headers.getSetCookie().map((c) => c.slice(0, c.indexOf(';'))).join('; ')
    return { cookie, csrfToken: (await response.json()).csrfToken }
  }
  const fixed = await csrf()
  const fresh = []
  for (let i = 0; i < 1000; i++) fresh.push(await csrf())
  let at = 0
  const posted = async (cookie, csrfToken) => {
    const response = await lib.Auth(post(cookie, csrfToken), config)
    await response.arrayBuffer()
    return response
  }
  const ops = {
    [`${prefix}signin`]: async () => {
      const { cookie, csrfToken } = await csrf()
      return posted(cookie, csrfToken)
    },
    [`${prefix}csrf`]: csrf,
    [`${prefix}post`]: () => posted(fixed.cookie, fixed.csrfToken),
    [`${prefix}postFresh`]: () => { const { cookie, csrfToken } = fresh[(at = (at + 1) % fresh.length)]; return posted(cookie, csrfToken) },
    [`${prefix}providers`]: async () => (await lib.Auth(providers, config)).json(),
    [`${prefix}session`]: async () => (await lib.Auth(session, config)).text(),
  }
  for (let i = 0; i < 12; i++) {
    const response = await ops[`${prefix}signin`]()
    if (response.headers.get('location') !== ORIGIN) throw new Error(`${prefix}sign-in failed: ${response.headers.get('location')}`)
  }
  return ops
}

const key = sessionKey(SECRET, S)
const ops = {
  ...(await opsOf({ Auth, Credentials, encode }, '')),
  encrypt: async () => sealSessionToken({ name: 'Alice', email: 'a@x.test', sub: '1' }, key),
  hash: async () => csrfHash('0'.repeat(64), SECRET),
}
if (values.baseline) {
  const dist = (path) => import(pathToFileURL(resolve(values.baseline, 'dist', path)).href)
  const [core, jwt, credentials] = await Promise.all([dist('core/index.js'), dist('core/jwt.js'), dist('providers/credentials.js')])
  Object.assign(ops, await opsOf({ Auth: core.Auth, Credentials: credentials.default, encode: jwt.encode }, 'baseline '))
}

if (values.only) {
  const op = ops[values.only]
  const n = Number(positionals[0] ?? 30000)
  const c = process.cpuUsage()
  for (let i = 0; i < n; i++) await op()
  const u = process.cpuUsage(c)
  console.log(values.only, ((u.user + u.system) / n).toFixed(1), 'CPU µs/op')
} else {
  const best = {}
  const rounds = Number(positionals[0] ?? 20)
  const names = Object.keys(ops)
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? [...names].reverse() : names) {
      const c = process.cpuUsage()
      for (let i = 0; i < 1000; i++) await ops[name]()
      const u = process.cpuUsage(c)
      if (round > 1) best[name] = Math.min(best[name] ?? Infinity, (u.user + u.system) / 1000)
    }
  }
  console.log(Object.entries(best).map(([k, v]) => `${k} ${v.toFixed(1)}`).join('  '))
  const floor = 2 * best.providers + best.encrypt + best.hash
  const line = (prefix) => `${prefix || 'authchart '}sign-in ${best[`${prefix}signin`].toFixed(1)} (csrf ${best[`${prefix}csrf`].toFixed(1)} + post ${best[`${prefix}post`].toFixed(1)}) / floor ${floor.toFixed(1)} = ${(best[`${prefix}signin`] / floor).toFixed(2)}×`
  console.log(line(''))
  if (values.baseline) console.log(line('baseline '))
}
