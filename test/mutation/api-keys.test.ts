/**
 * API keys, the bounds the attack tests cross only once: each limit of a new key's input at its
 * edge, the rotation overlap, what a listing shows of a closed overlap, the key format's parse at
 * each edge, the keyed hash's derivation, and the memory adapter keeping a key's owner whatever a
 * change says.
 */
import { createHmac, hkdfSync } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { memoryApiKeyMethods } from '../../adapters/memory-api-keys.js'
import { apiKeys, createApiKey, listApiKeys, revokeApiKey, rotateApiKey, verifyApiKey } from '../../core/api-keys.js'
import { organizations } from '../../core/organizations.js'
import { checkNewApiKey, listed, MAX_SCOPES, overlapOf } from '../../core/api-keys/manage.js'
import { createKeySecret, hashesEqual, hashKeySecret, keySecretMatches, parseApiKey } from '../../core/api-keys/secret.js'
import type { AdapterApiKey } from '../../core/api-keys/types.js'
import { assertConfig } from '../../core/index.js'
import { Client, testConfig } from '../fixtures/http.js'
import { ACME, USERS, twoOrganizations } from '../organizations/fixture.js'

const valid = { name: 'ci', scopes: ['report:read'] }

describe('a new key\'s input, at each edge', () => {
  it('takes a name of 1 to 100 characters, and no blank one', () => {
    expect(checkNewApiKey({ ...valid, name: 'x' }).name).toBe('x')
    expect(checkNewApiKey({ ...valid, name: 'x'.repeat(100) }).name).toHaveLength(100)
    for (const name of ['', '   ', 'x'.repeat(101), 7]) expect(() => checkNewApiKey({ ...valid, name })).toThrow('an API key name is 1 to 100 characters')
    expect(() => checkNewApiKey(null)).toThrow('an API key name is 1 to 100 characters')
  })

  it('takes up to 50 resource:action scopes of up to 64 characters a side, once each', () => {
    const many = Array.from({ length: MAX_SCOPES }, (_, i) => `r${i}:read`)
    expect(checkNewApiKey({ ...valid, scopes: many }).scopes).toEqual(many)
    expect(checkNewApiKey({ ...valid, scopes: [] }).scopes).toEqual([])
    expect(checkNewApiKey({ ...valid, scopes: ['a:b', 'a:b', 'A_.-9:x-_.'] }).scopes).toEqual(['a:b', 'A_.-9:x-_.'])
    expect(checkNewApiKey({ ...valid, scopes: [`${'r'.repeat(64)}:${'a'.repeat(64)}`] }).scopes).toHaveLength(1)
    for (const scopes of [
      [...many, 'one:more'],
      [`${'r'.repeat(65)}:a`],
      [`r:${'a'.repeat(65)}`],
      ['a:b:c'],
      [' a:b'],
      ['a:b '],
      ['ab'],
      [':b'],
      ['a:'],
      [7],
      'a:b',
    ]) {
      expect(() => checkNewApiKey({ ...valid, scopes })).toThrow('API key scopes are at most 50 resource:action strings')
    }
  })

  it('takes an expiry of whole positive seconds, and none without one', () => {
    expect(checkNewApiKey({ ...valid, expiresIn: 1 }).expiresIn).toBe(1)
    expect('expiresIn' in checkNewApiKey(valid)).toBe(false)
    for (const expiresIn of [0, -1, 1.5, '60', Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => checkNewApiKey({ ...valid, expiresIn })).toThrow('an API key expiresIn is a positive whole number of seconds')
    }
  })

  it('takes an organisation id of 1 to 256 characters without spaces', () => {
    expect(checkNewApiKey({ ...valid, organizationId: 'o'.repeat(256) }).organizationId).toHaveLength(256)
    expect('organizationId' in checkNewApiKey(valid)).toBe(false)
    for (const organizationId of ['', 'o'.repeat(257), 'org acme', ' org', 'org\n', 7]) {
      expect(() => checkNewApiKey({ ...valid, organizationId })).toThrow('an API key organizationId is an organisation id')
    }
  })
})

describe('the rotation overlap', () => {
  const resolved = assertConfig(testConfig({ adapter: MemoryAdapter(createMemoryStore()), apiKeys: apiKeys({ rotationOverlap: 90 }) }))

  it('is the configured one unless asked, 0 or more whole seconds', () => {
    expect(overlapOf(resolved, undefined)).toBe(90)
    expect(overlapOf(resolved, 0)).toBe(0)
    expect(overlapOf(resolved, 5)).toBe(5)
    expect(overlapOf(resolved, null)).toBe(90)
    for (const overlap of [-1, 1.5, '5', Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => overlapOf(resolved, overlap)).toThrow('an API key rotation overlap is a whole number of seconds, 0 or more')
    }
  })
})

