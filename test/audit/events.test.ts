/**
 * The audit trail through `Auth`: one event per request that advances a sign-in flow, one per
 * lifecycle change, derived from the engine's runs; sinks that throw or hang never fail or slow a
 * sign-in beyond the timeout.
 */
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { hashedAddress, userAgentFamily } from '../../core/audit/client.js'
import { AUDIT_SCHEMA_VERSION, type AuditEvent, type AuditOptions } from '../../core/audit/types.js'
import { Auth, setClientAddress } from '../../core/index.js'
import { ALICE, authRequest, Client, ORIGIN, SECRET, testConfig, featureConfig } from '../fixtures/http.js'
import { ageProof, reauthenticateAlice } from './reauthentication.js'
import { auditTrail } from '../../core/audit.js'

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
const good = { username: 'alice', password: 'wonderland' }

function audited(audit: Partial<AuditOptions> = {}, overrides: Parameters<typeof testConfig>[0] = {}) {
  const events: AuditEvent[] = []
  const config = featureConfig({ audit: auditTrail({ sink: (event) => void events.push(event), ...audit }), ...overrides })
  return { events, config }
}

/** Signs in as alice from 203.0.113.7 with Chrome and a request id. */
async function signInFrom(config: ReturnType<typeof testConfig>, credentials = good) {
  const client = new Client(config)
  const csrfToken = await client.csrfToken()
  const request = authRequest({
    path: '/auth/callback/credentials',
    body: { ...credentials, csrfToken },
    cookies: client.jar,
    headers: { 'user-agent': CHROME, 'x-request-id': 'req-42' },
  })
  const response = await Auth(setClientAddress(request, '203.0.113.7'), config)
  client.jar.store(response)
  return { client, response }
}

describe('audit events of sign-in flows', () => {
  it('records a credentials sign-in: flows, states, outcome, user, provider, amr, hashed address, browser family', async () => {
    const { events, config } = audited()
    const { response } = await signInFrom(config)
    expect(response.status).toBe(302)
    expect(events).toHaveLength(1)
    const [event] = events
    expect(event).toMatchObject({
      v: AUDIT_SCHEMA_VERSION,
      requestId: 'req-42',
      kind: 'flow',
      userId: ALICE.id,
      provider: 'credentials',
      amr: ['pwd'],
      flow: 'credentials-signin',
      outcome: { type: 'signed-in' },
      client: { address: await hashedAddress('203.0.113.7', SECRET), userAgent: 'Chrome' },
    })
    expect(event!.chartVersion).toMatch(/^\d+$/)
    expect(event!.states![0]).toBe('credentials-signin:idle')
    expect(event!.states!.some((state) => state.startsWith('signin-completion:'))).toBe(true)
    expect(event!.client.address).not.toContain('203.0.113.7')
    expect(new Date(event!.time).getTime()).toBeGreaterThan(Date.now() - 60_000)
  })

  it('records a refusal with its error type and cause, and no session', async () => {
    const { events, config } = audited()
    await signInFrom(config, { username: 'alice', password: 'nope' })
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ kind: 'flow', outcome: { type: 'refused', error: 'CredentialsSignin', cause: 'credentials' } })
    expect(events[0]!.amr).toBeUndefined()
  })

  it('records a rate limit reached as a refusal and a lifecycle event', async () => {
    const { events, config } = audited({}, { rateLimit: { credentials: { perIdentifier: 1 } } })
    await signInFrom(config, { username: 'alice', password: 'nope' })
    await signInFrom(config, { username: 'alice', password: 'nope' })
    expect(events.map((event) => event.kind)).toEqual(['flow', 'flow', 'rate-limited'])
    expect(events[1]).toMatchObject({ outcome: { type: 'refused', error: 'CredentialsSignin', cause: 'rate_limited' } })
  })

  it('keeps the raw address only when configured, and none when asked', async () => {
    const raw = audited({ clientAddress: 'raw' })
    await signInFrom(raw.config)
    expect(raw.events[0]!.client.address).toBe('203.0.113.7')
    const none = audited({ clientAddress: 'none' })
    await signInFrom(none.config)
    expect(none.events[0]!.client).toEqual({ userAgent: 'Chrome' })
  })

  it('replaces a request id that is not a plain token', async () => {
    const { events, config } = audited()
    const client = new Client(config)
    const csrfToken = await client.csrfToken()
    await client.send({ path: '/callback/credentials', body: { ...good, csrfToken }, headers: { 'x-request-id': 'a b; forged=1' } })
    expect(events[0]!.requestId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('records nothing for requests that advance no sign-in flow (session reads, CSRF tokens, providers)', async () => {
    const { events, config } = audited()
    const { client } = await signInFrom(config)
    events.length = 0
    await client.session()
    await client.csrfToken()
    await client.send({ path: '/providers' })
    expect(events).toEqual([])
  })
})

describe('audit lifecycle events', () => {
  it('records a sign-out with the user it ended', async () => {
    const { events, config } = audited()
    const { client } = await signInFrom(config)
    events.length = 0
    await client.signOut()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ kind: 'sign-out', userId: ALICE.id })
  })

  it('records a linked account and the database sessions revoked, one, others, everywhere', async () => {
    const store = createMemoryStore()
    const { events, config } = audited({}, { adapter: MemoryAdapter(store), session: { strategy: 'database' } })
    const { client: laptop } = await signInFrom(config)
    expect(events.map((event) => event.kind)).toEqual(['flow', 'account-linked'])
    const userId = events[1]!.userId!
    expect(events[1]).toMatchObject({ userId: expect.any(String), provider: 'credentials' })
    expect(events[0]).toMatchObject({ userId, outcome: { type: 'signed-in' } })
    const { client: phone } = await signInFrom(config)
    await signInFrom(config)
    events.length = 0

    const sessions = (await (await laptop.send({ path: '/sessions' })).json()) as { id: string; current: boolean }[]
    const other = sessions.find((session) => !session.current)!
    const csrfToken = await laptop.csrfToken()
    await laptop.send({ path: '/sessions', body: { csrfToken, revoke: 'one', id: other.id } })
    await laptop.send({ path: '/sessions', body: { csrfToken, revoke: 'others' } })
    const phoneToken = await phone.csrfToken()
    await phone.send({ path: '/sessions', body: { csrfToken: phoneToken, revoke: 'all' } })
    // The phone's session was among the others the laptop revoked: only the laptop's two count.
    expect(events.map((event) => event.kind)).toEqual(['session-revoked', 'session-revoked'])
    expect(events.every((event) => event.userId === userId)).toBe(true)
    await signInFrom(config).then(async ({ client }) => {
      events.length = 0
      const token = await client.csrfToken()
      await client.send({ path: '/sessions', body: { csrfToken: token, revoke: 'all' } })
    })
    expect(events.map((event) => event.kind)).toEqual(['sign-out-everywhere'])
    expect(events[0]!.userId).toBe(userId)
  })
})

