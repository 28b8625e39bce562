/**
 * `authchart/extensions`: `defineExtension` and the helpers extensions are written with. The
 * extension `defineExtension` returns brings the loader of the extended completion's composer
 * (xstate and the runtime compiler), so an application that defines no extension, which never
 * imports this module, bundles none of it.
 *
 * @module
 */
import { EXTENDED_COMPOSER } from './extension-composer.js'
import type { ContextSchema, FlowExtension, TypedExtension } from './extensions.js'

export {
  CONTINUE,
  DENY,
  denyBecause,
  EXTENSION_POINTS,
  ExtensionError,
  fail,
  runs,
  toStepPage,
  waitsFor,
  type ExtendedContext,
  type ExtensionPoint,
  type FlowExtension,
  type StepPage,
  type StepView,
} from './extensions.js'
export { stepForm, type ButtonLook } from './pages/steps.js'
export { inlineScript } from './pages/policy.js'

/**
 * Declares an extension. Typed like xstate's `setup()`: `initial` and every target must be one of
 * its states (or {@link CONTINUE}, {@link DENY}, `denyBecause(reason)`), every `effect.<name>`
 * tag one of its `effects`, every named guard and action one of its own, and its effects and
 * guards see its context fields with their types. Everything else is checked when the config is
 * loaded. Returns it as a {@link FlowExtension}, so an application's exported extension has a type
 * its declarations can name.
 */
export function defineExtension<
  const State extends string,
  Fields extends ContextSchema = Record<never, never>,
  Effect extends string = never,
  Guard extends string = never,
  Action extends string = never,
>(extension: TypedExtension<State, Fields, Effect, Guard, Action>): FlowExtension {
  // The extension brings the composer of extended completions (xstate, the runtime compiler): an
  // application that defines none links none of it.
  if (Object.isExtensible(extension) && !Object.hasOwn(extension, EXTENDED_COMPOSER)) {
    Object.defineProperty(extension, EXTENDED_COMPOSER, { value: loadComposer, enumerable: false })
  }
  return extension as unknown as FlowExtension
}

const loadComposer = () => import('./flows/signin-completion/extended.js')
