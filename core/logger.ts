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
  | 'email-send-throttled'
  | 'credentials-rate-limited'
  | 'second-factor-attempts-exhausted'
  | 'inspector-refused-outside-development'
  | 'inspector-refused-remote-client'
  | 'after-first-sign-in-unrecorded'
  | 'flow-restarted-after-update'
  | 'rate-limit-unchecked'

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

/**
 * Control characters a log line must never carry raw: C0 and C1 controls (CR, LF, ESC, NEL, …),
 * DEL, the Unicode line and paragraph separators, and the bidirectional overrides that make a
 * terminal show text in another order than it was written.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/**
 * Escapes control characters (`\n`, `\u2028`, …) so that a value taken from a request (a
 * `callbackUrl`, a provider id, an error code) cannot start a forged line in the server log.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => NAMED_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** A cause as printed: its escaped first line, then its stack frames one per line. */
function printableCause(cause: Error): string {
  const header = cause.message ? `${cause.name}: ${cause.message}` : cause.name
  const stack = typeof cause.stack === 'string' ? cause.stack : header
  // The message may hold request values; the frames after it are the runtime's own. Anything
  // else in a stack is printed as one escaped line.
  const frames = stack.startsWith(header) ? stack.slice(header.length).split('\n').filter((l) => l !== '') : []
  if (!stack.startsWith(header) || !frames.every((line) => /^ {4}at [^\r\u2028\u2029]*$/.test(line))) {
    return escapeControl(stack)
  }
  return [escapeControl(header), ...frames.map(escapeControl)].join('\n')
}

const consoleLogger: Logger = {
  error(error) {
    const name = error instanceof AuthError ? error.type : error.name
    console.error(`[auth][error] ${escapeControl(String(name))}: ${escapeControl(String(error.message))}`)
    const cause = causeOf(error)
    if (cause) console.error('[auth][cause]:', printableCause(cause))
  },
  warn(code) {
    console.warn(`[auth][warn][${escapeControl(String(code))}]`)
  },
  debug(message, metadata) {
    console.log(
      `[auth][debug]: ${escapeControl(String(message))}`,
      metadata === undefined ? '' : escapeControl(JSON.stringify(metadata) ?? String(metadata)),
    )
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
