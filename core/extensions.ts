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
import {
  buildSignInCompletion,
  CORE_EFFECTS,
  ExtensionError,
  type CompletionExtension,
  type SignInCompletionContext,
} from '../machines/signin-completion.machine.js'
import { EFFECT_TAG_PREFIX } from '../machines/shared/events.js'
import type { EffectImplementation } from './engine/flow.js'
import { listStateNodes } from './engine/transitions.js'
import type { RequestContext } from './http/context.js'
import type { PageTheme } from './pages/index.js'

export { CONTINUE, DENY, denyBecause, EXTENSION_POINTS, ExtensionError, toStepPage } from '../machines/signin-completion.machine.js'
export type { CompletionExtension, ExtensionPoint } from '../machines/signin-completion.machine.js'

/** What a step's page is rendered from. */
export interface StepView {
  /** Where the page's form posts to (`{basePath}/step/<flow>`, CSRF-checked). */
  action: string
  csrfToken: string
  /** Why the last answer was refused, if it was (e.g. `InvalidCode`). */
  error: string | null
  /** The user signing in, as far as the page may show it. */
  user: { name?: string | null; email?: string | null; image?: string | null } | null
  /** The flow's context as the page may show it: the extension's own fields. */
  data: Record<string, unknown>
  theme: PageTheme
}

/**
 * Renders a step's page: its title and the HTML inside the card (escape what you interpolate;
 * `stepForm` builds the form with the CSRF token).
 */
export type StepPage = (view: StepView) => { title: string; html: string }

/** The context an extension's effects and guards see: the completion's, plus its own fields. */
export type ExtendedContext = SignInCompletionContext & Record<string, unknown>

/** An application's extension of the sign-in completion. */
export interface FlowExtension extends CompletionExtension {
  /** The effects its states are tagged with (`effect.<name>`), by name. */
  effects?: Record<string, EffectImplementation<ExtendedContext, RequestContext>>
  /** The pages its waiting states name in `meta.step.page`, by name. */
  pages?: Record<string, StepPage>
  /**
   * What the error page tells the user when one of its states refuses with `denyBecause(reason)`,
   * by reason: a plain-text sentence (e.g. `declined: 'You declined the terms, so you are not signed in.'`).
   * Without one, the page says Auth.js's "You do not have permission to sign in."
   */
  denials?: Record<string, string>
}

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
  for (const extension of extensions) {
    for (const name of Object.keys(extension.effects ?? {})) {
      if ((CORE_EFFECTS as readonly string[]).includes(name)) {
        throw new ExtensionError(`extension "${extension.id}": effect "${name}" would replace the core's`)
      }
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
