/**
 * A flow module: everything about one flow in one place.
 *
 * @module
 */
import type { RequestContext } from '../config/types.js'
import type { EffectImplementation } from '../engine/types.js'

/**
 * A flow's effects, written against the adapter view of the methods the flow declares, as the
 * engine runs them (with the request context). The view is the same adapter object: the config is
 * refused at load when a configured flow's adapter lacks a declared method.
 */
export function adapterView<C, Env>(
  implementations: Readonly<Record<string, EffectImplementation<C, Env>>>,
): Record<string, EffectImplementation<C, RequestContext>> {
  return implementations as unknown as Record<string, EffectImplementation<C, RequestContext>>
}
