/**
 * `{basePath}/api-keys` through `Auth` over HTTP, from the attacker's side: two users (Alice owns
 * Acme, Bob is a member of Acme and owns Globex), two instances of the application sharing one
 * adapter and one store. Another user's key by id, a key revoked on the other instance, expired,
 * used beyond its scopes or in another organisation, a post without (or with a forged) CSRF token,
 * a stale session, a forged Host, and an adapter that fails or hangs: each is refused, and nothing
 * changes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { apiKeys, verifyApiKey, type ListedApiKey } from '../../core/api-keys.js'
import { Auth } from '../../core/index.js'
import { stepUp } from '../../core/step-up.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, Client, ORIGIN, spyLogger } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS, twoOrganizations } from '../organizations/fixture.js'

type KeyMethod = 'createApiKey' | 'getApiKey' | 'updateApiKey'

/**
 * The world, with API keys, and a second instance over the same adapter and store. `faults`
 * replaces an API-key method of the adapter while set (an outage).
 */
async function world(overrides: Partial<AuthConfig> = {}) {
  const store = memoryAuthStore()
  const faults: Partial<Record<KeyMethod, () => Promise<never>>> = {}
  const setup = await twoOrganizations('jwt', (memory) => {
    const late = (name: KeyMethod) => (...args: unknown[]) => (faults[name] ?? (memory[name] as (...a: unknown[]) => Promise<unknown>))(...args)
    const adapter = { ...memory, createApiKey: late('createApiKey'), getApiKey: late('getApiKey'), updateApiKey: late('updateApiKey') }
    return { adapter: adapter as never, apiKeys: apiKeys({ prefix: 'acme' }), store, debug: true, ...overrides }
  })
  const other = { ...setup.config, logger: spyLogger() } as AuthConfig
  return { ...setup, store, other, faults }
}

async function post(client: Client, body: Record<string, unknown>, options: { csrf?: string | false; headers?: Record<string, string> } = {}) {
  const csrfToken = options.csrf === false ? undefined : (options.csrf ?? (await client.csrfToken()))
  const response = await client.send({
    method: 'POST',
    path: '/api-keys',
    json: { ...body, ...(csrfToken !== undefined ? { csrfToken } : {}) },
    headers: { accept: 'application/json', ...options.headers },
  })
  return { status: response.status, headers: response.headers, body: (await response.json().catch(() => undefined)) as Record<string, unknown> | null }
}

async function list(client: Client): Promise<{ status: number; keys: ListedApiKey[] }> {
  const response = await client.send({ path: '/api-keys' })
  const body = (await response.json()) as { apiKeys: ListedApiKey[] } | null
  return { status: response.status, keys: body?.apiKeys ?? [] }
}

const bearer = (key: string) => new Request(`${ORIGIN}/api/reports`, { headers: { authorization: `Bearer ${key}` } })

/** The status `verifyApiKey` answers `key` with under `config` (200 when it passes). */
async function verified(key: string, config: AuthConfig, options: Parameters<typeof verifyApiKey>[2] = {}) {
  const answer = await verifyApiKey(bearer(key), config, options)
  return answer.ok ? 200 : answer.status
}

