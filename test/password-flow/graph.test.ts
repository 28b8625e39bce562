/**
 * The graph checks of the password charts: no path of any of them reaches a session around the
 * second factor, and on every path of the reset chart that stores a password, every session of the
 * user is ended before any answer. Each check is shown to fail on a chart edited to skip it.
 */
import { describe, expect, it } from 'vitest'
import { createMachine, type AnyStateMachine, type AnyStateNode } from 'xstate'
import { secondFactorGateViolations } from '../../machines/checks.js'
import { ENDS_SESSIONS_TAG, SETS_PASSWORD_TAG } from '../../machines/password-reset.logic.js'
import { passwordChangeMachine } from '../../machines/password-change.machine.js'
import { passwordResetMachine } from '../../machines/password-reset.machine.js'
import { passwordSignInMachine } from '../../machines/password-signin.machine.js'
import { passwordSignUpMachine } from '../../machines/password-signup.machine.js'
import { flowMachine } from '../../testing/index.js'
import { passwordWorld } from './fixtures.js'

/** Every state node of `machine`, nested ones included. */
function nodesOf(machine: AnyStateMachine): AnyStateNode[] {
  const out: AnyStateNode[] = []
  const walk = (node: AnyStateNode) => {
    out.push(node)
    for (const child of Object.values(node.states)) walk(child)
  }
  walk(machine.root)
  return out
}

/** The states a transition can lead to (a compound target enters its initial states). */
function entered(target: AnyStateNode): AnyStateNode[] {
  if (target.type !== 'compound') return [target]
  return [target, ...(target.initial.target as AnyStateNode[]).flatMap(entered)]
}

/**
 * What is wrong with a reset chart: each way out of a state that stores a password (its effect's
 * `.done`) that reaches a final state without passing a state that ends every session.
 */
export function sessionsEndedViolations(machine: AnyStateMachine): string[] {
  const nodes = nodesOf(machine)
  const violations: string[] = []
  const setting = nodes.filter((node) => node.tags.includes(SETS_PASSWORD_TAG))
  if (setting.length === 0) return [`${machine.id}: no state stores a password`]
  for (const node of setting) {
    const done = [...node.transitions.entries()].filter(([event]) => event.endsWith('.done')).flatMap(([, ts]) => ts)
    const queue = done.flatMap((t) => (t.target ?? []) as AnyStateNode[]).flatMap(entered)
    const seen = new Set<string>()
    while (queue.length > 0) {
      const next = queue.shift()!
      if (seen.has(next.id)) continue
      seen.add(next.id)
      if (next.tags.includes(ENDS_SESSIONS_TAG)) continue
      if (next.type === 'final') {
        violations.push(`${machine.id}: "${node.key}" reaches "${next.key}" without ending every session`)
        continue
      }
      for (const transitions of next.transitions.values()) for (const t of transitions) queue.push(...((t.target ?? []) as AnyStateNode[]).flatMap(entered))
    }
  }
  return violations
}

/** A copy of a chart's config: plain objects and arrays copied, functions (outputs) kept. */
const copyOf = <T>(value: T): T =>
  Array.isArray(value)
    ? (value.map(copyOf) as T)
    : value !== null && typeof value === 'object'
      ? (Object.fromEntries(Object.entries(value).map(([key, child]) => [key, copyOf(child)])) as T)
      : value

/** The reset chart with one state's transitions replaced, as a careless edit would. */
function editedReset(path: string[], on: Record<string, unknown>): AnyStateMachine {
  const config = copyOf(passwordResetMachine.config) as unknown as Record<string, unknown>
  let node = config as Record<string, unknown>
  for (const key of path) node = (node.states as Record<string, Record<string, unknown>>)[key]!
  node.on = { ...(node.on as object), ...on }
  return createMachine(config as never)
}

describe('the password charts on the graph', () => {
  it.each([passwordSignInMachine, passwordSignUpMachine, passwordResetMachine, passwordChangeMachine].map((m) => [m.id, m] as const))(
    'no path of %s reaches a session around the second factor',
    (_id, machine) => {
      expect(secondFactorGateViolations(machine)).toEqual([])
    },
  )

  it('the sign-in reaches a session only by the sign-in completion (as the configuration runs it)', () => {
    expect(secondFactorGateViolations(flowMachine(passwordWorld().config, 'password-signin'))).toEqual([])
  })

  it('every path of the reset that stores a password ends every session first', () => {
    expect(sessionsEndedViolations(passwordResetMachine)).toEqual([])
    expect(sessionsEndedViolations(flowMachine(passwordWorld().config, 'password-reset'))).toEqual([])
  })

  it('finds a reset that answers once the password is stored, without ending the sessions', () => {
    const skipped = editedReset(['resetting', 'settingPassword'], { 'setPassword.done': { target: '#password-reset.passwordReset' } })
    expect(sessionsEndedViolations(skipped)).toEqual(['password-reset: "settingPassword" reaches "passwordReset" without ending every session'])
    const detour = editedReset(['resetting', 'settingPassword'], { 'setPassword.done': { target: '#password-reset.checkEmail' } })
    expect(sessionsEndedViolations(detour)).toContainEqual(expect.stringContaining('"checkEmail" without ending every session'))
  })

  it('finds a reset chart whose password-storing state lost its tag (the check has nothing to follow)', () => {
    const config = copyOf(passwordResetMachine.config) as unknown as { states: Record<string, { states?: Record<string, { tags?: unknown }> }> }
    config.states.resetting!.states!.settingPassword!.tags = ['effect.setPassword']
    expect(sessionsEndedViolations(createMachine(config as never))).toEqual(['password-reset: no state stores a password'])
  })
})
