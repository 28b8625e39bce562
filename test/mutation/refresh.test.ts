/**
 * Refresh-token rotation at the level of `refreshAccessToken`, against a token endpoint played
 * in-process (through the provider's `customFetch`) that rotates refresh tokens and refuses a spent
 * one, and the in-memory store wrapped to record or shape what the coordination sees: one grant per
 * refresh token in a process and across instances, the result kept sealed for a short while, a
 * refusal kept too, the lock released after every outcome, a waiter that gives up.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { customFetch } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import { generateDPoPKeyPair, sealDPoPKeyPair } from '../../core/oauth/dpop.js'
import { resolveOAuthProvider } from '../../core/oauth/provider.js'
import {
  REFRESH_LOCK_SECONDS,
  REFRESH_REUSE_WINDOW_MS,
  RefreshRejected,
  refreshAccessToken,
  type RefreshCoordination,
} from '../../core/oauth/refresh.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'

const SECRET = 'refresh-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const RESULT_SALT = 'authchart.refresh-result'
const TOKEN_URL = 'https://rt.test/token'

/** What the token endpoint answers to the next grant, and what it saw. */
interface Endpoint {
  /** Fields of a successful answer; `refresh_token: 'rotate'` issues a fresh one. */
  answer: Record<string, unknown>
  /** An error answer instead (status 400), or a thrown network error. */
  refuse: { error: string; error_description?: string } | 'unreachable' | null
  /** A promise the endpoint waits for before answering (to hold a grant open). */
  hold: Promise<void> | null
  readonly grants: string[]
  readonly spent: Set<string>
}

function tokenEndpoint(): { endpoint: Endpoint; fetch: typeof fetch } {
  let issued = 0
  const endpoint: Endpoint = {
    answer: { access_token: 'access', token_type: 'Bearer', expires_in: 600, refresh_token: 'rotate' },
    refuse: null,
    hold: null,
    grants: [],
    spent: new Set(),
  }
  const fetchImpl: typeof fetch = async (input, init) => {
    const request = new Request(input, init)
    if (request.url !== TOKEN_URL) return new Response('not here', { status: 404 })
    const body = new URLSearchParams(await request.text())
    const refreshToken = body.get('refresh_token') ?? ''
    endpoint.grants.push(refreshToken)
    if (endpoint.hold) await endpoint.hold
    if (endpoint.refuse === 'unreachable') throw new TypeError('fetch failed')
    if (endpoint.refuse) return Response.json(endpoint.refuse, { status: 400 })
    if (endpoint.spent.has(refreshToken)) {
      return Response.json({ error: 'invalid_grant', error_description: 'spent refresh token' }, { status: 400 })
    }
    endpoint.spent.add(refreshToken)
    issued += 1
    const answer = { ...endpoint.answer }
    if (answer.refresh_token === 'rotate') answer.refresh_token = `refresh-${issued}`
    if (answer.access_token === 'access') answer.access_token = `access-${issued}`
    return Response.json(answer)
  }
  return { endpoint, fetch: fetchImpl }
}

function providerFor(fetchImpl: typeof fetch, id = 'rt', extra: Record<string, unknown> = {}) {
  return resolveOAuthProvider(
    {
      ...extra,
      id,
      name: 'Rotating',
      type: 'oauth',
      clientId: 'app',
      clientSecret: 'app-secret',
      authorization: 'https://rt.test/authorize',
      token: TOKEN_URL,
      userinfo: 'https://rt.test/userinfo',
      [customFetch]: fetchImpl,
    } as never,
    undefined,
  )
}

/** A store over `backend` that records each call (an instance of its own over a shared backend). */
function recording(backend: AuthStore, calls: string[] = []): AuthStore & { calls: string[] } {
  return {
    ...backend,
    calls,
    claim: (key, ttl) => (calls.push(`claim ${key} ${ttl}`), backend.claim(key, ttl)),
    put: (key, value, ttl) => (calls.push(`put ${key} ${ttl}`), backend.put(key, value, ttl)),
    get: (key) => (calls.push(`get ${key}`), backend.get(key)),
    reset: (key) => (calls.push(`reset ${key}`), backend.reset(key)),
  }
}

