/**
 * The Fastify plugin answers without web `Request`/`Response` objects (`answerRequest` with a
 * `NodeRequestSource`). These tests hold it to the bytes of the web path it replaced: a reference
 * app (the same routes and URL rule) converts each request to a web `Request`, calls `Auth()`, and
 * copies the `Response` back, and both apps must answer every request with the same status,
 * headers (each `Set-Cookie` included) and body. Time and randomness are pinned so that tokens and dates repeat.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Auth } from '../../core/auth.js'
import { encode } from '../../core/jwt.js'
import { fastifyAuth } from '../../integrations/fastify/index.js'
import { mountAuthRoutes } from '../../integrations/fastify/routes.js'
import { bodyBytes, copyHeaders, toWebRequest } from '../../integrations/node/index.js'
import { prepareConfig } from '../../integrations/shared/auth.js'
import { SECRET } from '../fixtures/http.js'
import { answersAsTheWebPath, pinClockAndRandomness, unpinClockAndRandomness, type NativePathCase } from './native-path.js'
import { attackTargetConfig } from './origin-attacks.js'

/** The web-Request path the plugin used before: the reference the native path must equal. */
async function webPathApp(config: ReturnType<typeof attackTargetConfig>, trustProxy: boolean): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy })
  const { config: prepared, origin } = prepareConfig(config, process.env)
  await app.register(async (scope) =>
    mountAuthRoutes(scope, '/auth', origin, async (request, reply, url) => {
      const body = request.body as Buffer | undefined
      const response = await Auth(toWebRequest({ method: request.method, headers: request.headers, body, clientAddress: request.ip }, url), prepared)
      reply.code(response.status)
      copyHeaders(response, reply)
      const bytes = await bodyBytes(response)
      return bytes.length > 0 ? reply.send(bytes) : reply.send()
    }),
  )
  return app
}

async function nativeApp(config: ReturnType<typeof attackTargetConfig>, trustProxy: boolean): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy })
  await app.register(fastifyAuth, config)
  return app
}

interface Sent {
  method?: 'GET' | 'POST' | 'HEAD'
  url: string
  headers?: Record<string, string>
  payload?: string
}

/** What a client sees of an answer; `date` is the server clock, not the handler's. */
async function answerOf(app: FastifyInstance, sent: Sent) {
  const response = await app.inject({ method: sent.method ?? 'GET', url: sent.url, headers: sent.headers ?? {}, ...(sent.payload !== undefined ? { payload: sent.payload } : {}) })
  const { date: _date, ...headers } = response.headers
  return { status: response.statusCode, headers, body: response.rawPayload.toString('latin1') }
}

const SESSION = 'authjs.session-token'
const CSRF = 'authjs.csrf-token'
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

