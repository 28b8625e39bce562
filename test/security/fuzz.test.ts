/**
 * Hostile and malformed requests at the front door, generated with fast-check: odd methods, paths
 * built from the routing table's actions and providers and from garbage, query strings, cookies
 * with our names and garbage values, bodies of every content type and none. Whatever arrives,
 * `Auth` answers without an escaped exception, without a 5xx (but the Configuration error page),
 * without a stack trace, secret or unescaped markup in the body, without redirecting off-site
 * (judged as a browser parses `Location`), without a forged or secret-bearing log line, and
 * without ever issuing a session cookie or creating a session: no input here carries the right
 * password or a live session, so nothing may sign in. (The flows themselves, with valid CSRF
 * pairs, sessions and sealed envelopes, are fuzzed in fuzz-flows.test.ts.)
 *
 * The seed is printed; `FUZZ_SEED=<seed>` replays a run.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ORIGIN, setCookies } from '../fixtures/http.js'
import { Driver, Violation } from './fuzz/drive.js'
import { issuedSession } from './fuzz/oracles.js'
import { HOSTILE_URLS, TRICKY } from './fuzz/plans.js'
import { fuzz, useOutsideParties } from './fuzz/run.js'
import { World, type WorldOptions } from './fuzz/world.js'

const RUNS = 2000
const parties = useOutsideParties()

const tricky = fc.constantFrom(...TRICKY, ...HOSTILE_URLS, 'credentials', 'github', 'op', '%2e%2e', 'a'.repeat(5000))
const text = fc.oneof(tricky, fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }))

/** Paths: every route of the table with each provider id (and garbage ids), plus malformed paths. */
function pathArb(world: World): fc.Arbitrary<string> {
  const ids = world.resolved.providers.map((p) => p.id)
  const routed = world.table.map((route) => ({ action: route.action, withProvider: route.provider !== 'none' }))
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.constantFrom(...routed), fc.oneof(fc.constantFrom(...ids), text))
        .map(([route, provider]) => world.path(route.action, route.withProvider ? encodeURIComponent(provider) : undefined)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        world.basePath,
        `${world.basePath}/`,
        `${world.basePath}//session`,
        `${world.basePath}/session/x/y`,
        `${world.basePath}/%2e%2e/session`,
        `${world.basePath}/webauthn-options/x`,
        // The organisations feature's routes under their action (the table names the action only).
        `${world.basePath}/organization/active`,
        `${world.basePath}/organization/create`,
        `${world.basePath}/organization/role`,
        `${world.basePath}/organization/remove`,
        `${world.basePath}/organization/invite`,
        `${world.basePath}/organization/invitation`,
        `${world.basePath}/organization/invitation?id=x&token=y`,
        `${world.basePath}/organization/nope`,
        '/elsewhere',
        '/',
        '/authsession',
      ),
    },
    { weight: 1, arbitrary: fc.array(text, { maxLength: 4 }).map((s) => `${world.basePath}/${s.map(encodeURIComponent).join('/')}`) },
  )
}

const queryArb = fc.dictionary(
  fc.constantFrom('callbackUrl', 'error', 'email', 'code', 'state', 'iss', 'provider', 'csrfToken', 'token', 'x'),
  text,
  { maxKeys: 4 },
)

function cookieArb(world: World) {
  const c = world.cookies
  const session = c.sessionToken.name
  return fc.dictionary(
    fc.constantFrom(
      session,
      `${session}.0`,
      `${session}.1`,
      `${session}.99`,
      c.csrfToken.name,
      c.callbackUrl.name,
      c.state.name,
      `${c.flowState.name}.credentials-signin`,
      `${c.flowState.name}.oauth-signin`,
      'authjs.session-token',
      'other',
    ),
    fc.oneof(
      text,
      fc.constant(`${'a'.repeat(64)}|${'b'.repeat(64)}`),
      fc.constant(crypto.randomUUID()),
      fc.base64String({ maxLength: 200 }).map((s) => `eyJ${s}`),
    ),
    { maxKeys: 5 },
  )
}

