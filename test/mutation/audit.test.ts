/**
 * The audit trail's modules at the unit level: what each event says from the runs a request noted
 * (who, which factor, what outcome, the client as configured, never more), the sinks called and
 * never waited for past the timeout, the webhook's signature, retries and drops, and the webhook
 * queue's keys and records.
 */
import { createHmac } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { AuditRecord, DEFAULT_AUDIT_TIMEOUT, deliver, eventsOf, finishAudit, RECORD_ONLY, resolveAudit, standaloneEvent, type ResolvedAudit } from '../../core/audit/record.js'
import { signWebhook, webhookSink } from '../../core/audit/webhook.js'
import { spyLogger } from '../fixtures/http.js'
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

/** A flow run as the engine reports it: its end state and context, outcome, steps. */
function run(flow: string, options: { value?: string; context?: Record<string, unknown>; outcome?: Record<string, unknown>; resting?: boolean; events?: string[] } = {}) {
  const steps = (options.events ?? []).map((event, i) => ({ from: `s${i}`, to: `s${i + 1}`, event }))
  return {
    snapshot: { value: options.value ?? 'done', context: options.context ?? {} },
    outcome: options.outcome ?? { type: 'json' },
    resting: options.resting ?? false,
    trace: { flow, version: 'v1', at: 0, resumed: false, steps, status: 'done' },
  } as never
}
const trace = (flow: string, events: string[] = []) =>
  ({ flow, version: `${flow}@1`, at: 0, resumed: false, steps: events.map((event, i) => ({ from: `s${i}`, to: `s${i + 1}`, event })), status: 'done' }) as never
const source = (headers: Record<string, string> = {}, clientAddress?: string) => ({ header: (name: string) => headers[name] ?? null, clientAddress })
const settings = (audit: Partial<ResolvedAudit> = {}) => ({
  audit: { sinks: [], clientAddress: 'none', timeout: 50, ...audit } as ResolvedAudit,
  secrets: ['a-secret-for-the-audit-0123456789abcdef'],
  logger: spyLogger(),
})
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The events of one request whose runs are given to `note`. */
async function eventsFor(note: (record: AuditRecord, request: object) => void, answered: object = {}, from = source(), audit: Partial<ResolvedAudit> = {}) {
  const record = new AuditRecord()
  const request = {}
  note(record, request)
  return eventsOf(settings(audit), record, request as never, from, answered as never, new Date(0))
}

describe('resolveAudit', () => {
  it('defaults to no sink, a 50 ms wait and hashed addresses, and keeps a timeout given', () => {
    const logger = spyLogger()
    expect(resolveAudit({}, logger)).toEqual({ sinks: [], clientAddress: 'hmac', timeout: 50 })
    expect(resolveAudit({ timeout: 20, clientAddress: 'raw' }, logger)).toMatchObject({ timeout: 20, clientAddress: 'raw' })
    expect(RECORD_ONLY).toEqual({ sinks: [], clientAddress: 'none', timeout: 50 })
    expect(DEFAULT_AUDIT_TIMEOUT).toBe(50)
  })

  it('writes to a store by its write(), calls a function sink as it is (even one with a write property), and logs with "logger"', async () => {
    const logger = spyLogger()
    const store = { write: vi.fn(), query: vi.fn() }
    const fn = Object.assign(vi.fn(), { write: vi.fn() })
    const resolved = resolveAudit({ sink: [store as never, fn, 'logger'] }, logger)
    expect(resolved.store).toBe(store)
    const event = { id: 'e-1' } as never
    for (const sink of resolved.sinks) await sink(event)
    expect(store.write).toHaveBeenCalledWith(event)
    expect(fn).toHaveBeenCalledWith(event)
    expect(fn.write).not.toHaveBeenCalled()
    expect(logger.debug).toHaveBeenCalledWith('audit', event)
    expect(resolveAudit({ sink: fn }, logger).sinks).toEqual([fn])
    expect(resolveAudit({ sink: fn }, logger)).not.toHaveProperty('store')
    expect(() => resolveAudit({ sink: [null as never] }, logger)).not.toThrow()
  })

  it('adds the webhook as one more sink', () => {
    const resolved = resolveAudit({ webhook: { url: 'https://hooks.example/a', secret: 'whsec-0123456789abcdef' } }, spyLogger())
    expect(resolved.sinks).toHaveLength(1)
    ;(resolved.sinks[0] as unknown as { stop(): void }).stop()
  })
})

