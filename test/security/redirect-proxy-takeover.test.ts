/**
 * The redirect-proxy account takeover (issue 11, item 1), over real HTTP: a deployment behind a
 * redirect proxy (Fastify on loopback), the proxy itself (another Fastify app) and a real OpenID
 * Provider. The attacker starts a sign-in at the deployment with a forged origin (Host,
 * X-Forwarded-Host, or an absolute-form request target), hands the authorization URL to the
 * victim, and waits for the proxy to forward the victim's code to the attacker's origin. Every
 * variant must end with no session for the attacker and no redirect to an origin off the
 * allowlist; a legitimate deployment on the allowlist still signs in through the proxy.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sealValue } from '../../core/engine/envelope.js'
import { setEnvDefaults } from '../../core/env.js'
import { PROXY_STATE_SALT } from '../../core/flows/oauth/flow.js'
import { fastifyAuth } from '../../integrations/fastify/index.js'
import type { AuthConfig } from '../../core/types.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient } from '../oauth/helpers.js'

const EVIL = 'http://evil.example'

let op: RunningOidcProvider
let app: FastifyInstance
let proxy: FastifyInstance
let appOrigin: string
let proxyOrigin: string
let appLogger: ReturnType<typeof spyLogger>
let proxyLogger: ReturnType<typeof spyLogger>

/** A raw HTTP/1.1 exchange: any Host header, any request target (absolute-form included). */
interface RawRequest {
  method: 'GET' | 'POST'
  target: string
  headers?: Record<string, string>
  form?: Record<string, string>
}
interface RawResponse {
  status: number
  location: string | undefined
  cookies: string[]
  body: string
}