const later = (seconds: number) => vi.setSystemTime(Date.now() + seconds * 1000)

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('GET and POST /api-keys', () => {
  it('creates a key shown once, lists it without its secret or hash, and the key verifies on the other instance', async () => {
    const { alice, other } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: ['reports:read'], expiresIn: 3600 })
    expect(created.status).toBe(201)
    const key = created.body!.key as string
    const apiKey = created.body!.apiKey as ListedApiKey
    expect(key.startsWith(`${apiKey.prefix}_`)).toBe(true)
    expect(apiKey).toMatchObject({ prefix: `acme_${apiKey.id}`, organizationId: null, name: 'ci', scopes: ['reports:read'], revokedAt: null })
    const listed = await list(alice)
    expect(listed.status).toBe(200)
    expect(listed.keys).toEqual([apiKey])
    const secret = key.slice(apiKey.prefix.length + 1)
    expect(JSON.stringify(listed.keys)).not.toContain(secret)
    expect(Object.keys(listed.keys[0]!)).not.toContain('hash')
    expect(await verified(key, other, { scopes: ['reports:read'] })).toBe(200)
    // The use on the other instance shows in the owner's list.
    expect((await list(alice)).keys[0]!.lastUsedAt).toBe(new Date().toISOString())
  })

  it('answers a signed-out request 401 and creates nothing', async () => {
    const { adapter, config } = await world()
    const stranger = new Client(config)
    expect((await list(stranger)).status).toBe(401)
    expect((await post(stranger, { action: 'create', name: 'x', scopes: [] })).status).toBe(401)
    expect(await adapter.listApiKeys(USERS.alice.id)).toEqual([])
  })

  it('refuses malformed input with 400 and never a 500', async () => {
    const { adapter, alice } = await world()
    for (const body of [
      {},
      { action: 'delete', id: 'x' },
      { action: 'create', name: '', scopes: [] },
      { action: 'create', name: 'x', scopes: 'reports:read' },
      { action: 'create', name: 'x', scopes: ['not a scope'] },
      { action: 'create', name: 'x', scopes: [], expiresIn: -1 },
      { action: 'create', name: 'x', scopes: [], organizationId: 42 },
      { action: 'revoke' },
      { action: 'revoke', id: 42 },
      { action: 'revoke', id: '' },
      { action: 'revoke', id: 'x'.repeat(65) },
      { action: 'rotate', id: 'x', overlap: 1.5 },
    ]) {
      expect((await post(alice, body)).status, JSON.stringify(body)).toBe(400)
    }
    expect(await adapter.listApiKeys(USERS.alice.id)).toEqual([])
  })
})

describe('another user’s key, by its id', () => {
  it('is answered 404 to a revoke or rotate, and keeps working unchanged', async () => {
    const { adapter, alice, bob, other } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    const key = created.body!.key as string
    const { id } = created.body!.apiKey as ListedApiKey
    const before = await adapter.getApiKey(id)
    expect(await post(bob, { action: 'revoke', id })).toMatchObject({ status: 404, body: { error: 'NotFound' } })
    expect(await post(bob, { action: 'rotate', id })).toMatchObject({ status: 404, body: { error: 'NotFound' } })
    expect(await post(bob, { action: 'revoke', id: 'no-such-key' })).toMatchObject({ status: 404, body: { error: 'NotFound' } })
    expect(await adapter.getApiKey(id)).toEqual(before)
    expect(await verified(key, other)).toBe(200)
    expect((await list(bob)).keys).toEqual([])
  })
})

describe('revocation and rotation', () => {
  it('refuses a key revoked on one instance at once on the other', async () => {
    const { alice, other } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    const key = created.body!.key as string
    expect(await verified(key, other)).toBe(200)
    const revoked = await post(alice, { action: 'revoke', id: (created.body!.apiKey as ListedApiKey).id })
    expect(revoked.status).toBe(200)
    expect((revoked.body!.apiKey as ListedApiKey).revokedAt).not.toBeNull()
    expect(await verified(key, other)).toBe(401)
    // Revoked already: nothing to revoke or rotate.
    expect((await post(alice, { action: 'revoke', id: (created.body!.apiKey as ListedApiKey).id })).status).toBe(404)
    expect((await post(alice, { action: 'rotate', id: (created.body!.apiKey as ListedApiKey).id })).status).toBe(404)
  })

  it('rotates: a new secret shown once, the old one working only for the overlap asked', async () => {
    const { alice, other } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    const old = created.body!.key as string
    const { id } = created.body!.apiKey as ListedApiKey
    const rotated = await post(alice, { action: 'rotate', id, overlap: 60 })
    expect(rotated.status).toBe(200)
    const fresh = rotated.body!.key as string
    expect(fresh).not.toBe(old)
    expect(await verified(old, other)).toBe(200)
    expect(await verified(fresh, other)).toBe(200)
    later(61)
    expect(await verified(old, other)).toBe(401)
    expect(await verified(fresh, other)).toBe(200)
  })

  it('refuses a key after its expiry', async () => {
    const { alice, other } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [], expiresIn: 60 })
    const key = created.body!.key as string
    expect(await verified(key, other)).toBe(200)
    later(61)
    expect(await verified(key, other)).toBe(401)
    expect((await post(alice, { action: 'rotate', id: (created.body!.apiKey as ListedApiKey).id })).status).toBe(404)
  })

  it('refuses a key beyond its scopes, whatever the request says', async () => {
    const { alice, other } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: ['reports:read'] })
    const key = created.body!.key as string
    expect(await verified(key, other, { scopes: ['reports:write'] })).toBe(403)
    expect(await verified(key, other, { scopes: ['reports:read', 'reports:write'] })).toBe(403)
  })
})