describe('a listing', () => {
  const key: AdapterApiKey = {
    id: 'k1',
    userId: 'u1',
    name: 'ci',
    scopes: ['a:b'],
    hash: 'h',
    createdAt: new Date(1000),
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    previousHash: 'p',
    previousUntil: new Date(5000),
  }

  it('shows the previous secret\'s end only while the overlap is open', () => {
    expect(listed(key, 'ak', 4999).previousSecretUntil).toBe(new Date(5000).toISOString())
    expect(listed(key, 'ak', 5000).previousSecretUntil).toBeNull()
    expect(listed({ ...key, previousHash: null }, 'ak', 0).previousSecretUntil).toBeNull()
    expect(listed({ ...key, previousUntil: null }, 'ak', 0).previousSecretUntil).toBeNull()
  })

  it('shows every field as the owner may see it, and no hash', () => {
    const times = { expiresAt: new Date(7000), revokedAt: new Date(8000), lastUsedAt: new Date(9000) }
    expect(listed({ ...key, ...times }, 'ak', 0)).toStrictEqual({
      id: 'k1',
      prefix: 'ak_k1',
      organizationId: null,
      name: 'ci',
      scopes: ['a:b'],
      createdAt: new Date(1000).toISOString(),
      expiresAt: new Date(7000).toISOString(),
      lastUsedAt: new Date(9000).toISOString(),
      revokedAt: new Date(8000).toISOString(),
      previousSecretUntil: new Date(5000).toISOString(),
    })
    expect(listed({ ...key, organizationId: 'org-1' }, 'ak', 0).organizationId).toBe('org-1')
  })
})

describe('the key format', () => {
  it('makes keys of a lower-case prefix of 1 to 16, an id without _, and 256 bits of secret', () => {
    const { id, key } = createKeySecret('a'.repeat(16))
    expect(id).not.toContain('_')
    expect(id).toHaveLength(12)
    expect(key.startsWith(`${'a'.repeat(16)}_${id}_`)).toBe(true)
    expect(parseApiKey(key, 'a'.repeat(16))!.secret).toHaveLength(43)
    expect(createKeySecret('a1').key.startsWith('a1_')).toBe(true)
    for (const prefix of ['', 'A', '1a', 'a'.repeat(17), 'a-b', 'a_b']) {
      expect(() => createKeySecret(prefix)).toThrow('an API key prefix is 1 to 16 lower-case letters and digits, starting with a letter')
    }
  })

  it('parses a key at each edge', () => {
    const secret = 's'.repeat(22)
    expect(parseApiKey(`ak_id_${secret}`, 'ak')).toEqual({ id: 'id', secret })
    expect(parseApiKey(`ak_id_${secret}_more`, 'ak')).toEqual({ id: 'id', secret: `${secret}_more` })
    for (const value of [`ak_id_${'s'.repeat(21)}`, `ak__${secret}`, `ak_${secret}`, `akx_id_${secret}`, `xak_id_${secret}`, `ak_i.d_${secret}`, `ak_id_${secret}=`, `ak_id_`]) {
      expect(parseApiKey(value, 'ak')).toBeUndefined()
    }
  })

  it('hashes id and secret with HMAC-SHA-256 under the HKDF key of the secret', async () => {
    const key = Buffer.from(hkdfSync('sha256', 'config-secret', Buffer.alloc(0), 'authchart api-key hash v1', 32))
    const expected = createHmac('sha256', key).update('id.secret').digest('base64url')
    expect(await hashKeySecret('config-secret', 'id', 'secret')).toBe(expected)
  })

  it('compares hashes whole: a prefix, an extension or one character off is no match', async () => {
    expect(hashesEqual('abc', 'abc')).toBe(true)
    for (const other of ['ab', 'abcd', 'abd', 'xbc', '']) expect(hashesEqual('abc', other)).toBe(false)
    const stored = await hashKeySecret('old', 'id', 'secret')
    expect(await keySecretMatches(['new', 'old'], 'id', 'secret', stored)).toBe(true)
    expect(await keySecretMatches(['new'], 'id', 'secret', stored)).toBe(false)
    expect(await keySecretMatches([], 'id', 'secret', stored)).toBe(false)
  })
})

