/**
 * The sign-in completion extended by an application's extensions: its chart is composed with
 * xstate when the configuration is first served, checked (every effect and page the extensions
 * name is theirs to implement, none replaces the core's), and run by the runtime compiler. Loaded
 * by `import()` only for a configuration with extensions, so one without pays for none of it.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import { buildSignInCompletion } from '../../../machines/signin-completion.machine.js'
import {
  CORE_EFFECTS,
  ExtensionError,
  signInCompletionContext,
  type SignInCompletionContext as Context,
  type SignInCompletionEvent,
} from '../../../machines/signin-completion.logic.js'
import { EFFECT_TAG_PREFIX } from '../../../machines/shared/events.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import { defineFlow, type EffectImplementation, type FlowDefinition } from '../../engine/flow.js'
import { listStateNodes } from '../../engine/transitions.js'
import type { ExtendedContext, ExtensionEnv, FlowExtension } from '../../types.js'
import type { ExtensionEvent } from '../../extensions.js'
import { isThenable } from '../../thenable.js'
import type { User } from '../../types.js'
import { effects, fail, isFailure, type EffectEnv, type Failure } from '../effect.js'

type Env = FlowContext

/** An effect's answer as the effect helper reads it: an answer written as a whole event is unwrapped. */
function unwrapEvent(name: string, answer: unknown): unknown {
  // Stryker disable next-line ConditionalExpression: eq#extensions-primitive-answer
  if (!answer || typeof answer !== 'object' || isFailure(answer)) return answer
  const event = answer as { type?: unknown; output?: unknown; reason?: unknown } & Partial<Failure>
  if (event.type === `${name}.done`) return event.output
  if (event.type === `${name}.failed`) {
    const { error, code, retryAfter } = event
    return fail(String(event.reason), {
      // Stryker disable next-line ConditionalExpression: eq#extensions-undefined-told
      ...(error !== undefined ? { error } : {}),
      // Stryker disable next-line ConditionalExpression: eq#extensions-undefined-told
      ...(code !== undefined ? { code } : {}),
      // Stryker disable next-line ConditionalExpression: eq#extensions-undefined-told
      ...(retryAfter !== undefined ? { retryAfter } : {}),
    })
  }
  return answer
}

/**
 * The implementations of the extensions' effects in the extended chart `machine`, through the
 * effect helper: the result stamped with the request time, a throw turned into `<name>.failed`.
 */
function extensionEffects<Env extends EffectEnv>(
  extensions: readonly FlowExtension[],
  machine: AnyStateMachine,
): Record<string, EffectImplementation<ExtendedContext, Env>> {
  const bodies: Record<string, (context: ExtendedContext, env: Env, trigger: ExtensionEvent) => unknown> = {}
  for (const extension of extensions) {
    for (const [name, body] of Object.entries(extension.effects ?? {})) {
      bodies[name] = (context, env, trigger) => {
        const answer = body(context, env as unknown as ExtensionEnv, trigger)
        return isThenable(answer) ? Promise.resolve(answer).then((value) => unwrapEvent(name, value)) : unwrapEvent(name, answer)
      }
    }
  }
  return effects<ExtendedContext, unknown, Env>(machine, bodies as never)
}

/** The pages the core renders itself. */
const BUILT_IN_STEP_PAGES: ReadonlySet<string> = new Set(['second-factor', 'totp-enrolment'])

const userIdOf = (context: Context) => String((context.user as User).id)

const pageNamesOf = (machine: AnyStateMachine) =>
  listStateNodes(machine)
    .map((node) => (node.meta as { step?: { page?: string } } | undefined)?.step?.page)
    .filter((page): page is string => typeof page === 'string')

const effectNamesOf = (machine: AnyStateMachine) =>
  listStateNodes(machine).flatMap((node) =>
    node.tags.filter((tag: string) => tag.startsWith(EFFECT_TAG_PREFIX)).map((tag: string) => tag.slice(EFFECT_TAG_PREFIX.length)),
  )

/**
 * Builds the extended sign-in completion and checks that every effect and page the extensions name
 * is implemented by them.
 *
 * @throws {ExtensionError} when an extension is unsafe or incomplete.
 */
