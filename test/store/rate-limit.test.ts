/**
 * Credentials rate limits through `Auth`: on by default, per identifier and per client address
 * (IPv6 per /64), counted before `authorize` so an attempt over the limit costs the application
 * nothing and tells an attacker nothing about the account.
 */
import Fastify from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { Auth, setClientAddress } from '../../core/index.js'
import { addressBucket } from '../../core/store/limits.js'
import { fastifyAuth } from '../../integrations/fastify/index.js'
import { authRequest, CookieJar, credentialsProvider, ALICE, ORIGIN, testConfig } from '../fixtures/http.js'

type Config = ReturnType<typeof testConfig>

async function attempt(config: Config, username: string, password: string, address?: string): Promise<URL> {
  const jar = new CookieJar()
  const csrf = await Auth(authRequest({ path: '/auth/csrf' }), config)
  jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const request = authRequest({ path: '/auth/callback/credentials', body: { csrfToken, username, password }, cookies: jar })
  const response = await Auth(address ? setClientAddress(request, address) : request, config)
  return new URL(response.headers.get('location')!)
}

function counting(): { config: Config; calls: string[] } {
  const calls: string[] = []
  const config = testConfig({
    providers: [
      credentialsProvider((c) => {
        calls.push(String(c.username))
        return c.username === 'alice' && c.password === 'wonderland' ? { ...ALICE } : null
      }),
    ],
  })
  return { config, calls }
}

describe('credentials rate limits', () => {
  it('allows ten attempts per identifier by default, then refuses without calling authorize', async () => {
    const { config, calls } = counting()
    for (let i = 0; i < 10; i++) {
      expect((await attempt(config, 'Alice ', 'wrong')).searchParams.get('code')).toBe('credentials')
    }
    const refused = await attempt(config, 'alice', 'wonderland')
    expect(refused.searchParams.get('error')).toBe('CredentialsSignin')
    expect(refused.searchParams.get('code')).toBe('rate_limited')
    expect(Number(refused.searchParams.get('retryAfter'))).toBeGreaterThan(850)
    expect(calls).toHaveLength(10)
    expect(config.logger.warn).toHaveBeenCalledWith('credentials-rate-limited')
    const logged = JSON.stringify([config.logger.warn.mock.calls, config.logger.error.mock.calls, config.logger.debug.mock.calls])
    expect(logged).not.toMatch(/alice/i)
    // Another identifier is still let through.
    expect((await attempt(config, 'bob', 'x')).searchParams.get('code')).toBe('credentials')
  })

  it('answers the same over the limit whether the account exists or not', async () => {
    const { config } = counting()
    const over = async (username: string) => {
      for (let i = 0; i < 10; i++) await attempt(config, username, 'wrong')
      const url = await attempt(config, username, 'wrong')
      url.searchParams.delete('retryAfter')
      return url.href
    }
    expect(await over('alice')).toBe(await over('nobody-by-this-name'))
  })

  it('limits a client address, counting an IPv6 network by its /64', async () => {
    const config = testConfig({ rateLimit: { credentials: { perAddress: 3 } } })
    for (let i = 0; i < 3; i++) await attempt(config, `user-${i}`, 'wrong', `2001:db8:1:2::${i + 1}`)
    const refused = await attempt(config, 'alice', 'wonderland', '2001:db8:1:2:ffff::9')
    expect(refused.searchParams.get('code')).toBe('rate_limited')
    // Another /64 and an IPv4 client are counted apart.
    expect((await attempt(config, 'alice', 'wonderland', '2001:db8:1:3::1')).pathname).toBe('/')
    expect((await attempt(config, 'alice', 'wonderland', '192.0.2.7')).pathname).toBe('/')
  })

  it('turns off with rateLimit: false', async () => {
    const config = testConfig({ rateLimit: false })
    for (let i = 0; i < 12; i++) await attempt(config, 'alice', 'wrong')
    expect((await attempt(config, 'alice', 'wonderland')).pathname).toBe('/')
  })

  it('counts IPv6 addresses per /64 and IPv4-mapped addresses as IPv4', () => {
    expect(addressBucket('2001:db8:0:1::5')).toBe('2001:0db8:0000:0001::/64')
    expect(addressBucket('2001:DB8:0:1:aaaa:bbbb:cccc:dddd')).toBe('2001:0db8:0000:0001::/64')
    expect(addressBucket('[2001:db8:0:1::5%eth0]')).toBe('2001:0db8:0000:0001::/64')
    expect(addressBucket('::ffff:192.0.2.1')).toBe('192.0.2.1')
    expect(addressBucket('::1')).toBe('0000:0000:0000:0000::/64')
    expect(addressBucket('192.0.2.1')).toBe('192.0.2.1')
    expect(addressBucket('not:an::address::')).toBe('not:an::address::')
  })
})

