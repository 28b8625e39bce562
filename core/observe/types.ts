/**
 * What the core knows of the audit trail, OpenTelemetry and the flow inspector: a small set of
 * hooks ({@link Observer}, declared beside the resolved configuration that holds them). Each is
 * brought in by an import (`authchart/audit`, `authchart/telemetry`, `authchart/inspector`) whose
 * value is branded with {@link OBSERVER}; the configuration resolves each into an observer once,
 * into `ResolvedConfig.observers`. A request of a configuration without one checks that array's
 * length and nothing else.
 *
 * @module
 */
import type { Observer, ObserverSettings } from '../config/types.js'
import type { ObserverBrand, ObserverKind } from './brand.js'

export type { AuditTrail, FlowInspector, ObserverBrand, ObserverKind, OpenTelemetry } from './brand.js'
export type {
  Answered,
  EffectWrapper,
  LifecycleChange,
  LifecycleSubject,
  ObservedRun,
  ObservedSource,
  Observer,
  ObserverSettings,
} from '../config/types.js'

/** A value one of the modules made: the option it goes in, and how it is resolved. */
export interface ObserverValue<K extends ObserverKind> extends ObserverBrand<K> {
  /** Builds the observer of one configuration; throws a superstruct `StructError` for a bad option. */
  readonly resolve: (settings: ObserverSettings) => Observer
}

