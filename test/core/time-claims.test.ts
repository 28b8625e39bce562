/**
 * Which time claim each rule reads, pinned with tokens that carry some and not others (issue 49,
 * item 4), through `Auth` and the server-side check, before and after the session route reissues
 * the token:
 * - the absolute lifetime counts from `auth_time` (the sign-in), never from `iat` (the last issue);
 *   a token without `auth_time` starts the clock at its first read;
 * - sign-out everywhere ends the sessions signed in no later than it: `auth_time`, else `iat`;
 * - freshness (step-up) reads the per-factor times (`fva`), else `auth_time` by the factors `amr`
 *   names; never `iat`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { decode, encode, type JWT } from '../../core/jwt.js'
import { requireRecentAuth } from '../../core/recent-auth.js'
import { revokeAllSessions } from '../../core/session/manage.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, ORIGIN, SECRET, testConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const T = 1_900_000_000
const USER = { sub: 'u-1', name: 'Alice', email: 'alice@example.com' }

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(T * 1000)
})
afterEach(() => vi.useRealTimers())

/** A session token sealed at `issuedAt` (its `iat`) with `claims`. */
async function tokenIssuedAt(issuedAt: number, claims: Partial<JWT>): Promise<string> {
  vi.setSystemTime(issuedAt * 1000)
  const token = await encode({ token: { ...USER, ...claims }, secret: SECRET, salt: SESSION_COOKIE })
  vi.setSystemTime(T * 1000)
  return token
}

function browserWith(config: AuthConfig, token: string): Client {
  const client = new Client(config)
  client.jar.store(new Response(null, { headers: { 'set-cookie': `${SESSION_COOKIE}=${token}; Path=/` } }))
  return client
}

const signedIn = async (client: Client) => (await client.session()).body !== null
const tokenOf = async (client: Client) => (await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE }))!

describe('the absolute lifetime', () => {
  // updateAge 0: every read reissues the token (Auth.js's default waits a day).
  const config = () => testConfig({ session: { absoluteMaxAge: 3600, updateAge: 0 } } as never)

  it('counts from auth_time, not from a recent iat', async () => {
    const client = browserWith(config(), await tokenIssuedAt(T, { auth_time: T - 3500 }))
    expect(await signedIn(client)).toBe(true)
    vi.setSystemTime((T + 200) * 1000)
    expect(await signedIn(client), 'past auth_time + 3600, though issued 200 s ago').toBe(false)
  })

  it('does not count from an old iat when auth_time is recent', async () => {
    const client = browserWith(config(), await tokenIssuedAt(T - 3500, { auth_time: T - 100 }))
    vi.setSystemTime((T + 200) * 1000)
    expect(await signedIn(client), 'issued 3,700 s ago, signed in 300 s ago').toBe(true)
  })

  it('starts at the first read for a token without auth_time, and keeps that start across reissues', async () => {
    const client = browserWith(config(), await tokenIssuedAt(T - 3500, {}))
    expect(await signedIn(client), 'an old iat is not a sign-in time').toBe(true)
    expect((await tokenOf(client)).auth_time).toBe(T)
    vi.setSystemTime((T + 1800) * 1000)
    expect(await signedIn(client)).toBe(true)
    const reissued = await tokenOf(client)
    expect(reissued.auth_time, 'the sign-in time survives the reissue').toBe(T)
    expect(reissued.iat).toBe(T + 1800)
    vi.setSystemTime((T + 3600) * 1000)
    expect(await signedIn(client)).toBe(false)
  })
})

describe('sign-out everywhere', () => {
  const config = () => testConfig({ store: memoryAuthStore() })

  it('ends a session signed in before it, by auth_time, though its token was reissued after', async () => {
    const cfg = config()
    const client = browserWith(cfg, await tokenIssuedAt(T, { auth_time: T - 100 }))
    await revokeAllSessions(cfg, USER.sub, T - 50)
    expect(await signedIn(client)).toBe(false)
  })

  it('keeps a session signed in after it, by auth_time, though its iat is older', async () => {
    const cfg = config()
    const client = browserWith(cfg, await tokenIssuedAt(T - 200, { auth_time: T - 10 }))
    await revokeAllSessions(cfg, USER.sub, T - 50)
    expect(await signedIn(client)).toBe(true)
  })

  it('measures a token without auth_time by its iat', async () => {
    const cfg = config()
    const before = browserWith(cfg, await tokenIssuedAt(T - 100, {}))
    const after = browserWith(cfg, await tokenIssuedAt(T - 10, {}))
    await revokeAllSessions(cfg, USER.sub, T - 50)
    expect(await signedIn(before)).toBe(false)
    expect(await signedIn(after)).toBe(true)
  })
})

describe('freshness (the server-side step-up check)', () => {
  const config = testConfig()
  const check = async (token: string, maxAge = 600) => {
    const request = new Request(`${ORIGIN}/account`, { headers: { cookie: `${SESSION_COOKIE}=${token}`, accept: 'application/json' } })
    const verdict = await requireRecentAuth(request, config, { maxAge })
    return verdict instanceof Response ? verdict.status : verdict.verifiedAt
  }

  it('reads the factor times over a recent auth_time', async () => {
    expect(await check(await tokenIssuedAt(T, { auth_time: T - 10, amr: ['pwd'], fva: { pwd: T - 3000 } }))).toBe(401)
  })

  it('reads the factor times over an old auth_time', async () => {
    expect(await check(await tokenIssuedAt(T, { auth_time: T - 3000, fva: { pwd: T - 10 } }))).toBe(T - 10)
  })

  it('reads auth_time, by the factors amr names, when the token has no factor times', async () => {
    expect(await check(await tokenIssuedAt(T, { auth_time: T - 10, amr: ['pwd'] }))).toBe(T - 10)
    expect(await check(await tokenIssuedAt(T, { auth_time: T - 700, amr: ['pwd'] }))).toBe(401)
  })

  it('never reads iat: a token issued now without a sign-in time is not fresh', async () => {
    expect(await check(await tokenIssuedAt(T, {}))).toBe(401)
  })

  it('keeps reading the factor time after the session route reissues the token', async () => {
    const client = browserWith(testConfig({ session: { updateAge: 0 } } as never), await tokenIssuedAt(T - 500, { auth_time: T - 500, fva: { pwd: T - 500 } }))
    vi.setSystemTime((T + 200) * 1000)
    expect(await signedIn(client)).toBe(true)
    const reissued = await tokenOf(client)
    expect(reissued.iat).toBe(T + 200)
    expect(reissued.fva).toEqual({ pwd: T - 500 })
    expect(await check(client.jar.get(SESSION_COOKIE)!), 'proven 700 s ago, issued just now').toBe(401)
  })
})
