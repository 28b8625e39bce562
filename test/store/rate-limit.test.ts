/**
 * Credentials rate limits through `Auth`: on by default, per identifier and per client address
 * (IPv6 per /64), counted before `authorize` so an attempt over the limit costs the application
 * nothing and tells an attacker nothing about the account.
 */
import { describe, expect, it } from 'vitest'
import { Auth, setClientAddress } from '../../core/index.js'
import { addressBucket } from '../../core/store/limits.js'
import { authRequest, CookieJar, credentialsProvider, ALICE, testConfig } from '../fixtures/http.js'

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
