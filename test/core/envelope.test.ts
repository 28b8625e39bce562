import { number, object, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyMachineSnapshot } from 'xstate'
import { advance } from '../../core/engine/advance.js'
import { ENVELOPE_MAX_AGE, openEnvelope, sealEnvelope } from '../../core/engine/envelope.js'
import { defineFlow } from '../../core/engine/flow.js'
import { FlowStateError } from '../../core/errors.js'
import { memoryAuthStore } from '../../core/store/index.js'
const SECRET = 'test-secret-that-is-long-enough-for-hkdf-0123456789'

/** A two-step flow that rests between requests, like a second factor after a password. */
function twoStepMachine(version: string, id = 'two-step') {
  return setup({
    types: {} as {
      context: { user: string; attempts: number }
      events:
        | { type: 'step.start'; user: string; at: number }
        | { type: 'step.finish'; at: number }
    },
    actions: {
      rememberUser: assign(({ event }) => ({ user: event.type === 'step.start' ? event.user : '' })),
    },
  }).createMachine({
    id,
    version,
    initial: 'idle',
    context: { user: '', attempts: 0 },
    output: ({ event }: { event: { output?: unknown } }) => event.output,
    states: {
      idle: { tags: 'awaitsRequest', on: { 'step.start': { target: 'waiting', actions: 'rememberUser' } } },
      waiting: {
        tags: 'awaitsRequest',
        meta: { outcome: () => ({ type: 'redirect', url: '/second-factor' }) },
        on: { 'step.finish': 'done' },
      },
      done: { type: 'final', output: () => ({ type: 'json', body: 'ok' }) },
    },
  })
}

const Context = object({ user: string(), attempts: number() })
const flowOf = (version = '1', id?: string) =>
  defineFlow({ machine: twoStepMachine(version, id), context: Context, effects: {} })
const AT = 1_800_000_000
const options = { secrets: [SECRET], cookieName: 'authchart.flow.two-step', at: AT }

async function restingSnapshot(flow = flowOf()): Promise<AnyMachineSnapshot> {
  const run = await advance(flow, {}, { type: 'step.start', user: 'alice', at: AT })
  expect(run.resting).toBe(true)
  return run.snapshot
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(FlowStateError)
  return (error as FlowStateError).code
}

