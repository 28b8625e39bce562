/**
 * Webhook deliveries queued through the shared store, against a loopback receiver: an instance
 * that queued a delivery and was stopped (its timers cleared, as if killed) loses nothing — another
 * instance with the same store delivers it once the receiver is back — and two instances sharing a
 * store send each attempt of each event once. On the memory store shared by two configs, a real
 * `redis-server` and a real PostgreSQL. A store that fails or hangs never fails or slows a sign-in.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { AuditEvent } from '../../core/audit/types.js'
import { webhookSink, type WebhookSink } from '../../core/audit/webhook.js'
import { queueKeys } from '../../core/audit/webhook-queue.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthStore } from '../../core/store/types.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { redisAuthStore } from '../../stores/redis.js'
import { Client, spyLogger, testConfig } from '../fixtures/http.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'
import { auditTrail } from '../../core/audit.js'

const HOOK_SECRET = 'whsec-0123456789abcdef-shared-store'

interface Delivery {
  id: string
  body: string
  signature: string
  status: number
}

const servers: ReturnType<typeof createServer>[] = []
const sinks: WebhookSink[] = []
afterEach(async () => {
  for (const sink of sinks.splice(0)) sink.stop()
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/**
 * A receiver on 127.0.0.1 that notes every request with its `authchart-event-id` and answers as
 * `status` says (by how many times that id came before); `down()` closes its port, `up()` opens
 * the same port again.
 */
