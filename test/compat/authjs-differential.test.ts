/**
 * The same requests against @auth/core and authchart, side by side: status, Location and JSON
 * body must match. This is what "drop-in" means for an application and its tests.
 */
import { Auth as AuthjsAuth } from '@auth/core'
import { CredentialsSignin as AuthjsCredentialsSignin } from '@auth/core/errors'
import { encode as authjsEncode } from '@auth/core/jwt'
import AuthjsCredentials from '@auth/core/providers/credentials'
import { describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import { CredentialsSignin } from '../../core/errors.js'
import Credentials from '../../providers/credentials.js'
import { ALICE, CookieJar, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'

type AnyAuth = (request: Request, config: never) => Promise<Response>

interface Library {
  name: string
  Auth: AnyAuth
  Credentials: typeof Credentials
  CredentialsSignin: typeof CredentialsSignin
}

const libraries: Library[] = [
  {
    name: '@auth/core',
    Auth: AuthjsAuth as unknown as AnyAuth,
    Credentials: AuthjsCredentials as unknown as typeof Credentials,
    CredentialsSignin: AuthjsCredentialsSignin as unknown as typeof CredentialsSignin,
  },
  { name: 'authchart', Auth: Auth as unknown as AnyAuth, Credentials, CredentialsSignin },
]

interface Observation {
  status: number
  location: string | null
  body: unknown
}

async function observe(response: Response): Promise<Observation> {
  const type = response.headers.get('content-type') ?? ''
  let body: unknown = null
  if (type.startsWith('application/json')) {
    body = await response.json()
    if (body && typeof body === 'object' && 'expires' in body) {
      // Both compute `expires` at request time; its presence and shape are what must agree.
      body = { ...body, expires: typeof (body as { expires: unknown }).expires }
    }
  } else if (type.startsWith('text/html')) {
    body = (await response.text()).match(/<title>([^<]*)<\/title>/)?.[1] ?? 'html'
  }
  return { status: response.status, location: response.headers.get('location'), body }
}

/** A scenario builds a config and a request (possibly after preparatory requests) per library. */
type Scenario = (lib: Library) => Promise<Response>

function config(lib: Library, extra: Record<string, unknown> = {}) {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    providers: [
      lib.Credentials({
        credentials: { username: {}, password: {} },
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
    ],
    ...extra,
  } as never
}

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
    new Request(`${ORIGIN}${path}`, {
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

async function signIn(lib: Library, cfg: never, form: Record<string, string>, headers?: Record<string, string>) {
  const jar = new CookieJar()
  const csrfToken = await csrf(lib, cfg, jar)
  return send(lib, cfg, '/auth/callback/credentials', { form: { ...form, csrfToken }, jar, ...(headers ? { headers } : {}) })
}

const sessionCookie = async () => ({
  '__Secure-authjs.session-token': await authjsEncode({
    token: { name: ALICE.name, email: ALICE.email, picture: ALICE.image, sub: ALICE.id },
    secret: SECRET,
    salt: '__Secure-authjs.session-token',
  }),
})

const scenarios: Record<string, Scenario> = {
  'GET /session without a cookie': (lib) => send(lib, config(lib), '/auth/session'),
  'GET /session with a session cookie': async (lib) =>
    send(lib, config(lib), '/auth/session', { jar: new CookieJar(await sessionCookie()) }),
  'GET /session with a garbage cookie': (lib) =>
    send(lib, config(lib), '/auth/session', { jar: new CookieJar({ '__Secure-authjs.session-token': 'x' }) }),
  'GET /session with a custom session callback': async (lib) =>
    send(
      lib,
      config(lib, { callbacks: { session: ({ session, token }: { session: object; token: { sub: string } }) => ({ ...session, userId: token.sub }) } }),
      '/auth/session',
      { jar: new CookieJar(await sessionCookie()) },
    ),
  'GET /providers': (lib) => send(lib, config(lib), '/auth/providers'),
  'POST /csrf': (lib) => send(lib, config(lib), '/auth/csrf', { method: 'POST' }),
  'PUT /session': (lib) => send(lib, config(lib), '/auth/session', { method: 'PUT' }),
  'GET an unknown action': (lib) => send(lib, config(lib), '/auth/nope'),
  'GET a path outside basePath': (lib) => send(lib, config(lib), '/elsewhere/session'),
  'GET /signin/credentials': (lib) => send(lib, config(lib), '/auth/signin/credentials'),
  'GET /callback/credentials': (lib) => send(lib, config(lib), '/auth/callback/credentials'),
  'POST /signin/unknown': (lib) => send(lib, config(lib), '/auth/signin/unknown', { method: 'POST' }),
  'POST /callback/credentials without CSRF': (lib) =>
    send(lib, config(lib), '/auth/callback/credentials', { form: { username: 'alice', password: 'wonderland' } }),
  'credentials sign-in that succeeds': (lib) => signIn(lib, config(lib), { username: 'alice', password: 'wonderland' }),
  'credentials sign-in to a callback URL': (lib) =>
    signIn(lib, config(lib), { username: 'alice', password: 'wonderland', callbackUrl: '/dash' }),
  'credentials sign-in to another origin': (lib) =>
    signIn(lib, config(lib), { username: 'alice', password: 'wonderland', callbackUrl: 'https://evil.example/' }),
  'credentials sign-in with a wrong password': (lib) => signIn(lib, config(lib), { username: 'alice', password: 'x' }),
  'credentials sign-in with a custom error code': (lib) => signIn(lib, config(lib), { username: 'coded' }),
  'credentials sign-in whose authorize throws': (lib) => signIn(lib, config(lib), { username: 'throws' }),
  'credentials sign-in refused by the signIn callback': (lib) =>
    signIn(lib, config(lib, { callbacks: { signIn: () => false } }), { username: 'alice', password: 'wonderland' }),
  'credentials sign-in redirected by the signIn callback': (lib) =>
    signIn(lib, config(lib, { callbacks: { signIn: () => '/terms' } }), { username: 'alice', password: 'wonderland' }),
  'credentials sign-in with a custom sign-in page and a wrong password': (lib) =>
    signIn(lib, config(lib, { pages: { signIn: '/login' } }), { username: 'alice', password: 'x' }),
  'credentials sign-in asking for a JSON redirect': (lib) =>
    signIn(lib, config(lib), { username: 'alice', password: 'x' }, { 'X-Auth-Return-Redirect': '1' }),
  'POST /signin/credentials with CSRF': async (lib) => {
    const cfg = config(lib)
    const jar = new CookieJar()
    return send(lib, cfg, '/auth/signin/credentials', { form: { csrfToken: await csrf(lib, cfg, jar) }, jar })
  },
  'POST /session without CSRF': async (lib) =>
    send(lib, config(lib), '/auth/session', { json: { data: {} }, jar: new CookieJar(await sessionCookie()) }),
  'POST /signout with a session': async (lib) => {
    const cfg = config(lib)
    const jar = new CookieJar(await sessionCookie())
    return send(lib, cfg, '/auth/signout', { form: { csrfToken: await csrf(lib, cfg, jar), callbackUrl: '/bye' }, jar })
  },
  'POST /signout without CSRF': (lib) => send(lib, config(lib), '/auth/signout', { form: {} }),
  'GET /signin': (lib) => send(lib, config(lib), '/auth/signin'),
  'GET /signin with a custom page': (lib) =>
    send(lib, config(lib, { pages: { signIn: '/login' } }), '/auth/signin?callbackUrl=%2Fx'),
  'GET /signout': (lib) => send(lib, config(lib), '/auth/signout'),
  'GET /verify-request': (lib) => send(lib, config(lib), '/auth/verify-request'),
  'GET /error?error=AccessDenied': (lib) => send(lib, config(lib), '/auth/error?error=AccessDenied'),
  'GET /error?error=Verification': (lib) => send(lib, config(lib), '/auth/error?error=Verification'),
  'GET /error?error=Configuration': (lib) => send(lib, config(lib), '/auth/error?error=Configuration'),
  'GET /error?error=Other': (lib) => send(lib, config(lib), '/auth/error?error=Other'),
  'GET /error with a custom error page': (lib) =>
    send(lib, config(lib, { pages: { error: '/oops' } }), '/auth/error?error=AccessDenied'),
  'a config without a secret': (lib) =>
    send(lib, { trustHost: true, providers: [], logger: spyLogger() } as never, '/auth/session'),
  'a config without trustHost': (lib) =>
    send(lib, { secret: SECRET, providers: [], logger: spyLogger() } as never, '/auth/session'),
  'GET /signin with a config without a secret': (lib) =>
    send(lib, { trustHost: true, providers: [], logger: spyLogger() } as never, '/auth/signin'),
}

describe('authchart answers like @auth/core', () => {
  it.each(Object.keys(scenarios))('%s', async (name) => {
    const [theirs, ours] = await Promise.all(
      libraries.map(async (lib) => observe(await scenarios[name]!(lib))),
    )
    expect(ours).toEqual(theirs)
  })

  it('accepts provider objects made by @auth/core factories', async () => {
    const lib = { ...libraries[1]!, Credentials: libraries[0]!.Credentials }
    const response = await signIn(lib, config(lib), { username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(response.headers.getSetCookie().some((c) => c.startsWith('__Secure-authjs.session-token=eyJ'))).toBe(true)
  })
})
