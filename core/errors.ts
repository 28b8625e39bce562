/**
 * Error classes. The public family (`AuthError` and its subclasses) keeps the names, `type` and
 * `kind` values of Auth.js, because applications and log pipelines switch on them. Internal errors
 * (`EngineError` and subclasses) carry a closed `code` union instead.
 *
 * @module
 */

import type { ErrorType } from '../machines/shared/errors.js'

export type { ErrorType }

/** Which page an error sends the user to: the sign-in page or the error page. */
export type ErrorKind = 'signIn' | 'error'

/** The second constructor argument of {@link AuthError}: extra details kept in `cause`. */
export type ErrorOptions = Error | Record<string, unknown>

/**
 * Base class of every error the public surface throws or logs.
 *
 * `type` identifies the error in logs and in the `error` query parameter of redirects.
 * Wrapping another error keeps it in `cause.err` with its stack.
 */
export class AuthError extends Error {
  /** Identifies the error kind in logs; stable across versions. */
  type: ErrorType
  /** `signIn` errors redirect to the sign-in page, the others to the error page. */
  kind: ErrorKind
  declare cause?: Record<string, unknown> & { err?: Error }

  static type: ErrorType = 'AuthError'
  static kind: ErrorKind = 'error'

  constructor(message?: string | Error | ErrorOptions, errorOptions?: ErrorOptions) {
    if (message instanceof Error) {
      super(undefined, {
        cause: { err: message, ...(message.cause as object | undefined), ...errorOptions },
      })
    } else if (typeof message === 'string') {
      let cause = errorOptions
      if (cause instanceof Error) cause = { err: cause, ...(cause.cause as object | undefined) }
      super(message, cause === undefined ? undefined : { cause })
    } else {
      super(undefined, message === undefined ? undefined : { cause: message })
    }
    const ctor = new.target as unknown as { type: ErrorType; kind: ErrorKind; name: string }
    this.name = ctor.name
    this.type = ctor.type
    this.kind = ctor.kind
  }
}

/** Base class of the errors that send the user back to the sign-in page. */
export class SignInError extends AuthError {
  static override kind: ErrorKind = 'signIn'
}

/** An adapter method threw; the original error is in `cause.err`. */
export class AdapterError extends AuthError {
  static override type: ErrorType = 'AdapterError'
}
/** The `signIn` callback returned `false` or threw. */
export class AccessDenied extends AuthError {
  static override type: ErrorType = 'AccessDenied'
}
/** Something unexpected failed while completing a sign-in. */
export class CallbackRouteError extends AuthError {
  static override type: ErrorType = 'CallbackRouteError'
}
/** The configured error page itself requires authentication. */
export class ErrorPageLoop extends AuthError {
  static override type: ErrorType = 'ErrorPageLoop'
}
/** An event handler threw; the error is logged and swallowed. */
export class EventError extends AuthError {
  static override type: ErrorType = 'EventError'
}
/** A callback URL is neither relative nor an absolute http(s) URL. */
export class InvalidCallbackUrl extends AuthError {
  static override type: ErrorType = 'InvalidCallbackUrl'
}
/**
 * Thrown from a credentials provider's `authorize` to reject the attempt. `code` reaches the
 * client in the `code` query parameter, so it must not reveal anything sensitive.
 */
