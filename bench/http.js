// GET /auth/session over real HTTP: a Fastify and an Express server per library on loopback, next
// to bare routes of each framework (alone, and opening the cookie with plain node:crypto: the
// floor), loaded by autocannon in another process (so the load generator's CPU is not charged to
// the servers).
import { spawn } from 'node:child_process'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { fileURLToPath } from 'node:url'
import express from 'express'
import Fastify from 'fastify'
import { ExpressAuth as AuthjsExpressAuth } from '@auth/express'
import { ExpressAuth } from 'authchart/express'
import { toWebRequest } from '../dist/integrations/node/index.js'
import { openSessionToken, sessionKey } from './floor.js'
import { summarize } from './harness.js'
import { configFor, SECRET } from './scenarios.js'

// The servers share this process: garbage one leaves (@auth/core's web Requests and streams) would
// be collected, and charged, in the next one's round. A full collection before each round, outside
// the timed window, keeps each round's CPU its own.
setFlagsFromString('--expose-gc')
const collectGarbage = globalThis.gc ?? runInNewContext('gc')

const AUTOCANNON = fileURLToPath(new URL('../node_modules/.bin/autocannon', import.meta.url))
const COOKIE = 'authjs.session-token'
const BARE = 'bare Fastify'
const BARE_WEB = 'bare Fastify + web Request'
const BARE_DECRYPT = 'bare Fastify + decryption'
const EXPRESS = 'authchart (Express)'
const AUTHJS_EXPRESS = '@auth/express'
const BARE_EXPRESS = 'bare Express'
const BARE_EXPRESS_DECRYPT = 'bare Express + decryption'
/** The names of the bare routes (no library), for the report. */
export const HTTP_FLOORS = [BARE, BARE_WEB, BARE_DECRYPT, BARE_EXPRESS, BARE_EXPRESS_DECRYPT]

/** @auth/core has no Fastify integration: the usual catch-all route converting to web Requests. */
function authjsRoutes(app, Auth, config) {
  const handler = async (req, reply) => {
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, String(value))
    const response = await Auth(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers }), config)
    reply.code(response.status)
    for (const [name, value] of response.headers) if (name !== 'set-cookie') reply.header(name, value)
    const cookies = response.headers.getSetCookie()
    if (cookies.length > 0) reply.header('set-cookie', cookies)
    return reply.send(Buffer.from(await response.arrayBuffer()))
  }
  app.get('/auth/*', handler)
}

async function server(lib) {
  const app = Fastify()
  const config = configFor(lib)
  if (lib.fastifyAuth) await app.register(lib.fastifyAuth, config)
  else authjsRoutes(app, lib.Auth, config)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  // Plain HTTP: the cookie has no __Secure- prefix, and its name is the key derivation salt.
  const cookie = `${COOKIE}=${await lib.encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: COOKIE })}`
  const check = await (await fetch(`${origin}/auth/session`, { headers: { cookie } })).json()
  if (check?.user?.name !== 'Alice') throw new Error(`${lib.name}: HTTP session check failed`)
  return { app, origin, cookie, body: JSON.stringify(check) }
}

/**
 * The ceiling: a Fastify route answering the same JSON a session read returns, with no auth at all
 * (the same cookie is sent, and ignored).
 */
async function bareServer(body, cookie, { webRequest = false, decrypt = false } = {}) {
  const app = Fastify()
  const key = sessionKey(SECRET, COOKIE)
  app.get('/auth/session', (req, reply) => {
    // The price of the web-API boundary alone: the Request an integration must build for the core.
    if (webRequest) toWebRequest({ method: req.method, headers: req.headers }, new URL(`http://${req.host}${req.url}`))
    // The physical floor over HTTP: the route plus opening the cookie's JWE with plain node:crypto.
    if (decrypt) {
      const header = req.headers.cookie ?? ''
      if (openSessionToken(header.slice(header.indexOf('=') + 1), key).name !== 'Alice') throw new Error('floor: wrong claims')
    }
    return reply.header('content-type', 'application/json').send(body)
  })
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, origin, cookie }
}

