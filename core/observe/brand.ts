/**
 * The brand of the values `authchart/audit`, `authchart/telemetry` and `authchart/inspector` make:
 * a configuration option takes only a value of its module, so a plain object (the option's shape
 * before it was an import) is told apart at load and refused by the types.
 *
 * @module
 */

/** The brand's key: only the modules' factories set it. */
export const OBSERVER: unique symbol = Symbol.for('authchart.observer')

/** The option an observer value belongs in. */
export type ObserverKind = 'audit' | 'telemetry' | 'inspector'

/** A value made for the option `K`, as the configuration's types see it. */
export interface ObserverBrand<K extends ObserverKind> {
  readonly [OBSERVER]: K
}

/** `auditTrail({ sink })` from `authchart/audit`. */
export type AuditTrail = ObserverBrand<'audit'>
/** `openTelemetry()` from `authchart/telemetry`. */
export type OpenTelemetry = ObserverBrand<'telemetry'>
/** `flowInspector()` from `authchart/inspector`. */
export type FlowInspector = ObserverBrand<'inspector'>
