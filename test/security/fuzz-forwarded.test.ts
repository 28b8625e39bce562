/**
 * Forged `Host` and `X-Forwarded-*` headers, fuzzed where they count: through the Fastify
 * integration, whose URL rule decides the origin a request is answered for (that origin lands in
 * redirects, the sign-in page's form actions and the OAuth `redirect_uri`). Requests cover every
 * route of the table, half of them with a valid CSRF pair fetched under the same headers, so
 * sign-in starts and session routes run under the forged origin.
 *
 * Properties: no 5xx (a malformed host is a 400, not a crash), and every redirect stays on the
 * origin the deployment may answer for:
 * - with `trustProxy`, the origin the proxy headers name, when it is a plain http(s) host (never
 *   one carrying a userinfo, a path or another scheme);
 * - without it, the `Host` header's, whatever the forwarded headers say;
 * - with `AUTH_URL`, that origin, whatever any header says.
 *
 * The seed is printed; `FUZZ_SEED=<seed>` replays a run.
 */
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fastifyAuth } from '../../integrations/fastify/index.js'
import { badBody, offOriginRedirect } from './fuzz/oracles.js'
import { MARKUP } from './fuzz/drive.js'
import { HOSTILE_URLS } from './fuzz/plans.js'
import { fuzz, useOutsideParties } from './fuzz/run.js'
import { World } from './fuzz/world.js'

const RUNS = 1000
const HOST = 'authchart.test'
const AUTH_URL_ORIGIN = 'https://app.authchart.test'

const parties = useOutsideParties()

const forgedHosts = [
  HOST,
  'evil.example',
  'EVIL.example:8443',
  `${HOST}:443`,
  `${HOST}.`,
  'evil.example, authchart.test',
  'authchart.test, evil.example',
  'a@evil.example',
  `${HOST}@evil.example`,
  'evil.example/x',
  'evil.example\\@authchart.test',
  'evil.example?x',
  'evil.example#x',
  'a b',
  'evil.example:99999',
  '[::1',
  '[::1]:3000',
  '127.0.0.1',
  'xn--bcher-kva.example',
  'bücher.example',
  '',
  ' ',
  'evil.example\t',
  '%65vil.example',
]
const forgedProtos = ['https', 'http', 'HTTPS', 'javascript', 'ftp', 'https, http', 'http, https', 'https:', 'file', '']

interface Forged {
  route: number
  provider: number
  host: string | undefined
  forwardedHost: string | undefined
  forwardedProto: string | undefined
  extra: Record<string, string>
  csrf: boolean
  callbackUrl: string | undefined
  absoluteTarget: boolean
}

const forgedArb = (routes: number): fc.Arbitrary<Forged> =>
  fc.record({
    route: fc.nat({ max: routes - 1 }),
    provider: fc.nat({ max: 7 }),
    host: fc.option(fc.constantFrom(...forgedHosts), { nil: undefined, freq: 8 }),
    forwardedHost: fc.option(fc.constantFrom(...forgedHosts), { nil: undefined, freq: 3 }),
    forwardedProto: fc.option(fc.constantFrom(...forgedProtos), { nil: undefined, freq: 3 }),
    extra: fc.dictionary(
      fc.constantFrom('x-forwarded-port', 'x-forwarded-for', 'forwarded', 'x-forwarded-prefix', 'x-original-url', 'x-rewrite-url'),
      fc.constantFrom('443', '1', 'host=evil.example;proto=https', '/evil', '//evil.example/auth/signin', '127.0.0.1, 10.0.0.1'),
      { maxKeys: 2 },
    ),
    csrf: fc.boolean(),
    callbackUrl: fc.option(fc.constantFrom(...HOSTILE_URLS), { nil: undefined, freq: 2 }),
    absoluteTarget: fc.boolean(),
  })

type Deployment = 'trustProxy' | 'no proxy trust' | 'AUTH_URL'

/**
 * The origin a request may be answered for, or undefined when it must be refused (4xx): the
 * configured `AUTH_URL`, else the protocol and host the framework detected (read from Fastify
 * itself, so this judges the integration's rule, not Fastify's header parsing), when they name a
 * plain http(s) host with an optional port.
 */
function expectedOrigin(deployment: Deployment, detected: { protocol: string; host: string }): string | undefined {
  if (deployment === 'AUTH_URL') return AUTH_URL_ORIGIN
  const { protocol, host } = detected
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) return undefined
  try {
    // `https:` as a forwarded proto is the scheme with its URL colon: accepted, as `https`.
    const url = new URL(`${protocol.toLowerCase().replace(/:$/, '')}://${host}`)
    return /^https?:$/.test(url.protocol) ? url.origin : undefined
  } catch {
    return undefined
  }
}

