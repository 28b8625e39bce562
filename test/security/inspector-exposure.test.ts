/**
 * The flow inspector's exposure (issue 11, item 13): it shows every user's routes and outcomes, so
 * it is served only when `NODE_ENV` is `development` or `test`, by default only to loopback
 * clients (the integration tells the client's address; without it the request URL's host must be
 * loopback), and rendered at most once per second however many requests ask.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { Auth, setClientAddress } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'
import { fastifyAuth } from '../../integrations/fastify/index.js'
import { authRequest, Client, credentialsProvider, SECRET, spyLogger, testConfig } from '../fixtures/http.js'
import { flowInspector } from '../../core/inspector.js'

const nodeEnv = process.env.NODE_ENV
afterEach(() => {
  process.env.NODE_ENV = nodeEnv
  vi.useRealTimers()
})

const LOCAL = 'http://127.0.0.1:3000'
const inspectorRequest = (origin: string) => authRequest({ path: '/auth/__flows', origin })
const page = (config: AuthConfig, request: Request) => Auth(request, config as Parameters<typeof Auth>[1])

describe('the flow inspector outside development', () => {
  it.each([
    ['unset', undefined],
    ['staging', 'staging'],
    ['production', 'production'],
  ])('is not served when NODE_ENV is %s, even to a loopback client', async (_name, value) => {
    if (value === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = value
    const config = testConfig({ inspector: flowInspector() })
    const response = await page(config, inspectorRequest(LOCAL))
    expect(response.status).toBe(404)
    expect(await response.text()).toBe('')
    expect(config.logger.warn).toHaveBeenCalledTimes(1)
  })

  it('records no traces there either', async () => {
    delete process.env.NODE_ENV
    const config = testConfig({ inspector: flowInspector() })
    await new Client(config, LOCAL).signIn({ username: 'alice', password: 'wonderland' })
    process.env.NODE_ENV = 'development'
    const html = await (await page(config, inspectorRequest(LOCAL))).text()
    expect(html).toContain('No requests yet.')
  })
})

describe('the flow inspector in development', () => {
  it.each(['development', 'test'])('is served to a loopback client when NODE_ENV is %s', async (value) => {
    process.env.NODE_ENV = value
    for (const origin of [LOCAL, 'http://localhost:5173', 'http://[::1]:8080']) {
      const response = await page(testConfig({ inspector: flowInspector() }), inspectorRequest(origin))
      expect(response.status, origin).toBe(200)
    }
  })

  it('is refused to a request for a public host, with a warning', async () => {
    process.env.NODE_ENV = 'development'
    const config = testConfig({ inspector: flowInspector() })
    const response = await page(config, inspectorRequest('https://app.example.com'))
    expect(response.status).toBe(404)
    expect(config.logger.warn).toHaveBeenCalledWith('inspector-refused-remote-client')
  })

  it('believes the client address the integration gives over the host the request names', async () => {
    const config = testConfig({ inspector: flowInspector() })
    const remote = setClientAddress(inspectorRequest(LOCAL), '203.0.113.9')
    expect((await page(config, remote)).status).toBe(404)
    const local = setClientAddress(inspectorRequest('https://app.example.com'), '::ffff:127.0.0.1')
    expect((await page(config, local)).status).toBe(200)
  })

  it('is served to any client only when configured so', async () => {
    const config = testConfig({ inspector: flowInspector({ clients: 'any' }) })
    const remote = setClientAddress(inspectorRequest('https://app.example.com'), '203.0.113.9')
    expect((await page(config, remote)).status).toBe(200)
  })

  it('renders at most once per second, however many requests ask', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2030-01-01T00:00:00Z') })
    const config = testConfig({ inspector: flowInspector() })
    const first = await (await page(config, inspectorRequest(LOCAL))).text()
    await new Client(config, LOCAL).signIn({ username: 'alice', password: 'wonderland' })
    const burst = await Promise.all(
      Array.from({ length: 20 }, async () => (await page(config, inspectorRequest(LOCAL))).text()),
    )
    for (const html of burst) expect(html).toBe(first)
    vi.setSystemTime(Date.now() + 1_000)
    const later = await (await page(config, inspectorRequest(LOCAL))).text()
    expect(later).toContain('POST /callback/credentials')
  })
})

describe('the flow inspector behind the Fastify integration', () => {
  let app: FastifyInstance
  let origin: string
  beforeAll(async () => {
    // The app sits behind a reverse proxy on this machine: every socket is loopback, the client
    // is whoever X-Forwarded-For names.
    app = Fastify({ trustProxy: '127.0.0.1' })
    await app.register(fastifyAuth, {
      secret: SECRET,
      trustHost: true,
      inspector: flowInspector(),
      logger: spyLogger(),
      providers: [credentialsProvider()],
    } as never)
    origin = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(() => app?.close())

  it('serves a loopback client and refuses a remote one, whatever Host it claims', async () => {
    expect((await fetch(`${origin}/auth/__flows`)).status).toBe(200)
    const remote = await fetch(`${origin}/auth/__flows`, { headers: { 'x-forwarded-for': '203.0.113.9' } })
    expect(remote.status).toBe(404)
  })
})