function checkExtensions(extensions: readonly FlowExtension[]): AnyStateMachine {
  const machine = buildSignInCompletion(extensions)
  const effects = Object.assign({}, ...extensions.map((e) => e.effects ?? {})) as Record<string, unknown>
  const pages = Object.assign({}, ...extensions.map((e) => e.pages ?? {})) as Record<string, unknown>
  const owners = new Map<string, string>()
  for (const extension of extensions) {
    for (const name of Object.keys(extension.effects ?? {})) {
      if ((CORE_EFFECTS as readonly string[]).includes(name)) {
        throw new ExtensionError(`extension "${extension.id}": effect "${name}" would replace the core's`)
      }
    }
    // Effects and pages are merged by name: a second one of a name would silently replace the first.
    const names = [
      ...Object.keys(extension.effects ?? {}).map((name) => `effect "${name}"`),
      ...Object.keys(extension.pages ?? {}).map((name) => `page "${name}"`),
    ]
    for (const name of names) {
      const owner = owners.get(name)
      if (owner !== undefined) throw new ExtensionError(`extensions "${owner}" and "${extension.id}" both name the ${name}`)
      owners.set(name, extension.id)
    }
  }
  for (const name of effectNamesOf(machine)) {
    if (!(CORE_EFFECTS as readonly string[]).includes(name) && typeof effects[name] !== 'function') {
      throw new ExtensionError(`no extension implements the effect "${name}"`)
    }
  }
  for (const page of pageNamesOf(machine)) {
    if (!BUILT_IN_STEP_PAGES.has(page) && typeof pages[page] !== 'function') {
      throw new ExtensionError(`no extension renders the page "${page}"`)
    }
  }
  return machine
}

/**
 * The effects that decide whether a step at `afterFirstSignIn` runs and record that it ran: it
 * runs until the user has completed it at its step version, whichever way they sign in. Without
 * the adapter's `getCompletedSteps` and `recordCompletedStep` (or without an adapter) nothing can
 * be recorded, so it runs on every sign-in: never skipped (warned once when the config is loaded).
 * With several such steps, the context names the one being checked or recorded.
 */
function firstSignInStepEffects(steps: readonly FlowExtension[], machine: AnyStateMachine) {
  const stepOf = (context: Context) => {
    const step = steps.find((candidate) => candidate.id === context.firstSignInStep) ?? steps[0]!
    return { id: step.id, version: step.stepVersion ?? step.version }
  }
  const recorder = (ctx: Env) => {
    const adapter = ctx.config.adapter
    return adapter?.getCompletedSteps && adapter.recordCompletedStep ? adapter : undefined
  }
  return effects<Context, SignInCompletionEvent, Env>(machine, {
    async findCompletedStep(context, ctx) {
      const adapter = recorder(ctx)
      if (!adapter) return { pending: true }
      const { id, version } = stepOf(context)
      const completed = await adapter.getCompletedSteps!(userIdOf(context))
      return { pending: !completed.some((done) => done.stepId === id && done.version === version) }
    },
    async recordCompletedStep(context, ctx) {
      const { id, version } = stepOf(context)
      await recorder(ctx)?.recordCompletedStep!(userIdOf(context), id, version)
      return null
    },
  })
}

const firstSignInStepEffectsOf = (extensions: readonly FlowExtension[], machine: AnyStateMachine) => {
  const steps = extensions.filter((extension) => extension.at === 'afterFirstSignIn')
  // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#completion-no-first-sign-in-step
  return steps.length > 0 ? firstSignInStepEffects(steps, machine) : {}
}

const extendedFlows = new WeakMap<readonly FlowExtension[], FlowDefinition<AnyStateMachine, RequestContext>>()

/**
 * The sign-in completion with an application's extensions, built (with xstate) and checked once
 * per extensions array; the core's effects are the built-in chart's.
 *
 * @throws {ExtensionError} when an extension is unsafe or incomplete.
 */
export function composeExtendedCompletion(
  extensions: readonly FlowExtension[],
  coreEffects: Record<string, EffectImplementation<unknown, RequestContext>>,
): FlowDefinition<AnyStateMachine, RequestContext> {
  let flow = extendedFlows.get(extensions)
  // Stryker disable next-line ConditionalExpression: eq#completion-flow-memo
  if (!flow) {
    const machine = checkExtensions(extensions)
    flow = defineFlow<AnyStateMachine, RequestContext>({
      machine,
      context: signInCompletionContext(extensions),
      effects: {
        ...coreEffects,
        ...firstSignInStepEffectsOf(extensions, machine),
        ...extensionEffects<Env>(extensions, machine),
      } as Record<string, EffectImplementation<unknown, RequestContext>>,
    })
    extendedFlows.set(extensions, flow)
  }
  return flow
}