const shared = (store: AuthStore = memoryAuthStore(), secrets: [string, ...string[]] = [SECRET]): RefreshCoordination => ({
  store,
  secrets,
})
const AT = 1_800_000_000
const current = (refresh_token = 'refresh-0') => ({ provider: 'rt', access_token: 'old-access', refresh_token, expires_at: AT - 1 })

afterEach(() => vi.restoreAllMocks())

describe('refreshAccessToken: what one grant gives', () => {
  it('returns the rotated refresh token, the new access token and its expiry from the grant time', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const tokens = await refreshAccessToken(providerFor(fetch), current(), AT, shared())
    expect(tokens).toStrictEqual({ provider: 'rt', access_token: 'access-1', refresh_token: 'refresh-1', expires_at: AT + 600 })
    expect(endpoint.grants).toEqual(['refresh-0'])
  })

  it('keeps the old refresh token when the provider does not rotate, and no expiry when it gives none', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    endpoint.answer = { access_token: 'access', token_type: 'Bearer' }
    const tokens = await refreshAccessToken(providerFor(fetch), current(), AT, shared())
    expect(tokens).toStrictEqual({ provider: 'rt', access_token: 'access-1', refresh_token: 'refresh-0' })
  })

  it('carries the session key of a DPoP-bound session over to the refreshed tokens', async () => {
    const { fetch } = tokenEndpoint()
    const tokens = await refreshAccessToken(providerFor(fetch), { ...current(), dpop_key: 'sealed-key-pair' }, AT, shared())
    expect(tokens).toStrictEqual({
      provider: 'rt',
      access_token: 'access-1',
      refresh_token: 'refresh-1',
      expires_at: AT + 600,
      dpop_key: 'sealed-key-pair',
    })
  })

  it("proves the session's own DPoP key on the refresh grant of a DPoP provider, and none without one", async () => {
    const { endpoint, fetch } = tokenEndpoint()
    endpoint.answer = { ...endpoint.answer, token_type: 'DPoP' }
    const proofs: (string | null)[] = []
    const proving: typeof fetch = (input, init) => {
      proofs.push(new Request(input, init).headers.get('dpop'))
      return fetch(input, init)
    }
    const keyPair = await generateDPoPKeyPair()
    const sealed = await sealDPoPKeyPair(keyPair, [SECRET], 3600)
    await refreshAccessToken(providerFor(proving, 'rt', { dpop: true }), { ...current(), dpop_key: sealed }, AT, shared())
    expect(proofs).toHaveLength(1)
    const [header, payload] = proofs[0]!.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()))
    const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', keyPair.publicKey)
    expect(header).toMatchObject({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })
    expect(payload).toMatchObject({ htm: 'POST', htu: TOKEN_URL })
    // A session without a key (signed in before DPoP was turned on) refreshes without a proof.
    await refreshAccessToken(providerFor(proving, 'rt', { dpop: true }), current('refresh-1'), AT, shared())
    expect(proofs).toEqual([proofs[0], null])
  })

  it('reports a refused refresh token (invalid_grant) as RefreshRejected with the provider description', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    endpoint.refuse = { error: 'invalid_grant', error_description: 'revoked by the user' }
    const refused = (await refreshAccessToken(providerFor(fetch), current(), AT, shared()).catch((e: unknown) => e)) as Error
    expect(refused).toBeInstanceOf(RefreshRejected)
    expect(refused.message).toBe('revoked by the user')
    // Named so that a log line says what happened, with the provider's answer kept as its cause.
    expect(refused.name).toBe('RefreshRejected')
    expect(refused.cause).toMatchObject({ error: 'invalid_grant', error_description: 'revoked by the user' })
  })

  it('names invalid_grant when the refusal has no description', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    endpoint.refuse = { error: 'invalid_grant' }
    const refused = refreshAccessToken(providerFor(fetch), current(), AT, shared())
    await expect(refused).rejects.toThrow(new RefreshRejected('invalid_grant'))
  })

  it('reports any other error as it is, not as a refusal (the session then keeps its refresh token)', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    endpoint.refuse = { error: 'invalid_client', error_description: 'bad client' }
    const error = await refreshAccessToken(providerFor(fetch), current(), AT, shared()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Error)
    expect(error).not.toBeInstanceOf(RefreshRejected)

    endpoint.refuse = 'unreachable'
    const unreachable = await refreshAccessToken(providerFor(fetch), current('refresh-x'), AT, shared()).catch((e: unknown) => e)
    expect(unreachable).not.toBeInstanceOf(RefreshRejected)
  })
})

