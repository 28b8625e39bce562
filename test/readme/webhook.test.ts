/**
 * README `webhook.ts`: the receiver's check accepts a delivery authchart signed, and refuses a
 * changed body, another key and an old timestamp.
 */
import { describe, expect, it } from 'vitest'
import { signWebhook } from '../../core/audit/webhook.js'
import { loadSnippet } from './snippet.js'

const { verifyWebhook } = await loadSnippet<{ verifyWebhook: (header: string, body: string, secret: string) => boolean }>('webhook.ts', {})
const KEY = 'whsec-0123456789abcdef'
const body = JSON.stringify({ v: 1, kind: 'sign-out', id: 'e-1' })
const now = () => Math.floor(Date.now() / 1000)

describe('README webhook.ts', () => {
  it('accepts what authchart signed, and nothing else', async () => {
    expect(verifyWebhook(await signWebhook(KEY, body, now()), body, KEY)).toBe(true)
    expect(verifyWebhook(await signWebhook(KEY, body, now()), body.replace('sign-out', 'sign-in'), KEY)).toBe(false)
    expect(verifyWebhook(await signWebhook('another key of some length', body, now()), body, KEY)).toBe(false)
    expect(verifyWebhook(await signWebhook(KEY, body, now() - 3600), body, KEY)).toBe(false)
    expect(verifyWebhook('t=1,v1=zz', body, KEY)).toBe(false)
    expect(verifyWebhook('', body, KEY)).toBe(false)
  })
})
