/**
 * Chart logic modules (machines/shared/logic.ts): a chart's `.logic.ts` imports neither xstate nor
 * a `.machine.ts` file, through its whole import graph, and every function its machine uses — a
 * guard, an assignment, a final state's or the machine's `output`, a waiting state's
 * `meta.outcome` — is one of the logic module's `guards`, `assignments` or `outputs`, by identity:
 * the chart compiler names each function that way and refuses a chart with one it cannot name.
 */
import { object } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { listStateNodes } from '../../core/engine/transitions.js'
import { reach, specifiersIn } from '../fixtures/module-reach.js'
import { assign, setup, type AnyStateMachine } from 'xstate'
import * as reauthenticateLogic from '../../machines/reauthenticate.logic.js'
import { buildReauthenticate, reauthenticateMachine } from '../../machines/reauthenticate.machine.js'
import * as completionLogic from '../../machines/signin-completion.logic.js'
import {
  buildSignInCompletion,
  CONTINUE,
  DENY,
  denyBecause,
  signInCompletionMachine,
  type CompletionExtension,
} from '../../machines/signin-completion.machine.js'
import * as enrolmentLogic from '../../machines/totp-enrolment.logic.js'
import { totpEnrolmentMachine } from '../../machines/totp-enrolment.machine.js'


interface LogicModule {
  guards: Record<string, unknown>
  assignments: Record<string, unknown>
  outputs: Record<string, unknown>
}

const LOGIC_MODULES = ['machines/signin-completion.logic.ts', 'machines/totp-enrolment.logic.ts', 'machines/reauthenticate.logic.ts']

interface Walk {
  /** Each function the machine uses, as `<kind> <name>` (names as the chart uses them). */
  found: string[]
  /** Each one the logic module does not hold, with where it is used. */
  unnamed: string[]
}

/**
 * Walks every state node of `machine` and looks each function it uses up in `logic` by identity.
 * Names in `foreign` (an application's extension's own guards and actions) are skipped.
 */
function walkFunctions(machine: AnyStateMachine, logic: LogicModule, foreign: ReadonlySet<string> = new Set()): Walk {
  const found: string[] = []
  const unnamed: string[] = []
  const implementations = machine.implementations as { guards: Record<string, unknown>; actions: Record<string, unknown> }
  const check = (kind: string, name: string, fn: unknown, pool: Record<string, unknown>, where: string) => {
    found.push(`${kind} ${name}`)
    if (typeof fn !== 'function' || !Object.values(pool).includes(fn)) unnamed.push(`${where}: ${kind} ${name}`)
  }
  const checkGuard = (guard: unknown, where: string) => {
    if (guard === undefined) return
    const name = typeof guard === 'string' ? guard : (guard as { type?: unknown }).type
    if (typeof name === 'string') {
      if (!foreign.has(name)) check('guard', name, implementations.guards[name], logic.guards, where)
    } else check('guard', '(inline)', guard, logic.guards, where)
  }
  const checkAction = (action: unknown, where: string) => {
    const name = typeof action === 'string' ? action : typeof action === 'object' ? (action as { type?: unknown }).type : undefined
    if (typeof name === 'string' && foreign.has(name)) return
    const resolved = typeof name === 'string' ? implementations.actions[name] : action
    const { type, assignment } = (resolved ?? {}) as { type?: unknown; assignment?: unknown }
    if (typeof resolved !== 'function' || type !== 'xstate.assign') {
      unnamed.push(`${where}: action ${String(name ?? '(inline)')} is not an assign`)
      return
    }
    check('assignment', String(name ?? '(inline)'), assignment, logic.assignments, where)
  }
  check('output', '(machine)', machine.root.output, logic.outputs, machine.id)
  for (const node of listStateNodes(machine)) {
    const where = `${machine.id}#${node.path.join('.') || '(root)'}`
    for (const action of [...node.entry, ...node.exit]) checkAction(action, `${where} entry/exit`)
    for (const [event, transitions] of node.transitions) {
      for (const transition of transitions) {
        checkGuard(transition.guard, `${where} on ${event}`)
        for (const action of transition.actions) checkAction(action, `${where} on ${event}`)
      }
    }
    if (node.type === 'final' && node.output !== undefined) check('output', node.key, node.output, logic.outputs, where)
    const outcome = (node.meta as { outcome?: unknown } | undefined)?.outcome
    if (outcome !== undefined) check('outcome', node.key, outcome, logic.outputs, where)
  }
  return { found, unnamed }
}

