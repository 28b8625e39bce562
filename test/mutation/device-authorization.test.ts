/**
 * The device grant's checks at their edges, each of which a mutant of the device-authorization
 * group survived in its first run: the bounds of the device's form (type, size, encoding), the
 * scope's length and shape, the checks behind the time-to-live of the store (a user code kept past
 * its request's expiry or answer still names nothing), the approver re-read from the session, a
 * user code drawn again after a collision, what each refusal's outcome says, the `jwt` callback a
 * device session is made with, a long session token carried in chunks, and which requests are
 * audited.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { auditTrail } from '../../core/audit.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import type { RequestContext } from '../../core/config/types.js'
import { deviceSession } from '../../core/device-authorization.js'
import { codeKey } from '../../core/device-authorization/codes.js'
import { deviceAuthorizationFlow, deviceKeys, userCodeStoreKey } from '../../core/device-authorization/flow.js'
import type { StoredDeviceRequest } from '../../core/device-authorization/types.js'
import { advanceNow } from '../../core/engine/advance.js'
import { Auth } from '../../core/index.js'
import type { AuthStore } from '../../core/store/types.js'
import type { AuthConfig } from '../../core/types.js'
import { ORIGIN, SECRET } from '../fixtures/http.js'
import { answer, approvedBy, devicePost, deviceWorld, openPage, poll, requestCodes, USERS } from '../device-authorization/fixture.js'

const send = (config: AuthConfig, body: BodyInit, headers: Record<string, string>) =>
  Auth(new Request(`${ORIGIN}/auth/device_authorization`, { method: 'POST', headers, body }), config as Omit<AuthConfig, 'raw'>)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const bearer = (token: unknown) => new Request(`${ORIGIN}/api/me`, { headers: { authorization: `Bearer ${String(token)}` } })

/** The stored request of `deviceCode`, changed by `change`, kept (with its user code) for ten more minutes. */
async function rewrite(store: AuthStore, deviceCode: string, change: (request: StoredDeviceRequest) => StoredDeviceRequest) {
  const key = deviceKeys(await codeKey(SECRET, 'device', deviceCode)).request
  await store.put(key, JSON.stringify(change(JSON.parse((await store.get(key))!) as StoredDeviceRequest)), 600)
}