describe('organisation-owned keys', () => {
  it('lets an owner create one, usable only in that organisation', async () => {
    const { alice, other } = await world()
    const created = await post(alice, { action: 'create', name: 'deploy', scopes: ['reports:read'], organizationId: ACME })
    expect(created.status).toBe(201)
    const key = created.body!.key as string
    expect((created.body!.apiKey as ListedApiKey).organizationId).toBe(ACME)
    expect(await verified(key, other, { organizationId: ACME })).toBe(200)
    expect(await verified(key, other, { organizationId: GLOBEX })).toBe(403)
    // A personal key is no organisation's.
    const personal = (await post(alice, { action: 'create', name: 'mine', scopes: [] })).body!.key as string
    expect(await verified(personal, other, { organizationId: ACME })).toBe(403)
  })

  it('refuses a key in an organisation one is not a member of, or whose role does not allow it', async () => {
    const { adapter, alice, bob } = await world()
    expect((await post(alice, { action: 'create', name: 'x', scopes: [], organizationId: GLOBEX })).status).toBe(403)
    // Bob is a plain member of Acme.
    expect((await post(bob, { action: 'create', name: 'x', scopes: [], organizationId: ACME })).status).toBe(403)
    expect((await post(alice, { action: 'create', name: 'x', scopes: [], organizationId: 'org-nowhere' })).status).toBe(403)
    expect(await adapter.listApiKeys(USERS.alice.id)).toEqual([])
    expect(await adapter.listApiKeys(USERS.bob.id)).toEqual([])
  })

  it('bounds an admin’s key to the scopes their role allows (an owner may give any)', async () => {
    const { adapter, alice, bob } = await world()
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'admin' })
    expect((await post(bob, { action: 'create', name: 'x', scopes: ['member:read'], organizationId: ACME })).status).toBe(201)
    expect((await post(bob, { action: 'create', name: 'x', scopes: ['organization:delete'], organizationId: ACME })).status).toBe(403)
    expect((await post(bob, { action: 'create', name: 'x', scopes: ['invoice:pay'], organizationId: ACME })).status).toBe(403)
    expect((await post(alice, { action: 'create', name: 'x', scopes: ['invoice:pay'], organizationId: ACME })).status).toBe(201)
    expect((await adapter.listApiKeys(USERS.bob.id)).map((key) => key.scopes)).toEqual([['member:read']])
  })

  it('is revoked by any member whose role allows it, never by a plain member or another organisation’s owner', async () => {
    const { adapter, alice, bob, other } = await world()
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'admin' })
    const created = await post(bob, { action: 'create', name: 'deploy', scopes: [], organizationId: ACME })
    const key = created.body!.key as string
    const { id } = created.body!.apiKey as ListedApiKey
    // Demoted to member, then removed: Bob manages none of Acme's keys, not even the one he made.
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'member' })
    expect((await post(bob, { action: 'revoke', id })).status).toBe(403)
    expect((await post(bob, { action: 'rotate', id })).status).toBe(403)
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'removed' })
    expect((await post(bob, { action: 'revoke', id })).status).toBe(404)
    expect(await verified(key, other, { organizationId: ACME })).toBe(200)
    expect((await post(alice, { action: 'revoke', id })).status).toBe(200)
    expect(await verified(key, other, { organizationId: ACME })).toBe(401)
  })
})