async function receiver(status: (seenBefore: number) => number = () => 204) {
  const deliveries: Delivery[] = []
  const server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const id = String(req.headers['authchart-event-id'])
      const code = status(deliveries.filter((delivery) => delivery.id === id).length)
      deliveries.push({ id, body: Buffer.concat(chunks).toString('utf8'), signature: String(req.headers['authchart-signature']), status: code })
      res.statusCode = code
      res.end()
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/auth`,
    deliveries,
    /** The ids the receiver took (a 2xx answer), once per delivery. */
    taken: () => deliveries.filter((delivery) => delivery.status < 300).map((delivery) => delivery.id),
    async down() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
  }
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const waitFor = async (check: () => boolean | Promise<boolean>, ms = 8000) => {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting')
    await sleep(10)
  }
}

async function signIn(config: ReturnType<typeof testConfig>) {
  const client = new Client(config)
  const csrfToken = await client.csrfToken()
  const started = performance.now()
  const response = await client.send({ path: '/callback/credentials', body: { username: 'alice', password: 'wonderland', csrfToken } })
  return { response, ms: performance.now() - started }
}

/** A real audit event: a credentials sign-in through a config whose sink keeps what it is given. */
async function signInEvent(): Promise<AuditEvent> {
  const events: AuditEvent[] = []
  await signIn(testConfig({ audit: auditTrail({ sink: (event) => void events.push(event) }) }))
  const event = events.find((candidate) => candidate.kind === 'flow')
  if (!event) throw new Error('no sign-in event')
  return event
}

let redis: RedisServer | undefined
let postgres: PostgresServer | undefined
let databases = 0
beforeAll(async () => {
  ;[redis, postgres] = await Promise.all([startRedis(), startPostgres()])
})
afterAll(async () => {
  await Promise.all([redis?.stop(), postgres?.stop()])
})

/** Two instances' views of one store: the same memory store, or two clients of one server. */
const stores: [string, () => Promise<[AuthStore, AuthStore]>][] = [
  [
    'the memory store shared by two configs',
    async () => {
      const store = memoryAuthStore()
      return [store, store]
    },
  ],
  ['Redis', async () => [redisAuthStore(redis!.client()), redisAuthStore(redis!.client())]],
  [
    'PostgreSQL',
    async () => {
      const url = await postgres!.createDatabase(`webhook_${databases++}`)
      const [a, b] = [postgresAuthStore(postgres!.pool(url)), postgresAuthStore(postgres!.pool(url))]
      await a.migrate()
      return [a, b]
    },
  ],
]

describe.each(stores)('audit webhooks queued in %s', (_name, storesOf) => {
  it('delivers an event queued by a stopped instance from another instance once the receiver is back, signed', async () => {
    const [storeA, storeB] = await storesOf()
    const hook = await receiver()
    await hook.down()
    const options = { url: hook.url, secret: HOOK_SECRET, backoff: 50 }
    const event = await signInEvent()
    const { record } = await queueKeys(hook.url)

    const instanceA = webhookSink(options, spyLogger(), storeA)
    sinks.push(instanceA)
    instanceA(event)
    // A tried once (the receiver is down) and put the delivery back for its second attempt.
    await waitFor(async () => (JSON.parse((await storeA.get(record(event.id))) ?? '{}') as { attempt?: number }).attempt === 1)
    instanceA.stop()

    await hook.up()
    await sleep(400)
    // A's retry timer and sweeper are gone: nothing is sent while no instance runs.
    expect(hook.deliveries).toHaveLength(0)

    const instanceB = testConfig({ store: storeB, audit: auditTrail({ webhook: options }) })
    const { response } = await signIn(instanceB)
    expect(response.status).toBe(302)
    await waitFor(() => hook.taken().includes(event.id))
    await sleep(300)
    const ofEvent = hook.deliveries.filter((delivery) => delivery.id === event.id)
    expect(ofEvent).toHaveLength(1)
    expect(ofEvent[0]!.body).toBe(JSON.stringify(event))
    expect(verify(ofEvent[0]!.signature, ofEvent[0]!.body, HOOK_SECRET)).toBe(true)
    expect(verify(ofEvent[0]!.signature, ofEvent[0]!.body, 'another secret of the same length!!')).toBe(false)
    // Delivered, the record is gone; B's own sign-in went out too.
    expect(await storeB.get(record(event.id))).toBeNull()
    expect(hook.taken()).toHaveLength(2)
    expect(instanceB.logger.error).not.toHaveBeenCalled()
  })

  it('sends each attempt of each event once from two instances sharing the store', async () => {
    const [storeA, storeB] = await storesOf()
    // Each event is refused twice, so its retries wait in the store where both instances sweep.
    const hook = await receiver((seenBefore) => (seenBefore < 2 ? 503 : 204))
    const options = { url: hook.url, secret: HOOK_SECRET, backoff: 30 }
    const instanceA = testConfig({ store: storeA, audit: auditTrail({ webhook: options }) })
    const instanceB = testConfig({ store: storeB, audit: auditTrail({ webhook: options }) })
    for (let round = 0; round < 4; round++) {
      await Promise.all([signIn(instanceA), signIn(instanceB)])
    }
    await waitFor(() => new Set(hook.taken()).size === 8)
    // Past every retry time of both instances: no attempt comes twice, no event twice.
    await sleep(700)
    const byId = new Map<string, number[]>()
    for (const delivery of hook.deliveries) byId.set(delivery.id, [...(byId.get(delivery.id) ?? []), delivery.status])
    expect(byId.size).toBe(8)
    for (const statuses of byId.values()) expect(statuses).toEqual([503, 503, 204])
    for (const delivery of hook.deliveries) expect(verify(delivery.signature, delivery.body, HOOK_SECRET)).toBe(true)
    expect(instanceA.logger.error).not.toHaveBeenCalled()
    expect(instanceB.logger.error).not.toHaveBeenCalled()
  })
})

describe('audit webhooks queued in a store, past the last attempt', () => {
  it('drops the delivery after its attempts, logging the event id, and removes it from the store', async () => {
    const store = memoryAuthStore()
    const hook = await receiver(() => 500)
    const config = testConfig({ store, audit: auditTrail({ webhook: { url: hook.url, secret: HOOK_SECRET, backoff: 20, attempts: 2 } }) })
    await signIn(config)
    await waitFor(() => config.logger.error.mock.calls.length === 1)
    const id = hook.deliveries[0]!.id
    expect(String((config.logger.error.mock.calls[0]![0] as Error).message)).toBe(
      `audit webhook: event ${id} dropped after 2 attempts (status 500)`,
    )
    expect(await store.get((await queueKeys(hook.url)).record(id))).toBeNull()
    await sleep(300)
    expect(hook.deliveries.map((delivery) => delivery.id)).toEqual([id, id])
    expect(hook.taken()).toEqual([])
  })
})

describe('audit webhooks queued in a store, stopped mid-sweep', () => {
  it('sends nothing from a sweep that was still reading the store when stop() came', async () => {
    const store = memoryAuthStore()
    const readSet = store.setMembers!.bind(store)
    let release: () => void = () => {}
    let held = 0
    let hold = false
    // The same store, except that while `hold` is set a sweep's read of the pending set waits.
    const slowStore = Object.create(store, {
      setMembers: {
        value: async (key: string) => {
          if (hold) {
            held++
            await new Promise<void>((resolve) => (release = resolve))
          }
          return readSet(key)
        },
      },
    }) as AuthStore
    const hook = await receiver()
    await hook.down()
    const event = await signInEvent()
    const { record } = await queueKeys(hook.url)
    const sink = webhookSink({ url: hook.url, secret: HOOK_SECRET, backoff: 50 }, spyLogger(), slowStore)
    sinks.push(sink)
    sink(event)
    await waitFor(async () => (JSON.parse((await store.get(record(event.id))) ?? '{}') as { attempt?: number }).attempt === 1)
    hold = true
    await waitFor(() => held > 0)
    sink.stop()
    await hook.up()
    // The retry is due by now; the sweep that was reading resumes after the stop.
    await sleep(150)
    hold = false
    release()
    await sleep(300)
    expect(hook.deliveries).toHaveLength(0)
    // Still queued for another instance.
    expect(await store.get(record(event.id))).not.toBeNull()
  })

  it('sends nothing from an attempt whose claim the store was still answering when stop() came', async () => {
    const store = memoryAuthStore()
    const claimOnce = store.claim.bind(store)
    let release: () => void = () => {}
    let held = 0
    let hold = false
    // The same store, except that while `hold` is set a claim waits for its answer.
    const slowStore = Object.create(store, {
      claim: {
        value: async (key: string, seconds: number) => {
          if (hold) {
            held++
            await new Promise<void>((resolve) => (release = resolve))
          }
          return claimOnce(key, seconds)
        },
      },
    }) as AuthStore
    const hook = await receiver()
    await hook.down()
    const event = await signInEvent()
    const { record } = await queueKeys(hook.url)
    const sink = webhookSink({ url: hook.url, secret: HOOK_SECRET, backoff: 50 }, spyLogger(), slowStore)
    sinks.push(sink)
    sink(event)
    await waitFor(async () => (JSON.parse((await store.get(record(event.id))) ?? '{}') as { attempt?: number }).attempt === 1)
    hold = true
    await waitFor(() => held > 0)
    sink.stop()
    await hook.up()
    hold = false
    release()
    await sleep(300)
    expect(hook.deliveries).toHaveLength(0)
    expect(await store.get(record(event.id))).not.toBeNull()
  })
})

describe('audit webhooks stopped while a POST is on its way', () => {
  afterEach(() => vi.unstubAllGlobals())

  /**
   * fetch, except that while `hold` is set a POST waits before it connects (as one still signing,
   * or resolving, when stop() comes), then goes on with the signal it was given.
   */
  function heldFetch() {
    const realFetch = globalThis.fetch
    const state = { hold: false, held: 0, release: () => {} }
    vi.stubGlobal('fetch', async (url: string | URL | Request, init?: RequestInit) => {
      if (state.hold) {
        state.held++
        await new Promise<void>((resolve) => (state.release = resolve))
      }
      return realFetch(url, init)
    })
    return state
  }

  it('queued in a store: sends nothing after stop(), spends no attempt, and leaves the delivery queued', async () => {
    const store = memoryAuthStore()
    const hook = await receiver()
    await hook.down()
    const event = await signInEvent()
    const { record } = await queueKeys(hook.url)
    const logger = spyLogger()
    const sink = webhookSink({ url: hook.url, secret: HOOK_SECRET, backoff: 50 }, logger, store)
    sinks.push(sink)
    sink(event)
    await waitFor(async () => (JSON.parse((await store.get(record(event.id))) ?? '{}') as { attempt?: number }).attempt === 1)
    const post = heldFetch()
    post.hold = true
    await waitFor(() => post.held > 0)
    sink.stop()
    await hook.up()
    post.hold = false
    post.release()
    await sleep(300)
    expect(hook.deliveries).toHaveLength(0)
    // Still queued for another instance, with the attempt the aborted POST did not spend.
    expect((JSON.parse((await store.get(record(event.id))) ?? '{}') as { attempt?: number }).attempt).toBe(1)
    expect(logger.error).not.toHaveBeenCalled()
  })

  it('in memory: sends nothing after stop() and logs no drop', async () => {
    const hook = await receiver()
    const event = await signInEvent()
    const logger = spyLogger()
    const sink = webhookSink({ url: hook.url, secret: HOOK_SECRET, backoff: 50, attempts: 1 }, logger)
    sinks.push(sink)
    const post = heldFetch()
    post.hold = true
    sink(event)
    await waitFor(() => post.held > 0)
    sink.stop()
    post.hold = false
    post.release()
    await sleep(200)
    expect(hook.deliveries).toHaveLength(0)
    expect(logger.error).not.toHaveBeenCalled()
  })
})

describe('audit webhooks when the store fails', () => {
  it('delivers from memory when the store refuses, logging the event id only, and the sign-in goes on', async () => {
    const hook = await receiver()
    const broken: AuthStore = {
      ...memoryAuthStore(),
      put: () => Promise.reject(new Error('store down: secret-ish detail')),
      addToSet: () => Promise.reject(new Error('store down')),
      setMembers: () => Promise.reject(new Error('store down')),
    }
    const config = testConfig({ store: broken, audit: auditTrail({ webhook: { url: hook.url, secret: HOOK_SECRET } }) })
    const { response } = await signIn(config)
    expect(response.status).toBe(302)
    await waitFor(() => hook.taken().length === 1)
    const [delivery] = hook.deliveries
    const messages = config.logger.error.mock.calls.map(([error]) => String((error as Error).message))
    expect(messages).toContain(`audit webhook: event ${delivery!.id}: queued in memory (store unavailable)`)
    expect(messages.join('\n')).not.toContain('secret-ish')
    expect(messages.join('\n')).not.toContain(HOOK_SECRET)
    expect(messages.join('\n')).not.toContain('"kind"')
  })

  it('does not slow the sign-in when the store hangs', async () => {
    const hook = await receiver()
    const never = () => new Promise<never>(() => {})
    const hanging: AuthStore = { ...memoryAuthStore(), put: never, get: never, claim: never, addToSet: never, setMembers: never }
    const quick = testConfig({})
    const hung = testConfig({
      store: hanging,
      audit: auditTrail({ webhook: { url: hook.url, secret: HOOK_SECRET } }),
      // Sign-in's own store calls (rate limits) answer; only the queue's hang.
      rateLimit: false,
    })
    await signIn(quick)
    const base = await signIn(quick)
    const slow = await signIn(hung)
    expect(slow.response.status).toBe(302)
    expect(slow.ms).toBeLessThan(base.ms + 1000)
    // The store's deadline ends the hung calls; the event still goes out from memory.
    await waitFor(() => hook.taken().length === 1, 10_000)
  })
})
