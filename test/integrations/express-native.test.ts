/**
 * The Express middleware answers without web `Request`/`Response` objects (`answerRequest` with a
 * `NodeRequestSource`, as the Fastify plugin does). These tests hold it to the bytes of the web
 * path it replaced: a reference middleware converts each request to a web `Request`, calls
 * `Auth()` and copies the `Response` back; both apps must answer every request, over real HTTP,
 * with the same status, headers (each `Set-Cookie` included) and body. Time and randomness are
 * pinned so that tokens and dates repeat.
 */
import { request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express, { type Express, type NextFunction, type Request, type Response } from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Auth } from '../../core/auth.js'
import { encode } from '../../core/jwt.js'
import { ExpressAuth } from '../../integrations/express/index.js'
import { bodyBytes, copyHeaders, readBody, toWebRequest } from '../../integrations/node/index.js'
import { prepareConfig, withBasePath } from '../../integrations/shared/auth.js'
import { originFromHost, requestUrl } from '../../integrations/shared/request-url.js'
import { SECRET } from '../fixtures/http.js'
import { answersAsTheWebPath, pinClockAndRandomness, unpinClockAndRandomness, type NativePathCase } from './native-path.js'
import { attackTargetConfig } from './origin-attacks.js'

type Config = ReturnType<typeof attackTargetConfig>

/** The web-Request path the middleware used before: the reference the native path must equal. */
function webPathMiddleware(config: Config) {
  const { config: prepared, origin } = prepareConfig(config, process.env)
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const url = requestUrl(req.originalUrl, origin, () => originFromHost(req.protocol, req.get('host')))
      const body = req.method === 'POST' ? await readBody(req) : undefined
      const request = toWebRequest({ method: req.method, headers: req.headers, body, clientAddress: req.ip }, url)
      const response = await Auth(request, withBasePath(prepared, req.baseUrl))
      res.status(response.status)
      copyHeaders(response, { header: (name, value) => (name === 'set-cookie' ? res.append(name, value) : res.setHeader(name, value)) })
      res.end(await bodyBytes(response))
    } catch (error) {
      next(error)
    }
  }
}

async function listen(app: Express): Promise<{ server: Server; origin: string }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

interface Sent {
  method?: 'GET' | 'POST' | 'HEAD'
  path: string
  headers?: Record<string, string>
  body?: string
}

/** What a client sees of an answer, every header line in order; `date` is the server clock. */
function answerOf(origin: string, sent: Sent): Promise<{ status: number; headers: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    // The same Host for both apps, whose ports differ: the answers name the origin.
    const headers = { host: 'app.test', ...sent.headers, ...(sent.body !== undefined ? { 'content-length': String(Buffer.byteLength(sent.body)) } : {}) }
    const request = httpRequest(`${origin}${sent.path}`, { method: sent.method ?? 'GET', headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        const lines: string[] = []
        for (let i = 0; i < response.rawHeaders.length; i += 2) {
          if (response.rawHeaders[i]!.toLowerCase() !== 'date') lines.push(`${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}`)
        }
        resolve({ status: response.statusCode!, headers: lines, body: Buffer.concat(chunks).toString('latin1') })
      })
    })
    request.on('error', reject)
    request.end(sent.body)
  })
}

const SESSION = 'authjs.session-token'
const CSRF = 'authjs.csrf-token'
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

