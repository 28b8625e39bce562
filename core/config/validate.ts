/**
 * Validates a configuration once per config object, and only the options it has: an option left
 * out costs no struct at all (a defaulted one takes the default its struct gave once per process).
 * A configuration that fails is validated again as a whole, so its error is the one the full
 * schema gives (the same path and message).
 *
 * @module
 */
import { create, type Struct } from 'superstruct'
import { AuthConfigStruct, type ValidatedConfig } from './structs.js'

/** Each option's struct, by name. */
const OPTION_STRUCTS = AuthConfigStruct.schema as unknown as Readonly<Record<string, Struct<unknown, unknown>>>

/**
 * The options whose struct gives a value when the option is left out (`defaulted`); every other
 * option is `optional`, and left out it is `undefined` without running its struct. A test holds
 * this list to the schema.
 */
export const DEFAULTED_OPTIONS = Object.freeze(['providers', 'basePath', 'debug', 'experimental', 'pages', 'session', 'theme'] as const)

let defaults: Readonly<Record<string, unknown>> | undefined

/** The defaulted options' defaults, computed once (by their own structs), frozen to the leaves. */
function defaultsOf(): Readonly<Record<string, unknown>> {
  defaults ??= Object.freeze(Object.fromEntries(DEFAULTED_OPTIONS.map((name) => [name, deepFreeze(create(undefined, OPTION_STRUCTS[name]!))])))
  return defaults
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

const validations = new WeakMap<object, ValidatedConfig>()

/**
 * The configuration with its defaults applied, checked against the schema option by option.
 *
 * @throws {StructError} as `create(source, AuthConfigStruct)` throws it, for the first failure.
 */
export function validateConfig(source: unknown): ValidatedConfig {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return create(source, AuthConfigStruct)
  let validated = validations.get(source)
  if (validated === undefined) {
    validated = validatePresent(source as Record<string, unknown>)
    validations.set(source, validated)
  }
  return validated
}

function validatePresent(source: Record<string, unknown>): ValidatedConfig {
  const validated: Record<string, unknown> = { ...defaultsOf() }
  for (const name of Object.keys(source)) {
    const value = source[name]
    const struct = OPTION_STRUCTS[name]
    // An unknown option, or a bad value: the whole schema says which, as it always did.
    if (struct === undefined) return create(source, AuthConfigStruct)
    if (value === undefined) continue
    const [failure, checked] = struct.validate(value, { coerce: true })
    if (failure) return create(source, AuthConfigStruct)
    validated[name] = checked
  }
  return validated as ValidatedConfig
}
