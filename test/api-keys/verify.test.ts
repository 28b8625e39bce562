import { describe, expect, it, vi } from 'vitest'
import { apiKeys, createApiKey, listApiKeys, revokeApiKey, rotateApiKey, verifyApiKey } from '../../core/api-keys.js'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { ORIGIN, testConfig } from '../fixtures/http.js'

const ALICE = 'user-alice'
const BOB = 'user-bob'

/** Two instances of one application: separate configs over one adapter store and one server store. */
function instances(options: Parameters<typeof apiKeys>[0] = {}) {
  const data = createMemoryStore()
  const store = memoryAuthStore()
  const lastUsedWrites: string[] = []
  const make = () => {
    const memory = MemoryAdapter(data)
    const adapter = {
      ...memory,
      updateApiKey: async (change: Parameters<typeof memory.updateApiKey>[0]) => {
        if (change.lastUsedAt) lastUsedWrites.push(change.id)
        return memory.updateApiKey(change)
      },
    }
    return { config: testConfig({ adapter, store, apiKeys: apiKeys(options) }), adapter }
  }
  return { first: make(), second: make(), data, lastUsedWrites }
}

const request = (key: string | undefined, headers: Record<string, string> = {}) =>
  new Request(`${ORIGIN}/api/reports`, { headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers } })

/** Every string a value carries, deeply (what a log line, an event or an answer could leak). */
const text = (value: unknown) => JSON.stringify(value, (_, inner) => (inner instanceof Error ? `${inner.message} ${inner.stack}` : inner))