describe('what a request’s events say', () => {
  it('records nothing for a request that noted nothing, or only session runs', async () => {
    expect(await eventsFor(() => {})).toEqual([])
    const sessionOnly = await eventsFor((record, request) => {
      record.noteTrace(request as never, trace('session', ['a']))
      record.noteRun(request as never, 'session', undefined, run('session', { context: { user: { id: 'u-1' } }, outcome: { type: 'json', session: { op: 'set' } } }))
    })
    expect(sessionOnly).toEqual([])
  })

  it('lists the states of each run (none for a run without steps), its flow and chart version, and who', async () => {
    const [event, ...rest] = await eventsFor((record, request) => {
      record.noteTrace(request as never, trace('credentials-signin', ['go', 'done']))
      record.noteTrace(request as never, trace('signin-completion'))
      record.noteRun(request as never, 'credentials-signin', 'credentials', run('credentials-signin', { context: { user: { id: 7 }, amr: ['pwd'] }, outcome: { type: 'redirect', url: '/', session: { op: 'set' } } }))
    })
    expect(rest).toEqual([])
    expect(event).toMatchObject({
      kind: 'flow',
      userId: '7',
      provider: 'credentials',
      amr: ['pwd'],
      flow: 'credentials-signin',
      chartVersion: 'credentials-signin@1',
      states: ['credentials-signin:s0', 'credentials-signin:s1', 'credentials-signin:s2'],
      outcome: { type: 'signed-in' },
      time: new Date(0).toISOString(),
    })
    expect(event!.id).toMatch(UUID)
  })

  it('takes the user from userId and the provider from the identity when the run has no user or provider id', async () => {
    const [event] = await eventsFor((record, request) => {
      record.noteTrace(request as never, trace('x', ['a']))
      record.noteRun(request as never, 'x', undefined, run('x', { context: { userId: 'u-2', identity: { providerId: 'github' }, user: { id: { not: 'an id' } } } }))
    })
    expect(event).toMatchObject({ userId: 'u-2', provider: 'github', outcome: { type: 'answered', state: 'done' } })
  })

  it('names no user, provider or factor it does not know, and factors only for a sign-in', async () => {
    const [event] = await eventsFor((record, request) => {
      record.noteTrace(request as never, trace('x', ['a']))
      record.noteRun(request as never, 'x', undefined, run('x', { context: { amr: ['pwd'], user: null }, outcome: { type: 'json' } }))
    })
    expect(Object.keys(event!)).not.toContain('userId')
    expect(Object.keys(event!)).not.toContain('provider')
    expect(Object.keys(event!)).not.toContain('amr')
    expect(Object.keys(event!)).not.toContain('action')
    const [empty] = await eventsFor((record, request) => {
      record.noteTrace(request as never, trace('x', ['a']))
      record.noteRun(request as never, 'x', 'p', run('x', { context: { amr: [] }, outcome: { type: 'redirect', url: '/', session: { op: 'set' } } }))
    })
    expect(Object.keys(empty!)).not.toContain('amr')
  })

  it('keeps the outcome of a run before a handoff, and records no flow event for a handoff alone', async () => {
    expect(
      await eventsFor((record, request) => {
        record.noteTrace(request as never, trace('x', ['a']))
        record.noteRun(request as never, 'x', undefined, run('x', { outcome: { type: 'handoff' } }))
      }),
    ).toEqual([])
  })

  it('records a refusal with its code as the cause, and without one when there is none', async () => {
    const refused = async (outcome: Record<string, unknown>) =>
      (
        await eventsFor((record, request) => {
          record.noteTrace(request as never, trace('x', ['a']))
          record.noteRun(request as never, 'x', undefined, run('x', { outcome }))
        })
      )[0]!.outcome
    expect(await refused({ type: 'error', error: 'CredentialsSignin', code: 'credentials' })).toEqual({ type: 'refused', error: 'CredentialsSignin', cause: 'credentials' })
    expect(await refused({ type: 'error', error: 'AccessDenied' })).toStrictEqual({ type: 'refused', error: 'AccessDenied' })
  })

  it('records a resting step, or a step refused by a failed check with the error its page shows', async () => {
    const outcomeOf = async (events: string[], outcome: Record<string, unknown>) =>
      (
        await eventsFor((record, request) => {
          record.noteTrace(request as never, trace('x', events))
          record.noteRun(request as never, 'x', undefined, run('x', { value: 'waiting', resting: true, events, outcome }))
        })
      )[0]!.outcome
    expect(await outcomeOf(['start'], { type: 'page' })).toEqual({ type: 'step', state: 'waiting' })
    expect(await outcomeOf(['checkCode.failed', 'shown'], { type: 'redirect', url: '/auth/verify?error=InvalidCode&x=1' })).toEqual({
      type: 'refused',
      error: 'InvalidCode',
      cause: 'checkCode',
      state: 'waiting',
    })
    for (const url of ['/auth/verify', '/auth/verify?x=1', '/auth/verify?error=Not%20Letters', `/auth/verify?error=${'A'.repeat(65)}`, 'error=Tricked?error=1']) {
      expect((await outcomeOf(['checkCode.failed'], { type: 'redirect', url })) as { error: string }).toMatchObject({ error: 'Refused' })
    }
    expect(await outcomeOf(['checkCode.failed'], { type: 'page', url: '/auth/verify?error=InvalidCode' })).toMatchObject({ error: 'Refused' })
    expect(await outcomeOf(['checkCode.failed'], { type: 'redirect', url: `/v?error=${'A'.repeat(64)}` })).toMatchObject({ error: 'A'.repeat(64) })
  })

  it('records what a thrown error says: its type and code, else Configuration', async () => {
    const thrown = async (error: unknown) =>
      (
        await eventsFor(
          (record, request) => {
            record.noteTrace(request as never, trace('x', ['a']))
            record.noteRun(request as never, 'x', undefined, run('x'))
          },
          { error },
        )
      )[0]!.outcome
    expect(await thrown({ type: 'InvalidCheck', code: 'ERR_SEALED' })).toEqual({ type: 'refused', error: 'InvalidCheck', cause: 'ERR_SEALED' })
    expect(await thrown({ type: 1, code: 2 })).toStrictEqual({ type: 'refused', error: 'Configuration' })
    expect(await thrown(null)).toStrictEqual({ type: 'refused', error: 'Configuration' })
    // A flow that noted only its trace still gets the error as its outcome.
    const [only] = await eventsFor((record, request) => record.noteTrace(request as never, trace('x', ['a'])), { error: { type: 'InvalidCheck' } })
    expect(only!.outcome).toEqual({ type: 'refused', error: 'InvalidCheck' })
    expect(await eventsFor((record, request) => record.noteTrace(request as never, trace('x', ['a'])))).toEqual([])
  })

  it('records a completed re-authentication as its own kind with the factor and the action, and nothing else as one', async () => {
    const reauth = (events: string[], context: Record<string, unknown>, flow = 'reauthenticate') =>
      eventsFor((record, request) => {
        record.noteTrace(request as never, trace(flow, events))
        record.noteRun(request as never, flow, undefined, run(flow, { events, context, outcome: { type: 'redirect', url: '/' } }))
      })
    const [done] = await reauth(['markVerified.done'], { proven: 'pwd', action: 'delete-account', amr: ['otp'] })
    expect(done).toMatchObject({ kind: 'reauthenticated', amr: ['pwd'], action: 'delete-account', outcome: { type: 'reauthenticated' } })
    const [unknown] = await reauth(['markVerified.done'], {})
    expect(unknown).toMatchObject({ amr: ['unknown'], action: 'unknown' })
    const [notDone] = await reauth(['checkPassword.done'], { proven: 'pwd', action: 'x' })
    expect(notDone).toMatchObject({ kind: 'flow', outcome: { type: 'answered' } })
    expect(Object.keys(notDone!)).not.toContain('action')
    const [other] = await reauth(['markVerified.done'], { proven: 'pwd', action: 'x' }, 'other')
    expect(other!.kind).toBe('flow')
  })

  it('derives the lifecycle changes from the states a run ended in', async () => {
    const kinds = async (flow: string, options: Parameters<typeof run>[1]) =>
      (await eventsFor((record, request) => record.noteRun(request as never, flow, undefined, run(flow, { context: { userId: 'u-1' }, ...options })))).map((event) => [event.kind, event.userId])
    expect(await kinds('totp-enrolment', { value: 'enrolled', context: { userId: 'u-1' } })).toEqual([['second-factor-enrolled', 'u-1']])
    expect(await kinds('totp-enrolment', { value: 'scanning' })).toEqual([])
    expect(await kinds('other', { value: 'enrolled' })).toEqual([])
    expect(await kinds('signin-completion', { context: { userId: 'u-1', enrolment: {} }, events: ['x', 'storeUser.done'] })).toEqual([['passkey-added', 'u-1']])
    expect(await kinds('signin-completion', { context: { userId: 'u-1', enrolment: {} }, events: ['x'] })).toEqual([])
    expect(await kinds('signin-completion', { context: { userId: 'u-1' }, events: ['storeUser.done'] })).toEqual([])
    expect(await kinds('other', { context: { userId: 'u-1', enrolment: {} }, events: ['storeUser.done'] })).toEqual([])
    expect(await kinds('x', { outcome: { type: 'error', error: 'CredentialsSignin', retryAfter: 30 } })).toEqual([['rate-limited', 'u-1']])
    expect(await kinds('x', { outcome: { type: 'error', error: 'CredentialsSignin' } })).toEqual([])
    const [limited] = await eventsFor((record, request) => record.noteRun(request as never, 'x', 'credentials', run('x', { outcome: { type: 'error', error: 'E', retryAfter: 3 } })))
    expect(limited).toMatchObject({ kind: 'rate-limited', provider: 'credentials' })
    expect(Object.keys(limited!)).not.toContain('userId')
  })

  it('records a sign-out by the token’s subject or the session’s user, and a linked account', async () => {
    const emitted = (name: string, message: unknown) => eventsFor((record, request) => record.noteEmitted(request as never, name, message))
    expect((await emitted('signOut', { token: { sub: 'u-1' } }))[0]).toMatchObject({ kind: 'sign-out', userId: 'u-1' })
    expect((await emitted('signOut', { session: { userId: 'u-2' } }))[0]).toMatchObject({ kind: 'sign-out', userId: 'u-2' })
    const [nobody] = await emitted('signOut', { token: null, session: null })
    expect(Object.keys(nobody!)).not.toContain('userId')
    expect((await emitted('linkAccount', { user: { id: 'u-3' }, account: { provider: 'github' } }))[0]).toMatchObject({ kind: 'account-linked', userId: 'u-3', provider: 'github' })
    const [bare] = await emitted('linkAccount', {})
    expect(Object.keys(bare!)).not.toContain('userId')
    expect(Object.keys(bare!)).not.toContain('provider')
    expect(await emitted('createUser', { user: { id: 'u-4' } })).toEqual([])
  })

  it('records a lifecycle change with the API key it names, and no key it does not', async () => {
    const [withKey, without] = await eventsFor((record, request) => {
      record.noteLifecycle(request as never, 'api-key-revoked' as never, { userId: 'u-1', apiKey: 'ak_123' })
      record.noteLifecycle(request as never, 'api-key-revoked' as never, { provider: 'p' })
    })
    expect(withKey).toMatchObject({ userId: 'u-1', apiKey: 'ak_123' })
    expect(Object.keys(without!)).toEqual(expect.not.arrayContaining(['userId', 'apiKey']))
    expect(without).toMatchObject({ provider: 'p' })
  })

  it('keeps a plain request id and replaces any other, and shows the client as configured', async () => {
    const note = (record: AuditRecord, request: object) => record.noteLifecycle(request as never, 'sign-out' as never, {})
    expect((await eventsFor(note, {}, source({ 'x-request-id': 'req-1.a:b_c' })))[0]!.requestId).toBe('req-1.a:b_c')
    for (const given of ['has space', 'x'.repeat(129), '']) expect((await eventsFor(note, {}, source({ 'x-request-id': given })))[0]!.requestId).toMatch(UUID)
    expect((await eventsFor(note))[0]!.requestId).toMatch(UUID)
    const chrome = 'Mozilla/5.0 Chrome/120.0 Safari/537.36'
    expect((await eventsFor(note, {}, source({ 'user-agent': chrome }, '203.0.113.5'), { clientAddress: 'raw' }))[0]!.client).toEqual({ address: '203.0.113.5', userAgent: 'Chrome' })
    const hashed = (await eventsFor(note, {}, source({}, '203.0.113.5'), { clientAddress: 'hmac' }))[0]!.client
    expect(Object.keys(hashed)).toEqual(['address'])
    expect(hashed.address).not.toContain('203.0.113.5')
    expect((await eventsFor(note, {}, source({}, '203.0.113.5'), { clientAddress: 'none' }))[0]!.client).toStrictEqual({})
    expect((await eventsFor(note, {}, source({}), { clientAddress: 'raw' }))[0]!.client).toStrictEqual({})
  })
})