function send(origin: string, init: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(origin)
  const body = init.form ? new URLSearchParams(init.form).toString() : undefined
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port,
        method: init.method,
        path: init.target,
        headers: {
          host: new URL(origin).host,
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          ...init.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            location: res.headers.location,
            cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        )
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** A cookie jar as an attacker keeps it: name=value pairs from every answer. */
class Jar {
  readonly pairs = new Map<string, string>()
  take(response: RawResponse): RawResponse {
    for (const pair of response.cookies) {
      const eq = pair.indexOf('=')
      this.pairs.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    return response
  }
  header(): string {
    return [...this.pairs].map(([n, v]) => `${n}=${v}`).join('; ')
  }
}

const proxyConfig = (): AuthConfig => {
  const config = {
    secret: SECRET,
    trustHost: true,
    logger: proxyLogger,
    redirectProxyUrl: `${proxyOrigin}/auth`,
    providers: [appProvider(op.issuer, 'client_secret_basic', 'op')],
  } as unknown as AuthConfig
  // The allowlist as a deployment sets it: through the environment.
  setEnvDefaults({ AUTH_REDIRECT_PROXY_ORIGINS: ` ${appOrigin} , https://*.preview.authchart.test` }, config)
  return config
}

/** A loopback server listening on port 0, whose handler a Fastify app provides later. */
async function loopbackServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` }
}

/** A Fastify app with the auth plugin, served by an already listening `server`. */
async function serve(server: Server, config: AuthConfig, trustProxy: boolean): Promise<FastifyInstance> {
  const fastify = Fastify({
    trustProxy,
    serverFactory: (handler) => server.on('request', handler),
  })
  await fastify.register(fastifyAuth, config as never)
  await fastify.ready()
  return fastify
}

let servers: Server[] = []

beforeAll(async () => {
  appLogger = spyLogger()
  proxyLogger = spyLogger()
  // Both servers listen first, so each configuration can name both origins.
  const deployment = await loopbackServer()
  const proxyServer = await loopbackServer()
  servers = [deployment.server, proxyServer.server]
  appOrigin = deployment.origin
  proxyOrigin = proxyServer.origin
  op = await startOidcProvider({
    clients: [await opClient('client_secret_basic', 'op', { redirect_uris: [`${proxyOrigin}/auth/callback/op`] })],
  })
  const shared = proxyConfig()
  // The deployment sits behind a reverse proxy: it honours X-Forwarded-* headers.
  app = await serve(deployment.server, { ...shared, logger: appLogger } as AuthConfig, true)
  proxy = await serve(proxyServer.server, shared, false)
})

afterAll(async () => {
  await app?.close()
  await proxy?.close()
  for (const server of servers) {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  await op?.close()
})

/** Where a Location sends the browser, as an origin. */
const originOf = (location: string, base: string) => new URL(location, base).origin

interface ChainResult {
  /** Where the attacker's forged sign-in request was sent: the provider, or an error page. */
  start: string
  /** Every Location the victim's browser was answered with, in order. */
  locations: string[]
  /** The attacker's session at the deployment at the end. */
  attackerSession: unknown
}

/**
 * Runs the whole attack: the attacker starts the sign-in with `forge` applied to its requests,
 * the victim completes it at the provider and comes back through the proxy, and the attacker
 * delivers whatever the proxy forwarded to the deployment with its own cookies.
 */
async function attack(forge: (path: string) => { target: string; headers: Record<string, string> }): Promise<ChainResult> {
  const jar = new Jar()
  const locations: string[] = []
  const csrf = forge('/auth/csrf')
  const csrfResponse = jar.take(await send(appOrigin, { method: 'GET', ...csrf }))
  const { csrfToken } = JSON.parse(csrfResponse.body) as { csrfToken: string }
  const start = forge('/auth/signin/op')
  const started = jar.take(
    await send(appOrigin, {
      method: 'POST',
      target: start.target,
      headers: { ...start.headers, cookie: jar.header() },
      form: { csrfToken },
    }),
  )
  expect(started.status).toBe(302)
  const authorizationUrl = new URL(started.location!, appOrigin)
  if (authorizationUrl.origin === op.issuer) {
    locations.push(authorizationUrl.href)
    // The victim, signed in at the provider, follows the link and returns through the proxy.
    const answer = await visitProvider(authorizationUrl.href, `${proxyOrigin}/auth/callback/`)
    const forwarded = await send(proxyOrigin, {
      method: 'GET',
      target: `${answer.url.pathname}${answer.url.search}`,
    })
    if (forwarded.location) {
      locations.push(forwarded.location)
      const landing = new URL(forwarded.location, proxyOrigin)
      if (landing.origin === EVIL) {
        // The attacker's server received the victim's code: replay it at the deployment.
        const replay = forge(`${landing.pathname}${landing.search}`)
        const done = jar.take(
          await send(appOrigin, { method: 'GET', target: replay.target, headers: { ...replay.headers, cookie: jar.header() } }),
        )
        expect(done.status).toBe(302)
      }
    }
  }
  const session = await send(appOrigin, { method: 'GET', target: '/auth/session', headers: { cookie: jar.header() } })
  return { start: started.location!, locations, attackerSession: JSON.parse(session.body) }
}

const allowed = () => new Set([appOrigin, proxyOrigin, op.issuer])

const FORGERIES: Record<string, (path: string) => { target: string; headers: Record<string, string> }> = {
  'a forged Host header': (path) => ({ target: path, headers: { host: 'evil.example' } }),
  'a forged X-Forwarded-Host header': (path) => ({ target: path, headers: { 'x-forwarded-host': 'evil.example' } }),
  'an absolute-form request target': (path) => ({ target: `${EVIL}${path}`, headers: {} }),
}

describe('the redirect proxy under a forged origin', () => {
  it.each(Object.keys(FORGERIES))(
    'gives the attacker no session and redirects nowhere off the allowlist, with %s',
    async (name) => {
      const { locations, attackerSession } = await attack(FORGERIES[name]!)
      expect(attackerSession, 'the attacker holds the victim\'s session').toBeNull()
      for (const location of locations) {
        expect(allowed().has(originOf(location, appOrigin)), `redirected to ${location}`).toBe(true)
      }
    },
  )

  it('refuses to seal an origin off the allowlist, logging why', async () => {
    appLogger.error.mockClear()
    const { start, locations } = await attack(FORGERIES['a forged Host header']!)
    // The error page of the origin the request claimed: the attacker's own answer, no code in it.
    expect(start).toBe(`${EVIL}/auth/error?error=Configuration`)
    expect(locations).toEqual([])
    expect(appLogger.error).toHaveBeenCalledWith(
      expect.objectContaining({ type: 'UntrustedHost', message: expect.stringContaining('http://evil.example') }),
    )
  })

  it('does not forward a state sealed with an origin off the allowlist (an older or misconfigured deployment)', async () => {
    // A state sealed with the shared secret, as a deployment without the allowlist would seal it.
    const state = await sealValue(
      { origin: `${EVIL}/auth/callback/op`, random: 'r' },
      { secrets: [SECRET], salt: PROXY_STATE_SALT, at: Math.floor(Date.now() / 1000) },
    )
    proxyLogger.error.mockClear()
    const forwarded = await send(proxyOrigin, {
      method: 'GET',
      target: `/auth/callback/op?${new URLSearchParams({ code: 'victim-code', state, iss: op.issuer })}`,
    })
    expect(forwarded.status).toBe(302)
    expect(originOf(forwarded.location!, proxyOrigin)).toBe(proxyOrigin)
    expect(forwarded.location).toMatch(/\/auth\/error\?error=Configuration$/)
    expect(forwarded.location).not.toContain('victim-code')
    expect(proxyLogger.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'InvalidCheck' }))
  })

  it('forwards to a deployment matching a wildcard entry of the allowlist', async () => {
    const state = await sealValue(
      { origin: 'https://pr-42.preview.authchart.test/auth/callback/op', random: 'r' },
      { secrets: [SECRET], salt: PROXY_STATE_SALT, at: Math.floor(Date.now() / 1000) },
    )
    const forwarded = await send(proxyOrigin, {
      method: 'GET',
      target: `/auth/callback/op?${new URLSearchParams({ code: 'c', state })}`,
    })
    expect(forwarded.location).toMatch(/^https:\/\/pr-42\.preview\.authchart\.test\/auth\/callback\/op\?code=c&state=/)
  })
})

describe('the redirect proxy for a deployment on the allowlist', () => {
  it('still signs the user in at the deployment that started the sign-in', async () => {
    const jar = new Jar()
    const { csrfToken } = JSON.parse(jar.take(await send(appOrigin, { method: 'GET', target: '/auth/csrf' })).body) as {
      csrfToken: string
    }
    const started = jar.take(
      await send(appOrigin, { method: 'POST', target: '/auth/signin/op', headers: { cookie: jar.header() }, form: { csrfToken } }),
    )
    const answer = await visitProvider(started.location!, `${proxyOrigin}/auth/callback/`)
    const forwarded = await send(proxyOrigin, { method: 'GET', target: `${answer.url.pathname}${answer.url.search}` })
    const next = new URL(forwarded.location!)
    expect(`${next.origin}${next.pathname}`).toBe(`${appOrigin}/auth/callback/op`)
    const done = jar.take(
      await send(appOrigin, { method: 'GET', target: `${next.pathname}${next.search}`, headers: { cookie: jar.header() } }),
    )
    expect(done.location).toBe(appOrigin)
    const session = await send(appOrigin, { method: 'GET', target: '/auth/session', headers: { cookie: jar.header() } })
    expect(JSON.parse(session.body)).toMatchObject({ user: { email: OP_ACCOUNT.email.toLowerCase() } })
  })
})
