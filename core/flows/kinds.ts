/**
 * The flows that only some configurations use (OAuth and OIDC, e-mail, WebAuthn), loaded by the
 * providers that need them: each provider factory carries a loader of its flow module
 * ({@link FLOW_MODULE}), a literal `import()` that a bundler follows from the provider, so an
 * application bundles `oauth4webapi` only with an OAuth provider, and a credentials-only one none of
 * them. The engine reads a loaded module synchronously ({@link flowModule}); the handler loads what a
 * configuration needs before its first request ({@link loadFlowModules}).
 *
 * A provider written as a plain object (Auth.js's `{ type: 'oidc', issuer, … }`) has no loader: its
 * module comes through the engine's own literal `import()` ({@link DEFAULT_LOADERS}), which a
 * bundler follows too (into a chunk loaded on demand where it splits code, into the bundle where it
 * does not), so such a provider works bundled, as it does in Auth.js.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import type { FlowDefinition } from '../engine/flow.js'
import type { RequestContext } from '../http/context.js'
import type { ProviderType } from '../types.js'

/** The flow modules by kind (types only: nothing here imports them). */
export interface FlowModules {
  oauth: typeof import('./oauth/flow.js')
  email: typeof import('./email/flow.js')
  webauthn: typeof import('./webauthn/flow.js')
}

/** A kind of flow that is loaded on demand. */
export type FlowKind = keyof FlowModules

/** A provider factory's loader of its flow module. */
export type FlowModuleLoader = () => Promise<unknown>

/** Where a provider factory puts the loader of its flow module. */
export const FLOW_MODULE: unique symbol = Symbol.for('authchart.flowModule')

/** The kind of flow a provider type runs, if it is one loaded on demand. */
export function flowKindOf(type: ProviderType): FlowKind | undefined {
  switch (type) {
    case 'oauth':
    case 'oidc':
      return 'oauth'
    case 'email':
      return 'email'
    case 'webauthn':
      return 'webauthn'
    default:
      return undefined
  }
}

const loaded: Partial<FlowModules> = {}
const loading = new Map<FlowKind, Promise<void>>()

/**
 * The loaders of providers written as plain objects. Literal specifiers on purpose: an Auth.js
 * application's custom `{ type: 'oidc', … }` or `{ type: 'email', … }` provider must work in a
 * Next.js or Worker bundle, so bundlers have to see these modules.
 */
// WebAuthn has none: it comes only with the `Passkey` / `WebAuthn` presets, which carry its loader
// (a plain `{ type: 'webauthn' }` provider is refused at load), so no other bundle links it.
const DEFAULT_LOADERS: Partial<Record<FlowKind, FlowModuleLoader>> = {
  oauth: () => import('./oauth/flow.js'),
  email: () => import('./email/flow.js'),
}

/**
 * The loaded module of `kind`.
 *
 * @throws {TypeError} when it was not loaded: only routes of a configured provider reach here.
 */
export function flowModule<K extends FlowKind>(kind: K): FlowModules[K] {
  const module = loaded[kind]
  if (!module) throw new TypeError(`the ${kind} flow was not loaded: no provider of its kind is configured`)
  return module
}

/** A flow definition as the routing table holds it, whatever its machine and environment. */
type AnyFlowDefinition = FlowDefinition<AnyStateMachine, RequestContext>

/**
 * A flow whose definition is read from `definition` each time the engine reads one of its parts.
 * Every part of a {@link FlowDefinition} is here: a part left out would reach the engine as
 * `undefined` whatever the definition declares (a flow's `migrations` lost, its flows in flight
 * restarted at the next deploy instead of migrated).
 */
function flowReadThrough(definition: () => AnyFlowDefinition): AnyFlowDefinition {
  return {
    get chart() {
      return definition().chart
    },
    get machine() {
      return definition().machine
    },
    get notation() {
      return definition().notation
    },
    get context() {
      return definition().context
    },
    get effects() {
      return definition().effects
    },
    get sealed() {
      return definition().sealed
    },
    get migrations() {
      return definition().migrations
    },
  }
}

/**
 * A flow of a module loaded on demand, as the routing table holds it: one object per flow (routes
 * of the same flow share it), whose parts are read from the module once it is loaded.
 */
export function lazyFlow<K extends FlowKind>(
  kind: K,
  pick: (module: FlowModules[K]) => AnyFlowDefinition,
): AnyFlowDefinition {
  return flowReadThrough(() => pick(flowModule(kind)))
}

/**
 * A flow whose chart is built on first use: its definition is read from `build` (called once) when
 * the engine first reads a part of it. Building a chart costs start-up time on every cold start;
 * a flow most requests never run (a session read runs none but the session's) waits for its first
 * request.
 */
export function deferredFlow(build: () => AnyFlowDefinition): AnyFlowDefinition {
  let built: AnyFlowDefinition | undefined
  return flowReadThrough(() => (built ??= build()))
}

/** Loads the module of `kind` once, through `loader` when a provider gave one. */
export function loadFlowModule<K extends FlowKind>(kind: K, loader?: FlowModuleLoader): Promise<FlowModules[K]> {
  const done = loaded[kind]
  if (done) return Promise.resolve(done)
  let pending = loading.get(kind)
  if (!pending) {
    const load = loader ?? DEFAULT_LOADERS[kind]
    if (!load) return Promise.reject(new TypeError(`the ${kind} flow comes with its provider's import only`))
    pending = load.call(undefined).then(
      (module) => {
        loaded[kind] = module as FlowModules[K]
        loading.delete(kind)
      },
      (error: unknown) => {
        loading.delete(kind)
        throw new Error(`The ${kind} flow could not be loaded`, { cause: error })
      },
    )
    loading.set(kind, pending)
  }
  return pending.then(() => loaded[kind]!)
}

/** A provider as the loader sees it. */
interface LoadingProvider {
  readonly type: ProviderType
  readonly config: object
}

/**
 * Loads the flow modules `providers` need that are not loaded yet; `undefined` when there are
 * none, so requests after the first take no extra step.
 */
export function loadFlowModules(providers: readonly LoadingProvider[]): Promise<unknown> | undefined {
  let needed: Map<FlowKind, FlowModuleLoader | undefined> | undefined
  for (const provider of providers) {
    const kind = flowKindOf(provider.type)
    if (kind === undefined || loaded[kind]) continue
    needed ??= new Map()
    // Any factory-made provider of the kind brings the loader a bundle can follow.
    const loader = (provider.config as { [FLOW_MODULE]?: FlowModuleLoader })[FLOW_MODULE]
    if (!needed.get(kind)) needed.set(kind, loader)
  }
  return needed && Promise.all([...needed].map(([kind, loader]) => loadFlowModule(kind, loader)))
}