/**
 * Issue 24, finding 5: a credentials field of another shape than a string or a number (a JSON
 * array, an object) used to skip the per-identifier count, while an `authorize` that looks the
 * user up with `String(username)`, as the README's does, still found the account.
 */
describe('credentials of other shapes than strings and numbers', () => {
  /** The README's lookup: `users.get(String(username))`; records every call that reaches it. */
  function readmeShaped(): { config: Config; calls: unknown[] } {
    const calls: unknown[] = []
    const users = new Map([['alice', 'wonderland']])
    const config = testConfig({
      providers: [
        credentialsProvider((c) => {
          calls.push(c.username)
          return users.get(String(c.username)) === String(c.password) ? { ...ALICE } : null
        }),
      ],
    })
    return { config, calls }
  }

  async function post(config: Config, body: { json?: unknown; form?: string }, address?: string): Promise<URL> {
    const jar = new CookieJar()
    const csrf = await Auth(authRequest({ path: '/auth/csrf' }), config)
    jar.store(csrf)
    const { csrfToken } = (await csrf.json()) as { csrfToken: string }
    const request =
      body.json !== undefined
        ? authRequest({ path: '/auth/callback/credentials', json: { ...(body.json as object), csrfToken }, cookies: jar })
        : new Request(`${ORIGIN}/auth/callback/credentials`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
            body: `${body.form}&csrfToken=${encodeURIComponent(csrfToken)}`,
          })
    const response = await Auth(address ? setClientAddress(request, address) : request, config)
    expect(response.status).toBe(302)
    return new URL(response.headers.get('location')!)
  }

  it('lets no guess in a JSON array reach authorize once the account is locked', async () => {
    const { config, calls } = readmeShaped()
    for (let i = 0; i < 10; i++) await attempt(config, 'alice', `wrong-${i}`)
    expect(calls).toHaveLength(10)
    let rateLimited = 0
    for (let i = 0; i < 30; i++) {
      const url = await post(config, { json: { username: ['alice'], password: i === 29 ? 'wonderland' : `guess-${i}` } })
      expect(url.searchParams.get('error')).toBe('CredentialsSignin')
      if (url.searchParams.get('code') === 'rate_limited') rateLimited++
    }
    expect(calls).toHaveLength(10)
    expect(rateLimited).toBe(30)
  })

  it('answers an array, an object or a nested field as a failed sign-in, counted under the identifier it spells', async () => {
    const { config, calls } = readmeShaped()
    const shapes = [['alice'], [' Alice '], [['alice']], { toString: 'alice' }, ['alice', 'x'], true, null]
    for (const username of shapes) {
      const url = await post(config, { json: { username, password: 'wonderland' } }, '192.0.2.10')
      expect(url.pathname).toBe('/auth/signin')
      expect(url.searchParams.get('error')).toBe('CredentialsSignin')
      expect(url.searchParams.get('code')).toBe('credentials')
    }
    // A well-formed field next to a malformed one is refused too: the body is the credentials.
    const extra = await post(config, { json: { username: 'alice', password: 'wonderland', remember: { days: 30 } } })
    expect(extra.searchParams.get('code')).toBe('credentials')
    expect(calls).toEqual([])
    // The arrays spelling "alice" were counted against alice: 3 of her 10 attempts are gone.
    for (let i = 0; i < 7; i++) await attempt(config, 'alice', `wrong-${i}`)
    expect((await attempt(config, 'alice', 'wonderland')).searchParams.get('code')).toBe('rate_limited')
    // And every malformed attempt against the client address.
    const limited = testConfig({ rateLimit: { credentials: { perAddress: 3 } }, providers: config.providers })
    for (let i = 0; i < 3; i++) await post(limited, { json: { username: [`user-${i}`], password: 'x' } }, '192.0.2.11')
    const refused = await post(limited, { json: { username: 'bob', password: 'x' } }, '192.0.2.11')
    expect(refused.searchParams.get('code')).toBe('rate_limited')
  })

  it('counts a form with a repeated key under the value authorize sees', async () => {
    const { config, calls } = readmeShaped()
    for (let i = 0; i < 10; i++) await attempt(config, 'alice', `wrong-${i}`)
    for (let i = 0; i < 5; i++) {
      const url = await post(config, { form: `username=alice&username=alice&password=wonderland&password=guess-${i}` })
      expect(url.searchParams.get('code')).toBe('rate_limited')
    }
    expect(calls).toHaveLength(10)
  })
})

