/**
 * The chart's promise, checked on the graph: with an e-mail provider configured, no sequence of
 * requests and effect results brings a sign-up to its registration options before a code sent to
 * its address came back right. The search walks every reachable state; it is shown to find the
 * hole in a chart edited to skip the code.
 */
import { describe, expect, it } from 'vitest'
import { createMachine, initialTransition, transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate'
import { webauthnSignInMachine, type WebAuthnSignInContext } from '../../machines/webauthn-signin.machine.js'

const at = 1_700_000_000
const ADA = { id: 'u-ada', email: 'ada@example.com' }

/** Every request and effect result the flow can meet, with each kind of asker. */
const EVENTS = [
  ...[null, 'register', 'authenticate'].flatMap((action) =>
    [true, false].map((mayEmail) => ({ type: 'webauthn.options', at, providerId: 'passkey', action, verifier: 'email', mayEmail })),
  ),
  ...[
    { signedIn: false, user: null, exists: false },
    { signedIn: false, user: { email: 'new@example.com' }, exists: false },
    { signedIn: false, user: ADA, exists: true },
    { signedIn: true, user: ADA, exists: true },
  ].map((output) => ({ type: 'findUser.done', at, output })),
  { type: 'admitAddress.done', at, output: { email: 'new@example.com' } },
  { type: 'admitAddress.failed', at, reason: 'throttled' },
  { type: 'sendCode.done', at, output: { tokenHash: 'h', codeHash: 'c', expires: at + 600 } },
  { type: 'sendCode.failed', at, reason: 'notSent' },
  { type: 'webauthn.code', at, code: 'typed' },
  ...['wrong', 'exhausted', 'expired'].map((reason) => ({ type: 'checkCode.failed', at, reason })),
  { type: 'checkCode.done', at, output: null },
  { type: 'voidToken.done', at, output: null },
  { type: 'spendToken.failed', at, reason: 'invalid' },
  { type: 'spendToken.failed', at, reason: 'threw' },
  { type: 'spendToken.done', at, output: null },
]

/**
 * A shortest sequence of events that brings a sign-up (nobody signed in) to its registration
 * options with its address unverified; `null` when none does.
 */
function unverifiedSignUpRegistration(machine: AnyStateMachine): string[] | null {
  const [start] = initialTransition(machine)
  const queue: { snapshot: AnyMachineSnapshot; path: string[] }[] = [{ snapshot: start, path: [] }]
  const seen = new Set<string>()
  while (queue.length > 0) {
    const { snapshot, path } = queue.shift()!
    const context = snapshot.context as WebAuthnSignInContext
    if (snapshot.matches('creatingRegistrationOptions') && !context.signedIn && context.emailVerified === null) return path
    const key = `${JSON.stringify(snapshot.value)}|${JSON.stringify(context)}`
    if (seen.has(key) || snapshot.status === 'done') continue
    seen.add(key)
    for (const event of EVENTS) {
      if (!snapshot.can(event as never)) continue
      const [next] = transition(machine, snapshot, event as never)
      const label = 'mayEmail' in event ? `${event.type}(${event.action},${event.mayEmail})` : event.type
      queue.push({ snapshot: next, path: [...path, label] })
    }
  }
  return null
}

describe('the passkey chart with an e-mail provider', () => {
  it('never issues a sign-up its registration options before a code sent to its address came back', () => {
    expect(unverifiedSignUpRegistration(webauthnSignInMachine)).toBeNull()
  })

  it('does issue them once the code came back, and to a signed-in user adding a passkey without one', () => {
    const [start] = initialTransition(webauthnSignInMachine)
    const run = (events: Record<string, unknown>[]) =>
      events.reduce((snapshot, event) => transition(webauthnSignInMachine, snapshot, event as never)[0], start)
    const options = (mayEmail: boolean, action: string | null) =>
      ({ type: 'webauthn.options', at, providerId: 'passkey', action, verifier: 'email', mayEmail })
    const signUp = run([
      options(true, null),
      { type: 'findUser.done', at, output: { signedIn: false, user: { email: 'new@example.com' }, exists: false } },
      { type: 'admitAddress.done', at, output: { email: 'new@example.com' } },
      { type: 'sendCode.done', at, output: { tokenHash: 'h', codeHash: 'c', expires: at + 600 } },
      { type: 'webauthn.code', at, code: 'typed' },
      { type: 'checkCode.done', at, output: null },
      { type: 'spendToken.done', at: at + 5, output: null },
    ])
    expect(signUp.value).toBe('creatingRegistrationOptions')
    expect((signUp.context as WebAuthnSignInContext).emailVerified).toBe(at + 5)
    const adding = run([options(false, 'register'), { type: 'findUser.done', at, output: { signedIn: true, user: ADA, exists: true } }])
    expect(adding.value).toBe('creatingRegistrationOptions')
  })

  it('finds the hole in a chart edited to go from the found sign-up straight to its options', () => {
    const { config } = webauthnSignInMachine
    const states = config.states as Record<string, { on: Record<string, { guard?: string }[]> }>
    const skipping = createMachine(
      {
        ...config,
        states: {
          ...states,
          findingUser: {
            ...states.findingUser,
            on: {
              ...states.findingUser!.on,
              'findUser.done': states.findingUser!.on['findUser.done']!.filter(
                (candidate) => candidate.guard !== 'isVerifiableSignUp' && candidate.guard !== 'isSignUpToVerify',
              ),
            },
          },
        },
      } as never,
      webauthnSignInMachine.implementations as never,
    )
    expect(unverifiedSignUpRegistration(skipping)).toEqual(['webauthn.options(null,true)', 'findUser.done'])
  })
})
