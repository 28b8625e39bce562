/**
 * A flow module: everything about one flow in one place.
 *
 * @module
 */
import type { FlowContext, RequestContext, ResolvedConfig } from '../config/types.js'
import type { EffectImplementation } from '../engine/types.js'
import type { AdapterMethod } from '../shapes.js'

/** The adapter methods the flows `config` runs declare: what the config was checked for at load. */
function declaredMethods(config: ResolvedConfig): readonly AdapterMethod[] {
  const methods = new Set<AdapterMethod>()
  for (const flow of config.flows) {
    if (flow.runs(config)) for (const method of flow.adapter?.methods(config) ?? []) methods.add(method)
  }
  return [...methods]
}

/** The configurations whose adapter has every method their flows declare. */
const viewable = new WeakSet<ResolvedConfig>()

/** The methods the flows of `ctx`'s configuration declare that its adapter lacks. */
function missingDeclaredMethods(ctx: RequestContext): readonly AdapterMethod[] {
  return declaredMethods(ctx.config).filter((method) => typeof ctx.adapter?.[method] !== 'function')
}

/**
 * Whether the request context is the view a flow's effects are written against (`FlowContext`):
 * its adapter has the methods the flow declares for this configuration. An effect reaches an
 * adapter method only on the paths of a configuration that declares it (a database session's, not
 * a JWT's), and a configuration whose adapter lacks one is refused at load.
 */
function isFlowContext<Needs extends AdapterMethod>(ctx: RequestContext): ctx is FlowContext<Needs> {
  // Checked once per configuration: every later effect of every request reads one flag.
  if (viewable.has(ctx.config)) return true
  if (missingDeclaredMethods(ctx).length > 0) return false
  viewable.add(ctx.config)
  return true
}

/**
 * A flow's effects, written against the view of the adapter methods the flow declares
 * (`FlowContext<Needs>`), as the engine runs them: with the request context, which each effect
 * receives as that view once its adapter is found to have the declared methods.
 *
 * @throws {TypeError} from an effect, when the adapter lacks a declared method (a configuration
 *   that `resolveConfig` would have refused).
 */
export function adapterView<C>(
  implementations: Readonly<Record<string, EffectImplementation<C, RequestContext>>>,
): Record<string, EffectImplementation<C, RequestContext>>
export function adapterView<C, Needs extends AdapterMethod>(
  implementations: Readonly<Record<string, EffectImplementation<C, FlowContext<Needs>>>>,
): Record<string, EffectImplementation<C, RequestContext>>
export function adapterView<C, Needs extends AdapterMethod>(
  implementations: Readonly<Record<string, EffectImplementation<C, FlowContext<Needs>>>>,
): Record<string, EffectImplementation<C, RequestContext>> {
  const viewed: Record<string, EffectImplementation<C, RequestContext>> = {}
  for (const [name, implementation] of Object.entries(implementations)) {
    viewed[name] = (context, ctx, trigger) => {
      if (!isFlowContext<Needs>(ctx)) {
        throw new TypeError(`The adapter lacks methods its flows declare: ${missingDeclaredMethods(ctx).join(', ')}`)
      }
      return implementation(context, ctx, trigger)
    }
  }
  return viewed
}
