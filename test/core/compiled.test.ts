/**
 * The compiled stepper against xstate itself: along every shortest path of the credentials,
 * sign-in completion and session charts (the session chart grouped in phases: JWT, database,
 * sign-out), and along random walks of those and of a chart grouped in nested phases, both step to
 * the same state, context, tags and output. The credentials and session charts are the tables
 * generated at build time (`core/charts/`); the others are compiled at run time.
 * Charts beyond the subset (entry actions, parallel regions, history, finals inside a phase) are
 * refused when their flow is defined, naming the chart and the state.
 */
import { describe, expect, it } from 'vitest'
import { assign, createActor, createMachine, setup, type AnyActorScope, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate'
import { createTestModel } from 'xstate/graph'
import { credentialsSigninChart } from '../../core/charts/credentials-signin.js'
import { sessionChart } from '../../core/charts/session.js'
import { chartSnapshot, chartState, finalOutput, outcomeAt, stepChart } from '../../core/engine/chart.js'
import { ChartCompileError, compileAtRunTime } from '../../core/engine/runtime-compiler.js'
import type { ChartState, CompiledChart } from '../../core/engine/types.js'
import { defineFlow } from '../../core/engine/flow.js'
import { credentialsSignInMachine, sessionMachine, signInCompletionMachine } from '../../machines/index.js'
import { finalStateOutcome } from '../../machines/shared/outcome.js'
import { object } from 'superstruct'
import fc from 'fast-check'
import { advance, outcomeOf, pendingEffect } from '../../core/engine/advance.js'
import { stateLabel } from '../../core/engine/transitions.js'

const T0 = 1_700_000_000
const jwt = { strategy: 'jwt', maxAge: 60, updateAge: 30 } as const
const db = { strategy: 'database', maxAge: 60 } as const
const dbSession = { strategy: 'database', maxAge: 60, updateAge: 30 } as const
const user = { id: 'u', name: 'U', email: 'u@x' }

const SAMPLES: Record<string, object[]> = {
  [credentialsSignInMachine.id]: [
    ...[jwt, db].map((policy) => ({ type: 'credentials.submit', at: T0, providerId: 'c', credentials: { a: 1 }, callbackUrl: '/cb', policy })),
    { type: 'authorize.done', at: T0, output: { user, account: { provider: 'c' } } },
    { type: 'authorize.failed', at: T0, reason: 'rejected', error: 'CredentialsSignin', code: 'x' },
    { type: 'authorize.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'lookUpAccount.done', at: T0, output: { user: null } },
    { type: 'lookUpAccount.done', at: T0, output: { user } },
    { type: 'lookUpAccount.failed', at: T0, reason: 'threw', error: 'AdapterError' },
  ],
  [signInCompletionMachine.id]: [
    ...[
      { strategy: 'jwt', maxAge: 60, newUserUrl: null },
      { strategy: 'database', maxAge: 60, newUserUrl: '/welcome' },
    ].flatMap((policy) =>
      [true, false].map((persist) => ({
        type: 'signin.verified',
        at: T0,
        policy,
        identity: {
          firstFactor: 'credentials-signin',
          providerId: 'c',
          callbackUrl: '/cb',
          user,
          account: { provider: 'c' },
          profile: null,
          storedUser: null,
          persist,
          credentials: { a: 1 },
          claims: null,
        },
      })),
    ),
    { type: 'checkSignIn.done', at: T0, output: { redirect: null } },
    { type: 'checkSignIn.done', at: T0, output: { redirect: '/elsewhere' } },
    { type: 'checkSignIn.failed', at: T0, reason: 'denied', error: 'AccessDenied' },
    { type: 'storeUser.done', at: T0, output: { user, account: { provider: 'c', userId: 'u' }, isNewUser: true } },
    { type: 'storeUser.done', at: T0, output: { user, account: { provider: 'c', userId: 'u' }, isNewUser: false } },
    { type: 'storeUser.failed', at: T0, reason: 'notLinked', error: 'AccountNotLinked' },
    { type: 'storeUser.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'findSecondFactor.done', at: T0, output: { challenge: null } },
    { type: 'findSecondFactor.done', at: T0, output: { challenge: 'c-1' } },
    { type: 'findSecondFactor.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'secondFactor.submit', at: T0, code: '123456' },
    { type: 'verifySecondFactor.done', at: T0, output: { method: 'otp' } },
    { type: 'verifySecondFactor.failed', at: T0, reason: 'wrongCode' },
    { type: 'verifySecondFactor.failed', at: T0, reason: 'exhausted', error: 'AccessDenied' },
    { type: 'verifySecondFactor.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'prepareSession.done', at: T0, output: { amr: ['pwd', 'otp'] } },
    { type: 'issueSession.done', at: T0, output: { value: 'v', expires: T0 + 60 } },
    { type: 'issueSession.done', at: T0, output: { value: null, expires: T0 + 60 } },
    { type: 'issueSession.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'createDatabaseSession.done', at: T0, output: { value: 't', expires: T0 + 60 } },
    { type: 'createDatabaseSession.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'emitSignInEvent.done', at: T0, output: null },
  ],
  [sessionMachine.id]: [
    ...[
      jwt,
      { ...jwt, refreshProviders: ['p'], logoutProviders: ['op'] },
      dbSession,
      { ...dbSession, refreshProviders: ['p'], logoutProviders: ['op'] },
    ].flatMap((policy) => [
      { type: 'session.read', at: T0, policy },
      { type: 'session.update', at: T0, policy, data: { x: 1 } },
      { type: 'session.signOut', at: T0, policy, callbackUrl: '/bye' },
    ]),
    { type: 'emitSignOutEvent.done', at: T0, output: null },
    { type: 'decodeSessionToken.done', at: T0, output: { token: { sub: 'u', iat: T0 - 40, exp: T0 + 20 } } },
    {
      type: 'decodeSessionToken.done',
      at: T0,
      output: { token: { sub: 'u', iat: T0 - 10, exp: T0 + 50, oauth: { provider: 'p', refresh_token: 'r', expires_at: T0, id_token: 'i' } } },
    },
    { type: 'refreshAccessToken.done', at: T0, output: { token: { sub: 'u', iat: T0 - 10, exp: T0 + 50, oauth: { provider: 'p' } } } },
    ...['rejected', 'threw'].map((reason) => ({ type: 'refreshAccessToken.failed', at: T0, reason })),
    ...['missing', 'invalid', 'expired', 'absolute-lifetime', 'signed-out-everywhere', 'provider-logout'].map((reason) => ({
      type: 'decodeSessionToken.failed',
      at: T0,
      reason,
    })),
    ...[
      { expires: T0 + 60 },
      { expires: T0 + 10 },
      { expires: T0 - 1 },
      { expires: T0 - 1, endsByLifetime: true },
      { expires: T0 + 10, endsByLifetime: true },
    ].map((ends) => ({
      type: 'getSessionAndUser.done',
      at: T0,
      output: { sessionToken: 't', ...ends, user, session: { id: 's', createdAt: T0 - 100 } },
    })),
    ...['missing', 'notFound', 'threw'].map((reason) => ({ type: 'getSessionAndUser.failed', at: T0, reason })),
    { type: 'deleteExpiredSession.done', at: T0, output: null },
    { type: 'deleteExpiredSession.failed', at: T0, reason: 'threw' },
    { type: 'extendSession.done', at: T0, output: { expires: T0 + 60 } },
    { type: 'extendSession.failed', at: T0, reason: 'threw' },
    { type: 'refreshAccountTokens.done', at: T0, output: { rejected: true } },
    { type: 'runDatabaseSessionCallback.done', at: T0, output: { session: { user } } },
    { type: 'runDatabaseSessionCallback.failed', at: T0, reason: 'threw' },
    { type: 'deleteSession.done', at: T0, output: { session: { userId: 'u' } } },
    ...['missing', 'threw'].map((reason) => ({ type: 'deleteSession.failed', at: T0, reason })),
    { type: 'buildProviderLogout.done', at: T0, output: { url: 'https://op/end' } },
    { type: 'buildProviderLogout.failed', at: T0, reason: 'notLinked' },
    { type: 'runJwtCallback.failed', at: T0, reason: 'threw' },
    { type: 'runSessionCallback.failed', at: T0, reason: 'threw' },
    { type: 'encodeSessionToken.failed', at: T0, reason: 'threw' },
    { type: 'runJwtCallback.done', at: T0, output: { token: { sub: 'u', iat: T0 - 40, exp: T0 + 20 }, changed: false } },
    { type: 'runJwtCallback.done', at: T0, output: { token: null, changed: false } },
    { type: 'runSessionCallback.done', at: T0, output: { session: { user } } },
    { type: 'encodeSessionToken.done', at: T0, output: { value: 'v' } },
    { type: 'emitSessionEvent.done', at: T0, output: null },
  ],
}

/** The generated tables, by chart id. */
const GENERATED: Record<string, CompiledChart> = { [sessionChart.id]: sessionChart, [credentialsSigninChart.id]: credentialsSigninChart }
/** The table the engine steps for `machine`: the generated one, else compiled at run time. */
const chartFor = (machine: AnyStateMachine): CompiledChart => GENERATED[machine.id] ?? compileAtRunTime(machine)

function inertScope(machine: AnyStateMachine): AnyActorScope {
  const self = createActor(machine)
  const noop = () => {}
  return { self, id: '', sessionId: '', system: self.system, logger: noop, defer: noop, emit: noop, stopChild: noop, actionExecutor: noop } as unknown as AnyActorScope
}

describe.each([credentialsSignInMachine, signInCompletionMachine, sessionMachine] as AnyStateMachine[])('the compiled $id chart', (machine) => {
  const chart = chartFor(machine)
  const samples = SAMPLES[machine.id]!
  const paths = createTestModel(machine, {
    events: (snapshot: AnyMachineSnapshot) => samples.filter((e) => snapshot.can(e as never)) as never,
  }).getShortestPaths()

  it('is compiled', () => {
    expect(chart).not.toBeNull()
    expect(paths.length).toBeGreaterThan(5)
  })

  it('steps exactly as xstate along every shortest path: state, context, output', () => {
    const scope = inertScope(machine)
    for (const path of paths) {
      let snapshot = machine.getInitialSnapshot(scope) as AnyMachineSnapshot
      let state: ChartState = chartState(chart, stateLabel(snapshot.value))!
      let context = snapshot.context as Record<string, unknown>
      for (const { event } of path.steps.slice(1)) {
        snapshot = machine.transition(snapshot, event as never, scope) as AnyMachineSnapshot
        const step = stepChart(chart, state, context, event as never)!
        state = step.state
        context = step.context
        expect(state.key).toBe(stateLabel(snapshot.value))
        expect(state.value).toEqual(snapshot.value)
        expect(context).toEqual(snapshot.context)
        if (snapshot.status === 'done') expect(finalOutput(chart, state, context, event as never)).toEqual(snapshot.output)
      }
    }
  })

  it('rejects an event no transition accepts, as xstate leaves the snapshot unchanged', () => {
    const idle = chartState(chart, 'idle')!
    expect(stepChart(chart, idle, {}, { type: 'nothing.done' })).toBeUndefined()
  })
})

describe('charts beyond the flat subset', () => {
  const withEntry = setup({ actions: { note: assign({ noted: true }) } }).createMachine({
    id: 'entry-action',
    version: '1',
    initial: 'idle',
    context: { noted: false, done: false },
    output: finalStateOutcome,
    states: {
      idle: { tags: 'awaitsRequest', on: { go: 'working' } },
      working: { entry: 'note', tags: 'effect.work', on: { 'work.done': 'finished' } },
      finished: { type: 'final', output: ({ context }) => ({ type: 'json', body: context }) },
    },
  })

  /** What compiling `machine` at run time refuses, as `[state, message]`. */
  const refusal = (machine: AnyStateMachine) => {
    try {
      compileAtRunTime(machine)
    } catch (error) {
      expect(error).toBeInstanceOf(ChartCompileError)
      return [(error as ChartCompileError).state, (error as Error).message]
    }
    throw new Error(`${machine.id} was compiled`)
  }

  it('are refused, naming the chart, the state and what is beyond (entry actions, parallel, history, finals in a phase)', () => {
    expect(refusal(withEntry)).toEqual(['working', 'chart "entry-action", state "working": entry actions are beyond the compiled subset'])
    expect(refusal(createMachine({ id: 'e', initial: 'a', states: { a: { entry: assign({}), initial: 'b', states: { b: {} } } } }))[0]).toBe('a')
    expect(refusal(createMachine({ id: 'p', initial: 'a', states: { a: { type: 'parallel', states: { b: {}, c: {} } } } }))).toEqual([
      'a',
      'chart "p", state "a": a parallel state is beyond the compiled subset',
    ])
    expect(
      refusal(createMachine({ id: 'h', initial: 'a', states: { a: { initial: 'b', states: { b: { on: { x: 'h' } }, h: { type: 'history' } } } } }))[1],
    ).toMatch(/history state is beyond the compiled subset/)
    expect(
      refusal(createMachine({ id: 'f', initial: 'a', states: { a: { initial: 'b', states: { b: { on: { x: 'c' } }, c: { type: 'final' } } } } })),
    ).toEqual(['a.c', 'chart "f", state "a.c": final states inside a phase are beyond the compiled subset'])
  })

  it('are refused when their flow is defined, so none reaches a request', () => {
    expect(() => defineFlow({ machine: withEntry, context: object() as never, effects: { work: async () => ({ type: 'work.done' }) } })).toThrow(
      ChartCompileError,
    )
  })
})

/** A chart grouped in phases, nested two deep, with transitions at every level (the root's too). */
const grouped = setup({
  types: {} as { context: { n: number; log: string[] }; events: { type: string; k?: number } },
  guards: {
    small: ({ context }) => context.n < 3,
    even: ({ event }) => (event.k ?? 0) % 2 === 0,
  },
  actions: {
    bump: assign({ n: ({ context }) => context.n + 1 }),
    note: assign({ log: ({ context, event }) => [...context.log, event.type] }),
  },
}).createMachine({
  id: 'grouped',
  version: '1',
  initial: 'idle',
  context: { n: 0, log: [] },
  output: finalStateOutcome,
  on: { abort: { target: '.aborted', actions: 'note' } },
  states: {
    idle: {
      tags: 'awaitsRequest',
      meta: { outcome: (context: { n: number }) => ({ type: 'json', body: { waiting: context.n } }) },
      on: { start: 'work', deep: 'work.inner.d', next: { guard: 'even', actions: 'bump' } },
    },
    work: {
      initial: 'a',
      on: {
        next: [{ guard: 'small', target: 'work', actions: 'bump' }, { target: 'review' }],
        tick: { actions: 'bump' },
        reset: '#grouped.idle',
      },
      states: {
        a: { tags: 'effect.first', on: { next: { guard: 'even', target: 'b', actions: 'note' }, go: 'inner' } },
        b: { on: { tick: { guard: 'small', actions: ['note', 'bump'] }, go: '#grouped.work.inner.d' } },
        inner: {
          initial: 'c',
          on: { go: '.d', up: '#grouped.work', tick: [{ guard: 'small', target: '#grouped.review.r2' }] },
          states: {
            c: { tags: 'awaitsRequest', on: { go: { guard: 'even', target: 'c', actions: 'note' } } },
            d: { tags: 'effect.second', on: { up: { guard: 'small', target: '#grouped.idle', actions: 'bump' } } },
          },
        },
      },
    },
    review: {
      initial: 'r1',
      on: { back: 'work.inner', ok: 'done' },
      states: {
        r1: { on: { ok: { guard: 'small', target: 'r2' } } },
        r2: { tags: 'awaitsRequest', meta: { outcome: () => ({ type: 'redirect', url: '/r2' }) }, on: { back: 'r1' } },
      },
    },
    done: { type: 'final', output: ({ context }) => ({ type: 'json', body: context }) },
    aborted: { type: 'final', output: { type: 'error', error: 'Aborted' } },
  },
})

const GROUPED_EVENTS = [
  { type: 'start' },
  { type: 'deep' },
  { type: 'next', k: 1 },
  { type: 'next', k: 2 },
  { type: 'tick' },
  { type: 'go', k: 1 },
  { type: 'go', k: 2 },
  { type: 'up' },
  { type: 'reset' },
  { type: 'ok' },
  { type: 'back' },
  { type: 'abort' },
  { type: 'nothing' },
]

/** Walks `events` through both steppers from the initial state, comparing after every event. */
function walkBoth(machine: AnyStateMachine, events: readonly object[]): string[] {
  const chart = chartFor(machine)
  const scope = inertScope(machine)
  let snapshot = machine.getInitialSnapshot(scope) as AnyMachineSnapshot
  let state = chartState(chart, stateLabel(snapshot.value))!
  let context = snapshot.context as Record<string, unknown>
  const visited = [state.key]
  for (const event of events) {
    if (snapshot.status === 'done') break
    const next = machine.transition(snapshot, event as never, scope) as AnyMachineSnapshot
    const step = stepChart(chart, state, context, event as never)
    if (step === undefined) {
      expect(next.value).toEqual(snapshot.value)
      expect(next.context).toEqual(snapshot.context)
    } else {
      state = step.state
      context = step.context
    }
    snapshot = next
    expect(state.key).toBe(stateLabel(snapshot.value))
    expect(state.value).toEqual(snapshot.value)
    expect(context).toEqual(snapshot.context)
    expect(state.final === true).toBe(snapshot.status === 'done')
    expect(state.effect).toBe(pendingEffect(snapshot))
    expect(state.awaitsRequest === true).toBe(snapshot.hasTag('awaitsRequest'))
    if (state.final) expect(finalOutput(chart, state, context, event as never)).toEqual(snapshot.output)
    else if (state.awaitsRequest) expect(outcomeAt(chart, state, context, event as never)).toEqual(outcomeOf(snapshot))
    visited.push(state.key)
  }
  return visited
}

describe('a chart grouped in phases', () => {
  it('is compiled: one state per atomic or final state, keyed by its dotted path', () => {
    const chart = chartFor(grouped)
    expect(Object.keys(chart.states).sort()).toEqual(
      ['aborted', 'done', 'idle', 'review.r1', 'review.r2', 'work.a', 'work.b', 'work.inner.c', 'work.inner.d'].sort(),
    )
    expect(chartState(chart, 'work.inner.d')!.value).toEqual({ work: { inner: 'd' } })
  })

  it('takes a state’s own transition before its phase’s, and a phase’s before the root’s', () => {
    // work.a: its own guarded `next` (k even) first, then the phase's `next` (small ⇒ re-enter work).
    expect(walkBoth(grouped, [{ type: 'start' }, { type: 'next', k: 2 }])).toEqual(['idle', 'work.a', 'work.b'])
    expect(walkBoth(grouped, [{ type: 'start' }, { type: 'next', k: 1 }])).toEqual(['idle', 'work.a', 'work.a'])
    expect(walkBoth(grouped, [{ type: 'deep' }, { type: 'abort' }])).toEqual(['idle', 'work.inner.d', 'aborted'])
  })

  it('enters a named phase at its initial atomic state', () => {
    expect(walkBoth(grouped, [{ type: 'start' }, { type: 'go' }, { type: 'up' }])).toEqual([
      'idle',
      'work.a',
      'work.inner.c',
      'work.a',
    ])
  })

  it('runs through the engine: effects inside phases, a nested resting state resumed by its value', async () => {
    const flow = defineFlow({
      machine: grouped,
      context: object() as never,
      effects: { first: () => ({ type: 'next', k: 2 }), second: () => ({ type: 'up' }) },
    })
    const run = await advance(flow, {}, { type: 'deep', at: T0 }, { traceTransitions: true })
    expect(run.trace.steps.map((step) => `${step.from} → ${step.to}`)).toEqual(['idle → work.inner.d', 'work.inner.d → idle'])
    expect(run.trace.steps[1]!.transitions).toEqual(['grouped.work.inner.d:up:0'])
    expect(run.outcome).toEqual({ type: 'json', body: { waiting: 1 } })
    const resting = { value: { review: 'r2' }, context: { n: 0, log: [] } } as unknown as AnyMachineSnapshot
    const resumed = await advance(flow, {}, { type: 'ok', at: T0 }, { from: resting, traceTransitions: true })
    expect(resumed.trace.steps[0]!.transitions).toEqual(['grouped.review:ok:0'])
    expect(resumed.snapshot.value).toBe('done')
    expect(resumed.outcome).toEqual({ type: 'json', body: { n: 0, log: [] } })
    const first = { value: { review: 'r1' }, context: { n: 0, log: [] } } as unknown as AnyMachineSnapshot
    const waiting = await advance(flow, {}, { type: 'ok', at: T0 }, { from: first })
    expect(waiting.resting).toBe(true)
    expect(waiting.snapshot.value).toEqual({ review: 'r2' })
    expect(waiting.outcome).toEqual({ type: 'redirect', url: '/r2' })
  })

  it('steps exactly as xstate along random walks: state, context, tags, outcome', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...GROUPED_EVENTS), { maxLength: 30 }), (events) => {
        walkBoth(grouped, events)
      }),
      { numRuns: 500 },
    )
  })

  it('visits every state along those walks', () => {
    const seen = new Set<string>()
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...GROUPED_EVENTS), { maxLength: 30 }), (events) => {
        for (const key of walkBoth(grouped, events)) seen.add(key)
      }),
      { numRuns: 300, seed: 27 },
    )
    expect(seen.size).toBe(Object.keys(chartFor(grouped).states).length)
  })
})