describe.each([false, true])('the native Fastify path (trustProxy %s) answers byte for byte as the web-Request path', (trustProxy) => {
  const config = attackTargetConfig()
  let native: FastifyInstance
  let web: FastifyInstance
  let sessionCookie = ''
  let unicodeCookie = ''
  let csrfCookie = ''
  let csrfToken = ''

  beforeAll(async () => {
    pinClockAndRandomness()
    native = await nativeApp(config, trustProxy)
    web = await webPathApp(config, trustProxy)
    sessionCookie = `${SESSION}=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: SESSION })}`
    unicodeCookie = `${SESSION}=${await encode({ token: { name: 'Zoë 日本', email: 'z@x.test', sub: '2' }, secret: SECRET, salt: SESSION })}`
    const csrf = await native.inject({ url: '/auth/csrf', headers: { host: 'app.test' } })
    csrfCookie = String(csrf.headers['set-cookie']).split(';')[0]!
    csrfToken = csrf.json().csrfToken
  })

  afterAll(async () => {
    unpinClockAndRandomness()
    await native?.close()
    await web?.close()
  })

  const host = { host: 'app.test' }
  const cases: NativePathCase<Sent>[] = [
    ['a session read without a cookie', () => ({ url: '/auth/session', headers: host })],
    ['a session read with a valid JWT cookie', () => ({ url: '/auth/session', headers: { ...host, cookie: sessionCookie } })],
    ['a session read with a name outside ASCII', () => ({ url: '/auth/session', headers: { ...host, cookie: unicodeCookie } })],
    ['a session read with a tampered cookie (cleared)', () => ({ url: '/auth/session', headers: { ...host, cookie: `${sessionCookie.slice(0, -4)}AAAA` } })],
    ['a session read with chunks and other cookies', () => ({ url: '/auth/session', headers: { ...host, cookie: `a=1; ${sessionCookie}; ${SESSION}.0=x; b=%20` } })],
    ['a CSRF token without a cookie', () => ({ url: '/auth/csrf', headers: host })],
    ['a CSRF token with its cookie', () => ({ url: '/auth/csrf', headers: { ...host, cookie: csrfCookie } })],
    ['a CSRF token with a forged cookie', () => ({ url: '/auth/csrf', headers: { ...host, cookie: `${CSRF}=forged%7Cvalue` } })],
    ['the provider list', () => ({ url: '/auth/providers', headers: host })],
    ['the provider list with a query', () => ({ url: '/auth/providers?x=1&x=2&y=%E2%9C%93', headers: host })],
    ['the sign-in page', () => ({ url: '/auth/signin?callbackUrl=%2Fdashboard', headers: { ...host, cookie: csrfCookie } })],
    ['the error page', () => ({ url: '/auth/error?error=AccessDenied', headers: host })],
    ['an unknown action', () => ({ url: '/auth/nope', headers: host })],
    ['an unknown provider', () => ({ url: '/auth/signin/nope', headers: host })],
    ['a HEAD request', () => ({ method: 'HEAD', url: '/auth/session', headers: host })],
    ['a forged Host', () => ({ url: '/auth/session', headers: { host: 'evil.example', cookie: sessionCookie } })],
    ['a forged X-Forwarded-Host', () => ({ url: '/auth/providers', headers: { ...host, 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' } })],
    ['a forged X-Forwarded-Host on the sign-in page', () => ({ url: '/auth/signin', headers: { ...host, 'x-forwarded-host': 'evil.example' } })],
    ['a malformed Host', () => ({ url: '/auth/session', headers: { host: 'a@evil.example' } })],
    ['an absolute-form target', () => ({ url: 'http://evil.example/auth/providers', headers: host })],
    ['a credentials sign-in', () => ({ method: 'POST', url: '/auth/callback/credentials', headers: { ...host, ...FORM, cookie: csrfCookie }, payload: form({ csrfToken, username: 'alice', password: 'wonderland' }) })],
    ['a refused credentials sign-in', () => ({ method: 'POST', url: '/auth/callback/credentials', headers: { ...host, ...FORM, cookie: csrfCookie }, payload: form({ csrfToken, username: 'alice', password: 'no' }) })],
    ['a sign-in without a CSRF token', () => ({ method: 'POST', url: '/auth/callback/credentials', headers: { ...host, ...FORM }, payload: form({ username: 'alice', password: 'wonderland' }) })],
    ['a JSON sign-out asking for the redirect as JSON', () => ({ method: 'POST', url: '/auth/signout', headers: { ...host, 'content-type': 'application/json', 'x-auth-return-redirect': '1', cookie: `${csrfCookie}; ${sessionCookie}` }, payload: JSON.stringify({ csrfToken }) })],
    ['a body that is not UTF-8', () => ({ method: 'POST', url: '/auth/signout', headers: { ...host, ...FORM }, payload: '\u00ff' })],
    ['an OAuth sign-in start', () => ({ method: 'POST', url: '/auth/signin/op', headers: { ...host, ...FORM, cookie: csrfCookie }, payload: form({ csrfToken, callbackUrl: '/after' }) })],
  ]

  answersAsTheWebPath(cases, { native: (sent) => answerOf(native, sent), web: (sent) => answerOf(web, sent) })

  it('sets the session cookie on a credentials sign-in (the comparison above is not of two failures)', async () => {
    const answer = await answerOf(native, cases.find(([name]) => name === 'a credentials sign-in')![1]())
    expect(answer.status).toBe(302)
    expect(String(answer.headers['set-cookie'])).toContain(`${SESSION}=`)
  })

  it.each(['an absolute-form target', 'a sign-in without a CSRF token', 'a forged X-Forwarded-Host on the sign-in page'])(
    'refuses %s on the native path: no session cookie, no redirect off the origin',
    async (name) => {
      const answer = await answerOf(native, cases.find(([caseName]) => caseName === name)![1]())
      expect(String(answer.headers['set-cookie'] ?? '')).not.toContain(`${SESSION}=ey`)
      expect(String(answer.headers.location ?? '')).not.toContain('evil.example')
    },
  )

  it('reads the session of a valid cookie (the comparison above is not of two empty answers)', async () => {
    const answer = await answerOf(native, { url: '/auth/session', headers: { ...host, cookie: sessionCookie } })
    expect(JSON.parse(answer.body)).toMatchObject({ user: { name: 'Alice' } })
    expect(answer.headers['cache-control']).toBe('private, no-cache, no-store')
  })
})
