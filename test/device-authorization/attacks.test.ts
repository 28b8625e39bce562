/**
 * The device authorization grant from the attacker's side, through `Auth` over HTTP: two users,
 * two clients, two instances of the application sharing one adapter and one store. A device code
 * replayed (in turn and racing), polled too fast, expired, denied, presented by another client; a
 * user code guessed across instances; an approval posted without a CSRF token, with another
 * session's, without a session, or by a stale session; the page framed; the codes looked for in
 * the logs, the audit trail and the trace; the store failing or hanging on a claim; an unknown
 * client. Each is refused, and nothing is issued.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { auditTrail } from '../../core/audit.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { deviceSession } from '../../core/device-authorization.js'
import { Auth, setClientAddress } from '../../core/index.js'
import { serviceAccounts } from '../../core/service-accounts.js'
import { stepUp } from '../../core/step-up.js'
import type { AuthStore } from '../../core/store/types.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, spyLogger } from '../fixtures/http.js'
import { answer, approvedBy, csrfOf, devicePost, deviceWorld, openPage, ORIGIN, poll, requestCodes, USERS } from './fixture.js'

const later = (seconds: number) => vi.setSystemTime(Date.now() + seconds * 1000)
const bearer = (token: unknown) => new Request(`${ORIGIN}/api/me`, { headers: { authorization: `Bearer ${String(token)}` } })

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('the device code', () => {
  it('is redeemed once: a second poll with the same code gets invalid_grant, on either instance', async () => {
    const { config, second, alice } = await deviceWorld()
    const issued = await approvedBy(alice, config)
    const first = await poll(config, issued.device_code)
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ token_type: 'Bearer' })
    expect(typeof first.body!.access_token).toBe('string')
    later(6)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'invalid_grant' })
    expect((await poll(second, issued.device_code)).body).toEqual({ error: 'invalid_grant' })
  })

  it('is redeemed once when two polls race on two instances: one token, one invalid_grant', async () => {
    const { config, second, alice } = await deviceWorld()
    const issued = await approvedBy(alice, config)
    const answers = await Promise.all([poll(config, issued.device_code), poll(second, issued.device_code), poll(config, issued.device_code)])
    expect(answers.map((answered) => answered.status).sort()).toEqual([200, 400, 400])
    expect(answers.filter((answered) => answered.body?.access_token !== undefined)).toHaveLength(1)
    expect(answers.filter((answered) => answered.body?.error === 'invalid_grant')).toHaveLength(2)
  })

  it('is refused to another client, which learns nothing, and the right client still redeems it', async () => {
    const { config, alice } = await deviceWorld()
    const issued = await approvedBy(alice, config)
    const stolen = await poll(config, issued.device_code, 'acme-tv')
    expect(stolen).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const unknown = await poll(config, 'A'.repeat(43), 'acme-tv')
    expect(unknown.body).toEqual(stolen.body)
    expect((await poll(config, issued.device_code)).status).toBe(200)
  })

  it('slows a device down that polls faster than its interval: slow_down, the interval 5 s longer each time, kept across instances', async () => {
    const { config, second } = await deviceWorld()
    const { issued } = await requestCodes(config)
    expect(issued.interval).toBe(5)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'authorization_pending' })
    expect((await poll(second, issued.device_code)).body).toEqual({ error: 'slow_down', interval: 10 })
    later(6)
    // Five seconds are no longer enough: the interval is ten now.
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'slow_down', interval: 15 })
    later(16)
    expect((await poll(second, issued.device_code)).body).toEqual({ error: 'authorization_pending' })
    later(5)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'slow_down', interval: 20 })
  })

  it('expires: expired_token to the device, and its user code is a wrong code on the page', async () => {
    const { config, alice } = await deviceWorld({ device: { expiresIn: 60 } })
    const { issued } = await requestCodes(config)
    expect(issued.expires_in).toBe(60)
    later(61)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'expired_token' })
    const page = await openPage(alice, issued.user_code)
    expect(page.response.status).toBe(400)
    expect(page.html).toContain('not valid, or it has expired')
    const approved = await answer(alice, 'approve', issued.user_code)
    expect(approved.response.status).toBe(400)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'expired_token' })
  })

  it('is denied: access_denied to the device, and an approval after the denial changes nothing', async () => {
    const { config, alice } = await deviceWorld()
    const { issued } = await requestCodes(config)
    expect((await answer(alice, 'deny', issued.user_code)).response.status).toBe(200)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'access_denied' })
    expect((await answer(alice, 'approve', issued.user_code)).response.status).toBe(400)
    later(6)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'access_denied' })
  })

  it('is unknown when made up or malformed: invalid_grant, never a 500', async () => {
    const { config } = await deviceWorld()
    expect((await poll(config, 'B'.repeat(43))).body).toEqual({ error: 'invalid_grant' })
    expect((await poll(config, 'not a code')).body).toEqual({ error: 'invalid_grant' })
    expect((await devicePost(config, '/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'acme-cli' })).body).toEqual({
      error: 'invalid_request',
    })
    expect((await devicePost(config, '/oauth/token', { grant_type: 'password', client_id: 'acme-cli' })).body).toEqual({ error: 'unsupported_grant_type' })
    const repeated = await Auth(
      new Request(`${ORIGIN}/auth/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=a&device_code=b&client_id=acme-cli',
      }),
      config as Omit<AuthConfig, 'raw'>,
    )
    expect(repeated.status).toBe(400)
    expect(await repeated.json()).toEqual({ error: 'invalid_request' })
  })
})

describe('the client', () => {
  it('is refused when unknown, malformed or missing: 400 invalid_client or invalid_request, and no code is issued', async () => {
    const { config } = await deviceWorld()
    const unknown = await requestCodes(config, 'evil-cli')
    expect(unknown).toMatchObject({ status: 400, body: { error: 'invalid_client' } })
    expect((await requestCodes(config, 'no spaces allowed')).body).toEqual({ error: 'invalid_client' })
    expect((await devicePost(config, '/device_authorization', {})).body).toEqual({ error: 'invalid_request' })
    expect((await requestCodes(config, 'acme-cli', 'bad"scope')).body).toEqual({ error: 'invalid_scope' })
    expect((await poll(config, 'C'.repeat(43), 'evil-cli')).body).toEqual({ error: 'invalid_client' })
    const get = await Auth(new Request(`${ORIGIN}/auth/device_authorization`), config as Omit<AuthConfig, 'raw'>)
    expect(get.status).toBe(405)
  })

  it('is refused at a Host the configuration does not trust: 400, and no verification URI naming that host', async () => {
    const { config } = await deviceWorld({ config: { trustHost: ['authchart.test'] } as never })
    const forged = await Auth(
      authRequest({ path: '/auth/device_authorization', body: { client_id: 'acme-cli' }, origin: 'https://evil.test' }),
      config as Omit<AuthConfig, 'raw'>,
    )
    expect(forged.status).toBe(400)
    expect(await forged.text()).not.toContain('evil.test')
    expect((await requestCodes(config)).status).toBe(200)
  })

  it('shares the token endpoint with service accounts: the device grant is answered by the device flow, client credentials by the accounts', async () => {
    const { config, alice } = await deviceWorld({ config: { serviceAccounts: serviceAccounts({ issuer: `${ORIGIN}/auth` }) } })
    const issued = await approvedBy(alice, config)
    expect((await poll(config, issued.device_code)).status).toBe(200)
    const credentials = await devicePost(config, '/oauth/token', { grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' })
    expect(credentials).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
    expect(credentials.headers.get('www-authenticate')).toContain('Basic')
  })
})

describe('the user code', () => {
  it('is limited per user across two instances sharing the store: the eleventh code is refused, the right one too', async () => {
    const { config, second, signedIn } = await deviceWorld()
    const { issued } = await requestCodes(config)
    const aliceHere = await signedIn('alice')
    const aliceThere = await signedIn('alice', second)
    for (let attempt = 0; attempt < 10; attempt++) {
      const guess = await openPage(attempt % 2 === 0 ? aliceHere : aliceThere, `BCDF-${'GHJKLMNPQR'[attempt]}GHJ`)
      expect(guess.response.status).toBe(400)
    }
    const limited = await openPage(aliceThere, issued.user_code)
    expect(limited.response.status).toBe(429)
    expect(Number(limited.response.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.html).not.toContain('Acme CLI')
    expect((await answer(aliceHere, 'approve', issued.user_code)).response.status).toBe(429)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'authorization_pending' })
  })

  it('is limited per address across users and instances', async () => {
    const { config, second, alice, signedIn } = await deviceWorld({ device: { userCodeLimit: { perAddress: 3, perUser: 100 } } })
    const bob = await signedIn('bob', second)
    const from = (client: typeof alice, on: AuthConfig, code: string) =>
      Auth(setClientAddress(authRequest({ path: '/auth/device', query: { user_code: code }, cookies: client.jar }), '203.0.113.9'), on as Omit<AuthConfig, 'raw'>)
    expect((await from(alice, config, 'BCDF-GHJK')).status).toBe(400)
    expect((await from(bob, second, 'BCDF-GHJL')).status).toBe(400)
    expect((await from(alice, second, 'BCDF-GHJM')).status).toBe(400)
    expect((await from(bob, config, 'BCDF-GHJN')).status).toBe(429)
  })

  it('reveals nothing of other requests: a made-up code, an answered one and an expired one read the same', async () => {
    const { config, alice, bob } = await deviceWorld()
    const answered = await approvedBy(bob, config)
    const { issued: expiring } = await requestCodes(config)
    later(601)
    const pages = [await openPage(alice, 'BCDF-GHJK'), await openPage(alice, answered.user_code), await openPage(alice, expiring.user_code)]
    const bodies = pages.map((page) => page.html.replace(/value="[0-9a-f]{64}"/g, ''))
    expect(pages.map((page) => page.response.status)).toEqual([400, 400, 400])
    expect(new Set(bodies).size).toBe(1)
  })

  it('is compared without case or dash, and what the page shows is the request: client, scopes, when and from where', async () => {
    const { config, alice } = await deviceWorld()
    const response = await Auth(
      setClientAddress(authRequest({ path: '/auth/device_authorization', body: { client_id: 'acme-tv', scope: 'profile videos:watch' }, headers: { 'user-agent': 'AcmeTV/7' } }), '198.51.100.7'),
      config as Omit<AuthConfig, 'raw'>,
    )
    const issued = (await response.json()) as { user_code: string; verification_uri_complete: string }
    expect(issued.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    expect(issued.verification_uri_complete).toBe(`${ORIGIN}/auth/device?user_code=${issued.user_code}`)
    const page = await openPage(alice, issued.user_code.replace('-', '').toLowerCase())
    expect(page.response.status).toBe(200)
    for (const shown of ['Acme TV', 'profile', 'videos:watch', '198.51.100.7', 'AcmeTV/7', issued.user_code]) expect(page.html).toContain(shown)
  })
})

describe('the approval', () => {
  it('is refused without a CSRF token, and with another session’s: nothing is approved', async () => {
    const { config, alice, bob } = await deviceWorld()
    const { issued } = await requestCodes(config)
    const without = await answer(alice, 'approve', issued.user_code, false)
    expect(without.response.status).toBe(302)
    expect(without.response.headers.get('location')).toContain('error=MissingCSRF')
    const bobsToken = csrfOf((await openPage(bob, issued.user_code)).html)!
    const forged = await answer(alice, 'approve', issued.user_code, bobsToken)
    expect(forged.response.headers.get('location')).toContain('error=MissingCSRF')
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'authorization_pending' })
  })

  it('is refused without a session: to the sign-in page and back to the code, nothing approved', async () => {
    const { config, alice } = await deviceWorld()
    const { issued } = await requestCodes(config)
    const csrfToken = await alice.csrfToken()
    const csrfCookie = [...alice.jar.cookies].find(([name]) => name.includes('csrf-token'))!
    const response = await Auth(
      authRequest({ path: '/auth/device', body: { action: 'approve', user_code: issued.user_code, csrfToken }, cookies: { [csrfCookie[0]]: csrfCookie[1] } }),
      config as Omit<AuthConfig, 'raw'>,
    )
    expect(response.status).toBe(302)
    const location = new URL(response.headers.get('location')!)
    expect(location.pathname).toBe('/auth/signin')
    expect(location.searchParams.get('callbackUrl')).toBe(`${ORIGIN}/auth/device?user_code=${issued.user_code}`)
    const page = await Auth(authRequest({ path: '/auth/device', query: { user_code: issued.user_code } }), config as Omit<AuthConfig, 'raw'>)
    expect(page.status).toBe(302)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'authorization_pending' })
  })

  it('asks a stale session to prove a factor again, without step-up configured (a fresh sign-in) and with it', async () => {
    for (const extra of [{}, { stepUp: stepUp() }]) {
      const { config, alice } = await deviceWorld({ config: extra, device: { expiresIn: 1800 } })
      const { issued } = await requestCodes(config)
      later(11 * 60)
      const stale = await answer(alice, 'approve', issued.user_code)
      expect(stale.response.status).toBe(303)
      expect(stale.response.headers.get('location')).toMatch(extra.stepUp ? /\/auth\/step\/reauthenticate/ : /\/auth\/signin\?callbackUrl=/)
      expect((await poll(config, issued.device_code)).body).toEqual({ error: 'authorization_pending' })
      // Denying signs nobody in: it needs no fresh proof.
      expect((await answer(alice, 'deny', issued.user_code)).response.status).toBe(200)
    }
  })

  it('approves after the stale session proves its password again (step-up), the request resumed with its code', async () => {
    const { config, alice } = await deviceWorld({ config: { stepUp: stepUp() }, device: { expiresIn: 1800 } })
    const { issued } = await requestCodes(config)
    later(11 * 60)
    expect((await answer(alice, 'approve', issued.user_code)).response.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
    const proven = await alice.send({
      path: '/step/reauthenticate',
      body: { event: 'reauth.password', username: 'alice', password: 'pw', csrfToken: await alice.csrfToken() },
      headers: { accept: 'text/html' },
    })
    const resume = /<form id="resume" action="([^"]+)" method="POST">(.*?)<\/form>/.exec(await proven.text())!
    expect(resume[1]).toBe(`/auth/device?user_code=${issued.user_code}`)
    // The replayed form carries no code of its own: the page's URL does.
    expect(resume[2]).not.toContain('user_code')
    const fields = Object.fromEntries([...resume[2]!.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((match) => [match[1], match[2]]))
    const resumed = await alice.send({ method: 'POST', path: '/device', query: { user_code: issued.user_code }, body: fields, headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' } })
    expect(resumed.status).toBe(200)
    expect(await resumed.text()).toContain('Device signed in')
    expect((await poll(config, issued.device_code)).status).toBe(200)
  })

  it('may not be framed, nor cached: frame-ancestors none and X-Frame-Options DENY on the page and the answer', async () => {
    const { config, alice } = await deviceWorld()
    const { issued } = await requestCodes(config)
    const entry = await openPage(alice)
    const confirm = await openPage(alice, issued.user_code)
    const answered = await answer(alice, 'approve', issued.user_code)
    for (const response of [entry.response, confirm.response, answered.response]) {
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      expect(response.headers.get('x-frame-options')).toBe('DENY')
      expect(response.headers.get('cache-control')).toContain('no-store')
    }
  })
})

describe('the codes', () => {
  it('are never in a log line, an audit event or the engine trace', async () => {
    const logger = spyLogger()
    const events: AuditEvent[] = []
    const traces: unknown[] = []
    const { config, alice } = await deviceWorld({
      config: { logger, debug: true, audit: auditTrail({ sink: (event) => void events.push(event) }), inspect: (trace: unknown) => void traces.push(trace) } as never,
    })
    const { issued } = await requestCodes(config)
    await openPage(alice, 'BCDF-GHJK')
    await poll(config, issued.device_code)
    await poll(config, issued.device_code)
    await answer(alice, 'approve', issued.user_code)
    later(6)
    const redeemed = await poll(config, issued.device_code)
    await poll(config, issued.device_code)
    expect(redeemed.status).toBe(200)
    await vi.waitFor(() => expect(events.some((event) => event.kind === 'device-authorization-redeemed')).toBe(true))
    expect(events.map((event) => event.kind)).toEqual(
      expect.arrayContaining(['device-authorization-requested', 'device-authorization-approved', 'device-authorization-redeemed']),
    )
    const written = JSON.stringify([logger.error.mock.calls, logger.warn.mock.calls, logger.debug.mock.calls, events, traces], (_key, value: unknown) =>
      value instanceof Error ? `${value.name}: ${value.message}` : value,
    )
    for (const secret of [issued.device_code, issued.user_code, issued.user_code.replace('-', ''), String(redeemed.body!.access_token)]) {
      expect(written).not.toContain(secret)
    }
  })
})

describe('the store', () => {
  type Broken = 'claim' | 'get' | 'put'
  /** A store whose `method` throws (or hangs) while `broken.on` is set. */
  function breakable(mode: 'throws' | 'hangs') {
    const broken: { on: Broken | null } = { on: null }
    const wrap = (inner: AuthStore): AuthStore =>
      new Proxy(inner, {
        get(target, key, receiver) {
          if (key === broken.on) return () => (mode === 'throws' ? Promise.reject(new Error('ECONNRESET store')) : new Promise(() => {}))
          return Reflect.get(target, key, receiver)
        },
      })
    return { broken, wrap }
  }

  it.each(['throws', 'hangs'] as const)('that %s on the redemption claim answers 503 with Retry-After and no token; the code still redeems once it is back', async (mode) => {
    const { broken, wrap } = breakable(mode)
    const { config, alice } = await deviceWorld({ store: wrap, config: { availability: { storeTimeout: 50, retryAfter: 7 } } })
    const issued = await approvedBy(alice, config)
    vi.useRealTimers()
    broken.on = 'claim'
    const failed = await poll(config, issued.device_code)
    expect(failed.status).toBe(503)
    expect(failed.headers.get('retry-after')).toBe('7')
    expect(failed.body).toEqual({ error: 'temporarily_unavailable' })
    broken.on = null
    const redeemed = await poll(config, issued.device_code)
    expect(redeemed.status).toBe(200)
    expect((await deviceSession(bearer(redeemed.body!.access_token), config))?.user?.email).toBe(USERS.alice.email)
  })

  it.each(['throws', 'hangs'] as const)('that %s on a poll or on the approval answers 503, never a token, never an approval', async (mode) => {
    const { broken, wrap } = breakable(mode)
    const { config, alice } = await deviceWorld({ store: wrap, config: { availability: { storeTimeout: 50, retryAfter: 7 } } })
    const { issued } = await requestCodes(config)
    vi.useRealTimers()
    broken.on = 'get'
    const polled = await poll(config, issued.device_code)
    expect(polled.status).toBe(503)
    expect(polled.headers.get('retry-after')).toBe('7')
    broken.on = 'put'
    const codes = await requestCodes(config)
    expect(codes.status).toBe(503)
    expect(codes.body).toEqual({ error: 'temporarily_unavailable' })
    broken.on = 'claim'
    const approval = await answer(alice, 'approve', issued.user_code)
    expect(approval.response.status).toBe(503)
    expect(approval.response.headers.get('retry-after')).not.toBeNull()
    broken.on = null
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'authorization_pending' })
  })
})

describe('the session the device gets', () => {
  it('is the approving user’s, and ends when it is revoked, as a cookie session would (database)', async () => {
    const { config, adapter, bob } = await deviceWorld({ strategy: 'database' })
    const issued = await approvedBy(bob, config)
    const redeemed = await poll(config, issued.device_code)
    const token = String(redeemed.body!.access_token)
    expect((await deviceSession(bearer(token), config))?.user?.email).toBe(USERS.bob.email)
    await adapter.deleteSession(token)
    expect(await deviceSession(bearer(token), config)).toBeNull()
  })

  it('ends at its expiry (JWT), and a request without a bearer token, or with a made-up one, is no one', async () => {
    const { config, alice } = await deviceWorld()
    const issued = await approvedBy(alice, config)
    const token = String((await poll(config, issued.device_code)).body!.access_token)
    expect((await deviceSession(bearer(token), config))?.user?.name).toBe(USERS.alice.name)
    expect(await deviceSession(new Request(`${ORIGIN}/api/me`), config)).toBeNull()
    expect(await deviceSession(bearer('x'.repeat(40)), config)).toBeNull()
    later(31 * 86_400)
    expect(await deviceSession(bearer(token), config)).toBeNull()
  })
})