describe.each([credentialsSignInMachine, signInCompletionMachine, sessionMachine] as AnyStateMachine[])(
  'random walks of the $id chart',
  (machine) => {
    it('step exactly as xstate', () => {
      const samples = SAMPLES[machine.id]!
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...samples), { maxLength: 20 }), (events) => {
          walkBoth(machine, events)
        }),
        { numRuns: 200 },
      )
    })
  },
)

describe('the session chart, grouped in phases (JWT, database, sign-out)', () => {
  const samples = SAMPLES[sessionMachine.id]!
  const requests = samples.filter((event) => (event as { type: string }).type.startsWith('session.'))
  const results = samples.filter((event) => !requests.includes(event))
  const chart = chartFor(sessionMachine)
  /** A walk that picks, at each step, among the samples the state has transitions for. */
  const guided = (first: number, choices: number[]): object[] => {
    const events: object[] = [requests[first % requests.length]!]
    let step = stepChart(chart, chartState(chart, 'idle')!, {}, events[0] as never)
    let state = step?.state
    let context = step?.context ?? {}
    for (const choice of choices) {
      if (!state || state.final) break
      const accepted = results.filter((event) => Object.hasOwn(state!.transitions, (event as { type: string }).type))
      if (accepted.length === 0) break
      const event = accepted[choice % accepted.length]!
      events.push(event)
      step = stepChart(chart, state, context, event as never)
      if (step) ({ state, context } = step)
    }
    return events
  }
  const walks = fc.tuple(fc.nat(), fc.array(fc.nat(), { maxLength: 12 })).map(([first, choices]) => guided(first, choices))

  it('is compiled with its phases, every end at the root', () => {
    const keys = Object.keys(chartFor(sessionMachine).states)
    expect(keys.filter((key) => key.includes('.')).map((key) => key.split('.')[0])).toEqual(
      expect.arrayContaining(['jwt', 'database', 'signOut']),
    )
    for (const end of ['expired', 'pastAbsoluteLifetime', 'signedOutEverywhere', 'providerLoggedOut', 'tampered', 'unknownSession']) {
      expect(chartState(chartFor(sessionMachine), end)?.final, end).toBe(true)
    }
  })

  it('steps exactly as xstate along random requests, and the walks reach every state', () => {
    const seen = new Set<string>()
    fc.assert(
      fc.property(walks, (events) => {
        for (const key of walkBoth(sessionMachine, events)) seen.add(key)
      }),
      { numRuns: 2000, seed: 27 },
    )
    expect(Object.keys(chartFor(sessionMachine).states).filter((key) => !seen.has(key))).toEqual([])
  })
})