describe('audit events of re-authentications', () => {
  it('records a completed re-authentication once, as its own kind with the factor and the action, never as a sign-in', async () => {
    const { events, config } = audited()
    const client = new Client(config)
    await client.signIn(good)
    expect(events.map((event) => event.outcome?.type)).toEqual(['signed-in'])
    events.length = 0
    await ageProof(client)
    await client.send({ path: `/reauthenticate?callbackUrl=${encodeURIComponent('/settings')}`, headers: { accept: 'text/html' } })
    const csrfToken = await client.csrfToken()
    const body = { event: 'reauth.password', username: 'alice', password: 'wonderland', csrfToken }
    await client.send({ path: '/step/reauthenticate', body, headers: { accept: 'text/html' } })

    const completed = events.filter((event) => event.kind === 'reauthenticated')
    expect(completed).toHaveLength(1)
    expect(completed[0]).toMatchObject({
      v: AUDIT_SCHEMA_VERSION,
      userId: ALICE.id,
      amr: ['pwd'],
      action: 'app',
      flow: 'reauthenticate',
      outcome: { type: 'reauthenticated' },
    })
    expect(completed[0]!.states!.at(-1)).toBe('reauthenticate:resumed')
    expect(events.some((event) => event.outcome?.type === 'signed-in')).toBe(false)
    // The start of the flow is a step, not a completion.
    expect(events.filter((event) => event.kind === 'flow').map((event) => event.outcome?.type)).toEqual(['step'])
  })

  it('names the built-in action that asked (turning on two-step verification)', async () => {
    const { events, config } = audited({}, { adapter: MemoryAdapter(createMemoryStore()), session: { strategy: 'jwt' } })
    const client = new Client(config)
    await client.signIn(good)
    await ageProof(client)
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() }, headers: { accept: 'text/html' } })
    const csrfToken = await client.csrfToken()
    const body = { event: 'reauth.password', username: 'alice', password: 'wonderland', csrfToken }
    await client.send({ path: '/step/reauthenticate', body, headers: { accept: 'text/html' } })
    expect(events.filter((event) => event.kind === 'reauthenticated').map(({ action, amr }) => ({ action, amr }))).toEqual([
      { action: 'enrol-second-factor', amr: ['pwd'] },
    ])
  })

  it('records no re-authentication for a wrong password', async () => {
    const { events, config } = audited()
    const client = new Client(config)
    await client.signIn(good)
    await ageProof(client)
    await client.send({ path: `/reauthenticate?callbackUrl=${encodeURIComponent('/settings')}`, headers: { accept: 'text/html' } })
    const csrfToken = await client.csrfToken()
    const body = { event: 'reauth.password', username: 'alice', password: 'guess', csrfToken }
    await client.send({ path: '/step/reauthenticate', body, headers: { accept: 'text/html' } })
    expect(events.some((event) => event.kind === 'reauthenticated')).toBe(false)
    expect(events.at(-1)).toMatchObject({ kind: 'flow', flow: 'reauthenticate', outcome: { type: 'refused' } })
  })

  it('drives the shared helper to the same single event', async () => {
    const { events, config } = audited()
    await reauthenticateAlice(config)
    expect(events.filter((event) => event.kind === 'reauthenticated')).toHaveLength(1)
  })
})

