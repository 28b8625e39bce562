/**
 * The same requests against @auth/core and authchart, side by side. What must match is what an
 * application, a browser or a test can observe (see `observe.ts`): status, `Location`, the JSON
 * body with exact expiries, every `Set-Cookie` with its attributes and exact `Expires`/`Max-Age`,
 * the claims of the session JWT, and the structure of the built-in pages' forms. Time is frozen,
 * so expiries compare to the second.
 *
 * Besides credentials and the plain routes, both libraries sign in against the same real OpenID
 * Provider (JWT sessions), and with database sessions each on its own PostgreSQL database (PGlite):
 * @auth/pg-adapter for @auth/core, our PostgresAdapter for us, on the same schema.
 *
 * Where authchart deliberately differs (README, "Where it deliberately differs from Auth.js", and
 * the reference's BUG? marks), the scenario says how: @auth/core's observation is transformed by
 * exactly that difference, and ours must equal the result. Nothing is skipped.
 */
import { PGlite } from '@electric-sql/pglite'
import { Auth as AuthjsAuth } from '@auth/core'
import { CredentialsSignin as AuthjsCredentialsSignin } from '@auth/core/errors'
import { encode as authjsEncode } from '@auth/core/jwt'
import AuthjsCredentials from '@auth/core/providers/credentials'
import AuthjsPgAdapter from '@auth/pg-adapter'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { Auth } from '../../core/index.js'
import { CredentialsSignin } from '../../core/errors.js'
import Credentials from '../../providers/credentials.js'
import { ALICE, CookieJar, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { CALLBACK_BASE, CLIENT_SECRET, opClient } from '../oauth/helpers.js'
import { observe, type Observation, type ObservedCookie } from './observe.js'

type AnyAuth = (request: Request, config: never) => Promise<Response>

interface Library {
  name: '@auth/core' | 'authchart'
  Auth: AnyAuth
  Credentials: typeof Credentials
  CredentialsSignin: typeof CredentialsSignin
  /** A database adapter of this library's own, on its own database. */
  adapter: () => unknown
}

/** Frozen time: both libraries compute every expiry from the same instant. */
const NOW = new Date('2026-11-23T12:00:00.000Z')
const KEYS = { secret: SECRET }

let op: RunningOidcProvider
const databases: Record<Library['name'], PGlite> = { '@auth/core': new PGlite(), authchart: new PGlite() }

/** @auth/pg-adapter speaks to a `pg` Pool; PGlite's results need `rowCount`. */
function pgPoolOn(db: PGlite) {
  return {
    async query(text: string, params?: unknown[]) {
      const result = await db.query(text, params)
      return { rows: result.rows, rowCount: result.affectedRows || result.rows.length }
    },
  }
}

const libraries: Library[] = [
  {
    name: '@auth/core',
    Auth: AuthjsAuth as unknown as AnyAuth,
    Credentials: AuthjsCredentials as unknown as typeof Credentials,
    CredentialsSignin: AuthjsCredentialsSignin as unknown as typeof CredentialsSignin,
    adapter: () => AuthjsPgAdapter(pgPoolOn(databases['@auth/core']) as never),
  },
  {
    name: 'authchart',
    Auth: Auth as unknown as AnyAuth,
    Credentials,
    CredentialsSignin,
    adapter: () => PostgresAdapter(databases.authchart),
  },
]

beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
  // The same schema for both: ours is @auth/pg-adapter's, with text ids.
  for (const db of Object.values(databases)) await PostgresAdapter(db).migrate()
  vi.useFakeTimers({ toFake: ['Date'], now: NOW })
})
afterAll(async () => {
  vi.useRealTimers()
  await op?.close()
  for (const db of Object.values(databases)) await db.close()
})

/** The OpenID Provider, configured identically for both libraries. */
const opProvider = () => ({
  id: 'op',
  name: 'OP',
  type: 'oidc',
  issuer: op.issuer,
  clientId: 'op',
  clientSecret: CLIENT_SECRET,
})

function config(lib: Library, extra: Record<string, unknown> = {}) {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    providers: [
      lib.Credentials({
        credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
        authorize: (c: Record<string, unknown>) => {
          if (c.username === 'throws') throw new Error('backend down')
          if (c.username === 'coded') {
            const error = new lib.CredentialsSignin()
            error.code = 'locked'
            throw error
          }
          return c.username === 'alice' && c.password === 'wonderland' ? { ...ALICE } : null
        },
      }),
      opProvider(),
    ],
    ...extra,
  } as never
}

