/**
 * The audit trail's modules at the unit level: the webhook queue's keys and records, and the
 * signature a receiver recomputes.
 */
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { signWebhook } from '../../core/audit/webhook.js'
import { keepsSets, parseDelivery, queueKeys } from '../../core/audit/webhook-queue.js'
import { memoryAuthStore } from '../../core/store/index.js'

describe('the webhook signature', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">', async () => {
    const expected = createHmac('sha256', 'whsec-1').update('1700000000.{"a":1}').digest('hex')
    expect(await signWebhook('whsec-1', '{"a":1}', 1_700_000_000)).toBe(`t=1700000000,v1=${expected}`)
  })
})

describe('the webhook queue', () => {
  it('keys one webhook’s records, claims and pending sets under a prefix of its URL’s hash', async () => {
    const a = await queueKeys('https://a.example/hook')
    const b = await queueKeys('https://b.example/hook')
    expect(a.record('e-1')).toMatch(/^audit-webhook:[0-9a-f]{16}:d:e-1$/)
    expect(a.claim('e-1', 2)).toBe(`${a.record('e-1').slice(0, -'d:e-1'.length)}e-1:2`)
    expect(a.pending(7)).toBe(`${a.record('e-1').slice(0, -'d:e-1'.length)}pending:7`)
    expect(b.record('e-1')).not.toBe(a.record('e-1'))
    expect((await queueKeys('https://a.example/hook')).record('e-1')).toBe(a.record('e-1'))
  })

  it('reads only a whole record of its own', () => {
    const good = { body: '{}', attempt: 1, next: 5 }
    expect(parseDelivery(JSON.stringify(good))).toEqual(good)
    expect(parseDelivery(null)).toBeNull()
    expect(parseDelivery('not json')).toBeNull()
    for (const bad of [{ ...good, body: 1 }, { ...good, attempt: 1.5 }, { ...good, attempt: '1' }, { ...good, next: '5' }, { attempt: 0, next: 1 }]) {
      expect(parseDelivery(JSON.stringify(bad))).toBeNull()
    }
  })

  it('lives only in a store that keeps sets', () => {
    const store = memoryAuthStore()
    expect(keepsSets(store)).toBe(true)
    expect(keepsSets(undefined)).toBe(false)
    expect(keepsSets({ ...store, addToSet: undefined })).toBe(false)
    expect(keepsSets({ ...store, setMembers: undefined })).toBe(false)
  })
})