describe('audit sinks', () => {
  it('does not wait for a sink that hangs beyond the timeout, and logs it', async () => {
    const config = featureConfig({ audit: auditTrail({ sink: () => new Promise<void>(() => {}), timeout: 50 }) })
    const started = performance.now()
    const { response } = await signInFrom(config)
    const elapsed = performance.now() - started
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(ORIGIN)
    // The CSRF request and the sign-in, each bounded by the sink's 50 ms, with room for a busy machine.
    expect(elapsed).toBeLessThan(1000)
    const logged = config.logger.error.mock.calls.map(([error]) => String((error as Error).message))
    expect(logged.some((message) => message.includes('took longer than 50 ms'))).toBe(true)
  })

  it('signs in when a sink throws, and logs its message escaped', async () => {
    const config = featureConfig({
      audit: auditTrail({
        sink: () => {
          throw new Error('disk full\r\n[auth][error] forged line')
        },
      }),
    })
    const { response } = await signInFrom(config)
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(ORIGIN)
    const [error] = config.logger.error.mock.calls.map(([logged]) => logged as Error)
    expect(error!.name).toBe('AuditSinkError')
    expect(error!.message).not.toMatch(/[\r\n]/)
  })

  it('writes to the debug logger as `audit` with the logger sink, and to every sink of a list', async () => {
    const second = vi.fn()
    const config = featureConfig({ audit: auditTrail({ sink: ['logger', second] }) })
    await signInFrom(config)
    const debug = config.logger.debug.mock.calls.filter(([code]) => code === 'audit')
    expect(debug).toHaveLength(1)
    expect(debug[0]![1]).toMatchObject({ kind: 'flow', outcome: { type: 'signed-in' } })
    expect(second).toHaveBeenCalledWith(debug[0]![1])
  })

  it('refuses a sink that is neither a function, "logger" nor a store when the config loads', async () => {
    const config = featureConfig({ audit: auditTrail({ sink: 'console' as never }) })
    const response = await Auth(authRequest({ path: '/auth/session' }), config)
    expect(response.status).toBe(500)
  })
})

describe('audit client details', () => {
  it('keeps the browser family of a user agent, never its version', () => {
    expect(userAgentFamily(CHROME)).toBe('Chrome')
    expect(userAgentFamily('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36 Edg/140.0')).toBe('Edge')
    expect(userAgentFamily('Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0')).toBe('Firefox')
    expect(userAgentFamily('Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1')).toBe('Safari')
    expect(userAgentFamily('curl/8.5.0')).toBe('curl')
    expect(userAgentFamily('secret-agent 007')).toBe('other')
    expect(userAgentFamily(null)).toBeUndefined()
  })

  it('hashes an address with a key derived from the secret: stable for one secret, different for another', async () => {
    const one = await hashedAddress('203.0.113.7', SECRET)
    expect(one).toMatch(/^hmac:[A-Za-z0-9_-]{22}$/)
    expect(await hashedAddress('203.0.113.7', SECRET)).toBe(one)
    expect(await hashedAddress('203.0.113.8', SECRET)).not.toBe(one)
    expect(await hashedAddress('203.0.113.7', `${SECRET}-rotated`)).not.toBe(one)
  })
})