describe('an event outside a request', () => {
  it('carries its own request id, the client, and the refusal when there is one', async () => {
    const at = new Date(0)
    const refused = await standaloneEvent(settings({ clientAddress: 'raw' }), source({ 'x-request-id': 'r-1' }, '198.51.100.1'), 'api-key-refused' as never, { apiKey: 'ak_1' }, { error: 'InvalidKey' }, at)
    expect(refused).toMatchObject({ requestId: 'r-1', kind: 'api-key-refused', apiKey: 'ak_1', client: { address: '198.51.100.1' }, outcome: { type: 'refused', error: 'InvalidKey' }, time: at.toISOString() })
    expect(refused.id).toMatch(UUID)
    const plain = await standaloneEvent(settings(), source({ 'x-request-id': 'bad id' }), 'sign-out' as never, {}, undefined, at)
    expect(plain.requestId).toMatch(UUID)
    expect(Object.keys(plain)).not.toContain('outcome')
  })
})

describe('delivering the events', () => {
  const event = { id: 'e-1' } as never

  it('calls no sink without events, and every sink for each event', async () => {
    const sink = vi.fn()
    const other = vi.fn()
    await deliver(settings({ sinks: [sink, other] }), [])
    expect(sink).not.toHaveBeenCalled()
    await deliver(settings({ sinks: [sink, other] }), [event, event])
    expect(sink).toHaveBeenCalledTimes(2)
    expect(other).toHaveBeenCalledTimes(2)
  })

  it('logs a sink that throws, by its message, and one that is late, and nothing when all answer in time', async () => {
    const config = settings({ sinks: [() => Promise.reject(new Error('disk full')), () => Promise.reject('plain text')], timeout: 1000 })
    await deliver(config, [event])
    expect(config.logger.error.mock.calls.map(([error]) => [(error as Error).name, (error as Error).message])).toEqual([
      ['AuditSinkError', 'an audit sink failed: disk full'],
      ['AuditSinkError', 'an audit sink failed: plain text'],
    ])
    const late = settings({ sinks: [() => new Promise(() => {})], timeout: 10 })
    await deliver(late, [event])
    expect((late.logger.error.mock.calls[0]![0] as Error).message).toBe('an audit sink took longer than 10 ms; the request went on without it')
    const quick = settings({ sinks: [vi.fn()], timeout: 1000 })
    await deliver(quick, [event])
    expect(quick.logger.error).not.toHaveBeenCalled()
  })

  it('gives back the events it delivered, and none (logged) when they could not be built', async () => {
    const record = new AuditRecord()
    const request = {}
    record.noteLifecycle(request as never, 'sign-out' as never, { userId: 'u-1' })
    const sink = vi.fn()
    const ok = settings({ sinks: [sink] })
    const events = await finishAudit(ok, record, request as never, source(), {})
    expect(events).toHaveLength(1)
    expect(sink).toHaveBeenCalledWith(events[0])
    const broken = settings({ sinks: [sink] })
    record.noteLifecycle(request as never, 'sign-out' as never, {})
    const failing = { header: () => { throw new Error('no headers') }, clientAddress: undefined }
    expect(await finishAudit(broken, record, request as never, failing, {})).toEqual([])
    expect((broken.logger.error.mock.calls[0]![0] as Error).message).toBe('audit events were not built: no headers')
  })
})

