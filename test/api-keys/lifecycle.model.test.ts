/**
 * The key lifecycle against a model, through `Auth`: seeded random runs of create (with and
 * without an expiry), rotate (with and without an overlap), revoke, time passing, and another
 * user's revoke or rotate, each followed by every secret ever issued presented on the other
 * instance. The answer of `verifyApiKey` must be the model's for every secret after every step.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { apiKeys, verifyApiKey, type ListedApiKey } from '../../core/api-keys.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, ORIGIN, spyLogger } from '../fixtures/http.js'
import { twoOrganizations } from '../organizations/fixture.js'

/** A small deterministic generator (mulberry32), so a failing run can be replayed by its seed. */
function random(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** What the model knows of one key. */
interface ModelKey {
  id: string
  expiresAt: number | null
  revoked: boolean
  current: string
  previous: { secret: string; until: number } | null
}

/** Whether the model lets `secret` through at `now`. */
function modelAccepts(keys: readonly ModelKey[], secret: string, now: number): boolean {
  return keys.some(
    (key) =>
      !key.revoked &&
      (key.expiresAt === null || key.expiresAt > now) &&
      (key.current === secret || (key.previous !== null && key.previous.secret === secret && key.previous.until > now)),
  )
}

async function post(client: Client, body: Record<string, unknown>) {
  const csrfToken = await client.csrfToken()
  const response = await client.send({ method: 'POST', path: '/api-keys', json: { ...body, csrfToken }, headers: { accept: 'application/json' } })
  return { status: response.status, body: (await response.json()) as { key?: string; apiKey?: ListedApiKey } | null }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('the key lifecycle against its model', () => {
  it.each([1, 2, 3, 4, 5, 6])('agrees with the model on every secret after every step (seed %i)', async (seed) => {
    const next = random(seed)
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!
    const setup = await twoOrganizations('jwt', { apiKeys: apiKeys(), store: memoryAuthStore() })
    const other = { ...setup.config, logger: spyLogger() } as AuthConfig
    const keys: ModelKey[] = []
    const issued: string[] = []
    const steps: string[] = []
    for (let step = 0; step < 25; step++) {
      const now = Date.now()
      const live = keys.filter((key) => !key.revoked)
      const operation = keys.length === 0 ? 'create' : pick(['create', 'rotate', 'rotate', 'revoke', 'wait', 'wait', 'intruder'] as const)
      steps.push(operation)
      if (operation === 'create') {
        const expiresIn = pick([undefined, 20, 60, 120])
        const created = await post(setup.alice, { action: 'create', name: `k${step}`, scopes: [], ...(expiresIn ? { expiresIn } : {}) })
        expect(created.status).toBe(201)
        keys.push({ id: created.body!.apiKey!.id, expiresAt: expiresIn ? now + expiresIn * 1000 : null, revoked: false, current: created.body!.key!, previous: null })
        issued.push(created.body!.key!)
      } else if (operation === 'rotate') {
        const key = pick(keys)
        const overlap = pick([0, 30])
        const rotated = await post(setup.alice, { action: 'rotate', id: key.id, overlap })
        const rotatable = !key.revoked && (key.expiresAt === null || key.expiresAt > now)
        expect(rotated.status, steps.join(' ')).toBe(rotatable ? 200 : 404)
        if (rotatable) {
          key.previous = overlap > 0 ? { secret: key.current, until: now + overlap * 1000 } : null
          key.current = rotated.body!.key!
          issued.push(key.current)
        }
      } else if (operation === 'revoke') {
        const key = pick(keys)
        const revoked = await post(setup.alice, { action: 'revoke', id: key.id })
        expect(revoked.status, steps.join(' ')).toBe(key.revoked ? 404 : 200)
        key.revoked = true
      } else if (operation === 'intruder') {
        const key = pick(live.length > 0 ? live : keys)
        expect((await post(setup.bob, { action: pick(['revoke', 'rotate']), id: key.id })).status).toBe(404)
      } else {
        vi.setSystemTime(now + Math.floor(next() * 20_000))
      }
      const at = Date.now()
      for (const secret of issued) {
        const answer = await verifyApiKey(new Request(`${ORIGIN}/api`, { headers: { authorization: `Bearer ${secret}` } }), other)
        expect(answer.ok, `${steps.join(' ')}: ${secret.slice(0, 16)}…`).toBe(modelAccepts(keys, secret, at))
      }
    }
    expect(new Set(steps).size).toBeGreaterThan(3)
  })
})
