import { object, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { setup } from 'xstate'
import { advance, MAX_EFFECT_HOPS } from '../../core/engine/advance.js'
import { defineFlow } from '../../core/engine/flow.js'
import { FlowStateError } from '../../core/errors.js'

const Context = object({ note: string() })

function loopingMachine() {
  return setup({ types: {} as { context: { note: string } } }).createMachine({
    id: 'looping',
    version: '1',
    initial: 'idle',
    context: { note: '' },
    states: {
      idle: { tags: 'awaitsRequest', on: { 'loop.start': 'ping' } },
      ping: { tags: 'effect.ping', on: { 'ping.done': 'pong' } },
      pong: { tags: 'effect.pong', on: { 'pong.done': 'ping' } },
    },
  })
}

function stuckMachine() {
  return setup({ types: {} as { context: { note: string } } }).createMachine({
    id: 'stuck',
    version: '1',
    initial: 'idle',
    context: { note: '' },
    states: {
      idle: { tags: 'awaitsRequest', on: { 'stuck.start': 'working' } },
      working: { tags: 'effect.work', on: { 'work.done': 'limbo' } },
      limbo: {},
    },
  })
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(FlowStateError)
  return (error as FlowStateError).code
}

describe('the effect loop', () => {
  it('stops a flow whose effects never settle after a bounded number of hops', async () => {
    let calls = 0
    const flow = defineFlow({
      machine: loopingMachine(),
      context: Context,
      effects: {
        ping: async () => (calls++, { type: 'ping.done', at: 0 }),
        pong: async () => (calls++, { type: 'pong.done', at: 0 }),
      },
    })
    expect(await codeOf(advance(flow, {}, { type: 'loop.start', at: 0 }))).toBe('ERR_FLOW_LOOP')
    expect(calls).toBe(MAX_EFFECT_HOPS)
  })

  it('refuses an effect result the state does not accept', async () => {
    const flow = defineFlow({
      machine: loopingMachine(),
      context: Context,
      effects: {
        ping: async () => ({ type: 'pong.done', at: 0 }),
        pong: async () => ({ type: 'pong.done', at: 0 }),
      },
    })
    expect(await codeOf(advance(flow, {}, { type: 'loop.start', at: 0 }))).toBe(
      'ERR_FLOW_EVENT_REJECTED',
    )
  })

  it('refuses a request event the current state does not accept', async () => {
    const flow = defineFlow({
      machine: loopingMachine(),
      context: Context,
      effects: { ping: async () => ({ type: 'x', at: 0 }), pong: async () => ({ type: 'x', at: 0 }) },
    })
    expect(await codeOf(advance(flow, {}, { type: 'something.else', at: 0 }))).toBe(
      'ERR_FLOW_EVENT_REJECTED',
    )
  })

  it('refuses to stop in a state that is neither final nor awaiting a request', async () => {
    const flow = defineFlow({
      machine: stuckMachine(),
      context: Context,
      effects: { work: async () => ({ type: 'work.done', at: 0 }) },
    })
    expect(await codeOf(advance(flow, {}, { type: 'stuck.start', at: 0 }))).toBe('ERR_FLOW_LOOP')
  })

  it('hands the trace to the observer even when the run fails', async () => {
    const flow = defineFlow({
      machine: stuckMachine(),
      context: Context,
      effects: { work: async () => ({ type: 'work.done', at: 0 }) },
    })
    const traces: unknown[] = []
    await advance(flow, {}, { type: 'stuck.start', at: 0 }, { onTrace: (t) => traces.push(t) }).catch(
      () => {},
    )
    expect(traces).toEqual([
      expect.objectContaining({
        flow: 'stuck',
        status: 'error',
        errorCode: 'ERR_FLOW_LOOP',
        steps: [
          expect.objectContaining({ event: 'stuck.start', from: 'idle', to: 'working' }),
          expect.objectContaining({ event: 'work.done', from: 'working', to: 'limbo' }),
        ],
      }),
    ])
  })

  it('refuses to define a flow that lacks an effect implementation', () => {
    expect(() => defineFlow({ machine: stuckMachine(), context: Context, effects: {} })).toThrow(
      /no implementation for effect\(s\): work/,
    )
  })
})