export class CredentialsSignin extends SignInError {
  static override type: ErrorType = 'CredentialsSignin'
  /** Sent to the client as `?code=`; defaults to `credentials`. */
  code = 'credentials'
}
/** An OAuth provider has neither an issuer nor the endpoint named in the message. */
export class InvalidEndpoints extends AuthError {
  static override type: ErrorType = 'InvalidEndpoints'
}
/** A state, PKCE or nonce check failed. */
export class InvalidCheck extends AuthError {
  static override type: ErrorType = 'InvalidCheck'
}
/** A JWT session cookie could not be decoded or refreshed. */
export class JWTSessionError extends AuthError {
  static override type: ErrorType = 'JWTSessionError'
}
/** A feature that needs a database adapter is configured without one. */
export class MissingAdapter extends AuthError {
  static override type: ErrorType = 'MissingAdapter'
}
/** The adapter lacks methods a configured flow needs. */
export class MissingAdapterMethods extends AuthError {
  static override type: ErrorType = 'MissingAdapterMethods'
}
/** A credentials provider has no `authorize` function. */
export class MissingAuthorize extends AuthError {
  static override type: ErrorType = 'MissingAuthorize'
}
/** No usable `secret` is configured. */
export class MissingSecret extends AuthError {
  static override type: ErrorType = 'MissingSecret'
}
/** The OAuth account belongs to another user, or its e-mail address is already taken. */
export class OAuthAccountNotLinked extends SignInError {
  static override type: ErrorType = 'OAuthAccountNotLinked'
}
/** The OAuth provider answered the callback with an error. */
export class OAuthCallbackError extends SignInError {
  static override type: ErrorType = 'OAuthCallbackError'
}
/** The provider's profile did not have the expected shape. */
export class OAuthProfileParseError extends AuthError {
  static override type: ErrorType = 'OAuthProfileParseError'
}
/** A database session token could not be looked up. */
export class SessionTokenError extends AuthError {
  static override type: ErrorType = 'SessionTokenError'
}
/** Starting an OAuth sign-in failed. */
export class OAuthSignInError extends SignInError {
  static override type: ErrorType = 'OAuthSignInError'
}
/** Sending a sign-in e-mail failed. */
export class EmailSignInError extends SignInError {
  static override type: ErrorType = 'EmailSignInError'
}
/** Ending a session failed; the cookies are cleared regardless. */
export class SignOutError extends AuthError {
  static override type: ErrorType = 'SignOutError'
}
/** The request names an action this handler does not serve. */
export class UnknownAction extends AuthError {
  static override type: ErrorType = 'UnknownAction'
}
/** The session strategy cannot serve the configured providers. */
export class UnsupportedStrategy extends AuthError {
  static override type: ErrorType = 'UnsupportedStrategy'
}
/** The provider cannot serve this route. */
export class InvalidProvider extends AuthError {
  static override type: ErrorType = 'InvalidProvider'
}
/** `trustHost` is not set, so the request's host cannot be relied upon. */
export class UntrustedHost extends AuthError {
  static override type: ErrorType = 'UntrustedHost'
}
/** A sign-in link is invalid, expired or already used. */
export class Verification extends AuthError {
  static override type: ErrorType = 'Verification'
}
/** The double-submit CSRF token was missing or did not match. */
export class MissingCSRF extends SignInError {
  static override type: ErrorType = 'MissingCSRF'
}
/** A WebAuthn credential belongs to another user. */
export class AccountNotLinked extends SignInError {
  static override type: ErrorType = 'AccountNotLinked'
}
/** More than one WebAuthn provider enables conditional UI. */
export class DuplicateConditionalUI extends AuthError {
  static override type: ErrorType = 'DuplicateConditionalUI'
}
/** Conditional UI is enabled without a `webauthn` autocomplete field. */
export class MissingWebAuthnAutocomplete extends AuthError {
  static override type: ErrorType = 'MissingWebAuthnAutocomplete'
}
/** A WebAuthn response failed verification. */
export class WebAuthnVerificationError extends AuthError {
  static override type: ErrorType = 'WebAuthnVerificationError'
}
/** An experimental feature is used without being enabled. */
export class ExperimentalFeatureNotEnabled extends AuthError {
  static override type: ErrorType = 'ExperimentalFeatureNotEnabled'
}

/**
 * A URL names a provider this configuration does not have (mistyped, or from an older
 * deployment). Ours: Auth.js answers it as `Configuration`, blaming the server.
 */
export class UnknownProvider extends AuthError {
  static override type: ErrorType = 'UnknownProvider'
}
/**
 * A flow's step or callback came without its flow (the cookie expired, was cleared, or belongs to
 * another browser): the user starts again. Ours: Auth.js answers it as `Configuration`.
 */
export class FlowExpired extends AuthError {
  static override type: ErrorType = 'FlowExpired'
}

const CLIENT_SAFE_TYPES = new Set<ErrorType>([
  'UnknownProvider',
  'FlowExpired',
  'CredentialsSignin',
  'OAuthAccountNotLinked',
  'OAuthCallbackError',
  'AccessDenied',
  'Verification',
  'MissingCSRF',
  'AccountNotLinked',
  'WebAuthnVerificationError',
  'EmailSignInError',
])

/** The `error` query value of a client-safe type, where the page's vocabulary differs (spec §7). */
const ERROR_PARAMS = new Map<ErrorType, string>([['EmailSignInError', 'EmailSignin']])

/** The `error` query parameter for an error type: its page name if client-safe, else `Configuration`. */
export function errorParamOf(type: ErrorType | 'Configuration'): string {
  if (type === 'Configuration' || !CLIENT_SAFE_TYPES.has(type)) return 'Configuration'
  return ERROR_PARAMS.get(type) ?? type
}

/**
 * Whether an error's `type` may be shown to the client. Every other error reaches the client as
 * `Configuration`, so internals never leak through a redirect.
 */
export function isClientError(error: unknown): error is AuthError {
  return error instanceof AuthError && CLIENT_SAFE_TYPES.has(error.type)
}

/** Whether `type` may be shown to the client (see {@link isClientError}). */
export function isClientSafeType(type: ErrorType): boolean {
  return CLIENT_SAFE_TYPES.has(type)
}

