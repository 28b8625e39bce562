/**
 * The compiled stepper against xstate itself: along every shortest path of the credentials and
 * sign-in completion charts (and the session chart's JWT branch), both step to the same state, context and output. Charts
 * beyond the flat subset are not compiled and still run, through xstate.
 */
import { describe, expect, it } from 'vitest'
import { assign, createActor, createMachine, setup, type AnyActorScope, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate'
import { createTestModel } from 'xstate/graph'
import { compileMachine, compiledStep, type CompiledState } from '../../core/engine/compiled.js'
import { advance } from '../../core/engine/advance.js'
import { defineFlow } from '../../core/engine/flow.js'
import { credentialsSignInMachine, sessionMachine, signInCompletionMachine } from '../../machines/index.js'
import { finalStateOutcome } from '../../machines/shared/outcome.js'
import { object } from 'superstruct'

const T0 = 1_700_000_000
const jwt = { strategy: 'jwt', maxAge: 60, updateAge: 30 } as const
const db = { strategy: 'database', maxAge: 60 } as const
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
    { type: 'session.read', at: T0, policy: jwt },
    { type: 'session.update', at: T0, policy: jwt, data: { x: 1 } },
    { type: 'session.signOut', at: T0, policy: jwt, callbackUrl: '/bye' },
    { type: 'emitSignOutEvent.done', at: T0, output: null },
    { type: 'decodeSessionToken.done', at: T0, output: { token: { sub: 'u', iat: T0 - 40, exp: T0 + 20 } } },
    { type: 'decodeSessionToken.failed', at: T0, reason: 'invalid' },
    { type: 'runJwtCallback.done', at: T0, output: { token: { sub: 'u', iat: T0 - 40, exp: T0 + 20 }, changed: false } },
    { type: 'runJwtCallback.done', at: T0, output: { token: null, changed: false } },
    { type: 'runSessionCallback.done', at: T0, output: { session: { user } } },
    { type: 'encodeSessionToken.done', at: T0, output: { value: 'v' } },
    { type: 'emitSessionEvent.done', at: T0, output: null },
  ],
}

function inertScope(machine: AnyStateMachine): AnyActorScope {
  const self = createActor(machine)
  const noop = () => {}
  return { self, id: '', sessionId: '', system: self.system, logger: noop, defer: noop, emit: noop, stopChild: noop, actionExecutor: noop } as unknown as AnyActorScope
}

describe.each([credentialsSignInMachine, signInCompletionMachine, sessionMachine] as AnyStateMachine[])('the compiled $id chart', (machine) => {
  const chart = compileMachine(machine)!
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
      let state: CompiledState = chart.states.get(String(snapshot.value))!
      let context = snapshot.context as Record<string, unknown>
      for (const { event } of path.steps.slice(1)) {
        snapshot = machine.transition(snapshot, event as never, scope) as AnyMachineSnapshot
        const step = compiledStep(chart, state, context, event as never)!
        state = step.state
        context = step.context
        expect(state.key).toBe(snapshot.value)
        expect(context).toEqual(snapshot.context)
        if (snapshot.status === 'done') expect(state.output?.(context, event as never)).toEqual(snapshot.output)
      }
    }
  })

  it('rejects an event no transition accepts, as xstate leaves the snapshot unchanged', () => {
    const idle = chart.states.get('idle')!
    expect(compiledStep(chart, idle, {}, { type: 'nothing.done' })).toBeUndefined()
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

  it('are not compiled (entry actions, nested states), and the engine runs them through xstate', async () => {
    expect(compileMachine(withEntry)).toBeNull()
    expect(compileMachine(createMachine({ initial: 'a', states: { a: { initial: 'b', states: { b: {} } } } }))).toBeNull()
    const flow = defineFlow({
      machine: withEntry,
      context: object() as never,
      effects: { work: async () => ({ type: 'work.done' }) },
    })
    const run = await advance(flow, {}, { type: 'go', at: T0 })
    expect(run.outcome).toEqual({ type: 'json', body: { noted: true, done: false } })
  })
})
