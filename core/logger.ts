/**
 * The logger: `error`, `warn` and `debug`, each overridable on its own (spec §2.10). Debug output
 * is off unless `debug: true` or a custom `debug` is given.
 *
 * @module
 */
import { AuthError } from './errors.js'

/** Codes passed to `logger.warn`. */
export type WarningCode =
  | 'debug-enabled'
  | 'csrf-disabled'
  | 'env-url-basepath-redundant'
  | 'env-url-basepath-mismatch'
  | 'experimental-webauthn'
  | 'inspector-refused-in-production'
  | 'second-factor-attempts-exhausted'

/** A logger; any subset of the methods may be given in `config.logger`. */
export interface LoggerInstance {
  error: (error: Error) => void
  warn: (code: WarningCode) => void
  debug: (message: string, metadata?: unknown) => void
  [method: string]: ((...args: never[]) => unknown) | undefined
}

/** The logger methods every part of the engine calls. */
export type Logger = Pick<LoggerInstance, 'error' | 'warn' | 'debug'>

function causeOf(error: Error): Error | undefined {
  const cause = error.cause
  if (cause instanceof Error) return cause
  if (cause && typeof cause === 'object' && 'err' in cause && cause.err instanceof Error) {
    return cause.err
  }
  return undefined
}

const consoleLogger: Logger = {
  error(error) {
    const name = error instanceof AuthError ? error.type : error.name
    console.error(`[auth][error] ${name}: ${error.message}`)
    const cause = causeOf(error)
    if (cause) console.error('[auth][cause]:', cause.stack ?? String(cause))
  },
  warn(code) {
    console.warn(`[auth][warn][${code}]`)
  },
  debug(message, metadata) {
    console.log(`[auth][debug]: ${message}`, metadata === undefined ? '' : JSON.stringify(metadata))
  },
}

const silent = (): void => {}

/**
 * Builds the effective logger from `config.debug` and `config.logger`. Custom methods are looked
 * up on each call (so spies installed later are honoured) and may not throw into the engine: a
 * failing logger must not turn a handled error into a 500.
 */
export function createLogger(config: {
  debug?: boolean | undefined
  logger?: Partial<LoggerInstance> | undefined
}): Logger {
  const custom = config.logger
  const debugDefault = config.debug ? consoleLogger.debug : silent
  const call = <A extends unknown[]>(name: keyof Logger, fallback: (...args: A) => void) =>
    (...args: A): void => {
      const method = custom?.[name] as ((...a: A) => void) | undefined
      try {
        if (method) method.apply(custom, args)
        else fallback(...args)
      } catch {
        // The logger itself failed; there is nowhere left to report it.
      }
    }
  return {
    error: call('error', consoleLogger.error),
    warn: call('warn', consoleLogger.warn),
    debug: call('debug', debugDefault),
  }
}