/** Every guard and action the machine is set up with is the logic module's (none left unwalked). */
function unnamedImplementations(machine: AnyStateMachine, logic: LogicModule, foreign: ReadonlySet<string> = new Set()): string[] {
  const { guards, actions } = machine.implementations as { guards: Record<string, unknown>; actions: Record<string, unknown> }
  return [
    ...Object.entries(guards)
      .filter(([name, guard]) => !foreign.has(name) && !Object.values(logic.guards).includes(guard))
      .map(([name]) => `guard ${name}`),
    ...Object.entries(actions)
      .filter(([name, action]) => !foreign.has(name) && !Object.values(logic.assignments).includes((action as { assignment?: unknown }).assignment))
      .map(([name]) => `action ${name}`),
  ]
}

/** A step at `afterFirstSignIn`: a page that goes on, refuses, or refuses for a reason. */
const stepAfterFirstSignIn = (id: string): CompletionExtension => ({
  id,
  version: '1',
  at: 'afterFirstSignIn',
  initial: `${id}Page`,
  states: {
    [`${id}Page`]: {
      tags: 'awaitsRequest',
      meta: { step: { page: id, events: { [`${id}.continue`]: object() } } },
      on: {
        [`${id}.continue`]: { guard: `${id}Agrees`, target: CONTINUE, actions: `${id}Remember` },
        [`${id}.refuse`]: DENY,
        [`${id}.decline`]: denyBecause('declined'),
      },
    },
  },
  guards: { [`${id}Agrees`]: () => true },
  actions: { [`${id}Remember`]: assign({ [`${id}Seen`]: () => true }) },
  context: { schema: { [`${id}Seen`]: object() }, initial: { [`${id}Seen`]: false } },
})

const CHARTS: readonly (readonly [string, AnyStateMachine, LogicModule])[] = [
  ['signin-completion', signInCompletionMachine, completionLogic],
  ['totp-enrolment', totpEnrolmentMachine, enrolmentLogic],
  ['reauthenticate', reauthenticateMachine, reauthenticateLogic],
  ['reauthenticate (built again)', buildReauthenticate(), reauthenticateLogic],
]

