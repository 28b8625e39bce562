/**
 * Signed webhooks: selected audit events POSTed as JSON to a configured URL, each signed with
 * HMAC-SHA-256 over a timestamp and the body, retried with backoff, never waited for by the
 * request that produced them (the sink only queues). Each attempt is bounded in time.
 *
 * The signature header, `authchart-signature: t=<unix seconds>,v1=<hex>`, is
 * `hex(HMAC-SHA256(secret, "<t>.<body>"))`: a receiver recomputes it over the raw body, compares in
 * constant time, and refuses a `t` too far from its clock (a replayed delivery).
 *
 * @module
 */
import { toHex } from '../crypto.js'
import type { Logger } from '../logger.js'
import { escapeControl } from '../logger.js'
import type { AuditEvent, AuditKind, AuditSinkFunction } from './types.js'

/** The `audit.webhook` option. */
export interface WebhookOptions {
  /** Where events are POSTed (`https:` in production). */
  url: string
  /** The key of the signature; share it with the receiver only. */
  secret: string
  /** The kinds of event to send (`flow`, `sign-out`, ...); all by default. */
  events?: readonly AuditKind[] | undefined
  /** Attempts per event, the first included (default 5). */
  attempts?: number | undefined
  /** Milliseconds before the first retry; each next one waits 4 times longer (default 1000). */
  backoff?: number | undefined
  /** Milliseconds one attempt may take before it counts as failed (default 5000). */
  timeout?: number | undefined
}

/** The header that carries the signature. */
export const SIGNATURE_HEADER = 'authchart-signature'

/** Deliveries waiting for a retry at most, per webhook: past it the oldest are dropped (logged). */
const MAX_PENDING = 1000

const encoder = new TextEncoder()

/** `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, the value of {@link SIGNATURE_HEADER}. */
export async function signWebhook(secret: string, body: string, unixSeconds: number): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(`${unixSeconds}.${body}`))
  return `t=${unixSeconds},v1=${toHex(new Uint8Array(mac))}`
}

function webhookFailure(reason: string): Error {
  const error = new Error(escapeControl(reason))
  error.name = 'AuditWebhookError'
  return error
}

/**
 * A sink that queues each selected event for the webhook and returns at once: the request never
 * waits for the receiver. Failed attempts (a status other than 2xx, a network error, a timeout)
 * are retried after `backoff`, 4×`backoff`, ... until `attempts` are spent, then logged as dropped.
 */
export function webhookSink(options: WebhookOptions, logger: Logger): AuditSinkFunction {
  const kinds = options.events ? new Set<AuditKind>(options.events) : undefined
  const attempts = options.attempts ?? 5
  const backoff = options.backoff ?? 1000
  const timeout = options.timeout ?? 5000
  let pending = 0

  async function attempt(event: AuditEvent, body: string, tried: number): Promise<void> {
    let failure: string
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: await signWebhook(options.secret, body, Math.floor(Date.now() / 1000)),
          'authchart-event-id': event.id,
        },
        body,
        signal: AbortSignal.timeout(timeout),
        redirect: 'manual',
      })
      await response.body?.cancel()
      if (response.ok) return
      failure = `status ${response.status}`
    } catch (error) {
      failure = (error as Error)?.name === 'TimeoutError' ? `no answer in ${timeout} ms` : 'network error'
    }
    if (tried + 1 >= attempts) {
      logger.error(webhookFailure(`audit webhook: event ${event.id} dropped after ${attempts} attempts (${failure})`))
      return
    }
    if (pending >= MAX_PENDING) {
      logger.error(webhookFailure(`audit webhook: event ${event.id} dropped, ${MAX_PENDING} deliveries already wait for a retry`))
      return
    }
    pending++
    const timer = setTimeout(() => {
      pending--
      void attempt(event, body, tried + 1)
    }, backoff * 4 ** tried)
    // A retry waiting never keeps the process alive.
    ;(timer as { unref?: () => void }).unref?.()
  }

  return (event) => {
    if (kinds && !kinds.has(event.kind)) return
    // Not awaited: the request goes on while the receiver answers (or does not).
    void attempt(event, JSON.stringify(event), 0)
  }
}