describe('the memory adapter\'s keys', () => {
  const key: AdapterApiKey = {
    id: 'k1',
    userId: 'u1',
    organizationId: 'org-1',
    name: 'ci',
    scopes: ['a:b'],
    hash: 'h',
    createdAt: new Date(1000),
    expiresAt: new Date(2000),
    revokedAt: null,
    lastUsedAt: null,
    previousHash: null,
    previousUntil: null,
  }

  it('refuses a second key of one id, and keeps the owner whatever a change says', async () => {
    const methods = memoryApiKeyMethods(createMemoryStore())
    await methods.createApiKey(key)
    await expect(methods.createApiKey({ ...key, userId: 'u2' })).rejects.toThrow('an API key with id k1 exists')
    const updated = await methods.updateApiKey({ id: 'k1', name: undefined, userId: 'u2', organizationId: 'org-2', revokedAt: new Date(3000) } as never)
    expect(updated).toMatchObject({ userId: 'u1', organizationId: 'org-1', name: 'ci', revokedAt: new Date(3000) })
    expect(await methods.getApiKey('k1')).toMatchObject({ userId: 'u1', organizationId: 'org-1', name: 'ci' })
    expect(await methods.updateApiKey({ id: 'nope', name: 'x' } as never)).toBeNull()
    expect(await methods.listApiKeys('u2')).toEqual([])
    expect(await methods.listOrganizationApiKeys('org-2')).toEqual([])
    expect((await methods.listOrganizationApiKeys('org-1')).map((k) => k.id)).toEqual(['k1'])
  })

  it('hands out copies: changing one changes nothing stored', async () => {
    const methods = memoryApiKeyMethods(createMemoryStore())
    const created = await methods.createApiKey(key)
    created.scopes.push('x:y')
    created.expiresAt!.setTime(0)
    const read = (await methods.getApiKey('k1'))!
    expect(read).toMatchObject({ revokedAt: null, lastUsedAt: null, previousUntil: null })
    expect(read.scopes).toEqual(['a:b'])
    expect(read.expiresAt!.getTime()).toBe(2000)
    read.scopes.push('x:y')
    ;(await methods.listApiKeys('u1'))[0]!.scopes.push('z:z')
    expect((await methods.getApiKey('k1'))!.scopes).toEqual(['a:b'])
  })

  it('keeps a personal key personal through a change', async () => {
    const methods = memoryApiKeyMethods(createMemoryStore())
    const { organizationId: _organizationId, ...personal } = key
    await methods.createApiKey(personal)
    expect((await methods.updateApiKey({ id: 'k1', name: 'renamed' } as never))!.organizationId).toBeNull()
  })
})