function headersOf(input: Forged, cookie?: string): Record<string, string> {
  const headers: Record<string, string> = { ...input.extra }
  if (input.host !== undefined) headers.host = input.host
  if (input.forwardedHost !== undefined) headers['x-forwarded-host'] = input.forwardedHost
  if (input.forwardedProto !== undefined) headers['x-forwarded-proto'] = input.forwardedProto
  if (cookie) headers.cookie = cookie
  return headers
}

// Against the Fastify glue before the request-URL rule (issue 16) this suite failed at once: a
// forged `Host: a b` or `X-Forwarded-Host: [::1` answered 500 (new URL threw) and
// `X-Forwarded-Proto: javascript` was served; against the first version of the rule it found a
// 500 for a port above 65535 (`Host: evil.example:99999`).
describe.each<Deployment>(['trustProxy', 'no proxy trust', 'AUTH_URL'])('forged origin headers under Fastify with %s', (deployment) => {
  let app: FastifyInstance
  let world: World
  let detected = { protocol: '', host: '' }
  const previousAuthUrl = process.env.AUTH_URL

  beforeAll(async () => {
    world = new World(parties(), { strategy: 'jwt' })
    if (deployment === 'AUTH_URL') process.env.AUTH_URL = `${AUTH_URL_ORIGIN}/auth`
    app = Fastify({ trustProxy: deployment !== 'no proxy trust' })
    app.addHook('onRequest', async (request) => {
      detected = { protocol: request.protocol, host: request.host }
    })
    await app.register(fastifyAuth, world.config)
    await app.ready()
  })
  afterAll(async () => {
    if (previousAuthUrl === undefined) delete process.env.AUTH_URL
    else process.env.AUTH_URL = previousAuthUrl
    await app?.close()
  })

  it(`answers ${RUNS} requests with forged Host and X-Forwarded-* without a 5xx or a redirect off the origin it may answer for`, async () => {
    let reached = 0
    let answered = 0
    const index = ['trustProxy', 'no proxy trust', 'AUTH_URL'].indexOf(deployment)
    await fuzz(world, `fuzz-forwarded (${deployment})`, index, RUNS, forgedArb(world.table.length), async (input) => {
      const route = world.table[input.route]!
      const providers = route.provider === 'none' ? [] : world.providersOf(route.provider)
      const path = world.path(route.action, providers[input.provider % Math.max(1, providers.length)])
      let cookie: string | undefined
      const body: Record<string, string> = {}
      if (input.csrf) {
        const csrf = await app.inject({ method: 'GET', url: world.path('csrf'), headers: headersOf(input) })
        if (csrf.statusCode === 200) {
          cookie = csrf.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
          body.csrfToken = (csrf.json() as { csrfToken: string }).csrfToken
        }
      }
      if (input.callbackUrl !== undefined) body.callbackUrl = input.callbackUrl
      const target = input.absoluteTarget ? `http://evil.example${path}` : path
      world.take()
      const response = await app.inject({
        method: route.method,
        url: route.method === 'GET' ? `${target}?${new URLSearchParams(body)}` : target,
        headers: {
          ...headersOf(input, cookie),
          ...(route.method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(route.method === 'POST' ? { payload: new URLSearchParams(body).toString() } : {}),
      })
      if (world.take().traces.length > 0) reached += 1
      const description = `${route.method} ${target} ${JSON.stringify(headersOf(input))} → ${response.statusCode}`
      const isConfigurationPage = route.action === 'error' && response.statusCode === 500
      expect(response.statusCode >= 500 && !isConfigurationPage, `unexpected ${response.statusCode}: ${description}\n${response.body.slice(0, 200)}`).toBe(false)
      expect(badBody(response.body, String(response.headers['content-type'] ?? ''), world.staticSecrets(), MARKUP), description).toBeUndefined()
      const origin = expectedOrigin(deployment, detected)
      const location = response.headers.location as string | undefined
      if (origin === undefined) {
        // No origin it may answer for: the request is refused before anything is built on it.
        expect(response.statusCode, `a request with no valid origin was served: ${description}`).toBeGreaterThanOrEqual(400)
        return
      }
      answered += 1
      if (location !== undefined) {
        expect(offOriginRedirect(location, `${origin}${path}`, world.allowedTargets()), description).toBeUndefined()
        const authorization = new URL(location, origin)
        if (world.authorizationEndpoints().includes(`${authorization.origin}${authorization.pathname}`)) {
          expect(new URL(authorization.searchParams.get('redirect_uri')!).origin, `redirect_uri of ${description}`).toBe(origin)
        }
      }
    })
    world.log.print(`fuzz-forwarded (${deployment}): ${RUNS} requests, ${answered} with a valid origin, ${reached} reached a flow`)
    expect(reached).toBeGreaterThanOrEqual(50)
  }, 120_000)
})