describe('the in-process webhook queue', () => {
  afterEach(() => vi.unstubAllGlobals())
  const event = (id: string, kind = 'flow') => ({ id, kind }) as never
  const options = { url: 'https://hooks.example/in', secret: 'whsec-0123456789abcdef', backoff: 1, timeout: 30 }
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  it.each([
    ['a status other than 2xx', async () => new Response('no', { status: 503 }), 'status 503'],
    ['a network error', async () => Promise.reject(new TypeError('fetch failed')), 'network error'],
    ['no answer in time', (_url: string, init: RequestInit) => new Promise<Response>((_, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason))), 'no answer in 30 ms'],
  ])('retries %s until the attempts are spent, then logs the event dropped with why', async (_, answer, why) => {
    const fetch = vi.fn(answer)
    vi.stubGlobal('fetch', fetch)
    const logger = spyLogger()
    const sink = webhookSink({ ...options, attempts: 3 }, logger)
    sink(event('e-1'))
    await until(() => logger.error.mock.calls.length > 0)
    sink.stop()
    expect(fetch).toHaveBeenCalledTimes(3)
    expect(logger.error.mock.calls.map(([error]) => [(error as Error).name, (error as Error).message])).toEqual([
      ['AuditWebhookError', `audit webhook: event e-1 dropped after 3 attempts (${why})`],
    ])
  })

  it('POSTs the event signed, once, when the receiver takes it, and only the selected kinds', async () => {
    const fetch = vi.fn(async () => new Response(null, { status: 204 }))
    vi.stubGlobal('fetch', fetch)
    const logger = spyLogger()
    const sink = webhookSink({ ...options, events: ['sign-out'] as never }, logger)
    sink(event('e-1', 'flow'))
    sink(event('e-2', 'sign-out'))
    await until(() => fetch.mock.calls.length > 0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    sink.stop()
    expect(fetch).toHaveBeenCalledTimes(1)
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit & { headers: Record<string, string> }]
    expect(url).toBe(options.url)
    expect(init).toMatchObject({ method: 'POST', redirect: 'manual', body: JSON.stringify(event('e-2', 'sign-out')) })
    expect(init.headers['content-type']).toBe('application/json')
    expect(init.headers['authchart-event-id']).toBe('e-2')
    const [, t] = /^t=(\d+),v1=[0-9a-f]{64}$/.exec(init.headers['authchart-signature']!)!
    expect(init.headers['authchart-signature']).toBe(await signWebhook(options.secret, init.body as string, Number(t)))
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(5)
    expect(logger.error).not.toHaveBeenCalled()
  })

  it('sends nothing more, and logs nothing, for an attempt aborted by stop()', async () => {
    const fetch = vi.fn((_url: string, init: RequestInit) => new Promise<Response>((_, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason))))
    vi.stubGlobal('fetch', fetch)
    const logger = spyLogger()
    const sink = webhookSink({ ...options, timeout: 5000, attempts: 2 }, logger)
    sink(event('e-1'))
    await until(() => fetch.mock.calls.length > 0)
    sink.stop()
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(fetch).toHaveBeenCalledTimes(1)
    expect(logger.error).not.toHaveBeenCalled()
  })
})