describe('the key a request presents, and each refusal\'s answer', () => {
  function instance(options: Parameters<typeof apiKeys>[0] = {}) {
    const adapter = MemoryAdapter(createMemoryStore())
    return { adapter, config: testConfig({ adapter, apiKeys: apiKeys(options) }) }
  }
  const presenting = (headers: Record<string, string>) => new Request('https://authchart.test/api/reports', { headers })

  it('reads Bearer in any case with any spaces, trims its own header, and refuses anything else as a wrong key', async () => {
    const { config } = instance()
    const { key } = await createApiKey(config, 'u1', { name: 'ci', scopes: [] })
    for (const authorization of [`Bearer ${key}`, `bearer ${key}`, `BEARER   ${key}`, `  Bearer ${key}  `]) {
      expect((await verifyApiKey(presenting({ authorization }), config)).ok, authorization).toBe(true)
    }
    for (const authorization of [`Bearer ${key} extra`, `Bearer${key}`, `Token ${key}`, key, `xBearer ${key}`]) {
      const answer = await verifyApiKey(presenting({ authorization }), config)
      expect(answer.ok ? 200 : answer.status, authorization).toBe(401)
      expect(answer.ok || answer.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
    }
    const own = instance({ header: 'X-Api-Key' })
    const issued = await createApiKey(own.config, 'u1', { name: 'ci', scopes: [] })
    expect((await verifyApiKey(presenting({ 'x-api-key': `  ${issued.key} ` }), own.config)).ok).toBe(true)
    const blank = await verifyApiKey(presenting({ 'x-api-key': '   ' }), own.config)
    expect(blank.ok || blank.response.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('answers each refusal in JSON, out of caches, naming what it needs', async () => {
    const { config } = instance()
    const { key } = await createApiKey(config, 'u1', { name: 'ci', scopes: ['a:read'] })
    const none = await verifyApiKey(presenting({}), config)
    const wrong = await verifyApiKey(presenting({ authorization: `Bearer ak_nosuchid0000_${'A'.repeat(43)}` }), config)
    const scoped = await verifyApiKey(presenting({ authorization: `Bearer ${key}` }), config, { scopes: ['a:read', 'b:write'] })
    const answers = [
      [none, 401, 'Bearer', 'invalid_request'],
      [wrong, 401, 'Bearer error="invalid_token"', 'invalid_token'],
      [scoped, 403, 'Bearer error="insufficient_scope", scope="a:read b:write"', 'insufficient_scope'],
    ] as const
    for (const [answer, status, challenge, error] of answers) {
      expect(answer.ok).toBe(false)
      if (answer.ok) continue
      expect(answer.status).toBe(status)
      expect(answer.response.status).toBe(status)
      expect(answer.response.headers.get('www-authenticate')).toBe(challenge)
      expect(answer.response.headers.get('content-type')).toBe('application/json')
      expect(answer.response.headers.get('cache-control')).toBe('no-store')
      expect(await answer.response.json()).toEqual({ error })
    }
  })

  it('answers an outage 503 with Retry-After and no challenge', async () => {
    const { adapter } = instance()
    const config = testConfig({ adapter: { ...adapter, getApiKey: async () => Promise.reject(new Error('down')) }, apiKeys: apiKeys(), availability: { retryAfter: 7 } } as never)
    const answer = await verifyApiKey(presenting({ authorization: `Bearer ak_someid000000_${'A'.repeat(43)}` }), config)
    expect(answer.ok).toBe(false)
    if (answer.ok) return
    expect(answer.status).toBe(503)
    expect(answer.response.headers.get('retry-after')).toBe('7')
    expect(answer.response.headers.get('www-authenticate')).toBeNull()
    expect(await answer.response.json()).toEqual({ error: 'temporarily_unavailable' })
  })

  it('answers a verified key frozen, with its organisation or null', async () => {
    const { config } = instance()
    const { key } = await createApiKey(config, 'u1', { name: 'ci', scopes: ['a:read'] })
    const answer = await verifyApiKey(presenting({ authorization: `Bearer ${key}` }), config, { scopes: ['a:read'] })
    expect(answer.ok && answer.key).toStrictEqual({ id: expect.any(String), userId: 'u1', organizationId: null, name: 'ci', scopes: ['a:read'] })
    expect(answer.ok && Object.isFrozen(answer.key) && Object.isFrozen(answer.key.scopes)).toBe(true)
  })
})

describe('the routes at their edges', () => {
  async function routes() {
    const setup = await twoOrganizations('jwt', { apiKeys: apiKeys(), organizations: organizations({ roles: { revoker: { apiKey: ['revoke'] } } }) })
    const post = async (client: Client, body: Record<string, unknown>) => {
      const csrfToken = await client.csrfToken()
      const response = await client.send({ method: 'POST', path: '/api-keys', json: { ...body, csrfToken }, headers: { accept: 'application/json' } })
      return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> | null }
    }
    const list = async (client: Client, query: Record<string, string> = {}) => {
      const response = await client.send({ path: '/api-keys', query })
      return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> | null }
    }
    return { ...setup, post, list }
  }

  it('takes an organisation id of 1 to 256 characters for the list', async () => {
    const { alice, list } = await routes()
    expect(await list(alice, { organizationId: '' })).toMatchObject({ status: 400, body: { error: 'InvalidRequest' } })
    expect(await list(alice, { organizationId: 'o'.repeat(257) })).toMatchObject({ status: 400, body: { error: 'InvalidRequest' } })
    expect(await list(alice, { organizationId: 'o'.repeat(256) })).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    const own = await list(alice, { organizationId: ACME })
    expect(own).toMatchObject({ status: 200, body: { apiKeys: [] } })
    expect(own.headers.get('cache-control')).toContain('no-store')
  })

  it('takes a key id of up to 64 characters, and revokes a key once', async () => {
    const { alice, post } = await routes()
    expect(await post(alice, { action: 'revoke', id: 'x'.repeat(64) })).toMatchObject({ status: 404, body: { error: 'NotFound' } })
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    expect(created.status).toBe(201)
    expect(created.headers.get('cache-control')).toContain('no-store')
    const { id } = created.body!.apiKey as { id: string }
    const revoked = await post(alice, { action: 'revoke', id })
    expect(revoked).toMatchObject({ status: 200, body: { apiKey: { id, revokedAt: expect.any(String) } } })
    expect(Object.keys(revoked.body!)).toEqual(['apiKey'])
    expect(await post(alice, { action: 'revoke', id })).toMatchObject({ status: 404, body: { error: 'NotFound' } })
    expect(await post(alice, { action: 'rotate', id })).toMatchObject({ status: 404, body: { error: 'NotFound' } })
  })

  it('lets a role that may revoke but not create revoke an organisation key over HTTP, not rotate it, whatever overlap a revoke names', async () => {
    const { adapter, alice, bob, post } = await routes()
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'revoker' })
    const created = await post(alice, { action: 'create', name: 'deploy', scopes: [], organizationId: ACME })
    const { id } = created.body!.apiKey as { id: string }
    expect(await post(bob, { action: 'rotate', id })).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect(await post(bob, { action: 'revoke', id, overlap: -1 })).toMatchObject({ status: 200, body: { apiKey: { id } } })
  })

  it('rotates with the overlap asked or the configured one, refusing one that is not whole seconds', async () => {
    const { alice, post } = await routes()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    const { id } = created.body!.apiKey as { id: string }
    expect(await post(alice, { action: 'rotate', id, overlap: -1 })).toMatchObject({ status: 400, body: { error: 'InvalidRequest' } })
    const rotated = await post(alice, { action: 'rotate', id })
    expect(rotated).toMatchObject({ status: 200, body: { key: expect.stringMatching(new RegExp(`^ak_${id}_`)), apiKey: { id, previousSecretUntil: expect.any(String) } } })
    expect((await post(alice, { action: 'rotate', id, overlap: 0 })).body).toMatchObject({ apiKey: { previousSecretUntil: null } })
  })
})

