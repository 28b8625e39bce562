/**
 * The device chart's effects run by the engine directly, below `Auth`: the second of each check's
 * two tests (the first is over HTTP, in attacks.test.ts). Racing redemptions and racing answers on
 * one store, a poll within the interval, another client's code, and what the store keeps: hashes,
 * never a code.
 */
import { describe, expect, it } from 'vitest'
import { assertConfig } from '../../core/config/resolve-config.js'
import type { RequestContext } from '../../core/config/types.js'
import { codeKey } from '../../core/device-authorization/codes.js'
import { codesIssuedFor, deviceAuthorizationFlow, deviceKeys, tokenIssuedFor, userCodeStoreKey } from '../../core/device-authorization/flow.js'
import { advanceNow } from '../../core/engine/advance.js'
import type { AuthStore } from '../../core/store/types.js'
import type { AuthConfig } from '../../core/types.js'
import { ORIGIN, SECRET } from '../fixtures/http.js'
import { deviceWorld, USERS } from './fixture.js'

/** A request context as the device's endpoints build one: no cookie, the device's headers. */
function deviceContext(config: AuthConfig): RequestContext {
  const resolved = assertConfig(config)
  return {
    config: resolved,
    at: Math.floor(Date.now() / 1000),
    logger: resolved.logger,
    origin: ORIGIN,
    authUrl: `${ORIGIN}/auth`,
    clientAddress: '192.0.2.10',
    setCookies: [],
    sessionCookie: { value: undefined, names: [] },
    cookies: resolved.cookies.secure,
    request: { method: 'POST', query: {}, cookies: {}, headers: new Headers({ 'user-agent': 'AcmeCLI/2.1' }), url: new URL(`${ORIGIN}/auth/oauth/token`) },
    raw: new Request(`${ORIGIN}/auth/oauth/token`, { method: 'POST' }),
  } as unknown as RequestContext
}

const run = (ctx: RequestContext, event: Record<string, unknown>) =>
  Promise.resolve(advanceNow(deviceAuthorizationFlow as never, ctx, { at: ctx.at, ...event } as never))

async function issued(config: AuthConfig) {
  const ctx = deviceContext(config)
  const ran = await run(ctx, { type: 'device.request', clientId: 'acme-cli', scope: null })
  expect(String(ran.snapshot.value)).toBe('issued')
  const codes = codesIssuedFor(ctx)!
  return { ...codes, deviceKey: await codeKey(SECRET, 'device', codes.deviceCode), userKey: await codeKey(SECRET, 'user', codes.userCode.replace('-', '')) }
}

/** Marks the request approved by Alice, as the approval would store it. */
async function approve(store: AuthStore, deviceKey: string) {
  const key = deviceKeys(deviceKey).request
  const stored = JSON.parse((await store.get(key))!) as Record<string, unknown>
  await store.put(key, JSON.stringify({ ...stored, status: 'approved', approver: { ...USERS.alice } }), 600)
}

describe('the device chart below Auth', () => {
  it('keeps only keyed hashes: no code is a store key or a stored value', async () => {
    const stored = new Map<string, string>()
    const { config } = await deviceWorld({ store: (inner) => ({ ...inner, put: (key, value, ttl) => (stored.set(key, value), inner.put(key, value, ttl)) }) })
    const codes = await issued(config)
    const written = JSON.stringify([...stored])
    for (const code of [codes.deviceCode, codes.userCode, codes.userCode.replace('-', '')]) expect(written).not.toContain(code)
    expect(stored.get(userCodeStoreKey(codes.userKey))).toBe(codes.deviceKey)
    expect(JSON.parse(stored.get(deviceKeys(codes.deviceKey).request)!)).toMatchObject({
      clientId: 'acme-cli',
      status: 'pending',
      address: '192.0.2.10',
      userAgent: 'AcmeCLI/2.1',
      approver: null,
    })
  })

  it('redeems an approved code for one of many racing polls; the others are invalid_grant', async () => {
    const { config, store } = await deviceWorld()
    const codes = await issued(config)
    await approve(store, codes.deviceKey)
    const contexts = Array.from({ length: 5 }, () => deviceContext(config))
    const runs = await Promise.all(contexts.map((ctx) => run(ctx, { type: 'device.poll', clientId: 'acme-cli', codeKey: codes.deviceKey })))
    expect(runs.map((ran) => String(ran.snapshot.value)).sort()).toEqual(['invalidGrant', 'invalidGrant', 'invalidGrant', 'invalidGrant', 'redeemed'])
    expect(contexts.filter((ctx) => tokenIssuedFor(ctx) !== undefined)).toHaveLength(1)
  })

  it('slows down a second poll within the interval, and finds another client’s code unknown', async () => {
    const { config } = await deviceWorld()
    const codes = await issued(config)
    const poll = (clientId: string) => run(deviceContext(config), { type: 'device.poll', clientId, codeKey: codes.deviceKey })
    expect(String((await poll('acme-cli')).snapshot.value)).toBe('authorizationPending')
    const slowed = await poll('acme-cli')
    expect(String(slowed.snapshot.value)).toBe('slowDown')
    expect(slowed.outcome).toMatchObject({ body: { error: 'slow_down', interval: 10 } })
    expect(String((await poll('acme-tv')).snapshot.value)).toBe('invalidGrant')
  })

  it('settles a request once when an approval and a denial race: one wins, the other is refused', async () => {
    const { config, alice } = await deviceWorld()
    const codes = await issued(config)
    // The answers need Alice's session: her cookie on the context.
    const cookie = alice.jar.cookies.get('__Secure-authjs.session-token')!
    const asAlice = () => ({ ...deviceContext(config), sessionCookie: { value: cookie, names: ['__Secure-authjs.session-token'] } }) as unknown as RequestContext
    const answers = await Promise.all([
      run(asAlice(), { type: 'device.approve', userId: USERS.alice.id, codeKey: codes.userKey }),
      run(asAlice(), { type: 'device.deny', userId: USERS.alice.id, codeKey: codes.userKey }),
    ])
    const ends = answers.map((ran) => String(ran.snapshot.value))
    expect(ends.filter((end) => end === 'refused')).toHaveLength(1)
    expect(ends.filter((end) => end === 'approved' || end === 'denied')).toHaveLength(1)
  })
})
