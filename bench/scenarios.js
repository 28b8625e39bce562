// The scenarios. Each one is the same operation for every library: `setup(lib, context)` for the
// Auth.js-shaped libraries (authchart, @auth/core, and authchart's previous build with
// `--baseline`), `peers` for better-auth's variants (its API differs) and for the floor. A setup
// checks its operation once (so a broken setup fails loudly instead of timing an error path) and
// returns the operation to time.
import { betterAuthInstance, betterAuthSignIn, betterAuthSignOut, BA_ORIGIN, BA_SESSION_COOKIE } from './better-auth.js'
import { csrfHash, openSessionToken, sealSessionToken, sessionKey } from './floor.js'
import { Jar } from './jar.js'
import { CANNED_CLIENT, CANNED_ISSUER, cannedProvider } from './oidc-canned.js'

export const ORIGIN = 'https://bench.test'
export const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const CLAIMS = { name: 'Alice', email: 'a@x.test', sub: '1' }
const PASSWORD_FOR_HASHING = 'correct horse battery'
const quiet = process.env.BENCH_LOG ? { error: console.error, warn: console.warn, debug() {} } : { error() {}, warn() {}, debug() {} }

/** The config each library gets: built once, reused, as both cache per config object. */
export function configFor(lib, extra = {}) {
  return {
    secret: SECRET,
    trustHost: true,
    basePath: '/auth',
    logger: quiet,
    // authchart counts every credentials attempt (10 per username in 15 minutes by default): a
    // timed loop of sign-ins would otherwise time refusals from its eleventh on. Counted as by
    // default, never reached. @auth/core has no such limit and ignores the option.
    rateLimit: { credentials: { perIdentifier: 2 ** 31 - 1, perAddress: 2 ** 31 - 1 } },
    providers: [
      lib.Credentials({
        credentials: { username: {}, password: {} },
        authorize: (c) => (c.username === 'alice' && c.password === 'pw' ? { id: '1', name: 'Alice', email: 'a@x.test' } : null),
      }),
      ...(extra.providers ?? []),
    ],
  }
}

const request = (path, init = {}) => new Request(`${ORIGIN}${path}`, init)

function check(condition, message) {
  if (!condition) throw new Error(`scenario check failed: ${message}`)
}

async function csrfOf(lib, config, jar) {
  const response = jar.store(await lib.Auth(request('/auth/csrf', { headers: { cookie: jar.header() } }), config))
  return (await response.json()).csrfToken
}

/**
 * Credentials sign-in as a browser does it: GET /csrf (a new token and cookie), then POST
 * /callback/credentials with both. Returns the POST's response.
 */