describe('sealed flow envelopes', () => {
  it('reopens a resting flow in the same state with the same context', async () => {
    const flow = flowOf()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), options)
    const reopened = await openEnvelope(flow, sealed, { ...options, at: AT + 60 })
    expect(reopened.value).toBe('waiting')
    expect(reopened.context).toEqual({ user: 'alice', attempts: 0 })
    const run = await advance(flow, {}, { type: 'step.finish', at: AT + 61 }, { from: reopened })
    expect(run.outcome).toEqual({ type: 'json', body: 'ok' })
  })

  it('refuses an envelope whose ciphertext was tampered with', async () => {
    const flow = flowOf()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), options)
    const parts = sealed.split('.')
    const ciphertext = parts[3]!
    parts[3] = (ciphertext[0] === 'A' ? 'B' : 'A') + ciphertext.slice(1)
    expect(await refusal(openEnvelope(flow, parts.join('.'), options))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('refuses garbage that is not a JWE at all', async () => {
    expect(await refusal(openEnvelope(flowOf(), 'not.an.envelope', options))).toBe(
      'ERR_FLOW_STATE_INVALID',
    )
  })

  it('refuses an envelope sealed with a secret it does not know', async () => {
    const flow = flowOf()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), {
      ...options,
      secrets: ['another-secret-that-is-also-long-enough-0000'],
    })
    expect(await refusal(openEnvelope(flow, sealed, options))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('opens an envelope sealed with a rotated-out secret that is still listed', async () => {
    const flow = flowOf()
    const old = 'the-previous-secret-that-is-long-enough-000000'
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), { ...options, secrets: [old] })
    const reopened = await openEnvelope(flow, sealed, { ...options, secrets: [SECRET, old] })
    expect(reopened.value).toBe('waiting')
  })

  it('refuses an expired envelope as stale', async () => {
    const flow = flowOf()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), options)
    const later = { ...options, at: AT + ENVELOPE_MAX_AGE + 1 }
    expect(await refusal(openEnvelope(flow, sealed, later))).toBe('ERR_FLOW_STATE_STALE')
  })

  it('refuses an envelope sealed by another version of the machine that declares no migration from it', async () => {
    const v1 = flowOf('1')
    const sealed = await sealEnvelope(v1, await restingSnapshot(v1), options)
    expect(await refusal(openEnvelope(flowOf('2'), sealed, options))).toBe('ERR_FLOW_VERSION_CHANGED')
  })

  describe('sealed by an earlier version with a declared migration', () => {
    /** Version 2 renames the waiting state; its migration carries version 1's flows over. */
    function renamedMachine() {
      return setup({ types: {} as { context: { user: string; attempts: number } } }).createMachine({
        id: 'two-step',
        version: '2',
        initial: 'idle',
        context: { user: '', attempts: 0 },
        states: {
          idle: { tags: 'awaitsRequest', on: { 'step.start': 'waitingForFactor' } },
          waitingForFactor: { tags: 'awaitsRequest', on: { 'step.finish': 'done' } },
          done: { type: 'final' },
        },
      })
    }
    const v2 = (migrate: (s: { value: unknown; context: unknown }) => { value: unknown; context: unknown } | null) =>
      defineFlow({ machine: renamedMachine(), context: Context, effects: {}, migrations: { '1': migrate as never } })

    async function sealedByV1(): Promise<string> {
      const v1 = flowOf('1')
      return sealEnvelope(v1, await restingSnapshot(v1), options)
    }

    it('resumes in the state and with the context the migration names', async () => {
      const flow = v2(({ value, context }) => ({ value: value === 'waiting' ? 'waitingForFactor' : value, context }))
      const reopened = await openEnvelope(flow, await sealedByV1(), options)
      expect(reopened.value).toBe('waitingForFactor')
      expect(reopened.context).toEqual({ user: 'alice', attempts: 0 })
    })

    it('refuses it when the migration gives up or throws', async () => {
      expect(await refusal(openEnvelope(v2(() => null), await sealedByV1(), options))).toBe('ERR_FLOW_VERSION_CHANGED')
      const throwing = v2(() => {
        throw new Error('cannot carry it over')
      })
      expect(await refusal(openEnvelope(throwing, await sealedByV1(), options))).toBe('ERR_FLOW_VERSION_CHANGED')
    })

    it('checks what the migration gives like any sealed flow: a waiting state, a context that fits', async () => {
      const unknownState = v2(({ context }) => ({ value: 'waiting', context }))
      expect(await refusal(openEnvelope(unknownState, await sealedByV1(), options))).toBe('ERR_FLOW_STATE_INVALID')
      const notWaiting = v2(({ context }) => ({ value: 'done', context }))
      expect(await refusal(openEnvelope(notWaiting, await sealedByV1(), options))).toBe('ERR_FLOW_STATE_INVALID')
      const badContext = v2(() => ({ value: 'waitingForFactor', context: { user: 1 } }))
      expect(await refusal(openEnvelope(badContext, await sealedByV1(), options))).toBe('ERR_FLOW_STATE_INVALID')
    })

    it('may not declare a migration from its own version', () => {
      expect(() =>
        defineFlow({ machine: renamedMachine(), context: Context, effects: {}, migrations: { '2': (s) => s } }),
      ).toThrow(/migration from its own version 2/)
    })
  })

  it('refuses an envelope of another flow (no confused deputy)', async () => {
    const other = flowOf('1', 'other-flow')
    const sealed = await sealEnvelope(other, await restingSnapshot(other), options)
    expect(await refusal(openEnvelope(flowOf(), sealed, options))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('refuses an envelope bound to another provider', async () => {
    const flow = flowOf()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), { ...options, binding: 'github' })
    expect(await refusal(openEnvelope(flow, sealed, { ...options, binding: 'google' }))).toBe(
      'ERR_FLOW_STATE_INVALID',
    )
  })

  it('refuses an envelope sealed under another cookie name', async () => {
    const flow = flowOf()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), options)
    const elsewhere = { ...options, cookieName: 'authchart.flow.other' }
    expect(await refusal(openEnvelope(flow, sealed, elsewhere))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('refuses a context that does not fit the flow shape', async () => {
    const flow = flowOf()
    const snapshot = await restingSnapshot(flow)
    const misshapen = { ...snapshot, context: { user: 42 } } as unknown as AnyMachineSnapshot
    const sealed = await sealEnvelope(flow, misshapen, options)
    expect(await refusal(openEnvelope(flow, sealed, options))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('refuses an envelope naming a state that does not await a request', async () => {
    const flow = flowOf()
    const snapshot = await restingSnapshot(flow)
    const final = { ...snapshot, value: 'done' } as unknown as AnyMachineSnapshot
    const sealed = await sealEnvelope(flow, final, options)
    expect(await refusal(openEnvelope(flow, sealed, options))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('refuses an envelope naming a state the machine does not have', async () => {
    const flow = flowOf()
    const snapshot = await restingSnapshot(flow)
    const unknownState = { ...snapshot, value: 'nowhere' } as unknown as AnyMachineSnapshot
    const sealed = await sealEnvelope(flow, unknownState, options)
    expect(await refusal(openEnvelope(flow, sealed, options))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('is spent through the shared store: a second instance sharing it refuses the same envelope', async () => {
    const flow = flowOf()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), options)
    const shared = memoryAuthStore()
    const claim = (jti: string, ttl: number) => shared.claim(`envelope:${jti}`, ttl)
    // Two instances: each has its own process memory, the store is the only thing they share.
    await openEnvelope(flow, sealed, { ...options, claim })
    expect(await refusal(openEnvelope(flow, sealed, { ...options, claim }))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it('can be read without being spent, to show the page of the state it rests in', async () => {
    const flow = flowOf()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), options)
    const claim = memoryAuthStore().claim
    const peeked = await openEnvelope(flow, sealed, { ...options, claim, peek: true })
    expect(peeked.value).toBe('waiting')
    await openEnvelope(flow, sealed, { ...options, claim })
  })
})

describe('a context too large for its cookie waits on the server', () => {
  /** A park over a store, recording what it keeps; `room` as a cookie would leave it. */
  function parkOver(store = memoryAuthStore(), room = 600) {
    const kept = new Map<string, string>()
    const park = {
      room,
      put: async (key: string, value: string, ttl: number) => {
        kept.set(key, value)
        await store.put(key, value, ttl)
      },
      get: (key: string) => store.get(key),
      forget: (key: string) => store.reset(key),
    }
    return { park, kept, store }
  }
  const claimIn = (store = memoryAuthStore()) => (jti: string, ttl: number) => store.claim(`envelope:${jti}`, ttl)

  async function largeSnapshot(flow = flowOf()): Promise<AnyMachineSnapshot> {
    const run = await advance(flow, {}, { type: 'step.start', user: `alice-${'x'.repeat(2000)}`, at: AT })
    return run.snapshot
  }

  it('seals a small context into the cookie, as before', async () => {
    const flow = flowOf()
    const { park, kept } = parkOver()
    const sealed = await sealEnvelope(flow, await restingSnapshot(flow), { ...options, park })
    expect(kept.size).toBe(0)
    expect(sealed.length).toBeLessThanOrEqual(park.room)
  })

  it('keeps a large one in the store, encrypted, and reopens the flow with it', async () => {
    const flow = flowOf()
    const { park, kept } = parkOver()
    const sealed = await sealEnvelope(flow, await largeSnapshot(flow), { ...options, park })
    expect(sealed.length).toBeLessThanOrEqual(park.room)
    expect(kept.size).toBe(1)
    expect([...kept.values()][0]).not.toContain('alice')
    const reopened = await openEnvelope(flow, sealed, { ...options, park, claim: claimIn() })
    expect(reopened.value).toBe('waiting')
    expect((reopened.context as { user: string }).user).toBe(`alice-${'x'.repeat(2000)}`)
  })

  it('shows the page without spending the kept context, and forgets it once the envelope is spent', async () => {
    const flow = flowOf()
    const { park, kept, store } = parkOver()
    const sealed = await sealEnvelope(flow, await largeSnapshot(flow), { ...options, park })
    const key = [...kept.keys()][0]!
    const claim = claimIn()
    await openEnvelope(flow, sealed, { ...options, park, claim, peek: true })
    expect(await store.get(key)).not.toBeNull()
    await openEnvelope(flow, sealed, { ...options, park, claim })
    expect(await store.get(key)).toBeNull()
  })

  it('refuses as stale an envelope whose context the store no longer keeps', async () => {
    const flow = flowOf()
    const { park } = parkOver()
    const sealed = await sealEnvelope(flow, await largeSnapshot(flow), { ...options, park })
    const forgetful = { ...park, get: async () => null }
    expect(await refusal(openEnvelope(flow, sealed, { ...options, park: forgetful }))).toBe('ERR_FLOW_STATE_STALE')
    expect(await refusal(openEnvelope(flow, sealed, options))).toBe('ERR_FLOW_STATE_STALE')
  })

  it("refuses a kept context swapped for another envelope's", async () => {
    const flow = flowOf()
    const { park, kept } = parkOver()
    const mine = await sealEnvelope(flow, await largeSnapshot(flow), { ...options, park })
    const [mineKey] = [...kept.keys()]
    await sealEnvelope(flow, await largeSnapshot(flow), { ...options, park })
    const theirs = [...kept.values()][1]!
    // The store (shared, perhaps writable by others) hands back another flow's context under my key.
    const swapped = { ...park, get: async (key: string) => (key === mineKey ? theirs : null) }
    expect(await refusal(openEnvelope(flow, mine, { ...options, park: swapped }))).toBe('ERR_FLOW_STATE_INVALID')
  })

  it("refuses a kept context of another flow's cookie", async () => {
    const flow = flowOf()
    const { park, kept } = parkOver()
    const sealed = await sealEnvelope(flow, await largeSnapshot(flow), { ...options, park })
    const key = [...kept.keys()][0]!
    const other = await sealEnvelope(flow, await largeSnapshot(flow), { ...options, cookieName: 'authchart.flow.other', park })
    void other
    const foreign = [...kept.values()][1]!
    const swapped = { ...park, get: async (k: string) => (k === key ? foreign : null) }
    expect(await refusal(openEnvelope(flow, sealed, { ...options, park: swapped }))).toBe('ERR_FLOW_STATE_INVALID')
  })
})