describe('verifyApiKey (attacks)', () => {
  it('answers the owner and scopes of a live key', async () => {
    const { first } = instances()
    const { key } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: ['reports:read'] })
    const verified = await verifyApiKey(request(key), first.config, { scopes: ['reports:read'] })
    expect(verified.ok && verified.key).toMatchObject({ userId: ALICE, name: 'ci', scopes: ['reports:read'] })
  })

  it("refuses another user's key id with a guessed secret, with no detail", async () => {
    const { first } = instances()
    const { key, apiKey } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: ['reports:read'] })
    const guessed = `ak_${apiKey.id}_${'A'.repeat(43)}`
    expect(guessed).not.toBe(key)
    const verified = await verifyApiKey(request(guessed), first.config)
    expect(verified.ok).toBe(false)
    if (verified.ok) return
    expect(verified.status).toBe(401)
    expect(verified.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
    // The same answer as an id that does not exist: nothing says the id was right.
    const unknown = await verifyApiKey(request(`ak_nosuchid0000_${'A'.repeat(43)}`), first.config)
    expect(unknown.ok || (await unknown.response.text())).toBe(await verified.response.text())
  })

  it('refuses a key with its secret one byte off', async () => {
    const { first } = instances()
    const { key } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
    const last = key.at(-1)!
    const verified = await verifyApiKey(request(`${key.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`), first.config)
    expect(verified.ok ? 200 : verified.status).toBe(401)
  })

  it('refuses a revoked key at once on a second instance sharing the adapter', async () => {
    const { first, second } = instances()
    const { key, apiKey } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
    expect((await verifyApiKey(request(key), second.config)).ok).toBe(true)
    expect(await revokeApiKey(first.config, ALICE, apiKey.id)).toBe(true)
    const verified = await verifyApiKey(request(key), second.config)
    expect(verified.ok ? 200 : verified.status).toBe(401)
  })

  it('refuses an expired key', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const { first } = instances()
      const { key } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [], expiresIn: 60 })
      expect((await verifyApiKey(request(key), first.config)).ok).toBe(true)
      vi.setSystemTime(Date.now() + 60_000)
      const verified = await verifyApiKey(request(key), first.config)
      expect(verified.ok ? 200 : verified.status).toBe(401)
    } finally {
      vi.useRealTimers()
    }
  })

  it('refuses a scope the key does not hold, whatever the request claims', async () => {
    const { first } = instances()
    const { key } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: ['reports:read'] })
    const edited = request(key, { 'x-api-key-scopes': 'reports:write', scope: 'reports:write' })
    const verified = await verifyApiKey(edited, first.config, { scopes: ['reports:write'] })
    expect(verified.ok ? 200 : verified.status).toBe(403)
    if (verified.ok) return
    expect(verified.response.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/)
    // One held scope does not carry another.
    const both = await verifyApiKey(request(key), first.config, { scopes: ['reports:read', 'reports:write'] })
    expect(both.ok ? 200 : both.status).toBe(403)
  })

  it('refuses a request without a key with a bare Bearer challenge, and a malformed header as a wrong key', async () => {
    const { first } = instances()
    const none = await verifyApiKey(request(undefined), first.config)
    expect(none.ok ? 200 : none.status).toBe(401)
    expect(none.ok || none.response.headers.get('www-authenticate')).toBe('Bearer')
    const basic = await verifyApiKey(request(undefined, { authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' }), first.config)
    expect(basic.ok || basic.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
  })

  it('reads the key from the header the application names', async () => {
    const { first } = instances({ header: 'X-Api-Key', prefix: 'acme' })
    const { key } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
    expect(key.startsWith('acme_')).toBe(true)
    expect((await verifyApiKey(request(undefined, { 'x-api-key': key }), first.config)).ok).toBe(true)
    expect((await verifyApiKey(request(key), first.config)).ok).toBe(false)
  })

  it('writes the last-used time at most once per key per minute across instances', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const { first, second, lastUsedWrites } = instances()
      const { key, apiKey } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
      vi.setSystemTime(Math.ceil(Date.now() / 60_000) * 60_000)
      for (let index = 0; index < 6; index++) expect((await verifyApiKey(request(key), index % 2 ? first.config : second.config)).ok).toBe(true)
      expect(lastUsedWrites).toEqual([apiKey.id])
      const seen = (await listApiKeys(first.config, ALICE))[0]!.lastUsedAt
      expect(seen).toBe(new Date().toISOString())
      vi.setSystemTime(Date.now() + 60_000)
      expect((await verifyApiKey(request(key), second.config)).ok).toBe(true)
      expect(lastUsedWrites).toEqual([apiKey.id, apiKey.id])
    } finally {
      vi.useRealTimers()
    }
  })

  it('answers 503 and lets nothing through when the adapter fails or hangs', async () => {
    const { first } = instances()
    const { key } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
    const failing = { ...first.adapter, getApiKey: async () => Promise.reject(new Error('connection refused')) }
    const hanging = { ...first.adapter, getApiKey: () => new Promise<never>(() => {}) }
    for (const adapter of [failing, hanging]) {
      const config = testConfig({ adapter, apiKeys: apiKeys(), availability: { adapterTimeout: 50 } } as Partial<AuthConfig>)
      const verified = await verifyApiKey(request(key), config)
      expect(verified.ok ? 200 : verified.status).toBe(503)
    }
  })

  it('still verifies when the last-used record cannot be written', async () => {
    const { first } = instances()
    const { key } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
    const adapter = { ...first.adapter, updateApiKey: async () => Promise.reject(new Error('read-only replica')) }
    const config = testConfig({ adapter, apiKeys: apiKeys() })
    expect((await verifyApiKey(request(key), config)).ok).toBe(true)
  })
})