describe('managing keys at the module', () => {
  const REVOKER_ROLES = { revoker: { apiKey: ['revoke', 'read'] } }

  async function orgWorld(adapterOverrides: (adapter: ReturnType<typeof MemoryAdapter>) => Record<string, unknown> = () => ({})) {
    const adapter = MemoryAdapter(createMemoryStore())
    await adapter.createOrganization({ id: 'org-1', slug: 'one', name: 'one', verifiedDomains: [], metadata: {}, createdAt: new Date() })
    await adapter.createMembership({ organizationId: 'org-1', userId: 'owner', role: 'owner', status: 'active', createdAt: new Date() })
    await adapter.createMembership({ organizationId: 'org-1', userId: 'revoker', role: 'revoker', status: 'active', createdAt: new Date() })
    const config = testConfig({ adapter: { ...adapter, ...adapterOverrides(adapter) } as never, apiKeys: apiKeys(), organizations: organizations({ roles: REVOKER_ROLES }) })
    return { adapter, config }
  }

  it('lets a role that may revoke but not create revoke an organisation key, and not rotate it', async () => {
    const { config } = await orgWorld()
    const made = (await createApiKey(config, 'owner', { name: 'ci', scopes: [], organizationId: 'org-1' }))!
    expect(await rotateApiKey(config, 'revoker', made.apiKey.id)).toBeNull()
    expect(await revokeApiKey(config, 'revoker', made.apiKey.id)).toBe(true)
  })

  it('trusts no membership the store answers for another organisation or user', async () => {
    for (const other of [{ organizationId: 'org-2' }, { userId: 'someone-else' }]) {
      const { config } = await orgWorld((adapter) => ({
        getMembership: async (organizationId: string, userId: string) => {
          const membership = await adapter.getMembership(organizationId, userId)
          return membership && { ...membership, ...other }
        },
      }))
      expect(await createApiKey(config, 'owner', { name: 'ci', scopes: [], organizationId: 'org-1' })).toBeNull()
    }
  })

  it('shows no row a store answers for another user or organisation', async () => {
    const { adapter, config } = await orgWorld()
    await createApiKey(config, 'owner', { name: 'mine', scopes: [] })
    await createApiKey(config, 'revoker', { name: 'theirs', scopes: [] })
    await createApiKey(config, 'owner', { name: 'org', scopes: [], organizationId: 'org-1' })
    const everything = async () => [...(await adapter.listApiKeys('owner')), ...(await adapter.listApiKeys('revoker'))]
    const leaky = testConfig({ adapter: { ...adapter, listApiKeys: everything, listOrganizationApiKeys: everything } as never, apiKeys: apiKeys(), organizations: organizations({ roles: REVOKER_ROLES }) })
    expect((await listApiKeys(leaky, 'owner')).map((key) => key.name).sort()).toEqual(['mine', 'org'])
    expect((await listApiKeys(leaky, 'owner', 'org-1'))!.map((key) => key.name)).toEqual(['org'])
  })

  it('rotates a key until the instant it expires, keeping no previous hash without an overlap', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const { adapter, config } = await orgWorld()
      const made = await createApiKey(config, 'owner', { name: 'ci', scopes: [], expiresIn: 60 })
      expect(await rotateApiKey(config, 'owner', made.apiKey.id, 0)).not.toBeNull()
      expect((await adapter.getApiKey(made.apiKey.id))!.previousHash).toBeNull()
      vi.setSystemTime(Date.now() + 60_000)
      expect(await rotateApiKey(config, 'owner', made.apiKey.id)).toBeNull()
    } finally {
      vi.useRealTimers()
    }
  })

  it('answers null when the key vanishes while it is rotated', async () => {
    const { config } = await orgWorld(() => ({ updateApiKey: async () => null }))
    const made = await createApiKey(config, 'owner', { name: 'ci', scopes: [] })
    expect(await rotateApiKey(config, 'owner', made.apiKey.id)).toBeNull()
  })

  it('refuses a configuration without API keys, naming what to add', async () => {
    const request = new Request('https://authchart.test/api', { headers: { authorization: 'Bearer x' } })
    await expect(verifyApiKey(request, testConfig({ adapter: MemoryAdapter(createMemoryStore()) }))).rejects.toThrow(
      "API keys are not configured: add `apiKeys: apiKeys()` from 'authchart/api-keys'",
    )
  })
})

