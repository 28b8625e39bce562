/**
 * The session reads of `bench/session-cache.ts` for this checkout and another one's sources in one
 * process: JWT, database through the session cache (in-memory store) and the same with a store
 * given, each build's three reads interleaved in short rounds, so that both builds go through the
 * same noise of a shared machine. Prints per read the median and cheapest CPU µs/op, the ratios to
 * the same build's JWT read, and the median of the ratios within each round.
 *
 *   node --import ./test/scale/ts-register.mjs bench/profiles/session-cache-baseline.ts <baseline checkout> [seconds]
 *
 * @module
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const ORIGIN = 'https://authchart.test'
const [baseline, seconds = '60'] = process.argv.slice(2)
if (!baseline) throw new Error('usage: session-cache-baseline.ts <baseline checkout> [seconds]')

type Build = { Auth: (request: Request, config: never) => Promise<Response>; MemoryAdapter: () => unknown; memoryAuthStore: () => unknown; Credentials: (options: object) => unknown }

/** A checkout's sources, as the bench imports them. */
async function buildAt(root: string): Promise<Build> {
  const at = (path: string) => import(pathToFileURL(resolve(root, path)).href)
  const [core, memory, store, credentials] = await Promise.all([at('core/index.js'), at('adapters/memory.js'), at('core/store/index.js'), at('providers/credentials.js')])
  return { Auth: core.Auth, MemoryAdapter: memory.MemoryAdapter, memoryAuthStore: store.memoryAuthStore, Credentials: credentials.default }
}

function config(build: Build, session: object, extra: object = {}) {
  return {
    secret: 'bench-secret-that-is-long-enough-for-hkdf-0123456789',
    trustHost: true,
    session,
    providers: [
      build.Credentials({
        credentials: { username: {}, password: {} },
        authorize: (c: Record<string, string>) => (c.password === 'wonderland' ? { id: 'u-1', name: 'Alice', email: 'alice@example.com' } : null),
      }),
    ],
    logger: { error() {}, warn() {}, debug() {} },
    ...extra,
  } as never
}

/** The cookies after a credentials sign-in and one session read (which mints the cache entry). */
async function signedInCookies(build: Build, app: never): Promise<string> {
  const jar = new Map<string, string>()
  const send = async (path: string, body?: Record<string, string>) => {
    const headers = new Headers({ cookie: [...jar].map(([n, v]) => `${n}=${v}`).join('; ') })
    if (body) headers.set('content-type', 'application/x-www-form-urlencoded')
    const response = await build.Auth(new Request(`${ORIGIN}${path}`, { method: body ? 'POST' : 'GET', headers, ...(body ? { body: new URLSearchParams(body).toString() } : {}) }), app)
    for (const header of response.headers.getSetCookie()) {
      const pair = header.split(';')[0]!
      const eq = pair.indexOf('=')
      if (/max-age=0/i.test(header)) jar.delete(pair.slice(0, eq))
      else jar.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    return response
  }
  const { csrfToken } = (await (await send('/auth/csrf')).json()) as { csrfToken: string }
  await send('/auth/callback/credentials', { csrfToken, username: 'alice', password: 'wonderland' })
  await send('/auth/session')
  return [...jar].map(([n, v]) => `${n}=${v}`).join('; ')
}

const builds: Record<string, Build> = { baseline: await buildAt(baseline), this: await buildAt(resolve(import.meta.dirname, '../..')) }
const reads: Record<string, () => Promise<void>> = {}
for (const [name, build] of Object.entries(builds)) {
  const apps = {
    jwt: config(build, { strategy: 'jwt' }),
    cached: config(build, { strategy: 'database', cache: { maxAge: 3600 } }, { adapter: build.MemoryAdapter() }),
    'cached (store given)': config(build, { strategy: 'database', cache: { maxAge: 3600 } }, { adapter: build.MemoryAdapter(), store: build.memoryAuthStore() }),
  }
  for (const [kind, app] of Object.entries(apps)) {
    const request = new Request(`${ORIGIN}/auth/session`, { headers: { cookie: await signedInCookies(build, app) } })
    const first = await build.Auth(request, app)
    if (((await first.json()) as { user?: { email?: string } } | null)?.user?.email !== 'alice@example.com') throw new Error(`${name} ${kind}: no session`)
    if (first.headers.getSetCookie().length > 0) throw new Error(`${name} ${kind}: a read set a cookie, not the steady state`)
    reads[`${name} ${kind}`] = async () => {
      await (await build.Auth(request, app)).arrayBuffer()
    }
  }
}

const names = Object.keys(reads)
const cpu: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]))
const end = Date.now() + Number(seconds) * 1000
for (let round = 0; Date.now() < end; round++) {
  for (const name of round % 2 ? names : [...names].reverse()) {
    const start = process.cpuUsage()
    const began = performance.now()
    let ops = 0
    while (performance.now() - began < 200) {
      await reads[name]!()
      ops++
    }
    const used = process.cpuUsage(start)
    // The first rounds warm up.
    if (round > 1) cpu[name]!.push((used.user + used.system) / ops)
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
console.log('read                              CPU µs/op (min)  ÷ JWT (min ÷ min)  per round  rounds')
for (const name of names) {
  const jwt = cpu[`${name.split(' ')[0]} jwt`]!
  const mine = cpu[name]!
  const perRound = median(mine.map((value, round) => value / jwt[round]!))
  console.log(
    `${name.padEnd(32)} ${`${median(mine).toFixed(1)} (${Math.min(...mine).toFixed(1)})`.padStart(16)} ${`${(median(mine) / median(jwt)).toFixed(2)} (${(Math.min(...mine) / Math.min(...jwt)).toFixed(2)})`.padStart(18)} ${perRound.toFixed(2).padStart(10)} ${String(mine.length).padStart(7)}`,
  )
}