describe('an organisation’s list of keys', () => {
  it('shows an organisation’s keys to a role that may read them, and to nobody else', async () => {
    const { adapter, alice, bob } = await world()
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'admin' })
    const made = (await post(bob, { action: 'create', name: 'bob-deploy', scopes: [], organizationId: ACME })).body!.apiKey as ListedApiKey
    await post(alice, { action: 'create', name: 'alice-personal', scopes: [] })
    await post(bob, { action: 'create', name: 'globex', scopes: [], organizationId: GLOBEX })
    const listOf = async (client: Client, organizationId: string) => {
      const response = await client.send({ path: '/api-keys', query: { organizationId } })
      return { status: response.status, body: (await response.json()) as { apiKeys?: ListedApiKey[]; error?: string } | null }
    }
    // The owner sees the key an admin made, and only Acme's.
    const acme = await listOf(alice, ACME)
    expect(acme.status).toBe(200)
    expect(acme.body!.apiKeys!.map((key) => key.name)).toEqual(['bob-deploy'])
    expect(acme.body!.apiKeys![0]).toEqual(made)
    expect(JSON.stringify(acme.body)).not.toContain('hash')
    // Not a member of Globex; and a plain member reads none.
    expect(await listOf(alice, GLOBEX)).toEqual({ status: 403, body: { error: 'Forbidden' } })
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'member' })
    expect((await listOf(bob, ACME)).status).toBe(403)
    expect((await listOf(new Client(alice.config), ACME)).status).toBe(401)
    expect((await listOf(alice, '')).status).toBe(400)
    expect((await listOf(alice, 'o'.repeat(257))).status).toBe(400)
    expect((await listOf(alice, 'o'.repeat(256))).status).toBe(403)
  })
})

describe('the request itself', () => {
  it('refuses a post without a CSRF token or with a forged one, and creates nothing', async () => {
    const { adapter, alice } = await world()
    const missing = await post(alice, { action: 'create', name: 'x', scopes: [] }, { csrf: false })
    const forged = await post(alice, { action: 'create', name: 'x', scopes: [] }, { csrf: 'forged-token' })
    for (const answer of [missing, forged]) {
      expect(answer.status).toBeGreaterThanOrEqual(400)
      expect(answer.status).toBeLessThan(500)
    }
    expect(await adapter.listApiKeys(USERS.alice.id)).toEqual([])
  })

  it('asks a stale session to prove a factor again before any change, and changes nothing', async () => {
    const { adapter, alice, other } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    const key = created.body!.key as string
    const { id } = created.body!.apiKey as ListedApiKey
    later(11 * 60)
    for (const body of [{ action: 'create', name: 'late', scopes: [] }, { action: 'revoke', id }, { action: 'rotate', id }]) {
      const asked = await post(alice, body)
      expect(asked.status).toBe(401)
      expect(asked.body).toMatchObject({ error: 'insufficient_user_authentication' })
      expect(asked.headers.get('www-authenticate')).toContain('insufficient_user_authentication')
    }
    expect((await adapter.listApiKeys(USERS.alice.id)).map((stored) => stored.name)).toEqual(['ci'])
    expect(await verified(key, other)).toBe(200)
    // Reading the list is no change: a stale session still sees it.
    expect((await list(alice)).keys.map((listed) => listed.id)).toEqual([id])
  })

  it('with stepUp(), lets the change through once the password is proven again, and not before', async () => {
    const { adapter, alice } = await world({ stepUp: stepUp() })
    later(11 * 60)
    const asked = await post(alice, { action: 'create', name: 'late', scopes: [] })
    expect(asked.status).toBe(401)
    expect(asked.body).toMatchObject({ error: 'insufficient_user_authentication', url: `${ORIGIN}/auth/step/reauthenticate` })
    expect(await adapter.listApiKeys(USERS.alice.id)).toEqual([])
    // A wrong password is no proof.
    const prove = async (password: string) =>
      alice.send({ path: '/step/reauthenticate', body: { event: 'reauth.password', username: 'alice', password, csrfToken: await alice.csrfToken() }, headers: { accept: 'text/html' } })
    await prove('wrong')
    expect((await post(alice, { action: 'create', name: 'late', scopes: [] })).status).toBe(401)
    await prove('pw')
    const created = await post(alice, { action: 'create', name: 'late', scopes: [] })
    expect(created.status).toBe(201)
    expect((await adapter.listApiKeys(USERS.alice.id)).map((stored) => stored.name)).toEqual(['late'])
  })

  it('refuses a forged Host (trustHost a list) with 400, and creates nothing', async () => {
    const { adapter, config, alice } = await world({ trustHost: [new URL(ORIGIN).host] })
    const csrfToken = await alice.csrfToken()
    const response = await Auth(
      authRequest({
        method: 'POST',
        path: '/auth/api-keys',
        origin: 'https://evil.example',
        cookies: alice.jar,
        json: { action: 'create', name: 'x', scopes: [], csrfToken },
        headers: { accept: 'application/json' },
      }),
      config,
    )
    expect(response.status).toBe(400)
    expect(await response.text()).not.toContain('acme_')
    expect(await adapter.listApiKeys(USERS.alice.id)).toEqual([])
  })
})

