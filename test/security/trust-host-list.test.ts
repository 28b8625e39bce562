/**
 * `trustHost` as a list of hosts: a forged `Host` (the request URL's host, as an integration or
 * the runtime builds it) is refused with 400 before any route runs, so it never reaches an e-mailed
 * link, a redirect, a form action or a cookie; a listed host is served as before.
 */
import { describe, expect, it } from 'vitest'
import { Auth, setEnvDefaults } from '../../core/index.js'
import { parseTrustedHost } from '../../core/config/trusted-hosts.js'
import { authRequest, ORIGIN } from '../fixtures/http.js'
import { emailConfig, EmailClient, lastLink } from '../email/helpers.js'

const LISTED = new URL(ORIGIN).host
const EVIL = 'https://evil.example'

describe('trustHost: a list of hosts', () => {
  it('sends no e-mail for a forged host, answers 400 and logs the host', async () => {
    const { config, outbox } = emailConfig({ overrides: { trustHost: [LISTED] } })
    const client = new EmailClient(config, EVIL)
    const response = await client.send({ path: '/signin/email', body: { email: 'victim@example.com', csrfToken: 'x' } })
    expect(response.status).toBe(400)
    expect(response.headers.get('set-cookie')).toBeNull()
    expect(outbox).toHaveLength(0)
    const logged = config.logger.error.mock.calls[0]![0]
    expect(logged.type).toBe('UntrustedHost')
    expect(logged.message).toContain('Host "evil.example" is not in trustHost')
  })

  it('refuses every route for a forged host: pages, CSRF, session, callbacks', async () => {
    const { config } = emailConfig({ overrides: { trustHost: [LISTED] } })
    for (const path of ['/auth/signin', '/auth/csrf', '/auth/session', '/auth/providers', '/auth/signout', '/auth/callback/email?token=t&email=a%40b.c']) {
      const response = await Auth(authRequest({ path, origin: EVIL }), config)
      expect(response.status, path).toBe(400)
      expect(response.headers.get('set-cookie'), path).toBeNull()
      expect(await response.text(), path).not.toContain('evil.example')
    }
  })

  it('builds the link from the listed host it was asked on', async () => {
    const { config, outbox } = emailConfig({ overrides: { trustHost: ['other.example', LISTED] } })
    await new EmailClient(config).requestLink('alice@example.com')
    expect(lastLink(outbox).origin).toBe(ORIGIN)
  })

  it('matches a host name on any port, a host:port on that port only, an origin exactly', async () => {
    const { config } = emailConfig({ overrides: { trustHost: ['app.example', 'localhost:3000', 'https://secure.example'] } })
    const status = async (origin: string) => (await Auth(authRequest({ path: '/auth/csrf', origin }), config)).status
    expect(await status('https://app.example')).toBe(200)
    expect(await status('https://app.example:8443')).toBe(200)
    expect(await status('http://localhost:3000')).toBe(200)
    expect(await status('http://localhost:3001')).toBe(400)
    expect(await status('https://secure.example')).toBe(200)
    expect(await status('http://secure.example')).toBe(400)
    expect(await status('https://app.example.evil.example')).toBe(400)
    expect(await status('https://evilapp.example')).toBe(400)
  })

  it('refuses entries that are not a host or an origin, naming the entry', async () => {
    for (const entry of ['*.example.com', 'https://app.example/path', 'app.example/', 'user@app.example', '']) {
      const { config } = emailConfig({ overrides: { trustHost: [entry] } })
      const response = await Auth(authRequest({ path: '/auth/csrf' }), config)
      expect(response.status, entry).toBe(500)
      expect(config.logger.error.mock.calls[0]![0].message, entry).toMatch(/^config\.trustHost: entry 0 must be/)
    }
    expect(parseTrustedHost('APP.Example:443')).toEqual({ kind: 'hosts', value: 'app.example:443' })
    expect(parseTrustedHost('https://App.Example')).toEqual({ kind: 'origins', value: 'https://app.example' })
    expect(parseTrustedHost('[::1]:3000')).toEqual({ kind: 'hosts', value: '[::1]:3000' })
  })

  it("adds AUTH_URL's origin to a list (the integrations build every URL from it)", () => {
    const config = { providers: [], trustHost: ['preview.example'] }
    setEnvDefaults({ AUTH_URL: 'https://app.example/auth' }, config as never)
    expect(config.trustHost).toEqual(['preview.example', 'https://app.example'])
    const boolean = { providers: [] as never[], trustHost: undefined as unknown }
    setEnvDefaults({ AUTH_URL: 'https://app.example/auth' }, boolean as never)
    expect(boolean.trustHost).toBe(true)
  })
})
