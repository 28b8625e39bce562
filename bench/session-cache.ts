/**
 * CPU per session read, in process, from the sources: a JWT session, a database session through
 * the session cache (`session.cache`), and a database session without it, on the memory adapter
 * (so the uncached read here has no network round trip: in production it adds one per read).
 * Interleaved rounds (bench/harness.js), medians; the cached read's target is ≤ 1.5× the JWT read,
 * reported as the median round's ratio, the cheapest round's, and the median of the ratios within
 * each round.
 *
 *   node --expose-gc --import ./test/scale/ts-register.mjs bench/session-cache.ts [--quick]   (ROUNDS=n: more rounds)
 *
 * @module
 */
import { MemoryAdapter } from '../adapters/memory.js'
import { Auth } from '../core/index.js'
import type { AuthConfig } from '../core/types.js'
import { memoryAuthStore } from '../core/store/index.js'
import Credentials from '../providers/credentials.js'
// @ts-expect-error the harness is plain JavaScript
import { compare } from './harness.js'

const ORIGIN = 'https://authchart.test'
const quick = process.argv.includes('--quick')

function config(session: AuthConfig['session'], extra: Partial<AuthConfig> = {}): AuthConfig {
  return {
    secret: 'bench-secret-that-is-long-enough-for-hkdf-0123456789',
    trustHost: true,
    session,
    providers: [
      Credentials({
        credentials: { username: {}, password: {} },
        authorize: (c) => (c.password === 'wonderland' ? { id: 'u-1', name: 'Alice', email: 'alice@example.com' } : null),
      }),
    ],
    logger: { error() {}, warn() {}, debug() {} },
    ...extra,
  }
}

/** The cookies after a credentials sign-in and one session read (which mints the cache entry). */
async function signedInCookies(app: AuthConfig): Promise<string> {
  const jar = new Map<string, string>()
  const send = async (path: string, body?: Record<string, string>) => {
    const headers = new Headers({ cookie: [...jar].map(([n, v]) => `${n}=${v}`).join('; ') })
    if (body) headers.set('content-type', 'application/x-www-form-urlencoded')
    const response = await Auth(new Request(`${ORIGIN}${path}`, { method: body ? 'POST' : 'GET', headers, ...(body ? { body: new URLSearchParams(body).toString() } : {}) }), app as never)
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';')
      const eq = pair!.indexOf('=')
      if (/max-age=0/i.test(header)) jar.delete(pair!.slice(0, eq))
      else jar.set(pair!.slice(0, eq), pair!.slice(eq + 1))
    }
    return response
  }
  const { csrfToken } = (await (await send('/auth/csrf')).json()) as { csrfToken: string }
  await send('/auth/callback/credentials', { csrfToken, username: 'alice', password: 'wonderland' })
  await send('/auth/session')
  return [...jar].map(([n, v]) => `${n}=${v}`).join('; ')
}

/** One session read with `cookie`; checked once before it is timed. */
async function reader(app: AuthConfig, cookie: string, expectCookies: boolean) {
  const request = new Request(`${ORIGIN}/auth/session`, { headers: { cookie } })
  const read = () => Auth(request, app as never)
  const first = await read()
  const body = (await first.json()) as { user?: { email?: string } } | null
  if (body?.user?.email !== 'alice@example.com') throw new Error('the session read did not answer the session')
  if (!expectCookies && first.headers.getSetCookie().length > 0) throw new Error('a cached read set a cookie: it is not the steady state')
  return async () => {
    await (await read()).arrayBuffer()
  }
}

const jwt = config({ strategy: 'jwt' })
const cached = config({ strategy: 'database', cache: { maxAge: 3600 } }, { adapter: MemoryAdapter() })
const cachedShared = config({ strategy: 'database', cache: { maxAge: 3600 } }, { adapter: MemoryAdapter(), store: memoryAuthStore() })
const uncached = config({ strategy: 'database' }, { adapter: MemoryAdapter() })

const ops = {
  'session-jwt': await reader(jwt, await signedInCookies(jwt), false),
  'session-db-cached': await reader(cached, await signedInCookies(cached), false),
  'session-db-cached (store given)': await reader(cachedShared, await signedInCookies(cachedShared), false),
  'session-db (memory adapter)': await reader(uncached, await signedInCookies(uncached), false),
}
const rounds = Number(process.env.ROUNDS ?? (quick ? 3 : 7))
const timing = quick ? { budgetMs: 250, warmupMs: 250 } : { budgetMs: 600, warmupMs: 600 }
type Round = { opsPerSec: number; usPerOp: number; cpuUsPerOp: number }
// The harness's rounds one at a time (warm-up first), the order reversed every other round, so
// that each read's CPU can also be set against the JWT read's in the same round: on a machine
// shared with other work, a round's neighbours load both alike.
const names = Object.keys(ops) as (keyof typeof ops)[]
// The warm-up alone (no rounds).
await compare(ops, { rounds: 0, ...timing })
const samples = Object.fromEntries(names.map((name) => [name, [] as Round[]])) as Record<keyof typeof ops, Round[]>
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? names : [...names].reverse()
  const measured = await compare(Object.fromEntries(order.map((name) => [name, ops[name]])), { rounds: 1, budgetMs: timing.budgetMs, warmupMs: 0 })
  for (const name of names) samples[name].push(measured[name])
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const jwtRounds = samples['session-jwt']
const jwtCpu = median(jwtRounds.map((r) => r.cpuUsPerOp))
const jwtCpuMin = Math.min(...jwtRounds.map((r) => r.cpuUsPerOp))
// The median round's ratio, the cheapest round's (on a loaded machine noise only ever adds), and
// the median of the ratios within each round.
console.log('read                              ops/s    µs/op  CPU µs/op (min)  CPU ÷ JWT (min ÷ min)  per round')
for (const name of names) {
  const runs = samples[name]
  const cpu = median(runs.map((r) => r.cpuUsPerOp))
  const cpuMin = Math.min(...runs.map((r) => r.cpuUsPerOp))
  const paired = median(runs.map((r, round) => r.cpuUsPerOp / jwtRounds[round]!.cpuUsPerOp))
  console.log(
    `${name.padEnd(32)} ${median(runs.map((r) => r.opsPerSec)).toFixed(0).padStart(7)} ${median(runs.map((r) => r.usPerOp)).toFixed(1).padStart(8)} ${`${cpu.toFixed(1)} (${cpuMin.toFixed(1)})`.padStart(16)} ${`${(cpu / jwtCpu).toFixed(2)} (${(cpuMin / jwtCpuMin).toFixed(2)})`.padStart(22)} ${paired.toFixed(2).padStart(10)}`,
  )
}