describe('the secret', () => {
  it('is in no log line: only the prefix is', async () => {
    const { config, alice, other } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    const key = created.body!.key as string
    const { id, prefix } = created.body!.apiKey as ListedApiKey
    const rotated = (await post(alice, { action: 'rotate', id })).body!.key as string
    await verified(key, other)
    await verified(`${key}x`, other)
    await post(alice, { action: 'revoke', id })
    const logger = (config as { logger: ReturnType<typeof spyLogger> }).logger
    const lines = JSON.stringify([logger.debug.mock.calls, logger.warn.mock.calls, logger.error.mock.calls, (other.logger as ReturnType<typeof spyLogger>).debug.mock.calls])
    expect(logger.debug).toHaveBeenCalled()
    for (const secret of [key, rotated].map((whole) => whole.slice(prefix.length + 1))) expect(lines).not.toContain(secret)
  })
})

describe('an adapter that fails or hangs', () => {
  const outage = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })

  it('answers 503 with Retry-After, and no key is created or left valid', async () => {
    const { adapter, alice, config, faults } = await world({ availability: { adapterTimeout: 50, retryAfter: 7 } })
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    const { id } = created.body!.apiKey as ListedApiKey
    const key = created.body!.key as string
    for (const broken of ['throws', 'hangs'] as const) {
      const fail = () => (broken === 'throws' ? Promise.reject(outage()) : new Promise<never>(() => {}))
      faults.createApiKey = fail
      const creating = await post(alice, { action: 'create', name: 'during', scopes: [] })
      expect(creating.status, broken).toBe(503)
      expect(creating.headers.get('retry-after')).toBe('7')
      delete faults.createApiKey
      faults.updateApiKey = fail
      const revoking = await post(alice, { action: 'revoke', id })
      expect(revoking.status, broken).toBe(503)
      expect(revoking.headers.get('retry-after')).toBe('7')
      delete faults.updateApiKey
      faults.getApiKey = fail
      expect(await verified(key, config), broken).toBe(503)
      expect((await post(alice, { action: 'rotate', id })).status, broken).toBe(503)
      delete faults.getApiKey
    }
    expect((await adapter.listApiKeys(USERS.alice.id)).map((stored) => stored.name)).toEqual(['ci'])
    // An adapter error that is no outage (a bug) is refused too, never a 500 and never a key.
    faults.createApiKey = () => Promise.reject(new Error('a bug in the adapter'))
    expect(await post(alice, { action: 'create', name: 'bug', scopes: [] })).toMatchObject({ status: 400, body: null })
    delete faults.createApiKey
    // The revocation that failed is not taken for done: the owner revokes again, and it holds.
    expect((await post(alice, { action: 'revoke', id })).status).toBe(200)
    expect(await verified(key, config)).toBe(401)
  })
})