/**
 * Issue 24, finding 12: the per-client limit counts the address the integration gives. With
 * Fastify's `trustProxy: true` that is the leftmost `X-Forwarded-For` entry, which the client
 * writes; the proxies' addresses take the entry the proxy appended. What README says under
 * "Which client address is counted".
 */
describe('the client address behind a proxy (Fastify)', () => {
  const apps: ReturnType<typeof Fastify>[] = []
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()))
  })

  async function limitedApp(trustProxy: boolean | string | string[]) {
    const app = Fastify({ trustProxy })
    apps.push(app)
    await app.register(fastifyAuth, testConfig({ rateLimit: { credentials: { perAddress: 3 } } }))
    /** A wrong password from `remoteAddress` (the proxy, 10.0.0.1, by default) with an X-Forwarded-For. */
    return async (forwardedFor: string, username: string, remoteAddress = '10.0.0.1') => {
      const headers = { 'x-forwarded-for': forwardedFor }
      const csrf = await app.inject({ method: 'GET', url: '/auth/csrf', remoteAddress, headers })
      const cookie = ([] as string[]).concat(csrf.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ')
      const response = await app.inject({
        method: 'POST',
        url: '/auth/callback/credentials',
        remoteAddress,
        headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ csrfToken: csrf.json<{ csrfToken: string }>().csrfToken, username, password: 'wrong' }).toString(),
      })
      return new URL(response.headers.location as string).searchParams.get('code')
    }
  }

  it('with trustProxy: true, lets a client choose a new address for every attempt', async () => {
    const post = await limitedApp(true)
    const codes = []
    for (let i = 0; i < 6; i++) codes.push(await post(`198.51.100.${i}, 203.0.113.9`, `user-${i}`))
    expect(codes).toEqual(Array(6).fill('credentials'))
  })

  it.each([['10.0.0.1'], [['10.0.0.0/8']]])('with trustProxy: %j, counts the address the proxy appended', async (trustProxy) => {
    const post = await limitedApp(trustProxy)
    const codes = []
    for (let i = 0; i < 4; i++) codes.push(await post(`198.51.100.${i}, 203.0.113.9`, `user-${i}`))
    expect(codes).toEqual(['credentials', 'credentials', 'credentials', 'rate_limited'])
    // Another client behind the same proxy is counted apart; a client reaching the app directly is
    // counted by its own address, whatever it writes in X-Forwarded-For.
    expect(await post('203.0.113.10', 'user-9')).toBe('credentials')
    for (let i = 0; i < 3; i++) await post('203.0.113.9', `direct-${i}`, '192.0.2.50')
    expect(await post('203.0.113.11', 'direct-9', '192.0.2.50')).toBe('rate_limited')
  })
})
