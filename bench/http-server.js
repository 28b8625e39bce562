// One library's Express server for `npm run bench -- --http`, in its own process (forked by
// bench/http-load.js), so that its CPU time and RSS are its own. Three session modes, each under
// its own mount, and the credentials sign-in:
//   /jwt   JWT session (Auth.js's default for credentials)
//   /db    database session (memory adapter), read from the adapter on every request
//   /dbc   database session with a session cache cookie (authchart `session.cache`; better-auth's
//          cookie cache), so a read within its maxAge needs no adapter call
// better-auth has no JWT session beside its database: its /jwt mount is the cookie cache with the
// `jwe` strategy (a self-contained encrypted cookie, no database read within maxAge), /dbc its
// default `compact` cache. @auth/core has no session cache: no /dbc.
// The parent sends `{ type: 'usage' }` and gets `{ cpu, rss }` back; it kills the process at the end.
// Without a parent, it prints its origin, paths and cookies and runs until interrupted.
import express from 'express'
import { betterAuth } from 'better-auth'
import { memoryAdapter } from 'better-auth/adapters/memory'
import { toNodeHandler } from 'better-auth/node'

const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const USER = { email: 'alice@x.test', name: 'Alice' }
const PASSWORD = 'correct horse battery'
const CACHE_SECONDS = 3600
const quiet = { error() {}, warn() {}, debug() {} }
const library = process.argv[2]

/** Set-Cookie lines as one Cookie header (what a browser sends back). */
const cookieHeader = (setCookies) => setCookies.map((c) => c.slice(0, c.indexOf(';'))).join('; ')

/** An OAuth provider that is never called: Auth.js refuses database sessions for credentials alone. */
const unusedOAuth = {
  id: 'op',
  name: 'OP',
  type: 'oauth',
  authorization: 'http://op.invalid/authorize',
  token: 'http://op.invalid/token',
  userinfo: 'http://op.invalid/me',
  clientId: 'client',
  clientSecret: 'secret',
}

/** authchart or @auth/core behind Express: their own Express integration, the same configs. */
async function authjsShaped(app, origin, { ExpressAuth, Credentials, encode, withCache }) {
  const { MemoryAdapter } = await import('../dist/adapters/memory.js')
  const credentials = Credentials({
    credentials: { username: {}, password: {} },
    authorize: (c) => (c.username === 'alice' && c.password === PASSWORD ? { id: '1', ...USER } : null),
  })
  const base = { secret: SECRET, trustHost: true, logger: quiet }
  const mounts = { jwt: { ...base, providers: [credentials] } }
  const adapters = {}
  for (const mode of withCache ? ['db', 'dbc'] : ['db']) {
    adapters[mode] = MemoryAdapter()
    mounts[mode] = {
      ...base,
      providers: [credentials, unusedOAuth],
      adapter: adapters[mode],
      session: { strategy: 'database', ...(mode === 'dbc' ? { cache: { maxAge: CACHE_SECONDS } } : {}) },
    }
  }
  for (const [mode, config] of Object.entries(mounts)) app.use(`/${mode}/auth`, ExpressAuth(config))
  // Plain HTTP: the cookie has no __Secure- prefix, and its name is the key derivation salt.
  const name = 'authjs.session-token'
  const cookies = { jwt: `${name}=${await encode({ token: { ...USER, sub: '1' }, secret: SECRET, salt: name })}` }
  for (const [mode, adapter] of Object.entries(adapters)) {
    const user = await adapter.createUser({ ...USER, emailVerified: null })
    const sessionToken = `bench-${mode}-${crypto.randomUUID()}`
    await adapter.createSession({ sessionToken, userId: user.id, expires: new Date(Date.now() + 30 * 86400_000) })
    cookies[mode] = `${name}=${sessionToken}`
  }
  const paths = { session: (mode) => `/${mode}/auth/session` }
  // The cached mode: the first read mints the cache entry; the browser sends it back from then on.
  if (cookies.dbc) {
    const first = await fetch(`${origin}${paths.session('dbc')}`, { headers: { cookie: cookies.dbc } })
    const minted = first.headers.getSetCookie()
    if (!minted.some((c) => c.startsWith('authjs.session-cache'))) throw new Error(`${library}: no session cache cookie`)
    cookies.dbc = `${cookies.dbc}; ${cookieHeader(minted)}`
  }
  return {
    cookies,
    sessionPath: Object.fromEntries(Object.keys(cookies).map((mode) => [mode, paths.session(mode)])),
    signIn: { kind: 'authjs', csrfPath: '/jwt/auth/csrf', postPath: '/jwt/auth/callback/credentials', username: 'alice', password: PASSWORD },
  }
}

const cheapPassword = {
  hash: async (password) => `plain:${password}`,
  verify: async ({ hash, password }) => hash === `plain:${password}`,
}

