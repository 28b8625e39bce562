/**
 * The `audit`, `telemetry` and `inspector` options: each is a value one of `authchart/audit`,
 * `authchart/telemetry` and `authchart/inspector` makes. The shapes these options had before
 * (a plain object, `true`, `false`) are refused at load with the line to write instead.
 *
 * @module
 */
import { refine, unknown } from 'superstruct'
import type { FlowTrace } from '../engine/trace.js'
import { inspectObserver } from '../observe/notify.js'
import { OBSERVER, type ObserverKind } from '../observe/brand.js'
import type { Observer, ObserverSettings, ObserverValue } from '../observe/types.js'

/** Whether `value` is a value its module made for the option `kind`. */
export function isObserverValue<K extends ObserverKind>(value: unknown, kind: K): value is ObserverValue<K> {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [OBSERVER]?: unknown })[OBSERVER] === kind &&
    typeof (value as { resolve?: unknown }).resolve === 'function'
  )
}

/** Each option, with the module and the function that make its value, in the order observers run. */
const OBSERVED_OPTIONS: readonly { kind: ObserverKind; module: string; factory: string }[] = [
  { kind: 'audit', module: 'authchart/audit', factory: 'auditTrail' },
  { kind: 'telemetry', module: 'authchart/telemetry', factory: 'openTelemetry' },
  { kind: 'inspector', module: 'authchart/inspector', factory: 'flowInspector' },
]

/** Option names are not secret; their values may be (a webhook secret): only the names are quoted. */
function optionNames(value: object): string {
  const names = Object.keys(value).filter((name) => /^[A-Za-z_$][\w$]*$/.test(name))
  return names.length > 0 ? `{ ${names.join(', ')} }` : ''
}

/** Why `value` is not an option of `kind`, as the line to write instead. */
function refusal(kind: ObserverKind, module: string, factory: string, value: unknown): string {
  const importLine = `import { ${factory} } from '${module}'`
  if (value === false) {
    return `\`${kind}: false\` is the default now: omit the option (to turn it on: \`${importLine}\` and \`${kind}: ${factory}()\`)`
  }
  const other = OBSERVED_OPTIONS.find((option) => option.kind !== kind && isObserverValue(value, option.kind))
  if (other) return `\`${other.factory}()\` belongs in \`${other.kind}\`; write \`${importLine}\` and \`${kind}: ${factory}()\``
  const args = value !== null && typeof value === 'object' ? optionNames(value) : ''
  const given = value === true ? '`true`' : value !== null && typeof value === 'object' ? 'a plain object' : 'this value'
  return `${given} is no longer accepted; write \`${importLine}\` and \`${kind}: ${factory}(${args})\``
}

/** The struct of the option `kind`: a value of its module, else refused with the line to write. */
export const observerStruct = (kind: ObserverKind) => {
  const { module, factory } = OBSERVED_OPTIONS.find((option) => option.kind === kind)!
  return refine(unknown(), `${factory}()`, (value) => isObserverValue(value, kind) || refusal(kind, module, factory, value))
}

/** A value's options failed its module's schema: the option, for the error's path. */
export class ObserverOptionsError extends Error {
  constructor(
    readonly kind: ObserverKind,
    readonly failure: unknown,
  ) {
    super(`config.${kind}: invalid options`)
  }
}

/**
 * The observers of a configuration whose options were validated: the audit trail, telemetry and the
 * inspector as configured, then the `inspect` callback. A shared empty array when there are none.
 *
 * @throws {ObserverOptionsError} wrapping the `StructError` of a value's options.
 */
export function resolveObservers(
  source: { readonly audit?: unknown; readonly telemetry?: unknown; readonly inspector?: unknown },
  inspect: ((trace: FlowTrace) => void) | undefined,
  settings: ObserverSettings,
): readonly Observer[] {
  let observers: Observer[] | undefined
  for (const { kind } of OBSERVED_OPTIONS) {
    const value = source[kind]
    if (!isObserverValue(value, kind)) continue
    try {
      ;(observers ??= []).push(value.resolve(settings))
    } catch (error) {
      throw new ObserverOptionsError(kind, error)
    }
  }
  if (inspect !== undefined) (observers ??= []).push(inspectObserver(inspect))
  return observers ? Object.freeze(observers) : NO_OBSERVERS
}

const NO_OBSERVERS: readonly Observer[] = Object.freeze([])