describe('managing API keys (attacks)', () => {
  it("lets user B neither revoke nor rotate user A's key by its id", async () => {
    const { first } = instances()
    const { key, apiKey } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
    expect(await revokeApiKey(first.config, BOB, apiKey.id)).toBe(false)
    expect(await rotateApiKey(first.config, BOB, apiKey.id)).toBeNull()
    expect(await listApiKeys(first.config, BOB)).toEqual([])
    expect((await verifyApiKey(request(key), first.config)).ok).toBe(true)
  })

  it('honours the rotation overlap, then ends it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const { first } = instances({ rotationOverlap: 3600 })
      const { key: old, apiKey } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
      const rotated = (await rotateApiKey(first.config, ALICE, apiKey.id))!
      expect(rotated.key).not.toBe(old)
      expect((await verifyApiKey(request(old), first.config)).ok).toBe(true)
      expect((await verifyApiKey(request(rotated.key), first.config)).ok).toBe(true)
      vi.setSystemTime(Date.now() + 3600_000)
      expect((await verifyApiKey(request(old), first.config)).ok).toBe(false)
      expect((await verifyApiKey(request(rotated.key), first.config)).ok).toBe(true)
    } finally {
      vi.useRealTimers()
    }
  })

  it('ends the old secret at once with an overlap of 0, and a revocation ends both', async () => {
    const { first } = instances()
    const { key: old, apiKey } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: [] })
    const rotated = (await rotateApiKey(first.config, ALICE, apiKey.id, 0))!
    expect((await verifyApiKey(request(old), first.config)).ok).toBe(false)
    const again = (await rotateApiKey(first.config, ALICE, apiKey.id))!
    expect((await verifyApiKey(request(rotated.key), first.config)).ok).toBe(true)
    await revokeApiKey(first.config, ALICE, apiKey.id)
    for (const key of [rotated.key, again.key]) expect((await verifyApiKey(request(key), first.config)).ok).toBe(false)
    expect(await rotateApiKey(first.config, ALICE, apiKey.id)).toBeNull()
  })

  it('never puts the secret in a list answer, a stored record, an error or a log', async () => {
    const { first, data } = instances()
    const { key, apiKey } = await createApiKey(first.config, ALICE, { name: 'ci', scopes: ['reports:read'] })
    const secret = key.slice(key.lastIndexOf(apiKey.id) + apiKey.id.length + 1)
    expect(text(await listApiKeys(first.config, ALICE))).not.toContain(secret)
    expect(text(apiKey)).not.toContain(secret)
    expect(Object.keys(apiKey)).not.toContain('hash')
    const stored = await first.adapter.getApiKey(apiKey.id)
    expect(text(stored)).not.toContain(secret)
    expect(text(data)).not.toContain(secret)
    const wrong = await verifyApiKey(request(`${key}x`), first.config, { scopes: ['reports:write'] })
    expect(wrong.ok || (await wrong.response.text())).not.toContain(secret)
    const scoped = await verifyApiKey(request(key), first.config, { scopes: ['reports:write'] })
    expect(scoped.ok || (await scoped.response.text())).not.toContain(secret)
    const logged = text(first.config.logger.error.mock.calls) + text(first.config.logger.debug.mock.calls)
    expect(logged).toContain(apiKey.id)
    expect(logged).not.toContain(secret)
    // Nor the stored hash: the debug lines of adapter calls redact it.
    expect(logged).not.toContain(stored!.hash)
  })

  it('refuses input outside the rules without echoing it', async () => {
    const { first } = instances()
    await expect(createApiKey(first.config, ALICE, { name: '', scopes: [] })).rejects.toThrow(TypeError)
    await expect(createApiKey(first.config, ALICE, { name: 'x', scopes: ['admin'] })).rejects.toThrow(/resource:action/)
    await expect(createApiKey(first.config, ALICE, { name: 'x', scopes: [], expiresIn: 0 })).rejects.toThrow(TypeError)
    await expect(createApiKey(first.config, ALICE, { name: 'x', scopes: ['"evil":x'] })).rejects.not.toThrow(/evil/)
  })
})

describe('the API-key feature at load', () => {
  it('names the missing adapter methods, and refuses a plain object', async () => {
    const withoutKeys = Object.fromEntries(Object.entries(MemoryAdapter()).filter(([name]) => !name.includes('ApiKey')))
    await expect(verifyApiKey(request('x'), testConfig({ adapter: withoutKeys, apiKeys: apiKeys() }))).rejects.toThrow(
      /Required adapter methods were missing: createApiKey, getApiKey, listApiKeys, listOrganizationApiKeys, updateApiKey/,
    )
    await expect(verifyApiKey(request('x'), testConfig({ adapter: MemoryAdapter(), apiKeys: { prefix: 'ak' } as never }))).rejects.toThrow(
      /apiKeys: apiKeys\(\{ … \}\) with import \{ apiKeys \} from 'authchart\/api-keys'/,
    )
    await expect(verifyApiKey(request('x'), testConfig({ apiKeys: apiKeys() }))).rejects.toThrow(/API keys require an adapter/)
  })

  it('refuses options outside the rules when apiKeys() is called', () => {
    expect(() => apiKeys({ prefix: 'Bad_Prefix' })).toThrow(TypeError)
    expect(() => apiKeys({ header: 'x key' })).toThrow(TypeError)
    expect(() => apiKeys({ rotationOverlap: -1 })).toThrow(TypeError)
    expect(apiKeys({ rotationOverlap: 0 }).options.rotationOverlap).toBe(0)
    expect(apiKeys().options).toEqual({ prefix: 'ak', header: 'authorization', rotationOverlap: 86_400 })
  })
})
