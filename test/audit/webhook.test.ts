/**
 * Signed webhooks against a loopback HTTP receiver: the signature verifies over the raw body as
 * the README says, a receiver that fails twice gets the event on the third try, a hanging
 * receiver does not slow the sign-in, only the selected kinds are sent, and no body holds a
 * secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { signWebhook, webhookSink } from '../../core/audit/webhook.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { Client, credentialsProvider, SECRET, testConfig } from '../fixtures/http.js'
import { auditTrail } from '../../core/audit.js'

const HOOK_SECRET = 'whsec-0123456789abcdef-loopback'

interface Delivery {
  headers: IncomingMessage['headers']
  body: string
  at: number
}

const servers: ReturnType<typeof createServer>[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** A receiver on 127.0.0.1 that answers each delivery as `answer` says (by its index). */
async function receiver(answer: (index: number, res: ServerResponse) => void = (_i, res) => res.end('ok')) {
  const deliveries: Delivery[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() })
      answer(deliveries.length - 1, res)
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/hooks/auth`, deliveries }
}

/** The receiver's check, as README's verification snippet writes it. */
function verify(header: string, body: string, secret: string, toleranceSeconds = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]))
  const t = Number(parts.t)
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds || !parts.v1) return false
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest()
  const given = Buffer.from(parts.v1, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const waitFor = async (check: () => boolean, ms = 5000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function signIn(config: ReturnType<typeof testConfig>, password = 'wonderland') {
  const client = new Client(config)
  const csrfToken = await client.csrfToken()
  const started = performance.now()
  const response = await client.send({ path: '/callback/credentials', body: { username: 'alice', password, csrfToken } })
  return { client, response, ms: performance.now() - started }
}

describe('audit webhooks', () => {
  it('POSTs the event as JSON with a signature that verifies over the raw body, and one that does not under another key', async () => {
    const hook = await receiver()
    const { response } = await signIn(testConfig({ audit: auditTrail({ webhook: { url: hook.url, secret: HOOK_SECRET } }) }))
    expect(response.status).toBe(302)
    await waitFor(() => hook.deliveries.length === 1)
    const [delivery] = hook.deliveries
    expect(delivery!.headers['content-type']).toBe('application/json')
    const event = JSON.parse(delivery!.body) as AuditEvent
    expect(event).toMatchObject({ kind: 'flow', provider: 'credentials', outcome: { type: 'signed-in' } })
    expect(delivery!.headers['authchart-event-id']).toBe(event.id)
    const header = String(delivery!.headers['authchart-signature'])
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(verify(header, delivery!.body, HOOK_SECRET)).toBe(true)
    expect(verify(header, delivery!.body, 'another secret of the same length!')).toBe(false)
    expect(verify(header, delivery!.body.replace('signed-in', 'signed-out'), HOOK_SECRET)).toBe(false)
    // The body holds no secret: not the auth secret, not the webhook's key.
    expect(delivery!.body).not.toContain(SECRET)
    expect(delivery!.body).not.toContain(HOOK_SECRET)
    expect(delivery!.body).not.toContain('wonderland')
  })

  it('signs "<t>.<body>" with HMAC-SHA-256, as the README writes it', async () => {
    const header = await signWebhook('key', '{"a":1}', 1700000000)
    expect(header).toBe(`t=1700000000,v1=${createHmac('sha256', 'key').update('1700000000.{"a":1}').digest('hex')}`)
  })

  it('retries a receiver that fails twice: the event arrives on the third try, after the backoff', async () => {
    const hook = await receiver((index, res) => {
      res.statusCode = index < 2 ? 503 : 204
      res.end()
    })
    const { response } = await signIn(testConfig({ audit: auditTrail({ webhook: { url: hook.url, secret: HOOK_SECRET, backoff: 20 } }) }))
    expect(response.status).toBe(302)
    await waitFor(() => hook.deliveries.length === 3)
    const [first, second, third] = hook.deliveries
    expect(third!.body).toBe(first!.body)
    expect(third!.headers['authchart-event-id']).toBe(first!.headers['authchart-event-id'])
    expect(verify(String(third!.headers['authchart-signature']), third!.body, HOOK_SECRET)).toBe(true)
    // Backoff 20 ms, then 80 ms.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(15)
    expect(third!.at - second!.at).toBeGreaterThanOrEqual(70)
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(hook.deliveries).toHaveLength(3)
  })

  it('schedules no retry once stopped, even for an attempt that was on its way when stop() came', async () => {
    // The receiver holds the first attempt, refuses it after the sink was stopped, and takes any other.
    let refuse: () => void = () => {}
    const hook = await receiver((index, res) => {
      if (index > 0) return res.end('ok')
      refuse = () => {
        res.statusCode = 503
        res.end()
      }
    })
    const sink = webhookSink({ url: hook.url, secret: HOOK_SECRET, backoff: 20 }, console)
    sink({ id: 'evt-stopped', kind: 'sign-in', at: new Date().toISOString(), v: 2 } as unknown as AuditEvent)
    await waitFor(() => hook.deliveries.length === 1)
    sink.stop()
    refuse()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(hook.deliveries).toHaveLength(1)
  })

  it('gives up after the attempts, logging the event id and never the body', async () => {
    const hook = await receiver((_index, res) => {
      res.statusCode = 500
      res.end()
    })
    const config = testConfig({ audit: auditTrail({ webhook: { url: hook.url, secret: HOOK_SECRET, backoff: 5, attempts: 2 } }) })
    await signIn(config)
    await waitFor(() => config.logger.error.mock.calls.some(([error]) => /dropped after 2 attempts/.test(String((error as Error).message))))
    expect(hook.deliveries).toHaveLength(2)
    const logged = JSON.stringify(config.logger.error.mock.calls.map(([error]) => (error as Error).message))
    expect(logged).not.toContain(HOOK_SECRET)
    expect(logged).not.toContain('credentials-signin')
  })

  it('does not slow the sign-in when the receiver hangs', async () => {
    const hanging = await receiver(() => {})
    const slow = testConfig({ audit: auditTrail({ webhook: { url: hanging.url, secret: HOOK_SECRET, timeout: 10_000 } }) })
    const quick = testConfig({})
    await signIn(quick)
    await signIn(slow)
    const base = await signIn(quick)
    const hung = await signIn(slow)
    expect(hung.response.status).toBe(302)
    await waitFor(() => hanging.deliveries.length >= 2)
    // The request never waits for the receiver: far below the attempt's 10 s.
    expect(hung.ms).toBeLessThan(base.ms + 1000)
  })

  it('sends only the selected kinds', async () => {
    const hook = await receiver()
    const config = testConfig({
      audit: auditTrail({ webhook: { url: hook.url, secret: HOOK_SECRET, events: ['sign-out'] } }),
      providers: [credentialsProvider()],
    })
    const { client } = await signIn(config)
    await signIn(config, 'wrong')
    await client.signOut()
    await waitFor(() => hook.deliveries.length === 1)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(hook.deliveries.map((delivery) => (JSON.parse(delivery.body) as AuditEvent).kind)).toEqual(['sign-out'])
  })

  it('holds no secret in any body: marker values in every field a user controls appear in none', async () => {
    const MARKER = 'Zq9Marker'
    const hook = await receiver()
    const config = testConfig({
      audit: auditTrail({ webhook: { url: hook.url, secret: HOOK_SECRET } }),
      providers: [credentialsProvider((c) => (c.password === `${MARKER}good` ? { id: 'u-7', name: `${MARKER}name`, email: `${MARKER}mail@example.com` } : null))],
      rateLimit: { credentials: { perIdentifier: 2 } },
    })
    const client = new Client(config)
    const seen = [SECRET, HOOK_SECRET]
    for (const password of [`${MARKER}bad`, `${MARKER}good`, `${MARKER}bad`, `${MARKER}bad`]) {
      const csrfToken = await client.csrfToken()
      seen.push(csrfToken)
      await client.send({
        path: '/callback/credentials',
        query: { [`${MARKER}qk`]: `${MARKER}qv` },
        body: { username: `${MARKER}user`, password, csrfToken, callbackUrl: `/next?${MARKER}cb=1` },
        headers: { 'user-agent': `${MARKER}agent/1.0` },
      })
      seen.push(...client.jar.cookies.values())
    }
    await client.signOut()
    await waitFor(() => hook.deliveries.some((delivery) => delivery.body.includes('"sign-out"')))
    const kinds = hook.deliveries.map((delivery) => (JSON.parse(delivery.body) as AuditEvent).kind)
    expect(kinds).toContain('rate-limited')
    const text = hook.deliveries.map((delivery) => delivery.body).join('\n')
    expect(text).not.toContain(MARKER)
    expect(text).not.toContain(MARKER.toLowerCase())
    for (const secret of seen.filter((value) => value.length >= 6)) expect(text).not.toContain(secret)
    expect(text).not.toMatch(/[\w.+-]+@[\w-]+\.[\w.]+/)
    expect(text).not.toMatch(/https?:\/\//)
  })

  it('refuses a webhook without an http(s) URL or with a short secret at load', async () => {
    const client = new Client(testConfig({ audit: auditTrail({ webhook: { url: 'file:///etc/passwd', secret: HOOK_SECRET } }) }))
    expect((await client.send({ path: '/session' })).status).toBe(500)
    const short = new Client(testConfig({ audit: auditTrail({ webhook: { url: 'https://hooks.example/a', secret: 'short' } }) }))
    expect((await short.send({ path: '/session' })).status).toBe(500)
  })
})