async function credentialsSignIn(lib, config, csrfRequest = request('/auth/csrf')) {
  const csrf = await lib.Auth(csrfRequest, config)
  const cookie = csrf.headers.getSetCookie().map((c) => c.slice(0, c.indexOf(';'))).join('; ')
  const { csrfToken } = await csrf.json()
  return lib.Auth(
    request('/auth/callback/credentials', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=alice&password=pw&csrfToken=${csrfToken}`,
    }),
    config,
  )
}

/** POST /signin/op with a CSRF token: the redirect to the provider, cookies in `jar`. */
async function oidcStart(lib, config, jar) {
  const csrfToken = await csrfOf(lib, config, jar)
  return jar.store(
    await lib.Auth(
      request('/auth/signin/op', {
        method: 'POST',
        headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrfToken }),
      }),
      config,
    ),
  )
}

/** A full OIDC sign-in against the OP in the child process. */
async function oidcSignIn(lib, config) {
  const jar = new Jar()
  const start = await oidcStart(lib, config, jar)
  let next = start.headers.get('location')
  const opJar = new Jar()
  for (let hop = 0; hop < 10 && !next.startsWith(ORIGIN); hop++) {
    const response = opJar.store(await fetch(next, { redirect: 'manual', headers: { cookie: opJar.header() } }))
    await response.arrayBuffer()
    next = new URL(response.headers.get('location'), next).href
  }
  return lib.Auth(request(new URL(next).pathname + new URL(next).search, { headers: { cookie: jar.header() } }), config)
}

/**
 * An OIDC sign-in whose provider answers are canned: the authorization redirect is answered at
 * once with a code for the request's `state`, the token endpoint by `customFetch`.
 */
async function cannedOidcSignIn(lib, config) {
  const jar = new Jar()
  const start = await oidcStart(lib, config, jar)
  const authorize = new URL(start.headers.get('location'))
  if (`${authorize.origin}${authorize.pathname}` !== `${CANNED_ISSUER}/authorize`) {
    throw new Error(`${lib.name}: unexpected authorization redirect ${authorize.href}`)
  }
  const state = authorize.searchParams.get('state')
  const query = new URLSearchParams({ code: 'canned-code', ...(state ? { state } : {}) })
  return lib.Auth(request(`/auth/callback/op?${query}`, { headers: { cookie: jar.header() } }), config)
}

function checkSignedIn(lib, response, what) {
  check(response.headers.get('location') === ORIGIN, `${lib.name}: ${what} redirect ${response.headers.get('location')}`)
  check(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=ey`)), `${lib.name}: ${what} session cookie`)
}

/** better-auth's session read in one cookie-cache mode (`undefined`: off). */
function betterAuthSessionRead(cache) {
  return {
    name: `better-auth${cache ? ` (cache ${cache})` : ''}`,
    peer: 'better-auth',
    async setup() {
      const { auth } = await betterAuthInstance({ cache })
      const signIn = await betterAuthSignIn(auth)
      const cookie = signIn.headers.getSetCookie().map((c) => c.slice(0, c.indexOf(';'))).join('; ')
      check(cache === undefined || cookie.includes('session_data='), `better-auth: ${cache} cookie cache`)
      const get = new Request(`${BA_ORIGIN}/api/auth/get-session`, { headers: { cookie } })
      const op = async () => (await auth.handler(get)).text()
      check(JSON.parse(await op()).user?.name === 'Alice', `better-auth (${cache}): session read`)
      return op
    },
  }
}