describe('verification against what the store answers', () => {
  it('refuses a record the store answers for another id, even with that record\'s own secret', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const config = testConfig({ adapter, apiKeys: apiKeys() })
    const { key, apiKey } = await createApiKey(config, 'u1', { name: 'ci', scopes: [] })
    const confused = testConfig({ adapter: { ...adapter, getApiKey: async () => adapter.getApiKey(apiKey.id) } as never, apiKeys: apiKeys() })
    const secret = parseApiKey(key, 'ak')!.secret
    const answer = await verifyApiKey(new Request('https://authchart.test/api', { headers: { authorization: `Bearer ak_otherid00000_${secret}` } }), confused)
    expect(answer.ok ? 200 : answer.status).toBe(401)
  })

  it('records the use of each key once a minute, and logs a record it could not write', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(Math.ceil(Date.now() / 60_000) * 60_000)
      const adapter = MemoryAdapter(createMemoryStore())
      const writes: string[] = []
      const counting = { ...adapter, updateApiKey: async (change: { id: string; lastUsedAt?: Date }) => (change.lastUsedAt && writes.push(change.id), adapter.updateApiKey(change as never)) }
      const config = testConfig({ adapter: counting as never, apiKeys: apiKeys() })
      const first = await createApiKey(config, 'u1', { name: 'a', scopes: [] })
      const second = await createApiKey(config, 'u1', { name: 'b', scopes: [] })
      const use = (key: string) => verifyApiKey(new Request('https://authchart.test/api', { headers: { authorization: `Bearer ${key}` } }), config)
      await use(first.key)
      vi.setSystemTime(Date.now() + 30_000)
      await use(first.key)
      await use(second.key)
      expect(writes).toEqual([first.apiKey.id, second.apiKey.id])
      const failing = testConfig({ adapter: { ...adapter, updateApiKey: async () => Promise.reject(new Error('read-only replica')) } as never, apiKeys: apiKeys() })
      vi.setSystemTime(Date.now() + 60_000)
      expect((await verifyApiKey(new Request('https://authchart.test/api', { headers: { authorization: `Bearer ${first.key}` } }), failing)).ok).toBe(true)
      // The adapter's own log of its failure, and the record's.
      expect(failing.logger.error).toHaveBeenCalledTimes(2)
    } finally {
      vi.useRealTimers()
    }
  })

  it('names no scope in the challenge of a key refused for its organisation', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const config = testConfig({ adapter, apiKeys: apiKeys() })
    const { key } = await createApiKey(config, 'u1', { name: 'ci', scopes: [] })
    const answer = await verifyApiKey(new Request('https://authchart.test/api', { headers: { authorization: `Bearer ${key}` } }), config, { organizationId: 'org-1' })
    expect(answer.ok || answer.response.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope=""')
  })
})