describe('refreshAccessToken: one grant per refresh token', () => {
  it('runs one grant for requests racing in one process, all getting the same tokens', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const provider = providerFor(fetch)
    const coordination = shared()
    const results = await Promise.all(Array.from({ length: 5 }, () => refreshAccessToken(provider, current(), AT, coordination)))
    expect(endpoint.grants).toEqual(['refresh-0'])
    expect(new Set(results.map((r) => r.access_token))).toEqual(new Set(['access-1']))
  })

  it('asks the store once for requests racing in one process (they share one promise)', async () => {
    const { fetch } = tokenEndpoint()
    const store = recording(memoryAuthStore())
    const provider = providerFor(fetch)
    await Promise.all(Array.from({ length: 3 }, () => refreshAccessToken(provider, current(), AT, shared(store))))
    expect(store.calls.filter((call) => call.startsWith('claim'))).toHaveLength(1)
  })

  it('hands the kept result to a request still carrying the spent token, without a second grant', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const provider = providerFor(fetch)
    const coordination = shared()
    const first = await refreshAccessToken(provider, current(), AT, coordination)
    const late = await refreshAccessToken(provider, current(), AT + 5, coordination)
    expect(late).toEqual(first)
    expect(endpoint.grants).toHaveLength(1)
  })

  it('coordinates through the store across instances: a second store object on the same backend gets the kept result', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const backend = memoryAuthStore()
    const first = await refreshAccessToken(providerFor(fetch), current(), AT, shared(recording(backend)))
    const other = await refreshAccessToken(providerFor(fetch), current(), AT, shared(recording(backend)))
    expect(other).toEqual(first)
    expect(endpoint.grants).toHaveLength(1)
  })

  it('keeps one flight per store: two stores (two deployments) each run their own grant', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const provider = providerFor(fetch)
    let release!: () => void
    endpoint.hold = new Promise((resolve) => (release = resolve))
    const a = refreshAccessToken(provider, current(), AT, shared())
    const b = refreshAccessToken(provider, current(), AT, shared()).catch((e: unknown) => e)
    await vi.waitFor(() => expect(endpoint.grants).toHaveLength(2))
    release()
    await a
    expect(await b).toBeInstanceOf(RefreshRejected)
  })

  it('keeps one flight per provider and per refresh token', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const coordination = shared()
    await Promise.all([
      refreshAccessToken(providerFor(fetch, 'one'), current('refresh-a'), AT, coordination),
      refreshAccessToken(providerFor(fetch, 'two'), current('refresh-b'), AT, coordination),
      refreshAccessToken(providerFor(fetch, 'one'), current('refresh-c'), AT, coordination),
    ])
    expect(endpoint.grants.sort()).toEqual(['refresh-a', 'refresh-b', 'refresh-c'])
  })

  it('gives the kept result of one provider to no other provider with the same refresh token', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const coordination = shared()
    await refreshAccessToken(providerFor(fetch, 'one'), current('refresh-a'), AT, coordination)
    endpoint.spent.clear()
    const other = await refreshAccessToken(providerFor(fetch, 'two'), current('refresh-a'), AT, coordination)
    expect(endpoint.grants).toEqual(['refresh-a', 'refresh-a'])
    expect(other.access_token).toBe('access-2')
  })

  it('forgets a finished flight: after a failure a later request tries again', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const provider = providerFor(fetch)
    const coordination = shared()
    endpoint.refuse = 'unreachable'
    await expect(refreshAccessToken(provider, current(), AT, coordination)).rejects.toThrow()
    endpoint.refuse = null
    const tokens = await refreshAccessToken(provider, current(), AT, coordination)
    expect(tokens.refresh_token).toBe('refresh-1')
    expect(endpoint.grants).toEqual(['refresh-0', 'refresh-0'])
  })

  it('forgets a finished flight that succeeded: with the kept result gone, the next request runs its own grant', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const backend = memoryAuthStore()
    // A store that forgets every kept result (as one would past the reuse window).
    const forgetful: AuthStore = { ...backend, get: async () => null }
    const provider = providerFor(fetch)
    await refreshAccessToken(provider, current(), AT, shared(forgetful))
    const again = await refreshAccessToken(provider, current(), AT, shared(forgetful)).catch((e: unknown) => e)
    expect(endpoint.grants).toEqual(['refresh-0', 'refresh-0'])
    expect(again).toBeInstanceOf(RefreshRejected)
  })
})