export const scenarios = [
  {
    // Measured together, in the same interleaved rounds, so that load on the machine moves them
    // alike: the session read as a multiple of (trivial route + decryption), and the credentials
    // sign-in (GET /csrf + POST) as a multiple of (2 × trivial route + encryption + CSRF hash).
    name: 'floor',
    title: 'floor: session read and credentials sign-in next to trivial routes and node:crypto',
    peers: [
      { name: 'authchart credentials sign-in', peer: 'floor', setup: (lib) => scenarioNamed('credentials-signin').setup(lib) },
      {
        name: 'node:crypto encrypt',
        peer: 'floor',
        async setup() {
          const key = sessionKey(SECRET, SESSION_COOKIE)
          const op = async () => sealSessionToken(CLAIMS, key)
          check(openSessionToken(await op(), key).name === 'Alice', 'floor: encrypt')
          return op
        },
      },
      {
        name: 'node:crypto CSRF hash',
        peer: 'floor',
        async setup() {
          const token = 'a'.repeat(64)
          const op = async () => csrfHash(token, SECRET)
          check((await op()).length === 64, 'floor: CSRF hash')
          return op
        },
      },
      { name: 'authchart session read', peer: 'floor', setup: (lib) => scenarioNamed('session-jwt').setup(lib) },
      { name: 'authchart trivial route', peer: 'floor', setup: (lib) => scenarioNamed('providers').setup(lib) },
      {
        name: 'node:crypto decrypt',
        peer: 'floor',
        async setup(lib) {
          const token = await lib.encode({ token: CLAIMS, secret: SECRET, salt: SESSION_COOKIE })
          const key = sessionKey(SECRET, SESSION_COOKIE)
          const op = async () => openSessionToken(token, key)
          check((await op()).name === 'Alice', 'floor: decrypt')
          return op
        },
      },
    ],
    floorOnly: true,
  },
  {
    name: 'session-jwt',
    title: 'GET /session, valid JWT cookie',
    target: 5,
    async setup(lib) {
      const config = configFor(lib)
      const cookie = `${SESSION_COOKIE}=${await lib.encode({ token: CLAIMS, secret: SECRET, salt: SESSION_COOKIE })}`
      // A GET request carries no body, so one Request object serves every iteration (for both
      // libraries): the harness should cost as little as possible next to the handler.
      const get = request('/auth/session', { headers: { cookie } })
      const op = async () => (await lib.Auth(get, config)).text()
      check(JSON.parse(await op()).user?.name === 'Alice', `${lib.name}: session read`)
      return op
    },
    peers: [betterAuthSessionRead(undefined), betterAuthSessionRead('compact'), betterAuthSessionRead('jwe')],
  },
  {
    name: 'session-none',
    title: 'GET /session, no cookie',
    async setup(lib) {
      const config = configFor(lib)
      const get = request('/auth/session')
      const op = async () => (await lib.Auth(get, config)).text()
      check((await op()) === 'null', `${lib.name}: empty session`)
      return op
    },
    peers: [
      {
        name: 'better-auth',
        peer: 'better-auth',
        async setup() {
          const { auth } = await betterAuthInstance()
          const get = new Request(`${BA_ORIGIN}/api/auth/get-session`)
          const op = async () => (await auth.handler(get)).text()
          check((await op()) === 'null', 'better-auth: empty session')
          return op
        },
      },
    ],
  },
  {
    name: 'csrf-new',
    title: 'GET /csrf, new token',
    target: 2,
    async setup(lib) {
      const config = configFor(lib)
      const get = request('/auth/csrf')
      const op = async () => (await lib.Auth(get, config)).json()
      check((await op()).csrfToken.length === 64, `${lib.name}: csrf token`)
      return op
    },
  },
  {
    name: 'csrf-existing',
    title: 'GET /csrf, existing cookie',
    target: 2,
    async setup(lib) {
      const config = configFor(lib)
      const jar = new Jar()
      const token = await csrfOf(lib, config, jar)
      const cookie = jar.header()
      const get = request('/auth/csrf', { headers: { cookie } })
      const op = async () => (await lib.Auth(get, config)).json()
      check((await op()).csrfToken === token, `${lib.name}: csrf token reused`)
      return op
    },
  },
  {
    name: 'providers',
    title: 'trivial route: GET /providers (better-auth: GET /ok)',
    target: 2,
    async setup(lib) {
      const config = configFor(lib)
      const get = request('/auth/providers')
      const op = async () => (await lib.Auth(get, config)).json()
      check((await op()).credentials?.id === 'credentials', `${lib.name}: providers`)
      return op
    },
    peers: [
      {
        name: 'better-auth',
        peer: 'better-auth',
        async setup() {
          const { auth } = await betterAuthInstance()
          const get = new Request(`${BA_ORIGIN}/api/auth/ok`)
          const op = async () => (await auth.handler(get)).json()
          check((await op()).ok === true, 'better-auth: ok')
          return op
        },
      },
    ],
  },
  {
    name: 'credentials-signin',
    title: 'password sign-in, cheap hash (Auth.js: csrf + POST; better-auth: POST)',
    target: 5,
    async setup(lib) {
      const config = configFor(lib)
      const csrfRequest = request('/auth/csrf')
      const op = async () => {
        const response = await credentialsSignIn(lib, config, csrfRequest)
        await response.arrayBuffer()
        return response
      }
      checkSignedIn(lib, await op(), 'sign-in')
      // Past a default rate limit (10 attempts per username) too: every timed sign-in is one.
      for (let i = 0; i < 10; i++) await op()
      checkSignedIn(lib, await op(), 'twelfth sign-in')
      return op
    },
    peers: [
      {
        name: 'better-auth',
        peer: 'better-auth',
        async setup() {
          const { auth, db } = await betterAuthInstance()
          const op = async () => {
            const response = await betterAuthSignIn(auth)
            await response.arrayBuffer()
            // Each sign-in adds a session row; the memory adapter scans arrays, so keep it short.
            db.session.length = 0
            return response
          }
          const response = await op()
          check(response.headers.getSetCookie().some((c) => c.startsWith(`${BA_SESSION_COOKIE}=`)), 'better-auth: session cookie')
          return op
        },
      },
    ],
  },
  {
    name: 'signin-signout',
    title: 'sign-in + sign-out (cheap hash)',
    async setup(lib) {
      const config = configFor(lib)
      const csrfRequest = request('/auth/csrf')
      const op = async () => {
        const signIn = await credentialsSignIn(lib, config, csrfRequest)
        const jar = new Jar()
        jar.store(signIn)
        const csrfToken = await csrfOf(lib, config, jar)
        const signOut = await lib.Auth(
          request('/auth/signout', {
            method: 'POST',
            headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
            body: `csrfToken=${csrfToken}`,
          }),
          config,
        )
        await signOut.arrayBuffer()
        return signOut
      }
      const signOut = await op()
      check(signOut.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`)), `${lib.name}: sign-out clears the session`)
      return op
    },
    peers: [
      {
        name: 'better-auth',
        peer: 'better-auth',
        async setup() {
          const { auth, db } = await betterAuthInstance()
          const op = async () => {
            const signIn = await betterAuthSignIn(auth)
            await signIn.arrayBuffer()
            const signOut = await betterAuthSignOut(auth, signIn)
            await signOut.arrayBuffer()
            return signOut
          }
          const before = db.session.length
          const signOut = await op()
          check(signOut.status === 200 && db.session.length === before, 'better-auth: sign-out deletes the session')
          return op
        },
      },
    ],
  },
  {
    name: 'signin-scrypt',
    title: "password sign-in at each library's default hash: authchart's Password() with argon2id, better-auth's scrypt",
    floorOnly: true,
    // Hundreds of milliseconds per operation: longer rounds, so each holds several.
    timing: { rounds: 5, budgetMs: 3000 },
    peers: [
      {
        name: 'authchart Password() argon2id m=64MiB t=3 p=4',
        peer: 'authchart',
        async setup() {
          const { Auth } = await import('authchart')
          const { default: Password } = await import('authchart/providers/password')
          const { MemoryAdapter, createMemoryStore } = await import('authchart/adapters/memory')
          const { passwordHasher } = await import('authchart/password')
          const adapter = MemoryAdapter(createMemoryStore())
          const user = await adapter.createUser({ id: 'bench-user', email: 'a@x.test', emailVerified: new Date(), name: 'Alice' })
          await adapter.setUserPassword(user.id, await passwordHasher().hash(PASSWORD_FOR_HASHING))
          const config = {
            ...configFor({ Credentials: () => ({ id: 'unused', type: 'credentials', credentials: {}, authorize: () => null }) }),
            adapter,
            session: { strategy: 'jwt' },
            providers: [Password()],
          }
          const op = async () => {
            const csrf = await Auth(request('/auth/csrf'), config)
            const cookie = csrf.headers.getSetCookie().map((c) => c.slice(0, c.indexOf(';'))).join('; ')
            const { csrfToken } = await csrf.json()
            const response = await Auth(
              request('/auth/callback/password', {
                method: 'POST',
                headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
                body: new URLSearchParams({ email: 'a@x.test', password: PASSWORD_FOR_HASHING, csrfToken }),
              }),
              config,
            )
            await response.arrayBuffer()
            return response
          }
          const first = await op()
          check(first.status === 302 && !first.headers.get('location')?.includes('error') && first.headers.getSetCookie().some((c) => c.startsWith(SESSION_COOKIE)), 'authchart Password(): sign-in')
          return op
        },
      },
      {
        name: 'better-auth (scrypt)',
        peer: 'better-auth',
        async setup() {
          const { auth, db } = await betterAuthInstance({ scrypt: true })
          const op = async () => {
            const response = await betterAuthSignIn(auth)
            await response.arrayBuffer()
            db.session.length = 0
            return response
          }
          check((await op()).status === 200, 'better-auth (scrypt): sign-in')
          return op
        },
      },
    ],
  },
  {
    name: 'password-hash',
    title: "password verification alone: argon2id at RFC 9106's defaults beside better-auth's scrypt",
    floorOnly: true,
    // Hundreds of milliseconds per operation: longer rounds, so each holds several.
    timing: { rounds: 5, budgetMs: 3000 },
    peers: [
      {
        name: 'authchart argon2id m=64MiB t=3 p=4',
        peer: 'authchart',
        async setup() {
          const { passwordHasher } = await import('authchart/password')
          const hasher = passwordHasher()
          const stored = await hasher.hash(PASSWORD_FOR_HASHING)
          check(stored.startsWith('$argon2id$v=19$m=65536,t=3,p=4$'), 'argon2id at the default parameters')
          const op = () => hasher.verify(stored, PASSWORD_FOR_HASHING)
          check((await op()).valid, 'argon2id: the password verifies')
          return op
        },
      },
      {
        name: 'better-auth scrypt N=16384 r=16',
        peer: 'better-auth',
        async setup() {
          const { hashPassword, verifyPassword } = await import('better-auth/crypto')
          const hash = await hashPassword(PASSWORD_FOR_HASHING)
          const op = () => verifyPassword({ hash, password: PASSWORD_FOR_HASHING })
          check(await op(), 'better-auth scrypt: the password verifies')
          return op
        },
      },
    ],
  },
  {
    name: 'oidc-canned',
    title: 'OIDC sign-in, provider answers canned (relying-party work only)',
    target: 3,
    // Half a millisecond to two per sign-in: 600 ms rounds hold few, and load swings moved the
    // ratio between runs; more and longer rounds steady the medians.
    timing: { rounds: 11, budgetMs: 1000 },
    async setup(lib) {
      const provider = await cannedProvider()
      const config = configFor(lib, {
        providers: [{ id: 'op', name: 'OP', type: 'oidc', issuer: CANNED_ISSUER, ...CANNED_CLIENT, [lib.customFetch]: provider.fetch }],
      })
      const op = async () => {
        const response = await cannedOidcSignIn(lib, config)
        await response.arrayBuffer()
        return response
      }
      checkSignedIn(lib, await op(), 'canned OIDC sign-in')
      check(provider.served.token === 1, `${lib.name}: one code exchange per sign-in`)
      return op
    },
  },
  {
    name: 'oidc-signin',
    title: 'OIDC sign-in, full flow (local OP)',
    target: 1.5,
    needsOp: true,
    async setup(lib, { issuer }) {
      const config = configFor(lib, {
        providers: [{ id: 'op', name: 'OP', type: 'oidc', issuer, clientId: 'bench', clientSecret: 's'.repeat(48) }],
      })
      const op = async () => {
        const response = await oidcSignIn(lib, config)
        await response.arrayBuffer()
        return response
      }
      checkSignedIn(lib, await op(), 'OIDC sign-in')
      return op
    },
  },
]

function scenarioNamed(name) {
  return scenarios.find((s) => s.name === name)
}

/** The session cookie each library sets for the same user after a credentials sign-in. */
export async function sessionCookieSize(lib) {
  const response = await credentialsSignIn(lib, configFor(lib))
  const header = response.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))
  return header.split(';')[0].length - SESSION_COOKIE.length - 1
}
