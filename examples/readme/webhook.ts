import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Checks an `authchart-signature` header (`t=<unix seconds>,v1=<hex>`) against the raw request
 * body: `v1` must be HMAC-SHA256(secret, "<t>.<body>"), and `t` within five minutes of now.
 */
export function verifyWebhook(header: string, rawBody: string, secret: string, toleranceSeconds = 300): boolean {
  const fields = new Map(header.split(',').map((part) => part.split('=', 2) as [string, string]))
  const t = Number(fields.get('t'))
  const v1 = fields.get('v1') ?? ''
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest()
  const given = Buffer.from(v1, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}
