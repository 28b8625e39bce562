// `node bench/profiles/session-ab.mjs <baseline checkout> [rounds]` after `npm run build` (here and
// in the baseline, e.g. bench/.baseline/<sha>): the in-process JWT session read of the baseline (A)
// and of this checkout (B), with the trivial route of each and the floor's decryption, in the same
// interleaved rounds. Prints each build's cheapest round (CPU µs/op) and the issue-42 multiple:
// session read ÷ (trivial route + decryption), and B's session read ÷ the two done in one operation.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { openSessionToken, sessionKey } from '../floor.js'

const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const S = '__Secure-authjs.session-token'
const baseline = process.argv[2]
const rounds = Number(process.argv[3] ?? 20)
const here = resolve(new URL('../..', import.meta.url).pathname)

async function build(root) {
  const load = (path) => import(pathToFileURL(resolve(root, 'dist', path)).href)
  const [{ Auth }, { encode }, { default: Credentials }] = await Promise.all([load('core/index.js'), load('core/jwt.js'), load('providers/credentials.js')])
  const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error() {}, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
  const token = await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: S })
  const session = new Request('https://bench.test/auth/session', { headers: { cookie: `${S}=${token}` } })
  const providers = new Request('https://bench.test/auth/providers')
  const read = async () => (await Auth(session, config)).text()
  if (!JSON.parse(await read()).user) throw new Error(`${root}: no session`)
  const trivial = async () => (await Auth(providers, config)).text()
  return { token, session: read, providers: trivial, Auth, config, providersRequest: providers }
}

const b = await build(here)
const a = await build(resolve(baseline))
const key = sessionKey(SECRET, S)
const ops = {
  'A session': a.session,
  'A trivial': a.providers,
  'B session': b.session,
  'B trivial': b.providers,
  decrypt: async () => openSessionToken(b.token, key),
  // The floor's two parts in one operation: the decryption between the trivial route's work, with
  // the caches as a request leaves them (timed alone, it runs warm and costs less).
  'B trivial+decrypt': async () => {
    openSessionToken(b.token, key)
    return (await b.Auth(b.providersRequest, b.config)).text()
  },
}
const best = {}
for (let round = 0; round < rounds; round++) {
  for (const [name, op] of Object.entries(ops)) {
    const c = process.cpuUsage()
    for (let i = 0; i < 2000; i++) await op()
    const u = process.cpuUsage(c)
    if (round > 1) best[name] = Math.min(best[name] ?? Infinity, (u.user + u.system) / 2000)
  }
}
for (const [name, us] of Object.entries(best)) console.log(name.padEnd(10), us.toFixed(1))
for (const side of ['A', 'B']) {
  console.log(`${side} multiple`, (best[`${side} session`] / (best[`${side} trivial`] + best.decrypt)).toFixed(2))
}
console.log('B multiple, floor in one operation', (best['B session'] / best['B trivial+decrypt']).toFixed(2))
console.log('B/A session', (best['B session'] / best['A session']).toFixed(3))
