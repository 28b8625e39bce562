/**
 * The error types a flow may end with: the `type` of Auth.js's public errors (spec §7), which the
 * HTTP layer turns into `?error=` redirects. Declared here, below the core, so that the charts
 * import nothing from it; `core/errors.ts` re-exports it next to the classes.
 *
 * @module
 */

/** Every value of {@link AuthError.type}. */
export type ErrorType =
  | 'AuthError'
  | 'AccessDenied'
  | 'AdapterError'
  | 'CallbackRouteError'
  | 'ErrorPageLoop'
  | 'EventError'
  | 'InvalidCallbackUrl'
  | 'CredentialsSignin'
  | 'InvalidEndpoints'
  | 'InvalidCheck'
  | 'JWTSessionError'
  | 'MissingAdapter'
  | 'MissingAdapterMethods'
  | 'MissingAuthorize'
  | 'MissingSecret'
  | 'OAuthAccountNotLinked'
  | 'OAuthCallbackError'
  | 'OAuthProfileParseError'
  | 'SessionTokenError'
  | 'OAuthSignInError'
  | 'EmailSignInError'
  | 'SignOutError'
  | 'UnknownAction'
  | 'UnsupportedStrategy'
  | 'InvalidProvider'
  | 'UntrustedHost'
  | 'Verification'
  | 'MissingCSRF'
  | 'AccountNotLinked'
  | 'DuplicateConditionalUI'
  | 'MissingWebAuthnAutocomplete'
  | 'WebAuthnVerificationError'
  | 'ExperimentalFeatureNotEnabled'
  // Ours: ordinary mistakes that Auth.js reports as Configuration (a server fault).
  | 'UnknownProvider'
  | 'FlowExpired'