/** The user code's mapping kept again, as a store with a coarse expiry would keep it. */
async function keepUserCode(store: AuthStore, deviceCode: string, userCode: string) {
  await store.put(userCodeStoreKey(await codeKey(SECRET, 'user', userCode.replace('-', ''))), await codeKey(SECRET, 'device', deviceCode), 600)
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe("the device's form", () => {
  it('is a form (any parameters of its type, any case), of at most 8 KiB, in UTF-8', async () => {
    const { config } = await deviceWorld()
    const body = 'client_id=acme-cli'
    expect((await send(config, body, { 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=UTF-8' })).status).toBe(200)
    expect((await send(config, JSON.stringify({ client_id: 'acme-cli' }), { 'content-type': 'application/json' })).status).toBe(400)
    expect((await send(config, body, {})).status).toBe(400)
    const padded = (size: number) => `${body}&pad=${'x'.repeat(size - body.length - 5)}`
    expect(padded(8192)).toHaveLength(8192)
    expect((await send(config, padded(8192), FORM)).status).toBe(200)
    expect(await (await send(config, padded(8193), FORM)).json()).toEqual({ error: 'invalid_request' })
    // A length it does not declare is counted as it is read.
    const stream = new Blob([padded(9000)]).stream()
    const streamed = await Auth(
      new Request(`${ORIGIN}/auth/device_authorization`, { method: 'POST', headers: FORM, body: stream, duplex: 'half' } as RequestInit),
      config as Omit<AuthConfig, 'raw'>,
    )
    expect(streamed.status).toBe(400)
    expect((await send(config, new Uint8Array([0x63, 0x6c, 0xff, 0x3d]), FORM)).status).toBe(400)
    expect((await send(config, body, { ...FORM, 'content-length': '9000' })).status).toBe(400)
  })

  it('answers a GET of the token endpoint 405, allowing POST', async () => {
    const { config } = await deviceWorld()
    const response = await Auth(new Request(`${ORIGIN}/auth/oauth/token`), config as Omit<AuthConfig, 'raw'>)
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
    expect(await response.json()).toEqual({ error: 'invalid_request' })
  })

  it('takes a scope of up to 1,024 characters of scope-tokens, three or more of them too', async () => {
    const { config } = await deviceWorld()
    expect((await requestCodes(config, 'acme-cli', 'a b c')).status).toBe(200)
    expect((await requestCodes(config, 'acme-cli', 's'.repeat(1024))).status).toBe(200)
    expect((await requestCodes(config, 'acme-cli', 's'.repeat(1025))).body).toEqual({ error: 'invalid_scope' })
    expect((await requestCodes(config, 'acme-cli', 'a  b')).body).toEqual({ error: 'invalid_scope' })
  })

  it('records at most 256 characters of User-Agent and 64 of address', async () => {
    const { config, alice } = await deviceWorld()
    const { issued } = await devicePost(config, '/device_authorization', { client_id: 'acme-cli' }, { 'user-agent': `A${'g'.repeat(300)}` }).then((answered) => ({
      issued: answered.body as { user_code: string },
    }))
    const html = (await openPage(alice, issued.user_code)).html
    expect(html).toContain(`A${'g'.repeat(255)}</dd>`)
    expect(html).not.toContain('g'.repeat(256))
  })
})

describe('a user code the store still keeps', () => {
  it('names nothing once its request has expired, at the second it expires', async () => {
    const { config, store, alice } = await deviceWorld()
    const { issued } = await requestCodes(config)
    await rewrite(store, issued.device_code, (request) => ({ ...request, expiresAt: Math.floor(Date.now() / 1000) }))
    await keepUserCode(store, issued.device_code, issued.user_code)
    expect((await openPage(alice, issued.user_code)).response.status).toBe(400)
    expect((await answer(alice, 'approve', issued.user_code)).response.status).toBe(400)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'expired_token' })
  })

  it('names nothing once its request is answered, and the answer is not changed', async () => {
    const { config, store, alice } = await deviceWorld()
    const { issued } = await requestCodes(config)
    expect((await answer(alice, 'deny', issued.user_code)).response.status).toBe(200)
    await keepUserCode(store, issued.device_code, issued.user_code)
    expect((await openPage(alice, issued.user_code)).response.status).toBe(400)
    expect((await answer(alice, 'approve', issued.user_code)).response.status).toBe(400)
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'access_denied' })
  })

  it('names nothing when the store lost the request it named', async () => {
    const { config, store, alice } = await deviceWorld()
    const { issued } = await requestCodes(config)
    await store.reset(deviceKeys(await codeKey(SECRET, 'device', issued.device_code)).request)
    expect((await answer(alice, 'approve', issued.user_code)).response.status).toBe(400)
  })
})

describe('the chart run below Auth', () => {
  function contextOf(config: AuthConfig, session?: string): RequestContext {
    const resolved = assertConfig(config)
    return {
      config: resolved,
      at: Math.floor(Date.now() / 1000),
      logger: resolved.logger,
      origin: ORIGIN,
      authUrl: `${ORIGIN}/auth`,
      clientAddress: undefined,
      setCookies: [],
      sessionCookie: { value: session, names: ['__Secure-authjs.session-token'] },
      cookies: resolved.cookies.secure,
      request: { method: 'POST', query: {}, cookies: {}, headers: new Headers(), url: new URL(`${ORIGIN}/auth/device`) },
      raw: new Request(`${ORIGIN}/auth/device`, { method: 'POST' }),
    } as unknown as RequestContext
  }
  const run = async (ctx: RequestContext, event: Record<string, unknown>) => {
    const ran = await advanceNow(deviceAuthorizationFlow as never, ctx, { at: ctx.at, ...event } as never)
    return { state: String(ran.snapshot.value), outcome: ran.outcome, context: ran.snapshot.context as Record<string, unknown> }
  }

  it('answers each end with its own outcome', async () => {
    const { config, alice } = await deviceWorld({ device: { userCodeLimit: { perUser: 2 } } })
    const { issued } = await requestCodes(config)
    const cookie = alice.jar.cookies.get('__Secure-authjs.session-token')!
    const userKey = await codeKey(SECRET, 'user', issued.user_code.replace('-', ''))
    const wrong = await run(contextOf(config, cookie), { type: 'device.deny', userId: USERS.alice.id, codeKey: 'f'.repeat(64) })
    expect(wrong).toMatchObject({ state: 'refused', outcome: { type: 'json', status: 400, body: { error: 'InvalidCode' } }, context: { intent: 'deny' } })
    const approved = await run(contextOf(config, cookie), { type: 'device.approve', userId: USERS.alice.id, codeKey: userKey })
    expect(approved).toMatchObject({ state: 'approved', outcome: { status: 200, body: { status: 'approved' } } })
    const limited = await run(contextOf(config, cookie), { type: 'device.approve', userId: USERS.alice.id, codeKey: userKey })
    expect(limited.outcome).toEqual({ type: 'json', status: 429, body: { error: 'TooManyAttempts', retryAfter: expect.any(Number) }, cache: 'no-store' })
    const request = await run(contextOf(config), { type: 'device.request', clientId: 'acme-cli', scope: null })
    expect(request.context.intent).toBe('request')
    const polled = await run(contextOf(config), { type: 'device.poll', clientId: 'acme-cli', codeKey: await codeKey(SECRET, 'device', issued.device_code) })
    expect(polled).toMatchObject({ state: 'redeemed', context: { intent: 'poll' } })
  })

  it('answers a denial with its own status, and an answer settled already by another with InvalidCode', async () => {
    const { config, bob, store } = await deviceWorld()
    const { issued } = await requestCodes(config)
    const cookie = bob.jar.cookies.get('__Secure-authjs.session-token')!
    const userKey = await codeKey(SECRET, 'user', issued.user_code.replace('-', ''))
    await store.claim(deviceKeys(await codeKey(SECRET, 'device', issued.device_code)).settle, 600)
    const lost = await run(contextOf(config, cookie), { type: 'device.deny', userId: USERS.bob.id, codeKey: userKey })
    expect(lost).toMatchObject({ state: 'refused', outcome: { status: 400, body: { error: 'InvalidCode' } } })
    const { issued: second } = await requestCodes(config)
    const denied = await run(contextOf(config, cookie), { type: 'device.deny', userId: USERS.bob.id, codeKey: await codeKey(SECRET, 'user', second.user_code.replace('-', '')) })
    expect(denied.outcome).toMatchObject({ status: 200, body: { status: 'denied' } })
  })

  it('approves for the session it reads again, never for the user the event names alone', async () => {
    const { config, alice } = await deviceWorld()
    const { issued } = await requestCodes(config)
    const userKey = await codeKey(SECRET, 'user', issued.user_code.replace('-', ''))
    const signedOut = await run(contextOf(config), { type: 'device.approve', userId: USERS.alice.id, codeKey: userKey })
    expect(signedOut.state).toBe('failed')
    expect(signedOut.outcome).toEqual({ type: 'json', status: 503, body: { error: 'temporarily_unavailable' }, cache: 'no-store' })
    const cookie = alice.jar.cookies.get('__Secure-authjs.session-token')!
    const impostor = await run(contextOf(config, cookie), { type: 'device.approve', userId: USERS.bob.id, codeKey: userKey })
    expect(impostor.state).toBe('failed')
    expect((await poll(config, issued.device_code)).body).toEqual({ error: 'authorization_pending' })
    // Neither refusal settled the request: its user still can.
    expect((await run(contextOf(config, cookie), { type: 'device.approve', userId: USERS.alice.id, codeKey: userKey })).state).toBe('approved')
  })
})

describe('the codes issued', () => {
  it('draw another user code when one collides, and fail closed when none is free', async () => {
    let collisions = 1
    const { config } = await deviceWorld({
      store: (inner) => ({
        ...inner,
        claim: (key, ttl) => (key.startsWith('device-authorization:user-claim:') && collisions-- > 0 ? Promise.resolve(false) : inner.claim(key, ttl)),
      }),
    })
    expect((await requestCodes(config)).status).toBe(200)
    collisions = 4
    expect((await requestCodes(config)).status).toBe(503)
  })

  it('keep two devices apart: one polling does not slow the other down', async () => {
    const { config } = await deviceWorld()
    const first = (await requestCodes(config)).issued
    const second = (await requestCodes(config)).issued
    expect((await poll(config, first.device_code)).body).toEqual({ error: 'authorization_pending' })
    expect((await poll(config, second.device_code)).body).toEqual({ error: 'authorization_pending' })
  })
})

describe('the session a device gets', () => {
  it('is made by the jwt callback as a sign-in of the approver through the device flow', async () => {
    const calls: Record<string, unknown>[] = []
    const { config, alice } = await deviceWorld({
      config: { callbacks: { jwt: (params: Record<string, unknown>) => (calls.push(params), params.token) } } as never,
    })
    const issued = await approvedBy(alice, config)
    calls.length = 0
    expect((await poll(config, issued.device_code)).status).toBe(200)
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({
      trigger: 'signIn',
      isNewUser: false,
      token: { sub: USERS.alice.id, email: USERS.alice.email },
      account: { provider: 'device-authorization', type: 'oauth', providerAccountId: USERS.alice.id, client_id: 'acme-cli' },
    })
  })

  it('is not issued when the jwt callback issues none: 503, and no token', async () => {
    let refuse = false
    const { config, alice } = await deviceWorld({ config: { callbacks: { jwt: ({ token }: { token: unknown }) => (refuse ? null : token) } } as never })
    const issued = await approvedBy(alice, config)
    refuse = true
    const answered = await poll(config, issued.device_code)
    expect(answered.status).toBe(503)
    expect(answered.body).toEqual({ error: 'temporarily_unavailable' })
  })

  it('is read from a long token in chunks, as a chunked cookie is, and a token past 16 chunks is no one', async () => {
    const { config, alice } = await deviceWorld({
      config: { callbacks: { jwt: ({ token }: { token: Record<string, unknown> }) => ({ ...token, note: 'n'.repeat(6000) }) } } as never,
    })
    const issued = await approvedBy(alice, config)
    const token = String((await poll(config, issued.device_code)).body!.access_token)
    expect(token.length).toBeGreaterThan(8000)
    expect((await deviceSession(bearer(token), config))?.user?.email).toBe(USERS.alice.email)
    expect(await deviceSession(bearer(`${token}x`), config)).toBeNull()
    expect(await deviceSession(bearer('x'.repeat(3936 * 16 + 1)), config)).toBeNull()
  })
})

describe('the audit trail', () => {
  it('records only the requests that issued codes and the polls that redeemed them, without a user', async () => {
    const events: AuditEvent[] = []
    const { config, alice } = await deviceWorld({ config: { audit: auditTrail({ sink: (event) => void events.push(event) }) } })
    await requestCodes(config, 'evil-cli')
    const { issued } = await requestCodes(config)
    await poll(config, issued.device_code)
    await answer(alice, 'deny', issued.user_code)
    await vi.waitFor(() => expect(events.some((event) => event.kind === 'device-authorization-denied')).toBe(true))
    const kinds = events.filter((event) => event.kind.startsWith('device-authorization-'))
    expect(kinds.map((event) => event.kind)).toEqual(['device-authorization-requested', 'device-authorization-denied'])
    expect(kinds[0]!.userId).toBeUndefined()
    expect(kinds[1]!.userId).toBe(USERS.alice.id)
  })
})
