/**
 * Ordinary mistakes are not server faults: a mistyped provider id, a callback or step whose flow
 * cookie is gone (expired, cleared, another browser) each get their own error page telling the user
 * to start again; `Configuration` (500) stays for configuration. A tampered flow cookie is still
 * refused as the flow's own error.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Auth } from '../../core/index.js'
import { ENVELOPE_MAX_AGE } from '../../core/engine/envelope.js'
import Credentials from '../../providers/credentials.js'
import GitHub from '../../providers/github.js'
import { authRequest, Client, ORIGIN, spyLogger, testConfig } from '../fixtures/http.js'

function config() {
  return testConfig({
    logger: spyLogger(),
    providers: [Credentials({ credentials: { username: {} }, authorize: () => null }), GitHub({ clientId: 'a', clientSecret: 'b' })],
  })
}

async function errorPage(location: string | null) {
  expect(location).not.toBeNull()
  const url = new URL(location!)
  const page = await Auth(authRequest({ path: url.pathname, query: Object.fromEntries(url.searchParams) }), config())
  return { status: page.status, html: await page.text() }
}

afterEach(() => vi.useRealTimers())

describe('a provider id that does not exist', () => {
  it.each([
    ['GET', '/signin/nope'],
    ['POST', '/signin/nope'],
    ['GET', '/callback/nope'],
    ['POST', '/callback/nope'],
  ])('%s %s: UnknownProvider page (404) with a way back, not Configuration', async (method, path) => {
    const cfg = config()
    const client = new Client(cfg)
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path, method, ...(method === 'POST' ? { body: { csrfToken } } : { query: { code: 'x' } }) })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=UnknownProvider`)
    expect(cfg.logger.error.mock.calls[0]![0]).toMatchObject({ type: 'UnknownProvider' })
    const page = await errorPage(response.headers.get('location'))
    expect(page.status).toBe(404)
    expect(page.html).toContain('Sign-in option not found')
    expect(page.html).toContain(`href="${ORIGIN}/auth/signin"`)
    expect(page.html).not.toContain('server configuration')
  })
})

describe('a callback or step whose flow is gone', () => {
  it('an OAuth callback without its flow cookie (another browser, cleared): FlowExpired, start again', async () => {
    const cfg = config()
    const response = await new Client(cfg).send({ path: '/callback/github', query: { code: 'x', state: 'y' } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=FlowExpired`)
    // The log keeps the flow's own error, with its cause.
    expect(cfg.logger.error.mock.calls[0]![0]).toMatchObject({ type: 'InvalidCheck' })
    const page = await errorPage(response.headers.get('location'))
    expect(page.status).toBe(400)
    expect(page.html).toContain('Please start again')
    expect(page.html).toContain(`href="${ORIGIN}/auth/signin"`)
  })

  it('an OAuth callback after its flow expired: FlowExpired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const cfg = config()
    const client = new Client(cfg)
    const csrfToken = await client.csrfToken()
    const started = await client.send({ path: '/signin/github', body: { csrfToken } })
    const state = new URL(started.headers.get('location')!).searchParams.get('state') ?? 'y'
    vi.setSystemTime(Date.now() + (ENVELOPE_MAX_AGE + 60) * 1000)
    const response = await client.send({ path: '/callback/github', query: { code: 'x', state } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=FlowExpired`)
  })

  it('a step posted after its flow ended (no flow cookie): FlowExpired, no session', async () => {
    const cfg = config()
    const client = new Client(cfg)
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/step/signin-completion', body: { csrfToken, code: '123456' } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=FlowExpired`)
    expect(response.headers.getSetCookie().some((c) => c.includes('session-token=') && !c.includes('session-token=;'))).toBe(false)
  })

  it('a tampered flow cookie is not "start again": it stays the flow\'s own refusal', async () => {
    const cfg = config()
    const client = new Client(cfg)
    const csrfToken = await client.csrfToken()
    await client.send({ path: '/signin/github', body: { csrfToken } })
    const name = '__Secure-authjs.state' // the OAuth flow is sealed in Auth.js's state cookie
    const sealed = client.jar.get(name)!
    client.jar.cookies.set(name, `${sealed.slice(0, -4)}AAAA`)
    const response = await client.send({ path: '/callback/github', query: { code: 'x', state: 'y' } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
  })
})
