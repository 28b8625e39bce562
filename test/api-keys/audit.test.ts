/**
 * API keys in the audit trail and in telemetry: creating, rotating and revoking a key through
 * `{basePath}/api-keys`, and a key `verifyApiKey` refuses, are each one event naming the key by its
 * prefix only; no event, span or metric point carries a secret, and a user's activity lists their
 * own key events.
 */
import { describe, expect, it } from 'vitest'
import { apiKeys, verifyApiKey, type ListedApiKey } from '../../core/api-keys.js'
import { auditTrail } from '../../core/audit.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, ORIGIN } from '../fixtures/http.js'
import { twoOrganizations, USERS } from '../organizations/fixture.js'
import { otelSdk } from '../telemetry/helpers.js'

async function world() {
  const events: AuditEvent[] = []
  const sdk = otelSdk()
  const setup = await twoOrganizations('jwt', {
    apiKeys: apiKeys(),
    store: memoryAuthStore(),
    audit: auditTrail({
      sink: {
        write: (event) => void events.push(event),
        listForUser: async (userId) => events.filter((event) => event.userId === userId).reverse(),
      },
    }),
    telemetry: sdk.telemetry,
  })
  return { ...setup, events, sdk }
}

async function post(client: Client, body: Record<string, unknown>) {
  const csrfToken = await client.csrfToken()
  const response = await client.send({ method: 'POST', path: '/api-keys', json: { ...body, csrfToken }, headers: { accept: 'application/json' } })
  return (await response.json()) as { key?: string; apiKey: ListedApiKey }
}

const bearer = (key: string) => new Request(`${ORIGIN}/api/reports`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': 'req-7' } })

describe('API keys in the audit trail', () => {
  it('records create, rotate, revoke and refusals by prefix, with no secret anywhere', async () => {
    const { config, alice, events, sdk } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: ['reports:read'] })
    const { prefix, id } = created.apiKey
    const rotated = await post(alice, { action: 'rotate', id, overlap: 0 })
    expect((await verifyApiKey(bearer(rotated.key!), config, { scopes: ['reports:write'] })).ok).toBe(false)
    expect((await verifyApiKey(bearer(created.key!), config)).ok).toBe(false)
    expect((await verifyApiKey(bearer(rotated.key!), config)).ok).toBe(true)
    await post(alice, { action: 'revoke', id })
    expect((await verifyApiKey(bearer(rotated.key!), config)).ok).toBe(false)

    const keyEvents = events.filter((event) => event.kind.startsWith('api-key-'))
    expect(keyEvents.map((event) => [event.kind, event.apiKey, event.userId, event.outcome])).toEqual([
      ['api-key-created', prefix, USERS.alice.id, undefined],
      ['api-key-rotated', prefix, USERS.alice.id, undefined],
      ['api-key-refused', prefix, USERS.alice.id, { type: 'refused', error: 'insufficient_scope' }],
      ['api-key-refused', prefix, USERS.alice.id, { type: 'refused', error: 'invalid_token' }],
      ['api-key-revoked', prefix, USERS.alice.id, undefined],
      ['api-key-refused', prefix, USERS.alice.id, { type: 'refused', error: 'invalid_token' }],
    ])
    expect(keyEvents.filter((event) => event.kind === 'api-key-refused').map((event) => event.requestId)).toEqual(['req-7', 'req-7', 'req-7'])

    const spans = sdk.spans().map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status }))
    expect(spans.length).toBeGreaterThan(0)
    const everything = JSON.stringify({ events, spans, points: await sdk.points() })
    for (const key of [created.key!, rotated.key!]) {
      expect(everything).not.toContain(key.slice(prefix.length + 1))
      expect(everything).not.toContain(key)
    }
  })

  it('names no user for a key id nobody has, and shows the owner their own key events', async () => {
    const { config, alice, events } = await world()
    const created = await post(alice, { action: 'create', name: 'ci', scopes: [] })
    const guessed = `ak_unknownid12_${'A'.repeat(43)}`
    expect((await verifyApiKey(bearer(guessed), config)).ok).toBe(false)
    expect(events.at(-1)).toMatchObject({ kind: 'api-key-refused', apiKey: 'ak_unknownid12' })
    expect(events.at(-1)!.userId).toBeUndefined()
    // An id longer than any of ours is no key's: the event does not repeat it.
    expect((await verifyApiKey(bearer(`ak_${'i'.repeat(33)}_${'A'.repeat(43)}`), config)).ok).toBe(false)
    expect(events.at(-1)).toMatchObject({ kind: 'api-key-refused' })
    expect(events.at(-1)!.apiKey).toBeUndefined()
    expect((await verifyApiKey(bearer(`ak_${'i'.repeat(32)}_${'A'.repeat(43)}`), config)).ok).toBe(false)
    expect(events.at(-1)!.apiKey).toBe(`ak_${'i'.repeat(32)}`)
    const activity = await alice.send({ path: '/audit' })
    const listed = (await activity.json()) as { kind: string; apiKey?: string }[] | { events: { kind: string; apiKey?: string }[] }
    const rows = Array.isArray(listed) ? listed : listed.events
    expect(rows.some((row) => row.kind === 'api-key-created' && row.apiKey === created.apiKey.prefix)).toBe(true)
  })

  it('keeps the answers the same without an audit trail', async () => {
    const setup = await twoOrganizations('jwt', { apiKeys: apiKeys(), store: memoryAuthStore() })
    const created = await post(setup.alice, { action: 'create', name: 'ci', scopes: [] })
    const config: AuthConfig = setup.config
    expect((await verifyApiKey(bearer(created.key!), config, { scopes: ['x:y'] })).ok).toBe(false)
    expect((await verifyApiKey(bearer(created.key!), config)).ok).toBe(true)
  })
})
