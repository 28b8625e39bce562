/**
 * The OAuth, e-mail and passkey sign-in charts keep what they compute in their logic modules
 * (`machines/shared/logic.ts`): a logic module loads neither xstate nor a chart, and every guard,
 * assignment and output the chart uses is one of the logic module's functions, found by identity,
 * so the compiled chart can name each of them.
 */
import { describe, expect, it } from 'vitest'
import { listStateNodes } from '../../core/engine/transitions.js'
import { reach } from '../fixtures/module-reach.js'
import { assign, setup, type AnyStateMachine, type AnyTransitionDefinition } from 'xstate'
import * as emailLogic from '../../machines/email-signin.logic.js'
import { emailSignInMachine } from '../../machines/email-signin.machine.js'
import * as oauthLogic from '../../machines/oauth-signin.logic.js'
import { oauthSignInMachine } from '../../machines/oauth-signin.machine.js'
import * as webauthnLogic from '../../machines/webauthn-signin.logic.js'
import { webauthnSignInMachine } from '../../machines/webauthn-signin.machine.js'


/** What a logic module offers the chart compiler. */
interface LogicModule {
  readonly guards: Readonly<Record<string, unknown>>
  readonly assignments: Readonly<Record<string, unknown>>
  readonly outputs: Readonly<Record<string, unknown>>
}

const CHARTS: readonly { file: string; machine: AnyStateMachine; logic: LogicModule }[] = [
  { file: 'machines/oauth-signin.logic.ts', machine: oauthSignInMachine, logic: oauthLogic },
  { file: 'machines/email-signin.logic.ts', machine: emailSignInMachine, logic: emailLogic },
  { file: 'machines/webauthn-signin.logic.ts', machine: webauthnSignInMachine, logic: webauthnLogic },
]


const referenceName = (reference: unknown): string | undefined => {
  if (typeof reference === 'string') return reference
  if (reference && typeof reference === 'object' && 'type' in reference) return String(reference.type)
  return undefined
}

/**
 * Every function `machine` uses that `logic` cannot name: guards and assign actions (by name
 * through the machine's implementations, or inline), final and machine outputs, `meta.outcome`;
 * and every entry of `logic` the chart does not use. Empty when the chart follows the convention.
 */
function conventionBreaks(machine: AnyStateMachine, logic: LogicModule): string[] {
  const breaks: string[] = []
  const used = { guards: new Set<unknown>(), assignments: new Set<unknown>(), outputs: new Set<unknown>() }
  const expectIn = (kind: keyof typeof used, fn: unknown, where: string) => {
    if (typeof fn === 'function' && Object.values(logic[kind]).includes(fn)) used[kind].add(fn)
    else breaks.push(`${where}: not one of the logic module's ${kind}`)
  }
  const { guards, actions } = machine.implementations as {
    guards: Record<string, unknown>
    actions: Record<string, unknown>
  }
  const checkGuard = (guard: unknown, where: string) => {
    if (guard === undefined) return
    const name = referenceName(guard)
    expectIn('guards', name === undefined ? guard : guards[name], `${where} guard ${name ?? '(inline)'}`)
  }
  const checkAction = (action: unknown, where: string) => {
    const name = referenceName(action)
    const implementation = name === undefined ? action : actions[name]
    const assignment = (implementation as { assignment?: unknown } | undefined)?.assignment
    expectIn('assignments', assignment, `${where} action ${name ?? '(inline)'}`)
  }
  const checkTransition = (transition: AnyTransitionDefinition, where: string) => {
    checkGuard(transition.guard, where)
    for (const action of transition.actions ?? []) checkAction(action, where)
  }
  expectIn('outputs', machine.root.output, 'the machine output')
  for (const node of listStateNodes(machine)) {
    const where = `state ${node.id}`
    for (const [event, candidates] of node.transitions) {
      for (const transition of candidates) checkTransition(transition, `${where} on ${event}`)
    }
    for (const transition of node.always ?? []) checkTransition(transition, `${where} always`)
    for (const action of [...node.entry, ...node.exit]) checkAction(action, `${where} entry/exit`)
    if (node.type === 'final') expectIn('outputs', node.output, `${where} output`)
    const outcome = (node.meta as { outcome?: unknown } | undefined)?.outcome
    if (outcome !== undefined) expectIn('outputs', outcome, `${where} meta.outcome`)
  }
  for (const kind of ['guards', 'assignments', 'outputs'] as const) {
    for (const [name, fn] of Object.entries(logic[kind])) {
      if (!used[kind].has(fn)) breaks.push(`${kind}.${name}: not used by the chart`)
    }
  }
  return breaks
}

describe.each(CHARTS)('$file', ({ file, machine, logic }) => {
  it('loads neither xstate nor a chart, not even for a type', () => {
    const { files, packages } = reach(file)
    expect(files.length).toBeGreaterThan(1)
    expect(files.filter((name) => name.endsWith('.machine.ts'))).toEqual([])
    expect(packages.filter((name) => name === 'xstate' || name.startsWith('xstate/') || name.startsWith('@xstate/'))).toEqual([])
  })

  it("is where every guard, assignment and output of the chart comes from, and has nothing the chart does not use", () => {
    expect(conventionBreaks(machine, logic)).toEqual([])
  })

  it('holds the functions themselves: the chart has guards, assignments and outputs to name', () => {
    expect(Object.keys(logic.guards).length).toBeGreaterThan(0)
    expect(Object.keys(logic.assignments).length).toBeGreaterThan(0)
    expect(Object.values(logic.outputs)).toContain(machine.root.output)
  })
})

describe('the convention check', () => {
  const logic = {
    guards: { isReady: () => true, isUnused: () => false },
    assignments: { markReady: () => ({ ready: true }) },
    outputs: { done: () => ({ type: 'json', body: null }) },
  }
  const standIn = setup({
    types: {} as { context: { ready: boolean }; events: { type: 'go' } },
    guards: { isReady: logic.guards.isReady, isInline: () => true },
    actions: { markReady: assign(logic.assignments.markReady), markElsewhere: assign(() => ({ ready: false })) },
  }).createMachine({
    id: 'stand-in',
    context: { ready: false },
    initial: 'idle',
    output: logic.outputs.done,
    states: {
      idle: {
        meta: { outcome: () => ({ type: 'json', body: null }) },
        on: {
          go: [
            { guard: 'isInline', target: 'done', actions: 'markElsewhere' },
            { guard: 'isReady', target: 'done', actions: 'markReady' },
          ],
        },
      },
      done: { type: 'final', output: logic.outputs.done },
    },
  })

  it('names each function the logic module does not hold, and each entry the chart leaves unused', () => {
    expect(conventionBreaks(standIn, logic)).toEqual([
      "state stand-in.idle on go guard isInline: not one of the logic module's guards",
      "state stand-in.idle on go action markElsewhere: not one of the logic module's assignments",
      "state stand-in.idle meta.outcome: not one of the logic module's outputs",
      'guards.isUnused: not used by the chart',
    ])
  })

  it('follows imports through the modules a logic module reaches', () => {
    const { files, packages } = reach('machines/credentials-signin.machine.ts')
    expect(files).toContain('machines/credentials-signin.logic.ts')
    expect(files).toContain('machines/shared/logic.ts')
    expect(packages).toContain('xstate')
  })
})
