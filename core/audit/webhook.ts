/**
 * Signed webhooks: selected audit events POSTed as JSON to a configured URL, each signed with
 * HMAC-SHA-256 over a timestamp and the body, retried with backoff, never waited for by the
 * request that produced them (the sink only queues). Each attempt is bounded in time. With a
 * shared store that keeps sets, the queue lives there (see `webhook-queue.ts`).
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
import type { AuthStore } from '../store/types.js'
import type { AuditEvent, AuditKind, AuditSinkFunction, AuditWebhookOptions } from './types.js'
import { keepsSets, parseDelivery, queueKeys, type QueuedDelivery, type QueueStore } from './webhook-queue.js'

/** The header that carries the signature. */
export const SIGNATURE_HEADER = 'authchart-signature'

/** Deliveries waiting for a retry at most, per webhook: past it the oldest are dropped (logged). */
const MAX_PENDING = 1000

const encoder = new TextEncoder()

/** What {@link send} answers for a POST that stop() aborted. */
const STOPPED = 'stopped'

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

/** A webhook sink; `stop()` clears its timers (a process shutting down, or a test's killed instance). */
export interface WebhookSink extends AuditSinkFunction {
  stop(): void
}

/** Records read per sweep at most: a sweep stays short however long the queue. */
const MAX_SWEEP = 100

/** Ids remembered locally (finished, or not due before a time) before the memory is cleared. */
const MAX_REMEMBERED = 10_000

/** Milliseconds at least between two sweeps started by events (a busy instance reads the set at this pace). */
const EVENT_SWEEP_INTERVAL = 100

/** Milliseconds between two logs of a store that cannot be swept. */
const SWEEP_FAILURE_LOG_INTERVAL = 60_000

/**
 * A sink that queues each selected event for the webhook and returns at once: the request never
 * waits for the receiver. Failed attempts (a status other than 2xx, a network error, a timeout)
 * are retried after `backoff`, 4×`backoff`, ... until `attempts` are spent, then logged as dropped.
 *
 * With a `store` that keeps sets (the config's own, shared by the instances), the queue lives in
 * the store (see `webhook-queue.ts`): a restart or a killed instance loses no delivery, and one
 * instance sends each attempt. Without one, retries wait in this process's memory.
 */
