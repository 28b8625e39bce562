/**
 * The database adapter interface, identical to Auth.js's (`@auth/core/adapters`), so any
 * `@auth/*-adapter` package plugs in unchanged. Every method is optional; a configured flow fails at
 * boot when the adapter lacks a method it needs.
 *
 * @module
 */
export type {
  Adapter,
  AdapterAccount,
  AdapterAccountType,
  AdapterAuthenticator,
  AdapterCompletedStep,
  AdapterSecondFactor,
  AdapterSession,
  AdapterUser,
  ProviderSession,
  VerificationToken,
} from './shapes.js'

/** Whether `value` is an ISO-8601 date string, for adapters that serialise dates. */
export function isDate(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
    !Number.isNaN(Date.parse(value))
  )
}