describe('the native Express path answers byte for byte as the web-Request path', () => {
  const config = attackTargetConfig()
  const servers: Server[] = []
  let native = ''
  let web = ''
  let sessionCookie = ''
  let csrfCookie = ''
  let csrfToken = ''

  beforeAll(async () => {
    pinClockAndRandomness()
    for (const middleware of [ExpressAuth(config), webPathMiddleware(config)]) {
      const app = express()
      // A cookie an earlier middleware set must survive the auth route's own.
      app.use((_req, res, next) => {
        res.append('set-cookie', 'app=1; Path=/')
        next()
      })
      app.use('/auth', middleware)
      const running = await listen(app)
      servers.push(running.server)
      if (native === '') native = running.origin
      else web = running.origin
    }
    sessionCookie = `${SESSION}=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: SESSION })}`
    const csrf = await fetch(`${native}/auth/csrf`)
    csrfCookie = csrf.headers.getSetCookie().find((c) => c.startsWith(CSRF))!.split(';')[0]!
    csrfToken = ((await csrf.json()) as { csrfToken: string }).csrfToken
  })

  afterAll(async () => {
    unpinClockAndRandomness()
    for (const server of servers) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  const cases: NativePathCase<Sent>[] = [
    ['a session read without a cookie', () => ({ path: '/auth/session' })],
    ['a session read with a valid JWT cookie', () => ({ path: '/auth/session', headers: { cookie: sessionCookie } })],
    ['a session read with a tampered cookie (cleared)', () => ({ path: '/auth/session', headers: { cookie: `${sessionCookie.slice(0, -4)}AAAA` } })],
    ['a session read with chunks and other cookies', () => ({ path: '/auth/session', headers: { cookie: `a=1; ${sessionCookie}; ${SESSION}.0=x; b=%20` } })],
    ['a CSRF token without a cookie', () => ({ path: '/auth/csrf' })],
    ['a CSRF token with its cookie', () => ({ path: '/auth/csrf', headers: { cookie: csrfCookie } })],
    ['the provider list with a query', () => ({ path: '/auth/providers?x=1&x=2&y=%E2%9C%93' })],
    ['the sign-in page', () => ({ path: '/auth/signin?callbackUrl=%2Fdashboard', headers: { cookie: csrfCookie } })],
    ['an unknown action', () => ({ path: '/auth/nope' })],
    ['an unknown provider', () => ({ path: '/auth/signin/nope' })],
    ['a HEAD request', () => ({ method: 'HEAD', path: '/auth/session' })],
    ['a credentials sign-in', () => ({ method: 'POST', path: '/auth/callback/credentials', headers: { ...FORM, cookie: csrfCookie }, body: form({ csrfToken, username: 'alice', password: 'wonderland' }) })],
    ['a refused credentials sign-in', () => ({ method: 'POST', path: '/auth/callback/credentials', headers: { ...FORM, cookie: csrfCookie }, body: form({ csrfToken, username: 'alice', password: 'no' }) })],
    ['a sign-in without a CSRF token', () => ({ method: 'POST', path: '/auth/callback/credentials', headers: FORM, body: form({ username: 'alice', password: 'wonderland' }) })],
    ['a JSON sign-out asking for the redirect as JSON', () => ({ method: 'POST', path: '/auth/signout', headers: { 'content-type': 'application/json', 'x-auth-return-redirect': '1', cookie: `${csrfCookie}; ${sessionCookie}` }, body: JSON.stringify({ csrfToken }) })],
    ['an OAuth sign-in start', () => ({ method: 'POST', path: '/auth/signin/op', headers: { ...FORM, cookie: csrfCookie }, body: form({ csrfToken, callbackUrl: '/after' }) })],
  ]

  answersAsTheWebPath(cases, { native: (sent) => answerOf(native, sent), web: (sent) => answerOf(web, sent) })

  it('sets the session cookie on a credentials sign-in and keeps the app\'s own (the comparison above is not of two failures)', async () => {
    const answer = await answerOf(native, cases.find(([name]) => name === 'a credentials sign-in')![1]())
    expect(answer.status).toBe(302)
    const cookies = answer.headers.filter((line) => /^set-cookie: /i.test(line)).map((line) => line.slice('set-cookie: '.length))
    expect(cookies[0]).toBe('app=1; Path=/')
    expect(cookies.some((cookie) => cookie.startsWith(`${SESSION}=ey`))).toBe(true)
  })

  it('reads the session of a valid cookie (the comparison above is not of two empty answers)', async () => {
    const answer = await answerOf(native, { path: '/auth/session', headers: { cookie: sessionCookie } })
    expect(JSON.parse(answer.body)).toMatchObject({ user: { name: 'Alice' } })
    expect(answer.headers).toContain('cache-control: private, no-cache, no-store')
  })
})