export function webhookSink(options: AuditWebhookOptions, logger: Logger, store?: AuthStore): WebhookSink {
  const kinds = options.events ? new Set<AuditKind>(options.events) : undefined
  const attempts = options.attempts ?? 5
  const backoff = options.backoff ?? 1000
  const timeout = options.timeout ?? 5000
  const shared = keepsSets(store) ? store : undefined
  let pending = 0
  const timers = new Set<ReturnType<typeof setTimeout>>()
  let stopped = false
  /** Aborts the POSTs still on their way at stop(): a request not yet connected is never sent after it. */
  const halt = new AbortController()

  const later = (run: () => void, ms: number) => {
    // An attempt still on its way when stop() came must not bring a retry back to life.
    if (stopped) return
    const timer = setTimeout(() => {
      timers.delete(timer)
      run()
    }, ms)
    timers.add(timer)
    // A retry waiting never keeps the process alive.
    ;(timer as { unref?: () => void }).unref?.()
  }

  /** One POST; `undefined` when the receiver took it, else why not. */
  async function send(id: string, body: string): Promise<string | undefined> {
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: await signWebhook(options.secret, body, Math.floor(Date.now() / 1000)),
          'authchart-event-id': id,
        },
        body,
        signal: AbortSignal.any([halt.signal, AbortSignal.timeout(timeout)]),
        redirect: 'manual',
      })
      await response.body?.cancel()
      return response.ok ? undefined : `status ${response.status}`
    } catch (error) {
      if (stopped) return STOPPED
      return (error as Error)?.name === 'TimeoutError' ? `no answer in ${timeout} ms` : 'network error'
    }
  }

  const dropped = (id: string, failure: string) =>
    logger.error(webhookFailure(`audit webhook: event ${id} dropped after ${attempts} attempts (${failure})`))

  async function attempt(id: string, body: string, tried: number): Promise<void> {
    const failure = await send(id, body)
    if (failure === undefined || failure === STOPPED) return
    if (tried + 1 >= attempts) return dropped(id, failure)
    if (pending >= MAX_PENDING) {
      logger.error(webhookFailure(`audit webhook: event ${id} dropped, ${MAX_PENDING} deliveries already wait for a retry`))
      return
    }
    pending++
    later(() => {
      pending--
      void attempt(id, body, tried + 1)
    }, backoff * 4 ** tried)
  }

  const inMemory: WebhookSink = Object.assign(
    (event: AuditEvent) => {
      if (kinds && !kinds.has(event.kind)) return
      // Not awaited: the request goes on while the receiver answers (or does not).
      void attempt(event.id, JSON.stringify(event), 0)
    },
    {
      stop() {
        stopped = true
        halt.abort()
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        pending = 0
      },
    },
  )
  if (!shared) return inMemory
  return storedQueue(shared)

  function storedQueue(queue: QueueStore): WebhookSink {
    let retrySpan = attempts * timeout
    for (let tried = 0; tried + 1 < attempts; tried++) retrySpan += backoff * 4 ** tried
    /** Seconds a record lives: every retry, with a minute to spare. */
    const lifetime = Math.ceil(retrySpan / 1000) + 60
    /** Seconds an attempt stays claimed: longer than the attempt can take, so it is sent once. */
    const claimFor = Math.ceil(timeout / 1000) + 10
    const sweepEvery = Math.min(Math.max(backoff, 50), 5000)
    const keys = queueKeys(options.url)
    /** Ids this instance knows to be finished, or not due before a time (saves a read per sweep). */
    const notBefore = new Map<string, number>()
    const sending = new Set<string>()
    let interval: ReturnType<typeof setInterval> | undefined
    let sweeping = false
    let sweptAt = -Infinity
    let sweepFailureLoggedAt = -Infinity

    const remember = (id: string, until: number) => {
      if (notBefore.size >= MAX_REMEMBERED) notBefore.clear()
      notBefore.set(id, until)
    }
    const bucket = (ms: number) => Math.floor(ms / 1000 / lifetime)
    const storeFailure = (id: string, what: string) =>
      logger.error(webhookFailure(`audit webhook: event ${id}: ${what} (store unavailable)`))

    /** Claims, sends and settles the attempt `delivery.attempt` of `id`, if this instance wins it. */
    async function deliver(id: string, delivery: QueuedDelivery): Promise<void> {
      const { record, claim } = await keys
      sending.add(id)
      try {
        // Stopped while the store answered: another instance sends it (unclaimed, without waiting).
        if (stopped || !(await queue.claim(claim(id, delivery.attempt), claimFor))) return
        // Claimed: make sure another instance did not finish this attempt between the read and the claim.
        const current = parseDelivery(await queue.get(record(id)))
        if (current === null) return remember(id, Infinity)
        if (current.attempt !== delivery.attempt) return remember(id, current.next)
        // Stopped while the claim and the read were answered: nothing is sent after stop(); the
        // claim expires and another instance sends it.
        if (stopped) return
        const failure = await send(id, current.body)
        if (failure === undefined) {
          remember(id, Infinity)
          return await queue.reset(record(id))
        }
        // Aborted by stop(): not an attempt spent; its claim expires and another instance sends it.
        if (failure === STOPPED) return
        if (current.attempt + 1 >= attempts) {
          dropped(id, failure)
          remember(id, Infinity)
          return await queue.reset(record(id))
        }
        const next = Date.now() + backoff * 4 ** current.attempt
        await queue.put(record(id), JSON.stringify({ body: current.body, attempt: current.attempt + 1, next }), lifetime)
        remember(id, next)
        // A local timer is only quicker than the sweep: past the cap the sweep alone picks it up.
        if (timers.size < MAX_PENDING) later(() => void due(id).catch(() => storeFailure(id, 'not swept')), next - Date.now())
      } catch {
        // The attempt's claim expires; a sweep sends it then.
        storeFailure(id, 'attempt not settled')
      } finally {
        sending.delete(id)
      }
    }

    /** Sends `id` if it is due and no other instance has its attempt. */
    async function due(id: string): Promise<void> {
      // A sweep still reading the store when stop() came sends nothing: another instance will.
      if (stopped || sending.has(id) || (notBefore.get(id) ?? 0) > Date.now()) return
      const { record } = await keys
      const delivery = parseDelivery(await queue.get(record(id)))
      if (delivery === null) return remember(id, Infinity)
      if (delivery.next > Date.now()) return remember(id, delivery.next)
      await deliver(id, delivery)
    }

    /** Looks at the pending sets and sends what is due; one sweep at a time, bounded in reads. */
    async function sweep(): Promise<void> {
      if (sweeping) return
      sweeping = true
      sweptAt = Date.now()
      try {
        const { pending: pendingSet } = await keys
        const now = Date.now()
        const ids = [
          ...(await queue.setMembers(pendingSet(bucket(now) - 1))),
          ...(await queue.setMembers(pendingSet(bucket(now)))),
        ]
        let read = 0
        for (const id of ids) {
          if (sending.has(id) || (notBefore.get(id) ?? 0) > Date.now()) continue
          if (++read > MAX_SWEEP) break
          try {
            await due(id)
          } catch {
            storeFailure(id, 'not swept')
          }
        }
      } catch {
        if (Date.now() - sweepFailureLoggedAt >= SWEEP_FAILURE_LOG_INTERVAL) {
          sweepFailureLoggedAt = Date.now()
          logger.error(webhookFailure('audit webhook: pending deliveries not read (store unavailable)'))
        }
      } finally {
        sweeping = false
      }
    }

    async function enqueue(event: AuditEvent): Promise<void> {
      const body = JSON.stringify(event)
      const delivery: QueuedDelivery = { body, attempt: 0, next: Date.now() }
      try {
        const { record, pending: pendingSet } = await keys
        await queue.put(record(event.id), JSON.stringify(delivery), lifetime)
        await queue.addToSet(pendingSet(bucket(delivery.next)), event.id, 2 * lifetime)
      } catch {
        // The store is out: this instance still delivers the event from its memory.
        storeFailure(event.id, 'queued in memory')
        return attempt(event.id, body, 0)
      }
      await deliver(event.id, delivery)
    }

    return Object.assign(
      (event: AuditEvent) => {
        if (interval === undefined) {
          interval = setInterval(() => void sweep(), sweepEvery)
          ;(interval as { unref?: () => void }).unref?.()
        }
        // Neither is awaited: the request goes on while the store and the receiver answer.
        if (Date.now() - sweptAt >= EVENT_SWEEP_INTERVAL) void sweep()
        if (kinds && !kinds.has(event.kind)) return
        void enqueue(event)
      },
      {
        stop() {
          inMemory.stop()
          if (interval !== undefined) clearInterval(interval)
          interval = undefined
        },
      },
    )
  }
}