/** A library's own Express integration, mounted on `/auth`. */
async function expressServer(lib, ExpressMiddleware, { body, cookie }) {
  const app = express()
  app.use('/auth', ExpressMiddleware(configFor(lib)))
  return listenExpress(app, body, cookie, lib.name)
}

/** Bare Express routes answering the same JSON: alone, or opening the cookie first (the floor). */
async function bareExpress(body, cookie, { decrypt = false } = {}) {
  const app = express()
  const key = sessionKey(SECRET, COOKIE)
  app.get('/auth/session', (req, res) => {
    if (decrypt) {
      const header = req.headers.cookie ?? ''
      if (openSessionToken(header.slice(header.indexOf('=') + 1), key).name !== 'Alice') throw new Error('floor: wrong claims')
    }
    res.setHeader('content-type', 'application/json')
    res.end(body)
  })
  return listenExpress(app, body, cookie)
}

async function listenExpress(app, body, cookie, checked) {
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  const origin = `http://127.0.0.1:${server.address().port}`
  if (checked) {
    const check = await (await fetch(`${origin}/auth/session`, { headers: { cookie } })).json()
    if (check?.user?.name !== 'Alice') throw new Error(`${checked}: HTTP session check failed`)
  }
  const close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve)))
  return { app: { close }, origin, cookie, body }
}

function autocannon(url, cookie, seconds) {
  return new Promise((resolve, reject) => {
    const child = spawn(AUTOCANNON, ['-j', '-c', '10', '-d', String(seconds), '-H', `cookie=${cookie}`, url], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    let out = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`autocannon exited ${code}`))))
  })
}

/**
 * Interleaved autocannon rounds against each library's server and (unless `floors` is false) the
 * bare routes and the Express servers; medians of requests/s.
 */
export async function httpSession(libs, { rounds, seconds, floors = true }) {
  const servers = Object.fromEntries(await Promise.all(libs.map(async (lib) => [lib.name, await server(lib)])))
  const { body, cookie } = servers[libs[0].name]
  // Without floors (the bench's A/B mode) only the libraries' Fastify servers run.
  if (floors) {
    servers[BARE] = await bareServer(body, cookie)
    servers[BARE_WEB] = await bareServer(body, cookie, { webRequest: true })
    servers[BARE_DECRYPT] = await bareServer(body, cookie, { decrypt: true })
    const ours = libs.find((lib) => lib.fastifyAuth && lib.name === 'authchart')
    if (ours) servers[EXPRESS] = await expressServer(ours, ExpressAuth, { body, cookie })
    const authjs = libs.find((lib) => lib.name === '@auth/core')
    if (authjs) servers[AUTHJS_EXPRESS] = await expressServer(authjs, AuthjsExpressAuth, { body, cookie })
    servers[BARE_EXPRESS] = await bareExpress(body, cookie)
    servers[BARE_EXPRESS_DECRYPT] = await bareExpress(body, cookie, { decrypt: true })
  }
  const others = [BARE, BARE_WEB, BARE_DECRYPT, EXPRESS, AUTHJS_EXPRESS, BARE_EXPRESS, BARE_EXPRESS_DECRYPT]
  const targets = [...libs, ...others.filter((name) => servers[name]).map((name) => ({ name }))]
  const samples = Object.fromEntries(targets.map((lib) => [lib.name, []]))
  try {
    // Warm-up (JIT, lazily loaded flows), not counted.
    for (const lib of targets) await autocannon(`${servers[lib.name].origin}/auth/session`, servers[lib.name].cookie, 1)
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse()
      for (const lib of order) {
        const { origin, cookie } = servers[lib.name]
        collectGarbage()
        const cpu = process.cpuUsage()
        const result = await autocannon(`${origin}/auth/session`, cookie, seconds)
        const used = process.cpuUsage(cpu)
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${lib.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        samples[lib.name].push({
          opsPerSec: result.requests.average,
          usPerOp: result.latency.average * 1000,
          cpuUsPerOp: (used.user + used.system) / result.requests.total,
          rssMb: process.memoryUsage().rss / 2 ** 20,
          ops: result.requests.total,
        })
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.app.close()))
  }
  return summarize(samples)
}
