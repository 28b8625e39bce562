/**
 * The checks on the charts' graphs (machines/checks.ts) on small charts built for each case, fast
 * enough to run for every mutant: what each violation says (the state's own name), the gate that is
 * missing or whose first choice leads nowhere, a chart without an initial state, and which events
 * count as a proof before the session is marked verified.
 */
import { describe, expect, it } from 'vitest'
import { createMachine } from 'xstate'
import { freshnessGateViolations, reauthenticationViolations, secondFactorGateViolations } from '../../machines/checks.js'
import { SECOND_FACTOR_GATE, SIGN_IN_COMPLETION } from '../../machines/signin-completion.machine.js'

describe('secondFactorGateViolations', () => {
  it('names a completion without the gate', () => {
    const machine = createMachine({ id: SIGN_IN_COMPLETION, initial: 'start', states: { start: {} } })
    expect(secondFactorGateViolations(machine)).toEqual([`${SIGN_IN_COMPLETION}: has no second-factor gate ("${SECOND_FACTOR_GATE}")`])
  })

  it('names, by its own name, a nested session state reached around the gate', () => {
    const machine = createMachine({
      id: SIGN_IN_COMPLETION,
      initial: 'start',
      states: {
        start: { on: { skip: 'outer.issuing', check: SECOND_FACTOR_GATE } },
        [SECOND_FACTOR_GATE]: { on: { 'findSecondFactor.done': [{ guard: 'isEnrolled', target: 'asking' }, { target: 'outer.issuing' }] } },
        asking: { on: { 'verifySecondFactor.done': 'outer.issuing' } },
        outer: { initial: 'issuing', states: { issuing: { tags: 'effect.issueSession' } } },
      },
    }) as never
    expect(secondFactorGateViolations(machine)).toEqual([`${SIGN_IN_COMPLETION}: a path reaches "issuing" without the second-factor gate`])
  })

  it('names the state an enrolled user reaches without a verified code', () => {
    const machine = createMachine({
      id: SIGN_IN_COMPLETION,
      initial: 'start',
      states: {
        start: { on: { check: SECOND_FACTOR_GATE } },
        [SECOND_FACTOR_GATE]: { on: { 'findSecondFactor.done': [{ guard: 'isEnrolled', target: 'asking' }, { target: 'done' }] } },
        asking: { on: { 'verifySecondFactor.done': 'outer.issuing', skip: 'outer.issuing' } },
        done: {},
        outer: { initial: 'issuing', states: { issuing: { tags: 'effect.issueSession' } } },
      },
    }) as never
    expect(secondFactorGateViolations(machine)).toEqual([`${SIGN_IN_COMPLETION}: an enrolled user reaches "issuing" without a verified code`])
  })

  it("refuses a gate whose first choice, though guarded by isEnrolled, leads to no state", () => {
    const machine = createMachine({
      id: SIGN_IN_COMPLETION,
      initial: SECOND_FACTOR_GATE,
      states: {
        [SECOND_FACTOR_GATE]: { on: { 'findSecondFactor.done': [{ guard: 'isEnrolled', actions: [] }, { target: 'issuing' }] } },
        issuing: { tags: 'effect.issueSession' },
      },
    }) as never
    expect(secondFactorGateViolations(machine)).toContain(
      `${SIGN_IN_COMPLETION}: the gate's first choice is not "isEnrolled": an enrolled user could pass without a code`,
    )
  })
})

describe('freshnessGateViolations', () => {
  it('names, by its own name, a nested sensitive state reached around the gate and from a stale session', () => {
    const machine = createMachine({
      id: 'action',
      initial: 'start',
      states: {
        start: { on: { go: 'gate', skip: 'outer.changing' } },
        gate: { tags: 'effect.checkFreshness', on: { 'checkFreshness.done': 'outer.changing', 'checkFreshness.failed': 'outer.changing' } },
        outer: { initial: 'changing', states: { changing: { tags: 'sensitive' } } },
      },
    })
    expect(freshnessGateViolations(machine)).toEqual([
      'action: a path reaches "changing" without the freshness gate',
      'action: a stale session reaches "changing" from the gate',
    ])
  })
})

describe('reauthenticationViolations', () => {
  it('checks a chart without states from its root', () => {
    const machine = createMachine({ id: 'bare', tags: 'effect.markVerified' } as never)
    expect(reauthenticationViolations(machine)).toEqual(['bare: a path reaches "bare" without a proven factor'])
  })

  it.each(['reverifyCode.done', 'verifyCode.done.late', 'verifyCode.failed'])('does not take "%s" as a proof', (event) => {
    const machine = createMachine({
      id: 'reauth',
      initial: 'waiting',
      states: { waiting: { on: { [event]: 'marking' } }, marking: { tags: 'effect.markVerified' } },
    })
    expect(reauthenticationViolations(machine)).toEqual(['reauth: a path reaches "marking" without a proven factor'])
  })

  it('takes a verify….done event as a proof', () => {
    const machine = createMachine({
      id: 'reauth',
      initial: 'waiting',
      states: { waiting: { on: { 'verifyCode.done': 'marking' } }, marking: { tags: 'effect.markVerified' } },
    })
    expect(reauthenticationViolations(machine)).toEqual([])
  })
})
