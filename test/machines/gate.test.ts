/**
 * The second-factor gate, checked on the charts of every machine in the registry (and on an
 * extended chart): no path reaches a session around it. Each check is shown to fail on a chart
 * edited to skip the gate, and the engine refuses at run time a session set by any flow but the
 * sign-in completion.
 */
import { object } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { createMachine, setup, type AnyStateMachine } from 'xstate'
import { termsExtension } from '../../extensions/terms.js'
import { defineFlow } from '../../core/engine/flow.js'
import { createHandler } from '../../core/auth.js'
import { routes, type Route } from '../../core/http/routes.js'
import { secondFactorGateViolations } from '../../machines/checks.js'
import { buildSignInCompletion, credentialsSignInMachine, signInCompletionMachine } from '../../machines/index.js'
import { finalStateOutcome } from '../../machines/shared/outcome.js'
import { builtInMachines } from '../../visualizations/flows.js'
import { authRequest, testConfig } from '../fixtures/http.js'

/** The completion's config with one state's transitions replaced. */
function editedCompletion(state: string, on: Record<string, unknown>): AnyStateMachine {
  const { config } = signInCompletionMachine
  const states = config.states as Record<string, Record<string, unknown>>
  return createMachine({ ...config, states: { ...states, [state]: { ...states[state], on: { ...(states[state]!.on as object), ...on } } } } as never)
}

const terms = termsExtension({ version: '1', html: '', acceptedVersion: () => null, recordAcceptance: () => {} })
const termsAfterFirstSignIn = termsExtension({ version: '1', html: '', acceptedVersion: () => null, recordAcceptance: () => {}, at: 'afterFirstSignIn' })

describe('the second-factor gate on the graph', () => {
  it.each([
    ...builtInMachines.map((m) => [m.id, m] as const),
    ['signin-completion with terms before the session', buildSignInCompletion([terms])] as const,
    ['signin-completion with terms after the first sign-in', buildSignInCompletion([termsAfterFirstSignIn])] as const,
  ])(
    'no path of %s reaches a session around it',
    (_id, machine) => {
      expect(secondFactorGateViolations(machine)).toEqual([])
    },
  )

  it('finds a stored user sent straight to the session', () => {
    const skipped = editedCompletion('storingUser', { 'storeUser.done': { target: 'preparingSession' } })
    expect(secondFactorGateViolations(skipped)).toContainEqual(expect.stringContaining('without the second-factor gate'))
  })

  it('finds an enrolled user whose code is never checked', () => {
    const unchecked = editedCompletion('awaitingSecondFactor', { 'secondFactor.submit': { target: 'preparingSession' } })
    expect(secondFactorGateViolations(unchecked)).toContainEqual(expect.stringContaining('without a verified code'))
    const wrongIsFine = editedCompletion('verifyingSecondFactor', { 'verifySecondFactor.failed': { target: 'preparingSession' } })
    expect(secondFactorGateViolations(wrongIsFine)).toContainEqual(expect.stringContaining('without a verified code'))
  })

  it('finds a gate whose enrolled branch is shadowed', () => {
    const shadowed = editedCompletion('checkingSecondFactor', {
      'findSecondFactor.done': [{ target: 'preparingSession' }, { guard: 'isEnrolled', target: 'awaitingSecondFactor' }],
    })
    expect(secondFactorGateViolations(shadowed)).toContainEqual(expect.stringContaining('first choice is not "isEnrolled"'))
  })

  it('finds a first factor that issues a session itself', () => {
    const { config } = credentialsSignInMachine
    const states = config.states as Record<string, Record<string, unknown>>
    const shortcut = createMachine({
      ...config,
      states: { ...states, issuingSession: { tags: 'effect.issueSession', on: { 'issueSession.done': 'verified' } } },
    } as never)
    expect(secondFactorGateViolations(shortcut)).toEqual([
      'credentials-signin: "issuingSession" issues a session without the sign-in completion',
    ])
  })
})

describe('the gate at run time', () => {
  it('refuses a session cookie from a flow other than the sign-in completion', async () => {
    const rogue = setup({}).createMachine({
      id: 'rogue-signin',
      version: '1',
      initial: 'idle',
      context: {},
      output: finalStateOutcome,
      states: {
        idle: { tags: 'awaitsRequest', on: { 'rogue.submit': 'signedIn' } },
        signedIn: {
          type: 'final',
          output: () => ({ type: 'redirect', url: '/', session: { op: 'set', value: 'forged', expires: 2_000_000_000 } }),
        },
      },
    })
    const flow = defineFlow({ machine: rogue, context: object(), effects: {} })
    const table: Route[] = [
      ...routes.filter((r) => r.action !== 'providers'),
      { method: 'GET', action: 'providers', provider: 'none', serve: { flow, params: object() as never, toEvent: (ctx) => ({ type: 'rogue.submit', at: ctx.at }) } },
    ]
    const config = testConfig()
    const response = await createHandler(table)(authRequest({ path: '/auth/providers' }), config)
    expect(response.headers.get('location')).toBe('https://authchart.test/auth/error?error=Configuration')
    expect(response.headers.getSetCookie().some((c) => c.includes('session-token'))).toBe(false)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ code: 'ERR_FLOW_SESSION_REFUSED' }))
  })
})
