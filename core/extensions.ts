/**
 * Applications extend the sign-in with their own states: a terms page, an extra check, a profile
 * step for new users. An extension inserts states at one of the sign-in completion's extension
 * points, with its own effects (I/O, tagged states) and its own pages (states that wait for the
 * user). It is checked when the config is loaded: it cannot skip the second factor, issue a
 * session, run without CSRF protection or replace anything of the core.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import { buildSignInCompletion, CORE_EFFECTS, ExtensionError } from '../machines/signin-completion.machine.js'
import { EFFECT_TAG_PREFIX } from '../machines/shared/events.js'
import { listStateNodes } from './engine/transitions.js'
import type { FlowExtension } from './types.js'

export { CONTINUE, DENY, denyBecause, EXTENSION_POINTS, ExtensionError, toStepPage } from '../machines/signin-completion.machine.js'
export type { CompletionExtension, ExtensionPoint } from '../machines/signin-completion.machine.js'
export type { ExtendedContext, ExtensionEffect, ExtensionEnv, FlowExtension, StepPage, StepView } from './types.js'

/**
 * The sentence an extension gave for the denial `code` (`<extension id>.<reason>`, as the error
 * redirect carries it), if any.
 */
export function denialSentence(extensions: readonly FlowExtension[], code: string | undefined): string | undefined {
  if (code === undefined) return undefined
  const dot = code.indexOf('.')
  const extension = extensions.find((e) => e.id === code.slice(0, dot))
  const reason = code.slice(dot + 1)
  return dot > 0 && extension?.denials && Object.hasOwn(extension.denials, reason) ? extension.denials[reason] : undefined
}

/**
 * Declares an extension (typing only; it is checked when the config is loaded). Returns it as a
 * {@link FlowExtension}, so an application's exported extension has a type its declarations can
 * name (`declaration: true`, as `tsc --init` sets).
 */
export function defineExtension(extension: FlowExtension): FlowExtension {
  return extension
}

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
export function checkExtensions(extensions: readonly FlowExtension[]): AnyStateMachine {
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

/** The pages the core renders itself. */
export const BUILT_IN_STEP_PAGES: ReadonlySet<string> = new Set(['second-factor', 'totp-enrolment'])
