/**
 * Validates a configuration once per config object, and only the options it has: an option left
 * out costs no struct at all (one with a default takes it from {@link OPTION_DEFAULTS}).
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
 * What the options with a default (`defaulted` in the schema) are when left out. Written out so
 * that a fresh process runs no struct for an option its config does not have; a test holds each to
 * what its struct gives for a missing option, and every other option to having none.
 */
export const OPTION_DEFAULTS: Readonly<Record<string, unknown>> = deepFreeze({
  providers: [],
  basePath: '/auth',
  debug: false,
  experimental: { enableWebAuthn: false },
  pages: {},
  session: { maxAge: 2_592_000, updateAge: 86_400 },
  theme: { colorScheme: 'auto', logo: '', brandColor: '', buttonText: '' },
})

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
  const validated: Record<string, unknown> = { ...OPTION_DEFAULTS }
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