const KIND_OF_TYPE = new Map<ErrorType, ErrorKind>([
  ['CredentialsSignin', 'signIn'],
  ['OAuthAccountNotLinked', 'signIn'],
  ['OAuthCallbackError', 'signIn'],
  ['OAuthSignInError', 'signIn'],
  ['EmailSignInError', 'signIn'],
  ['MissingCSRF', 'signIn'],
  ['AccountNotLinked', 'signIn'],
])

/** The page kind an error type redirects to. */
export function kindOfType(type: ErrorType): ErrorKind {
  return KIND_OF_TYPE.get(type) ?? 'error'
}

/** Codes of {@link FlowStateError}: a sealed flow that cannot be resumed, or a flow that did not come to rest. */
export type FlowStateErrorCode =
  | 'ERR_FLOW_STATE_INVALID'
  | 'ERR_FLOW_STATE_STALE'
  | 'ERR_FLOW_STATE_MISSING'
  | 'ERR_FLOW_VERSION_CHANGED'
  | 'ERR_FLOW_LOOP'
  | 'ERR_FLOW_EVENT_REJECTED'
  | 'ERR_FLOW_SESSION_REFUSED'

/** Codes of the internal errors; switch on these, never on messages. */
export type ErrorCode = 'ERR_CONFIG_INVALID' | FlowStateErrorCode | 'ERR_REQUEST_INVALID' | 'ERR_UNAVAILABLE'

/** Base of the internal errors: a bug, tampering or an outage, never a user's mistake. */
export class EngineError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = new.target.name
  }
}

/** The configuration does not satisfy its schema; `path` names the offending option. */
export class ConfigError extends EngineError<'ERR_CONFIG_INVALID'> {
  constructor(
    message: string,
    readonly path: readonly (string | number)[],
    options?: { cause?: unknown },
  ) {
    super('ERR_CONFIG_INVALID', message, options)
  }
}

/**
 * A sealed flow could not be resumed, or a flow did not come to rest. `ERR_FLOW_VERSION_CHANGED`:
 * the flow was sealed by another version of its chart that declares no migration to this one (a
 * deploy happened while the user was half-way through); the user starts again.
 */
export class FlowStateError extends EngineError<FlowStateErrorCode> {}

/** The request is malformed: wrong method, path, body or an oversized part. */
export class RequestError extends EngineError<'ERR_REQUEST_INVALID'> {
  constructor(
    message: string,
    readonly status: 400 | 404 | 413 | 431 = 400,
  ) {
    super('ERR_REQUEST_INVALID', message)
  }
}

/** A part a request needs: the database adapter, or the store of counters and claims. */
export type Part = 'adapter' | 'store'

/**
 * A part the request needs is unavailable: it refused the connection, dropped it, or did not
 * answer within its timeout. Not the user's mistake and not a bug: the request is answered 503
 * with `Retry-After`, and the same request succeeds once the part is back. An adapter outage is
 * logged as Auth.js logs adapter failures, as an `AdapterError` with this in `cause.err`.
 */
export class ServiceUnavailable extends EngineError<'ERR_UNAVAILABLE'> {
  constructor(
    /** Which part is unavailable. */
    readonly part: Part,
    message: string,
    /** Seconds after which the request may be tried again (the answer's `Retry-After`). */
    readonly retryAfter: number,
    options?: { cause?: unknown },
  ) {
    super('ERR_UNAVAILABLE', message, options)
  }
}

const CLASS_OF_TYPE: ReadonlyMap<ErrorType, new (message?: string) => AuthError> = new Map<
  ErrorType,
  new (message?: string) => AuthError
>([
  ['AccessDenied', AccessDenied],
  ['AdapterError', AdapterError],
  ['CallbackRouteError', CallbackRouteError],
  ['CredentialsSignin', CredentialsSignin],
  ['InvalidCheck', InvalidCheck],
  ['JWTSessionError', JWTSessionError],
  ['OAuthAccountNotLinked', OAuthAccountNotLinked],
  ['OAuthCallbackError', OAuthCallbackError],
  ['OAuthProfileParseError', OAuthProfileParseError],
  ['OAuthSignInError', OAuthSignInError],
  ['EmailSignInError', EmailSignInError],
  ['SessionTokenError', SessionTokenError],
  ['SignOutError', SignOutError],
  ['Verification', Verification],
  ['MissingCSRF', MissingCSRF],
  ['AccountNotLinked', AccountNotLinked],
  ['WebAuthnVerificationError', WebAuthnVerificationError],
  ['InvalidProvider', InvalidProvider],
  ['UnknownAction', UnknownAction],
])

/**
 * An instance of the public class for `type` (with `code` for `CredentialsSignin`), for callers
 * that receive errors as exceptions (`raw` mode).
 */
export function errorOfType(type: ErrorType, code?: string): AuthError {
  const ErrorClass = CLASS_OF_TYPE.get(type) ?? AuthError
  const error = new ErrorClass()
  if (error instanceof CredentialsSignin && code !== undefined) error.code = code
  return error
}