describe('chart logic modules', () => {
  it.each(LOGIC_MODULES)('%s imports neither xstate nor a .machine file, through its whole import graph', (entry) => {
    const { files, packages } = reach(entry)
    // The walk reads what it should: the shared convention and superstruct are reached.
    expect(files).toContain('machines/shared/logic.ts')
    expect(packages).toContain('superstruct')
    expect(packages.filter((name) => name === 'xstate' || name.startsWith('xstate/') || name.startsWith('@xstate/'))).toEqual([])
    expect(files.filter((file) => file.endsWith('.machine.ts'))).toEqual([])
  })

  it('finds a package and a machine file named in any import form', () => {
    const source = [
      "import { assign } from 'xstate'",
      "import type {\n  AnyStateMachine,\n} from 'xstate/graph'",
      "export { x } from './a.machine.js'",
      "import './side-effect.js'",
      "const lazy = () => import('./b.machine.js')",
    ].join('\n')
    expect(specifiersIn(source)).toEqual(['xstate', 'xstate/graph', './a.machine.js', './side-effect.js', './b.machine.js'])
  })

  it.each(CHARTS)('every function %s uses is one of its logic module’s, by identity', (_id, machine, logic) => {
    const { found, unnamed } = walkFunctions(machine, logic)
    expect(unnamed).toEqual([])
    expect(unnamedImplementations(machine, logic)).toEqual([])
    // Each kind is walked: the machine's output, final outputs, assignments and guards.
    expect(found).toContain('output (machine)')
    expect(found.some((entry) => entry.startsWith('guard '))).toBe(true)
    expect(found.some((entry) => entry.startsWith('assignment '))).toBe(true)
    expect(found.some((entry) => entry.startsWith('outcome '))).toBe(true)
  })

  it.each(CHARTS)('%s starts from the logic module’s context', (_id, machine, logic) => {
    expect(machine.config.context).toEqual((logic as unknown as { initialContext: unknown }).initialContext)
  })

  it('every function the completion adds around extension steps is the logic module’s, the parameterised ones too', () => {
    const extensions = [stepAfterFirstSignIn('terms'), stepAfterFirstSignIn('profile')]
    const foreign = new Set(extensions.flatMap((e) => [...Object.keys(e.guards ?? {}), ...Object.keys(e.actions ?? {})]))
    const machine = buildSignInCompletion(extensions)
    const { found, unnamed } = walkFunctions(machine, completionLogic, foreign)
    expect(unnamed).toEqual([])
    expect(unnamedImplementations(machine, completionLogic, foreign)).toEqual([])
    expect(found).toEqual(expect.arrayContaining(['assignment selectFirstSignInStep', 'assignment recordStepDenial', 'guard isFirstSignInStepPending']))
    // The extensions' waiting states show the logic module's step page.
    expect(found).toContain('outcome termsPage')
  })

  it('an extension step’s parameterised assignments write what the chart names in their params', () => {
    const { selectFirstSignInStep, recordStepDenial } = completionLogic.assignments
    const args = { context: completionLogic.initialContext, event: { type: 'findCompletedStep.done', output: { pending: true }, at: 0 } } as const
    expect(selectFirstSignInStep(args as never, { step: 'profile' })).toEqual({ firstSignInStep: 'profile' })
    expect(recordStepDenial(args as never, { code: 'terms.declined' })).toEqual({
      credentials: null,
      challenge: null,
      denial: { error: 'AccessDenied', code: 'terms.declined' },
    })
    expect(recordStepDenial(args as never, undefined).denial).toEqual({ error: 'AccessDenied', code: null })
  })

  it('reports a guard, an assignment and an output written inline in the machine', () => {
    const inline = setup({
      types: {} as { context: completionLogic.SignInCompletionContext; events: completionLogic.SignInCompletionEvent },
      guards: { isNamed: completionLogic.guards.isNewUser, isInline: () => true },
      actions: { named: assign(completionLogic.assignments.forgetCredentials), inline: assign({ credentials: null }) },
    }).createMachine({
      id: 'inline',
      initial: 'idle',
      context: completionLogic.initialContext,
      output: completionLogic.outputs.finalStateOutcome,
      states: {
        idle: {
          meta: { outcome: () => ({ type: 'step' }) },
          on: {
            'signin.verified': [
              { guard: 'isNamed', target: 'done', actions: 'named' },
              { guard: 'isInline', target: 'done', actions: 'inline' },
            ],
          },
        },
        done: { type: 'final', output: () => ({ type: 'redirect', url: '/' }) },
      },
    } as never) as unknown as AnyStateMachine
    const { unnamed } = walkFunctions(inline, completionLogic)
    expect(unnamed).toEqual([
      'inline#idle on signin.verified: guard isInline',
      'inline#idle on signin.verified: assignment inline',
      'inline#idle: outcome idle',
      'inline#done: output done',
    ])
    expect(unnamedImplementations(inline, completionLogic)).toEqual(['guard isInline', 'action inline'])
  })
})
