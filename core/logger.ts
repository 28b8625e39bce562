/**
 * The logger: `error`, `warn` and `debug`, each overridable on its own (spec §2.10). Debug output
 * is off unless `debug: true` or a custom `debug` is given.
 *
 * @module
 */
import { AuthError, type ErrorType } from './errors.js'
import type { Logger, LoggerInstance, WarningCode } from './shapes.js'

export type { Logger, LoggerInstance, WarningCode }


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

/** What each warning means, printed after its code by the default logger. */
const WARNING_TEXT: Record<WarningCode, string> = {
  'debug-enabled': 'Debug logging is on (`debug: true`): it prints details that may help an attacker. Turn it off in production.',
  'csrf-disabled': 'The CSRF check is off (`skipCSRFCheck`): only do this when the framework checks the request itself.',
  'env-url-basepath-redundant': '`basePath` is set both in the config and in the path of AUTH_URL: the config wins.',
  'env-url-basepath-mismatch': 'The path of AUTH_URL differs from `basePath`: the config wins.',
  'experimental-webauthn': 'WebAuthn (passkeys) is experimental, as in Auth.js: its options may still change.',
  'inspector-refused-in-production': 'The flow inspector is not served in production (NODE_ENV is unset or "production").',
  'email-send-throttled': 'An e-mail sign-in was refused: the send limit for the address or client was reached.',
  'credentials-rate-limited': 'A credentials sign-in was refused: the attempt limit was reached (`rateLimit`).',
  'service-token-rate-limited': 'A service-account token request was refused: the per-client limit was reached (`serviceAccounts({ clientLimit })`).',
  'second-factor-attempts-exhausted': 'A sign-in ran out of two-step verification attempts.',
  'second-factor-codes-tried':
    "A user's two-step verification codes were spent by clients that are not known devices (someone who knows the password may be trying codes): the owner is told, once per quarter hour.",
  'reauthentication-failed': 'A re-authentication was refused: the proof was wrong (counted against its limits).',
  'reauthentication-other-user': "A re-authentication was refused: the password proved another user, not the signed-in one.",
  'reauthentication-unavailable': 'A sensitive action was refused: the user has no factor the step-up policy accepts that can be proven here.',
  'inspector-refused-outside-development': 'The flow inspector is served only when NODE_ENV is "development" or "test".',
  'inspector-refused-remote-client': 'The flow inspector answered a non-loopback client 404 (`flowInspector({ clients: \'any\' })` allows it).',
  'flow-restarted-after-update':
    'A sign-in started before an update of its flow could not be resumed by the new version: the user was asked to start again.',
  'rate-limit-unchecked': 'A limit could not be checked (the store did not answer) and is set to `failOpen`: the attempt went through uncounted.',
  'after-first-sign-in-unrecorded':
    'An `afterFirstSignIn` step runs on every sign-in: the adapter has no getCompletedSteps/recordCompletedStep to remember that a user completed it.',
  'session-cache-ignored':
    '`session.cache` applies to database sessions only: with JWT sessions (the session is in its cookie already) it is ignored.',
  'short-secret-for-reading':
    'An older secret in `secret` is shorter than 32 characters: it only opens what it sealed before, and each session it opens is sealed again under the first secret. Remove it once your sessions have been renewed (after `session.maxAge`).',
  'jwt-callback-changed-subject':
    "The `jwt` callback changed the token's `sub`: the factors the previous subject proved do not carry over, so the next sensitive action asks the new subject to prove one. If `update()` data reaches `sub`, a client can choose it: copy only the fields you mean to.",
}

/** Warnings the default logger prints once per process: they describe the setup, not a request. */
const ONCE_PER_PROCESS = new Set<WarningCode>([
  'experimental-webauthn',
  'debug-enabled',
  'csrf-disabled',
  'after-first-sign-in-unrecorded',
  'session-cache-ignored',
  'short-secret-for-reading',
])
const printedOnce = new Set<WarningCode>()

/**
 * A second line for errors whose Auth.js message is kept exactly (applications match on it) but
 * does not say how to fix the cause.
 */
const HINTS: Partial<Record<ErrorType, string>> = {
  MissingSecret:
    'Set AUTH_SECRET (or `secret` in the config) to at least 32 random characters; `npx authchart secret` prints one.',
}

/** What a message-less error of each type means (an application may throw one bare). */
const MEANING: Partial<Record<ErrorType, string>> = {
  CredentialsSignin: 'the credentials were refused (authorize returned null or threw CredentialsSignin)',
  AccessDenied: 'the signIn callback refused the sign-in',
  Verification: 'the sign-in link or code is invalid, expired or already used',
}

/**
 * Upstream values worth printing after an error (Auth.js prints `[auth][details]`): which provider,
 * and what it answered. Only these keys, and only strings: a cause may hold tokens or profiles.
 */
const DETAIL_KEYS = ['provider', 'providerId', 'error', 'error_description', 'error_uri'] as const

function detailsOf(error: Error): Record<string, string> | undefined {
  const cause = error.cause
  if (!cause || typeof cause !== 'object' || cause instanceof Error) return undefined
  const details: Record<string, string> = {}
  for (const key of DETAIL_KEYS) {
    const value = (cause as Record<string, unknown>)[key]
    if (typeof value === 'string') details[key] = value
  }
  return Object.keys(details).length > 0 ? details : undefined
}

const consoleLogger: Logger = {
  error(error) {
    const type = error instanceof AuthError ? error.type : undefined
    const name = type ?? error.name
    // An error that only wraps another (Auth.js's `new CallbackRouteError(err)`) says what that one says.
    const message = String(error.message) || causeOf(error)?.message || (type && MEANING[type]) || 'no message given'
    console.error(`[auth][error] ${escapeControl(String(name))}: ${escapeControl(message)}`)
    const hint = type && HINTS[type]
    if (hint) console.error(`[auth][hint]: ${hint}`)
    const details = detailsOf(error)
    if (details) console.error('[auth][details]:', escapeControl(JSON.stringify(details)))
    const cause = causeOf(error)
    if (cause) console.error('[auth][cause]:', printableCause(cause))
  },
  warn(code) {
    if (ONCE_PER_PROCESS.has(code)) {
      if (printedOnce.has(code)) return
      printedOnce.add(code)
    }
    const text = WARNING_TEXT[code]
    console.warn(`[auth][warn][${escapeControl(String(code))}]${text ? ` ${text}` : ''}`)
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