describe('refreshAccessToken: what the store holds', () => {
  it('claims a lock named by a keyed hash for 30 s, keeps the result sealed for 60 s, and releases the lock', async () => {
    const { fetch } = tokenEndpoint()
    const store = recording(memoryAuthStore())
    await refreshAccessToken(providerFor(fetch), current(), AT, shared(store))
    const [claim, ...rest] = store.calls.filter((call) => !call.startsWith('get'))
    const key = /^claim refresh:lock:([0-9a-f]{64}) 30$/.exec(claim!)?.[1]
    expect(key).toBeDefined()
    expect(rest).toEqual([`put refresh:result:${key} 60`, `reset refresh:lock:${key}`])
    expect(REFRESH_LOCK_SECONDS).toBe(30)
    expect(REFRESH_REUSE_WINDOW_MS).toBe(60_000)
    expect(store.calls.join('\n')).not.toContain('refresh-0')
  })

  it('keys the store by provider, refresh token and secret, so another secret (another deployment) shares nothing', async () => {
    const { fetch } = tokenEndpoint()
    const keysUnder = async (id: string, token: string, secret: string) => {
      const store = recording(memoryAuthStore())
      await refreshAccessToken(providerFor(fetch, id), current(token), AT, shared(store, [secret])).catch(() => {})
      return store.calls.find((call) => call.startsWith('claim'))
    }
    const base = await keysUnder('p', 'refresh-k', SECRET)
    expect(await keysUnder('q', 'refresh-k', SECRET)).not.toBe(base)
    expect(await keysUnder('p', 'refresh-l', SECRET)).not.toBe(base)
    expect(await keysUnder('p', 'refresh-k', `${SECRET}-2`)).not.toBe(base)
    // Same three, same key: the keyed hash is deterministic (a later request finds the result).
    expect(await keysUnder('p', 'refresh-k', SECRET)).toBe(base)
  })

  it('seals the kept result under its own salt with the first secret: readable by nobody else', async () => {
    const { fetch } = tokenEndpoint()
    const backend = memoryAuthStore()
    const store = recording(backend)
    const tokens = await refreshAccessToken(providerFor(fetch), current(), AT, shared(store, [SECRET, 'older-secret-0123456789']))
    const key = store.calls.find((call) => call.startsWith('put'))!.split(' ')[1]!
    const sealed = (await backend.get(key))!
    expect(sealed).not.toContain(tokens.access_token)
    expect(sealed).not.toContain(tokens.refresh_token)
    const opened = (await decode({ token: sealed, secret: SECRET, salt: RESULT_SALT }))!
    expect(opened).toMatchObject({ tokens })
    // The seal expires with the store entry: a copy kept longer opens no later than the reuse window.
    expect((opened.exp as number) - (opened.iat as number)).toBe(REFRESH_REUSE_WINDOW_MS / 1000)
    expect(await decode({ token: sealed, secret: SECRET, salt: 'another-salt' }).catch(() => null)).toBeNull()
    expect(await decode({ token: sealed, secret: 'older-secret-0123456789', salt: RESULT_SALT }).catch(() => null)).toBeNull()
  })

  it('keeps a refusal too: a request still carrying the refused token is refused without a grant', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const coordination = shared()
    endpoint.refuse = { error: 'invalid_grant', error_description: 'revoked' }
    await expect(refreshAccessToken(providerFor(fetch), current(), AT, coordination)).rejects.toThrow('revoked')
    endpoint.refuse = null
    const again = refreshAccessToken(providerFor(fetch), current(), AT, coordination)
    await expect(again).rejects.toBeInstanceOf(RefreshRejected)
    await expect(again).rejects.toThrow('revoked')
    expect(endpoint.grants).toHaveLength(1)
  })

  it('keeps no outage: after an unreachable provider the lock is released and nothing is kept', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const store = recording(memoryAuthStore())
    endpoint.refuse = 'unreachable'
    await expect(refreshAccessToken(providerFor(fetch), current(), AT, shared(store))).rejects.toThrow()
    expect(store.calls.filter((call) => call.startsWith('put'))).toEqual([])
    expect(store.calls.filter((call) => call.startsWith('reset'))).toHaveLength(1)
  })

  it('takes the result another instance kept between its look and its claim, without a grant', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const backend = memoryAuthStore()
    const first = await refreshAccessToken(providerFor(fetch), current(), AT, shared(backend))
    let looks = 0
    // The first look finds nothing (the other instance had not finished yet); the claim succeeds.
    const late: AuthStore = {
      ...backend,
      get: async (key) => (key.startsWith('refresh:result:') && looks++ === 0 ? null : backend.get(key)),
    }
    const tokens = await refreshAccessToken(providerFor(fetch), current(), AT, shared(late))
    expect(tokens).toEqual(first)
    expect(endpoint.grants).toHaveLength(1)
  })
})