describe('the compiled table, read with untrusted keys', () => {
  const chart = chartFor(sessionMachine)
  const idle = chartState(chart, 'idle')!

  it('has no state named like an inherited property (a sealed envelope names the state it resumes)', () => {
    for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) expect(chartState(chart, key), key).toBeUndefined()
    expect(chartState(chart, 'idle')).toBe(idle)
  })

  it('takes no transition on an event named like an inherited property', () => {
    for (const type of ['constructor', '__proto__', 'toString', 'valueOf']) expect(stepChart(chart, idle, {}, { type }), type).toBeUndefined()
  })

  it('refuses such a state through the engine, as an unknown one', async () => {
    const flow = defineFlow({ machine: grouped, context: object() as never, effects: { first: () => ({ type: 'next' }), second: () => ({ type: 'up' }) } })
    const from = { value: 'constructor', context: { n: 0, log: [] } } as unknown as AnyMachineSnapshot
    await expect(advance(flow, {}, { type: 'start', at: T0 }, { from })).rejects.toThrow('grouped: unknown state "constructor"')
  })
})

describe('a snapshot of a resting compiled chart', () => {
  const chart = chartFor(grouped)

  it.each(['idle', 'work.inner.c', 'review.r2'])('reads as xstate’s own in %s: value, tags, meta, matches', (key) => {
    const state = chartState(chart, key)!
    const context = { n: 2, log: ['x'] }
    const ours = chartSnapshot(chart, state, context)
    const theirs = grouped.resolveState({ value: state.value, context }) as AnyMachineSnapshot
    expect(ours.value).toEqual(theirs.value)
    expect(ours.context).toBe(context)
    expect(ours.status).toBe(theirs.status)
    for (const tag of ['awaitsRequest', 'effect.first', 'effect.second']) expect(ours.hasTag(tag), tag).toBe(theirs.hasTag(tag))
    const outcomes = (snapshot: AnyMachineSnapshot) =>
      Object.values(snapshot.getMeta()).flatMap((meta) => ((meta as { outcome?: unknown })?.outcome ? [(meta as { outcome: (c: unknown) => unknown }).outcome(context)] : []))
    expect(outcomes(ours)).toEqual(outcomes(theirs))
    for (const label of ['idle', 'work', 'work.inner', 'work.inner.c', 'review', 'review.r1', 'review.r2', 'work.a', 'done']) {
      expect(ours.matches(label as never), `${key} matches ${label}`).toBe(theirs.matches(label as never))
    }
  })
})