const bodyArb = fc.oneof(
  fc.constant(undefined),
  fc.constant(''),
  fc.json().map((json) => ({ type: 'application/json', body: json })),
  fc
    .constantFrom('{"username":"carol",', '["carol"]', '"x"', '42', 'null', '{"__proto__":{"admin":true}}', '{"csrfToken":{"length":64}}')
    .map((body) => ({ type: 'application/json', body })),
  fc
    .dictionary(fc.oneof(text, fc.constantFrom('__proto__', 'constructor', 'csrfToken', 'callbackUrl', 'username', 'password')), text, {
      maxKeys: 6,
    })
    .map((form) => ({ type: 'application/x-www-form-urlencoded', body: new URLSearchParams(form).toString() })),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ type: 'application/x-www-form-urlencoded', body: bytes })),
  fc.constant({ type: 'application/x-www-form-urlencoded', body: `username=${'a'.repeat(70_000)}` }),
  fc
    .constantFrom('text/plain', 'text/plain; x=application/json', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', '')
    .map((type) => ({ type, body: '{"username":"carol","password":"x"}' })),
)

const headerArb = fc.record(
  {
    'x-auth-return-redirect': fc.constant('1'),
    origin: fc.constantFrom('https://evil.example', ORIGIN, 'null'),
    referer: fc.constantFrom('https://evil.example/', `${ORIGIN}/`),
    'user-agent': fc.string({ maxLength: 2000 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
    'content-length': fc.constantFrom('0', '99999999', '-1'),
  },
  { requiredKeys: [] },
)

interface Generated {
  method: string
  path: string
  query: Record<string, string>
  cookies: Record<string, string>
  body: undefined | '' | { type: string; body: string | Uint8Array }
  headers: Record<string, string>
  hugeCookie: boolean
}

function requestArb(world: World): fc.Arbitrary<Generated> {
  return fc.record({
    method: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('GET', 'POST') },
      { weight: 1, arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'PROPFIND', 'get', 'X-CUSTOM') },
    ),
    path: pathArb(world),
    query: queryArb,
    cookies: cookieArb(world),
    body: bodyArb,
    headers: headerArb,
    hugeCookie: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
  })
}

/** Builds a Request, or undefined when the Request constructor itself refuses the input. */
function toRequest(input: Generated): Request | undefined {
  try {
    const url = new URL(input.path, ORIGIN)
    for (const [k, v] of Object.entries(input.query)) url.searchParams.set(k, v)
    const headers = new Headers(input.headers)
    const cookie = Object.entries(input.cookies)
      .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
      .join('; ')
    if (cookie) headers.set('cookie', input.hugeCookie ? `${cookie}; pad=${'x'.repeat(70_000)}` : cookie)
    const canHaveBody = !['GET', 'HEAD', 'get'].includes(input.method)
    let body: BodyInit | undefined
    if (canHaveBody && input.body) {
      if (input.body.type) headers.set('content-type', input.body.type)
      body = input.body.body as BodyInit
    } else {
      headers.delete('content-length')
    }
    return new Request(url, { method: input.method, headers, ...(body !== undefined ? { body } : {}) })
  } catch {
    return undefined
  }
}

const worlds: [string, WorldOptions][] = [
  ['JWT sessions', { strategy: 'jwt' }],
  ['database sessions and custom pages', { strategy: 'database', customPages: true }],
]

describe.each(worlds.map(([name, options], index) => [name, options, index] as const))('hostile requests with %s', (name, options, index) => {
  it(`answers ${RUNS} generated requests without a 5xx, an escaped exception, an off-site redirect or a session`, async () => {
    const world = new World(parties(), options)
    const driver = new Driver(world)
    let sent = 0
    await fuzz(world, `fuzz (${name})`, index, RUNS, requestArb(world), async (input) => {
      const request = toRequest(input)
      fc.pre(request !== undefined)
      sent++
      const description = `${request!.method} ${request!.url.slice(0, 300)}`
      const { response, sessionsCreated } = await driver.send(request!, description, new Set(world.staticSecrets()))
      if (issuedSession(setCookies(response), world.cookies.sessionToken.name) !== undefined || sessionsCreated > 0) {
        throw new Violation('a session was issued to a request that cannot sign in', description, response.headers.getSetCookie())
      }
    })
    world.log.print(`fuzz (${name}): ${sent} requests`)
    expect(sent).toBeGreaterThanOrEqual(RUNS * 0.9)
  }, 120_000)
})