/** Database sessions on the library's own PostgreSQL database. */
const databaseConfig = (lib: Library, extra: Record<string, unknown> = {}) =>
  config(lib, { adapter: lib.adapter(), session: { strategy: 'database' }, ...extra })

async function send(
  lib: Library,
  cfg: never,
  path: string,
  init: { method?: string; form?: Record<string, string>; json?: unknown; jar?: CookieJar; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers = new Headers(init.headers)
  if (init.jar) headers.set('cookie', init.jar.header())
  let body: string | undefined
  if (init.form) {
    headers.set('content-type', 'application/x-www-form-urlencoded')
    body = new URLSearchParams(init.form).toString()
  } else if (init.json !== undefined) {
    headers.set('content-type', 'application/json')
    body = JSON.stringify(init.json)
  }
  const response = await lib.Auth(
    new Request(new URL(path, ORIGIN), {
      method: init.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      ...(body !== undefined ? { body } : {}),
    }),
    cfg,
  )
  init.jar?.store(response.clone())
  return response
}

async function csrf(lib: Library, cfg: never, jar: CookieJar): Promise<string> {
  return ((await (await send(lib, cfg, '/auth/csrf', { jar })).json()) as { csrfToken: string }).csrfToken
}

async function signIn(lib: Library, cfg: never, form: Record<string, string>, headers?: Record<string, string>, jar = new CookieJar()) {
  const csrfToken = await csrf(lib, cfg, jar)
  return send(lib, cfg, '/auth/callback/credentials', { form: { ...form, csrfToken }, jar, ...(headers ? { headers } : {}) })
}

/** Starts an OAuth sign-in at the OP; returns the authorization URL. */
async function startOAuth(lib: Library, cfg: never, jar: CookieJar, form: Record<string, string> = {}): Promise<Response> {
  const csrfToken = await csrf(lib, cfg, jar)
  return send(lib, cfg, '/auth/signin/op', { form: { csrfToken, ...form }, jar })
}

/** A whole OAuth sign-in: start, the user at the OP, the callback. Returns the callback's response. */
async function oauthSignIn(lib: Library, cfg: never, jar = new CookieJar(), query?: (params: URLSearchParams) => void): Promise<Response> {
  const start = await startOAuth(lib, cfg, jar)
  expect(start.status, `${lib.name} starts the sign-in`).toBe(302)
  const answer = await visitProvider(start.headers.get('location')!, CALLBACK_BASE)
  query?.(answer.url.searchParams)
  return send(lib, cfg, `${answer.url.pathname}${answer.url.search}`, { jar })
}

/** Signs in through the OP with `cfg`, then sends what `next` sends with the signed-in jar. */
async function afterOAuthSignIn(lib: Library, cfg: never, next: (jar: CookieJar) => Promise<Response>): Promise<Response> {
  const jar = new CookieJar()
  await oauthSignIn(lib, cfg, jar)
  return next(jar)
}

/** Posts the sign-out form with a fresh CSRF token. */
async function signOut(lib: Library, cfg: never, jar: CookieJar, form: Record<string, string> = {}): Promise<Response> {
  return send(lib, cfg, '/auth/signout', { form: { csrfToken: await csrf(lib, cfg, jar), ...form }, jar })
}

const sessionCookie = async () => ({
  '__Secure-authjs.session-token': await authjsEncode({
    token: { name: ALICE.name, email: ALICE.email, picture: ALICE.image, sub: ALICE.id },
    secret: SECRET,
    salt: '__Secure-authjs.session-token',
  }),
})

/** A scenario: the response to compare, per library. */
type Scenario = (lib: Library) => Promise<Response>

/**
 * How authchart deliberately answers differently: @auth/core's observation, transformed by exactly
 * that difference. Each names its reason.
 */
type Deliberate = (theirs: Observation) => Observation

const withoutCookies = (names: RegExp): Deliberate => (theirs) => ({
  ...theirs,
  cookies: theirs.cookies.filter((c) => !names.test(c.name)),
})

/**
 * README: "A URL naming a provider that is not configured shows its own page (`UnknownProvider`,
 * 404) instead of `Configuration`": the same redirect, to another error value.
 */
const unknownProviderPage: Deliberate = (theirs) => ({
  ...theirs,
  location: theirs.location && theirs.location.replace('error=Configuration', 'error=UnknownProvider'),
})

/**
 * README: "Only routes that hand out or check CSRF tokens mint a CSRF cookie, and only routes that
 * redirect maintain the callback-url cookie".
 */
const noIncidentalCsrfOrCallbackCookie = withoutCookies(/authjs\.(csrf-token|callback-url)$/)
const noIncidentalCallbackCookie = withoutCookies(/authjs\.callback-url$/)

/**
 * README (OAuth): "One sealed flow instead of three check cookies": the PKCE verifier, state and
 * nonce travel together in the `state` cookie, which has the attributes @auth/core gives its check
 * cookies (15 minutes, HttpOnly, Secure, SameSite=Lax, Path=/).
 */
const oneSealedFlowCookie: Deliberate = (theirs) => {
  const checks = theirs.cookies.filter((c) => /authjs\.(pkce\.code_verifier|state|nonce)$/.test(c.name))
  if (checks.length === 0) return theirs
  const live = checks.find((c) => c.value !== '')
  const merged: ObservedCookie = {
    name: '__Secure-authjs.state',
    value: live ? '<sealed>' : '',
    attributes: (checks.find((c) => /pkce/.test(c.name)) ?? checks[0]!).attributes,
  }
  return { ...theirs, cookies: sortCookies([...theirs.cookies.filter((c) => !checks.includes(c)), merged]) }
}

/**
 * The other half of the same README line: @auth/core already set the callback-url cookie on the
 * `/csrf` request before this one; authchart sets it on the first route that redirects.
 */
const callbackCookieSetHere = (value: string): Deliberate => (theirs) => ({
  ...theirs,
  cookies: sortCookies([
    ...theirs.cookies,
    {
      name: '__Secure-authjs.callback-url',
      value,
      attributes: { httponly: true, path: '/', samesite: 'lax', secure: true },
    },
  ]),
})

/**
 * A flow's envelope is spent by its callback whatever the outcome, so the cookie carrying it is
 * cleared (envelope.ts: "the cookie is replaced or cleared on every resume"); @auth/core leaves its
 * PKCE cookie behind when the provider answers with an error.
 */
const spentFlowCookieCleared: Deliberate = (theirs) => ({
  ...theirs,
  cookies: sortCookies([
    ...theirs.cookies,
    {
      name: '__Secure-authjs.state',
      value: '',
      attributes: { httponly: true, 'max-age': '0', path: '/', samesite: 'lax', secure: true },
    },
  ]),
})

/**
 * The sign-in page's hidden `callbackUrl` is the URL the `redirect` callback accepted; @auth/core
 * echoes the raw query value into the page (it resolves it again on the next request).
 */
const resolvedCallbackUrlInPage = (raw: string, resolved: string): Deliberate => (theirs) => ({
  ...theirs,
  body: (theirs.body as string[]).map((line) =>
    line === `input name=callbackUrl type=hidden value=${raw}` ? `input name=callbackUrl type=hidden value=${resolved}` : line,
  ),
})

/**
 * README: a session JWT carries `fva`, when each factor of the sign-in was proven (step-up
 * policies measure from it); @auth/core's token has no such claim, and ignores it when it reads ours.
 */
const factorTimesClaim = (factor: string): Deliberate => (theirs) => ({
  ...theirs,
  cookies: theirs.cookies.map((cookie) => {
    const claims = /^<session JWT (.*)>$/.exec(cookie.value)
    if (!/session-token$/.test(cookie.name) || !claims) return cookie
    const { iat, exp, jti, ...rest } = JSON.parse(claims[1]!) as Record<string, unknown>
    return { ...cookie, value: `<session JWT ${JSON.stringify({ ...rest, fva: { [factor]: iat }, iat, exp, jti })}>` }
  }),
})

const sortCookies = (cookies: ObservedCookie[]) => [...cookies].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
const compose = (...steps: Deliberate[]): Deliberate => (theirs) => steps.reduce((o, step) => step(o), theirs)

/**
 * Reference §11, BUG?: @auth/core's error page links "Sign in" to `<request URL>/signin`
 * (`/auth/error?error=AccessDenied/signin`); ours links to the sign-in page.
 */
const signInLinkToSignInPage: Deliberate = (theirs) => ({
  ...theirs,
  body: (theirs.body as string[]).map((line) =>
    line.replace(/^a href=https:\/\/authchart\.test\/auth\/error\?error=[A-Za-z]+\/signin/, 'a href=https://authchart.test/auth/signin'),
  ),
})

/** README: the sign-out heading reads "Sign out" (Auth.js: "Signout"). */
const signOutHeading: Deliberate = (theirs) => ({
  ...theirs,
  body: (theirs.body as string[]).map((line) => (line === 'h1 "Signout"' ? 'h1 "Sign out"' : line)),
})

/**
 * README: the sign-in page is headed "Sign in" and ends with a "Back" link to the `callbackUrl`
 * (else the site); Auth.js's has neither.
 */
const signInHeadingAndBack =
  (back: string): Deliberate =>
  (theirs) => {
    const body = [...(theirs.body as string[])]
    body.splice(body.findIndex((line) => line.startsWith('title ')) + 1, 0, 'h1 "Sign in"')
    body.push(`a href=${back} "Back"`, 'p "Back"')
    return { ...theirs, body }
  }

/**
 * README: the sign-out page asks only a signed-in browser; to nobody it says so, with the way back.
 * Signed in, it asks as Auth.js does, with a "Cancel" link after the form.
 */
const signOutToNobody: Deliberate = (theirs) => {
  const body = theirs.body as string[]
  const question = body.indexOf('p "Are you sure you want to sign out?"')
  const formEnd = body.indexOf('/form', question)
  return { ...theirs, body: [...body.slice(0, question), 'p "You are not signed in."', `a href=${ORIGIN} "Back"`, 'p "Back"', ...body.slice(formEnd + 1)] }
}
const signOutCancel: Deliberate = (theirs) => {
  const body = [...(theirs.body as string[])]
  body.splice(body.indexOf('/form') + 1, 0, `a href=${ORIGIN} "Cancel"`, 'p "Cancel"')
  return { ...theirs, body }
}

/**
 * README: the sign-in page's first field has the focus (Auth.js autofocuses only e-mail fields,
 * so a credentials form starts unfocused).
 */
const firstFieldFocused: Deliberate = (theirs) => {
  const body = [...(theirs.body as string[])]
  const first = body.findIndex((line) => line.startsWith('input ') && !line.includes(' type=hidden'))
  if (first !== -1 && !body[first]!.includes(' autofocus=')) body[first] = body[first]!.replace(/^input /, 'input autofocus= ')
  return { ...theirs, body }
}

/**
 * README: "Built-in pages load nothing from third-party hosts" — so the outline's links and form
 * elements are what compare; @auth/core's provider logos from authjs.dev are simply absent.
 * (The outline leaves images out on both sides; nothing to transform.)
 */

interface Case {
  run: Scenario
  deliberate?: Deliberate
}

const scenarios: Record<string, Case> = {
  'GET /session without a cookie': {
    run: (lib) => send(lib, config(lib), '/auth/session'),
    deliberate: noIncidentalCsrfOrCallbackCookie,
  },
  'GET /session with a session cookie': {
    run: async (lib) => send(lib, config(lib), '/auth/session', { jar: new CookieJar(await sessionCookie()) }),
    // README: "A session read re-encrypts the JWT only when it changed or updateAge has passed"
    // (and then sets no cookie at all).
    deliberate: compose(noIncidentalCsrfOrCallbackCookie, withoutCookies(/session-token$/)),
  },
  'GET /session with a garbage cookie': {
    run: (lib) => send(lib, config(lib), '/auth/session', { jar: new CookieJar({ '__Secure-authjs.session-token': 'x' }) }),
    deliberate: noIncidentalCsrfOrCallbackCookie,
  },
  'GET /session with a custom session callback': {
    run: async (lib) =>
      send(
        lib,
        config(lib, { callbacks: { session: ({ session, token }: { session: object; token: { sub: string } }) => ({ ...session, userId: token.sub }) } }),
        '/auth/session',
        { jar: new CookieJar(await sessionCookie()) },
      ),
    deliberate: compose(noIncidentalCsrfOrCallbackCookie, withoutCookies(/session-token$/)),
  },
  'GET /providers': { run: (lib) => send(lib, config(lib), '/auth/providers') },
  'GET /csrf': { run: (lib) => send(lib, config(lib), '/auth/csrf'), deliberate: noIncidentalCallbackCookie },
  'POST /csrf': { run: (lib) => send(lib, config(lib), '/auth/csrf', { method: 'POST' }) },
  'PUT /session': { run: (lib) => send(lib, config(lib), '/auth/session', { method: 'PUT' }) },
  'GET an unknown action': { run: (lib) => send(lib, config(lib), '/auth/nope') },
  'GET a path outside basePath': { run: (lib) => send(lib, config(lib), '/elsewhere/session') },
  'GET /signin/credentials': { run: (lib) => send(lib, config(lib), '/auth/signin/credentials') },
  'GET /callback/credentials': { run: (lib) => send(lib, config(lib), '/auth/callback/credentials') },
  'POST /signin/unknown': {
    run: (lib) => send(lib, config(lib), '/auth/signin/unknown', { method: 'POST' }),
    deliberate: unknownProviderPage,
  },
  'POST /callback/credentials without CSRF': {
    run: (lib) => send(lib, config(lib), '/auth/callback/credentials', { form: { username: 'alice', password: 'wonderland' } }),
  },
  'credentials sign-in that succeeds': {
    run: (lib) => signIn(lib, config(lib), { username: 'alice', password: 'wonderland' }),
    deliberate: compose(callbackCookieSetHere(ORIGIN), factorTimesClaim('pwd')),
  },
  'credentials sign-in with a shorter session maxAge': {
    run: (lib) => signIn(lib, config(lib, { session: { maxAge: 3600 } }), { username: 'alice', password: 'wonderland' }),
    deliberate: compose(callbackCookieSetHere(ORIGIN), factorTimesClaim('pwd')),
  },
  'credentials sign-in to a callback URL': {
    run: (lib) => signIn(lib, config(lib), { username: 'alice', password: 'wonderland', callbackUrl: '/dash' }),
    deliberate: factorTimesClaim('pwd'),
  },
  'credentials sign-in to another origin': {
    run: (lib) => signIn(lib, config(lib), { username: 'alice', password: 'wonderland', callbackUrl: 'https://evil.example/' }),
    deliberate: compose(callbackCookieSetHere(ORIGIN), factorTimesClaim('pwd')),
  },
  'credentials sign-in with a wrong password': {
    run: (lib) => signIn(lib, config(lib), { username: 'alice', password: 'x' }),
    deliberate: callbackCookieSetHere(ORIGIN),
  },
  'credentials sign-in with a custom error code': {
    run: (lib) => signIn(lib, config(lib), { username: 'coded' }),
    deliberate: callbackCookieSetHere(ORIGIN),
  },
  'credentials sign-in whose authorize throws': {
    run: (lib) => signIn(lib, config(lib), { username: 'throws' }),
    deliberate: callbackCookieSetHere(ORIGIN),
  },
  'credentials sign-in refused by the signIn callback': {
    run: (lib) => signIn(lib, config(lib, { callbacks: { signIn: () => false } }), { username: 'alice', password: 'wonderland' }),
    deliberate: callbackCookieSetHere(ORIGIN),
  },
  'credentials sign-in redirected by the signIn callback': {
    run: (lib) => signIn(lib, config(lib, { callbacks: { signIn: () => '/terms' } }), { username: 'alice', password: 'wonderland' }),
    deliberate: callbackCookieSetHere(ORIGIN),
  },
  'credentials sign-in with a custom sign-in page and a wrong password': {
    run: (lib) => signIn(lib, config(lib, { pages: { signIn: '/login' } }), { username: 'alice', password: 'x' }),
    deliberate: callbackCookieSetHere(ORIGIN),
  },
  'credentials sign-in asking for a JSON redirect': {
    run: (lib) => signIn(lib, config(lib), { username: 'alice', password: 'x' }, { 'X-Auth-Return-Redirect': '1' }),
  },
  'POST /signin/credentials with CSRF': {
    run: async (lib) => {
      const cfg = config(lib)
      const jar = new CookieJar()
      return send(lib, cfg, '/auth/signin/credentials', { form: { csrfToken: await csrf(lib, cfg, jar) }, jar })
    },
    deliberate: callbackCookieSetHere(ORIGIN),
  },
  'POST /session without CSRF': {
    run: async (lib) => send(lib, config(lib), '/auth/session', { json: { data: {} }, jar: new CookieJar(await sessionCookie()) }),
  },
  'POST /session with CSRF (update)': {
    run: async (lib) => {
      const cfg = config(lib)
      const jar = new CookieJar(await sessionCookie())
      return send(lib, cfg, '/auth/session', { json: { csrfToken: await csrf(lib, cfg, jar), data: { name: 'A' } }, jar })
    },
  },
  'POST /signout with a session': {
    run: async (lib) => {
      const cfg = config(lib)
      const jar = new CookieJar(await sessionCookie())
      return signOut(lib, cfg, jar, { callbackUrl: '/bye' })
    },
  },
  'POST /signout without CSRF': { run: (lib) => send(lib, config(lib), '/auth/signout', { form: {} }) },
  'GET /signin': { run: (lib) => send(lib, config(lib), '/auth/signin'), deliberate: compose(firstFieldFocused, signInHeadingAndBack(ORIGIN)) },
  'GET /signin with a callbackUrl and an error': {
    run: (lib) => send(lib, config(lib), '/auth/signin?callbackUrl=%2Fdash&error=CredentialsSignin'),
    deliberate: compose(resolvedCallbackUrlInPage('/dash', `${ORIGIN}/dash`), firstFieldFocused, signInHeadingAndBack(`${ORIGIN}/dash`)),
  },
  'GET /signin with a custom page': {
    run: (lib) => send(lib, config(lib, { pages: { signIn: '/login' } }), '/auth/signin?callbackUrl=%2Fx'),
  },
  'GET /signout': {
    run: (lib) => send(lib, config(lib), '/auth/signout'),
    deliberate: compose(noIncidentalCallbackCookie, signOutHeading, signOutToNobody),
  },
  'GET /signout signed in': {
    run: async (lib) => {
      const jar = new CookieJar(await sessionCookie())
      return send(lib, config(lib), '/auth/signout', { jar })
    },
    deliberate: compose(noIncidentalCallbackCookie, signOutHeading, signOutCancel),
  },
  'GET /verify-request': { run: (lib) => send(lib, config(lib), '/auth/verify-request'), deliberate: noIncidentalCsrfOrCallbackCookie },
  'GET /error?error=AccessDenied': {
    run: (lib) => send(lib, config(lib), '/auth/error?error=AccessDenied'),
    deliberate: compose(noIncidentalCsrfOrCallbackCookie, signInLinkToSignInPage),
  },
  'GET /error?error=Verification': {
    run: (lib) => send(lib, config(lib), '/auth/error?error=Verification'),
    deliberate: compose(noIncidentalCsrfOrCallbackCookie, signInLinkToSignInPage),
  },
  'GET /error?error=Configuration': {
    run: (lib) => send(lib, config(lib), '/auth/error?error=Configuration'),
    deliberate: noIncidentalCsrfOrCallbackCookie,
  },
  'GET /error?error=Other': { run: (lib) => send(lib, config(lib), '/auth/error?error=Other'), deliberate: noIncidentalCsrfOrCallbackCookie },
  'GET /error with a custom error page': {
    run: (lib) => send(lib, config(lib, { pages: { error: '/oops' } }), '/auth/error?error=AccessDenied'),
    deliberate: noIncidentalCsrfOrCallbackCookie,
  },
  'a config without a secret': { run: (lib) => send(lib, { trustHost: true, providers: [], logger: spyLogger() } as never, '/auth/session') },
  'a config without trustHost': { run: (lib) => send(lib, { secret: SECRET, providers: [], logger: spyLogger() } as never, '/auth/session') },
  'GET /signin with a config without a secret': {
    run: (lib) => send(lib, { trustHost: true, providers: [], logger: spyLogger() } as never, '/auth/signin'),
  },

  // OAuth against the same OpenID Provider.
  'OAuth sign-in start': {
    run: (lib) => startOAuth(lib, config(lib), new CookieJar()),
    deliberate: compose(oneSealedFlowCookie, callbackCookieSetHere(ORIGIN)),
  },
  'OAuth sign-in start with a callbackUrl on our origin': {
    run: (lib) => startOAuth(lib, config(lib), new CookieJar(), { callbackUrl: '/after' }),
    deliberate: oneSealedFlowCookie,
  },
  'OAuth callback completing a sign-in (JWT session)': {
    run: (lib) => oauthSignIn(lib, config(lib)),
    deliberate: compose(oneSealedFlowCookie, factorTimesClaim('fed')),
  },
  'GET /session after an OAuth sign-in': {
    run: (lib) => {
      const cfg = config(lib)
      return afterOAuthSignIn(lib, cfg, (jar) => send(lib, cfg, '/auth/session', { jar }))
    },
    deliberate: compose(noIncidentalCsrfOrCallbackCookie, withoutCookies(/session-token$/)),
  },
  'OAuth callback where the user denied access': {
    run: async (lib) => {
      op.decision = 'deny'
      try {
        return await oauthSignIn(lib, config(lib))
      } finally {
        op.decision = 'accept'
      }
    },
    deliberate: spentFlowCookieCleared,
  },
  'sign-out after an OAuth sign-in': {
    run: (lib) => {
      const cfg = config(lib)
      return afterOAuthSignIn(lib, cfg, (jar) => signOut(lib, cfg, jar))
    },
  },

  // Database sessions, each library on its own PostgreSQL database.
  'OAuth sign-in with a database session': {
    run: (lib) => oauthSignIn(lib, databaseConfig(lib)),
    deliberate: oneSealedFlowCookie,
  },
  'GET /session with a database session': {
    run: (lib) => {
      const cfg = databaseConfig(lib)
      return afterOAuthSignIn(lib, cfg, (jar) => send(lib, cfg, '/auth/session', { jar }))
    },
    // Reference §4, BUG?: @auth/core re-issues the session cookie on every read even when the row
    // was not extended; ours sets it only when the session changed (README).
    deliberate: compose(noIncidentalCsrfOrCallbackCookie, withoutCookies(/session-token$/)),
  },
  'sign-out with a database session': {
    run: (lib) => {
      const cfg = databaseConfig(lib)
      return afterOAuthSignIn(lib, cfg, (jar) => signOut(lib, cfg, jar, { callbackUrl: '/bye' }))
    },
  },
  'GET /session after signing out of a database session': {
    run: (lib) => {
      const cfg = databaseConfig(lib)
      return afterOAuthSignIn(lib, cfg, async (jar) => {
        const stale = new CookieJar(Object.fromEntries(jar.cookies))
        await signOut(lib, cfg, jar)
        return send(lib, cfg, '/auth/session', { jar: stale })
      })
    },
  },
}

describe('authchart answers like @auth/core', () => {
  it.each(Object.keys(scenarios))('%s', async (name) => {
    const { run, deliberate } = scenarios[name]!
    const theirs = await observe(await run(libraries[0]!), KEYS)
    const ours = await observe(await run(libraries[1]!), KEYS)
    expect(ours).toEqual(deliberate ? deliberate(theirs) : theirs)
    if (deliberate) {
      // The difference is real: without it the two would not match.
      expect(deliberate(theirs), 'a declared difference that changes nothing').not.toEqual(theirs)
    }
  })

  it('accepts provider objects made by @auth/core factories', async () => {
    const lib = { ...libraries[1]!, Credentials: libraries[0]!.Credentials }
    const response = await signIn(lib, config(lib), { username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(response.headers.getSetCookie().some((c) => c.startsWith('__Secure-authjs.session-token=eyJ'))).toBe(true)
  })

  it('stores the same user, account and session rows after an OAuth sign-in with database sessions', async () => {
    const rows: Record<string, unknown> = {}
    for (const lib of libraries) {
      const db = databases[lib.name]
      await db.exec('DELETE FROM sessions; DELETE FROM accounts; DELETE FROM users;')
      const jar = new CookieJar()
      await oauthSignIn(lib, databaseConfig(lib), jar)
      const one = async (sql: string) => (await db.query<Record<string, unknown>>(sql)).rows
      rows[lib.name] = {
        users: (await one('SELECT * FROM users')).map(({ id, ...user }) => ({ ...user, id: typeof id })),
        accounts: (await one('SELECT * FROM accounts')).map(({ id, userId, access_token, id_token, ...account }) => ({
          ...account,
          id: typeof id,
          userId: typeof userId,
          access_token: typeof access_token,
          id_token: typeof id_token,
        })),
        sessions: (await one('SELECT * FROM sessions')).map(({ id, userId, sessionToken, ...session }) => ({
          ...session,
          id: typeof id,
          userId: typeof userId,
          sessionTokenIsTheCookie: sessionToken === jar.get('__Secure-authjs.session-token'),
        })),
      }
    }
    expect(rows.authchart).toEqual(rows['@auth/core'])
    expect((rows.authchart as { users: unknown[] }).users).toEqual([
      expect.objectContaining({ email: OP_ACCOUNT.email.toLowerCase(), name: OP_ACCOUNT.name, image: OP_ACCOUNT.picture }),
    ])
  })
})