/** better-auth behind Express (`toNodeHandler`), one instance per mode, its memory adapter each. */
async function betterAuthServer(app, origin) {
  const modes = { jwt: 'jwe', db: undefined, dbc: 'compact' }
  const cookies = {}
  const sessionPath = {}
  for (const [mode, cache] of Object.entries(modes)) {
    const basePath = `/${mode}/api/auth`
    const auth = betterAuth({
      secret: SECRET,
      baseURL: origin,
      basePath,
      database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
      // The sign-in measures the library, not scrypt (as in the in-process scenarios).
      emailAndPassword: { enabled: true, password: cheapPassword },
      session: cache ? { cookieCache: { enabled: true, maxAge: CACHE_SECONDS, strategy: cache } } : {},
      rateLimit: { enabled: false },
      telemetry: { enabled: false },
      logger: { disabled: true },
    })
    app.all(`${basePath}/*splat`, toNodeHandler(auth))
    const json = { 'content-type': 'application/json', origin }
    const signUp = await fetch(`${origin}${basePath}/sign-up/email`, { method: 'POST', headers: json, body: JSON.stringify({ ...USER, password: PASSWORD }) })
    if (signUp.status !== 200) throw new Error(`better-auth sign-up: ${signUp.status} ${await signUp.text()}`)
    const signIn = await fetch(`${origin}${basePath}/sign-in/email`, { method: 'POST', headers: json, body: JSON.stringify({ email: USER.email, password: PASSWORD }) })
    cookies[mode] = cookieHeader(signIn.headers.getSetCookie())
    if (cache && !cookies[mode].includes('session_data=')) throw new Error(`better-auth: no ${cache} cookie cache`)
    sessionPath[mode] = `${basePath}/get-session`
  }
  return { cookies, sessionPath, signIn: { kind: 'better-auth', postPath: '/db/api/auth/sign-in/email', body: JSON.stringify({ email: USER.email, password: PASSWORD }), origin } }
}

const app = express()
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s))
})
const origin = `http://127.0.0.1:${server.address().port}`
let served
if (library === 'authchart') {
  const [{ ExpressAuth }, { encode }, { default: Credentials }] = await Promise.all([
    import('authchart/express'),
    import('authchart/jwt'),
    import('authchart/providers/credentials'),
  ])
  served = await authjsShaped(app, origin, { ExpressAuth, Credentials, encode, withCache: true })
} else if (library === '@auth/core') {
  const [{ ExpressAuth }, { encode }, { default: Credentials }] = await Promise.all([
    import('@auth/express'),
    import('@auth/core/jwt'),
    import('@auth/core/providers/credentials'),
  ])
  served = await authjsShaped(app, origin, { ExpressAuth, Credentials, encode, withCache: false })
} else if (library === 'better-auth') {
  served = await betterAuthServer(app, origin)
} else if (library === 'bare') {
  // No library: the same session JSON from a plain Express route, to tell the machine's share of a
  // latency from a library's (bench/profiles/accept-spread.mjs).
  app.get('/bare/session', (_request, response) => response.json({ user: { name: 'Alice', email: 'alice@example.com' }, expires: new Date(Date.now() + 86_400_000).toISOString() }))
  served = { cookies: { jwt: 'bare=1' }, sessionPath: { jwt: '/bare/session' } }
} else {
  throw new Error(`unknown library ${library}`)
}

// Each session read answers the user, else the setup is broken (and would time an error path).
for (const [mode, path] of Object.entries(served.sessionPath)) {
  const response = await fetch(`${origin}${path}`, { headers: { cookie: served.cookies[mode] } })
  const body = await response.json()
  if (body?.user?.name !== 'Alice') throw new Error(`${library} ${mode}: session read answered ${JSON.stringify(body)}`)
  // A cached read that mints its entry again on every request would time the database read.
  if (mode === 'dbc' && response.headers.getSetCookie().length > 0) throw new Error(`${library} ${mode}: the cache entry is minted again`)
}

// Started by hand (no IPC), to profile one server under load:
//   node --cpu-prof --cpu-prof-dir=bench/profiles bench/http-server.js authchart
//   autocannon -c 10 -d 10 -H "cookie=<the jwt cookie it prints>" <origin>/jwt/auth/session
// then Ctrl-C: the profile is written on exit.
if (!process.send) {
  console.log(JSON.stringify({ origin, ...served }, null, 2))
  process.on('SIGINT', () => process.exit(0))
}

process.on('message', (message) => {
  if (message?.type === 'usage') {
    const cpu = process.cpuUsage()
    process.send({ type: 'usage', cpu: cpu.user + cpu.system, rss: process.memoryUsage().rss })
  }
})
process.send?.({ type: 'ready', origin, ...served })
