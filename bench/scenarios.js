// The scenarios, each the same for both libraries: an async `setup(lib)` that checks the
// scenario works once (so a broken setup fails loudly instead of timing an error path) and returns
// the operation to time.
import { Jar } from './jar.js'

export const ORIGIN = 'https://bench.test'
export const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const CLAIMS = { name: 'Alice', email: 'a@x.test', sub: '1' }
const quiet = { error() {}, warn() {}, debug() {} }

/** The config each library gets: built once, reused, as both cache per config object. */
export function configFor(lib, extra = {}) {
  return {
    secret: SECRET,
    trustHost: true,
    basePath: '/auth',
    logger: quiet,
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

/** A full OIDC sign-in against the OP in the child process. */
async function oidcSignIn(lib, config) {
  const jar = new Jar()
  const csrfToken = await csrfOf(lib, config, jar)
  const start = jar.store(
    await lib.Auth(
      request('/auth/signin/op', {
        method: 'POST',
        headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrfToken }),
      }),
      config,
    ),
  )
  let next = start.headers.get('location')
  const opJar = new Jar()
  for (let hop = 0; hop < 10 && !next.startsWith(ORIGIN); hop++) {
    const response = opJar.store(await fetch(next, { redirect: 'manual', headers: { cookie: opJar.header() } }))
    await response.arrayBuffer()
    next = new URL(response.headers.get('location'), next).href
  }
  return lib.Auth(request(new URL(next).pathname + new URL(next).search, { headers: { cookie: jar.header() } }), config)
}

export const scenarios = [
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
    title: 'GET /providers',
    target: 2,
    async setup(lib) {
      const config = configFor(lib)
      const get = request('/auth/providers')
      const op = async () => (await lib.Auth(get, config)).json()
      check((await op()).credentials?.id === 'credentials', `${lib.name}: providers`)
      return op
    },
  },
  {
    name: 'credentials-signin',
    title: 'credentials sign-in (csrf + POST)',
    target: 3,
    async setup(lib) {
      const config = configFor(lib)
      const csrfRequest = request('/auth/csrf')
      const op = async () => {
        const response = await credentialsSignIn(lib, config, csrfRequest)
        await response.arrayBuffer()
        return response
      }
      const response = await op()
      check(response.headers.get('location') === ORIGIN, `${lib.name}: sign-in redirect ${response.headers.get('location')}`)
      check(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=ey`)), `${lib.name}: session cookie`)
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
      const response = await op()
      check(response.headers.get('location') === ORIGIN, `${lib.name}: OIDC sign-in redirect ${response.headers.get('location')}`)
      check(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=ey`)), `${lib.name}: session cookie`)
      return op
    },
  },
]

/** The session cookie each library sets for the same user after a credentials sign-in. */
export async function sessionCookieSize(lib) {
  const response = await credentialsSignIn(lib, configFor(lib))
  const header = response.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))
  return header.split(';')[0].length - SESSION_COOKIE.length - 1
}
