/**
 * CPU per session read, in process, from the sources: a JWT session, a database session through
 * the session cache (`session.cache`), and a database session without it, on the memory adapter
 * (so the uncached read here has no network round trip: in production it adds one per read).
 * Interleaved rounds (bench/harness.js), medians; the cached read's target is ≤ 1.5× the JWT read.
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
const results = await compare(ops, quick ? { rounds, budgetMs: 250, warmupMs: 250 } : { rounds, budgetMs: 600, warmupMs: 600 })
const base = results['session-jwt']
// The median round's ratio, and the cheapest round's (on a loaded machine noise only ever adds).
console.log('read                              ops/s    µs/op  CPU µs/op (min)  CPU ÷ JWT (min ÷ min)')
for (const [name, r] of Object.entries(results) as [string, { opsPerSec: number; usPerOp: number; cpuUsPerOp: number; cpuUsPerOpMin: number }][]) {
  console.log(
    `${name.padEnd(32)} ${r.opsPerSec.toFixed(0).padStart(7)} ${r.usPerOp.toFixed(1).padStart(8)} ${`${r.cpuUsPerOp.toFixed(1)} (${r.cpuUsPerOpMin.toFixed(1)})`.padStart(16)} ${`${(r.cpuUsPerOp / base.cpuUsPerOp).toFixed(2)} (${(r.cpuUsPerOpMin / base.cpuUsPerOpMin).toFixed(2)})`.padStart(22)}`,
  )
}