describe('refreshAccessToken: waiting for the instance that holds the lock', () => {
  it('waits while another instance holds the lock and returns what it keeps', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const backend = memoryAuthStore()
    let release!: () => void
    endpoint.hold = new Promise((resolve) => (release = resolve))
    const holder = refreshAccessToken(providerFor(fetch), current(), AT, shared(recording(backend)))
    await vi.waitFor(() => expect(endpoint.grants).toHaveLength(1))
    const waiterStore = recording(backend)
    const waiter = refreshAccessToken(providerFor(fetch), current(), AT, shared(waiterStore))
    await vi.waitFor(() => expect(waiterStore.calls.filter((call) => call.startsWith('claim')).length).toBeGreaterThan(1))
    release()
    expect(await waiter).toEqual(await holder)
    expect(endpoint.grants).toHaveLength(1)
  })

  it('returns a kept result at once, even while the lock is still held (it is released after the result is kept)', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const backend = memoryAuthStore()
    const first = await refreshAccessToken(providerFor(fetch), current(), AT, shared(backend))
    let claims = 0
    const held: AuthStore = { ...backend, claim: async () => (claims++, false) }
    const started = Date.now()
    expect(await refreshAccessToken(providerFor(fetch), current(), AT, shared(held))).toEqual(first)
    expect(claims).toBe(0)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(endpoint.grants).toHaveLength(1)
  })

  it('gives up when the lock is held and nothing is kept for longer than the lock lifetime', async () => {
    const { endpoint, fetch } = tokenEndpoint()
    const backend = memoryAuthStore()
    let claims = 0
    const held: AuthStore = { ...backend, claim: async () => (claims++, false) }
    const start = Date.now()
    let now = start
    vi.spyOn(Date, 'now').mockImplementation(() => now)
    const waiting = refreshAccessToken(providerFor(fetch), current(), AT, shared(held)).catch((e: unknown) => e)
    let settled = false
    void waiting.then(() => (settled = true))
    // The deadline is set before the first claim: move the clock only once it has been.
    await vi.waitFor(() => expect(claims).toBeGreaterThan(0))
    now = start + REFRESH_LOCK_SECONDS * 1000 - 100
    await new Promise((resolve) => setTimeout(resolve, 120))
    expect(settled, 'still waiting inside the lock lifetime').toBe(false)
    now = start + REFRESH_LOCK_SECONDS * 1000
    await new Promise((resolve) => setTimeout(resolve, 120))
    expect(settled, 'still waiting at the very end of the lock lifetime').toBe(false)
    now = start + REFRESH_LOCK_SECONDS * 1000 + 1
    const error = await waiting
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/timed out waiting for another instance/)
    expect(endpoint.grants).toEqual([])
  })
})
