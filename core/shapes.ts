/**
 * The data shapes every other type is built from (spec §2): users, accounts, profiles, the
 * database adapter's interface, cookies, session tokens and the logger. A leaf: it imports
 * only other type modules, so the public types, the provider types and the config types can all build on it
 * without an import circle. `core/types.ts` and the modules that own each shape re-export them.
 *
 * @module
 */

import type { ApiKeyAdapterMethods } from './api-keys/types.js'
import type { ServiceAccountAdapterMethods } from './service-accounts/types.js'

/** A value or a promise of it. */
export type Awaitable<T> = T | PromiseLike<T>

/** A provider's kind: Auth.js's five, and authchart's `Password` provider (`authchart/providers/password`). */
export type ProviderType = 'oauth' | 'oidc' | 'email' | 'credentials' | 'webauthn' | 'password'

/** A user as seen by callbacks (spec §2.2). */
export interface User {
  id?: string
  name?: string | null
  email?: string | null
  image?: string | null
}

/** An account: a provider identity with its token-endpoint fields (spec §2.3). */
export interface Account {
  provider: string
  providerAccountId: string
  type: ProviderType
  userId?: string
  access_token?: string
  refresh_token?: string
  id_token?: string
  scope?: string
  token_type?: Lowercase<string>
  expires_in?: number
  /** Absolute expiry of the access token, in seconds since the epoch. */
  expires_at?: number
  [key: string]: unknown
}

/** OpenID Connect standard claims (spec §2.4). */
export interface Profile {
  id?: string | null
  sub?: string | null
  name?: string | null
  given_name?: string | null
  family_name?: string | null
  middle_name?: string | null
  nickname?: string | null
  preferred_username?: string | null
  profile?: string | null
  picture?: unknown
  website?: string | null
  email?: string | null
  email_verified?: boolean | null
  gender?: string | null
  birthdate?: string | null
  zoneinfo?: string | null
  locale?: string | null
  phone_number?: string | null
  updated_at?: Date | string | number | null
  address?: {
    formatted?: string | null
    street_address?: string | null
    locality?: string | null
    region?: string | null
    postal_code?: string | null
    country?: string | null
  } | null
  [claim: string]: unknown
}

/** Look of the built-in pages (spec §2.9). */
export interface Theme {
  colorScheme?: 'auto' | 'dark' | 'light'
  logo?: string
  brandColor?: string
  buttonText?: string
}

/** Options shared by every provider. */
export interface CommonProviderOptions {
  id: string
  name: string
  type: ProviderType
}

/** A user as stored by an adapter. */
export interface AdapterUser extends User {
  id: string
  email: string
  emailVerified: Date | null
}

/** The kinds of account an adapter stores. */
export type AdapterAccountType = 'oauth' | 'oidc' | 'email' | 'webauthn'

/** An account (a provider identity linked to a user) as stored by an adapter. */
export interface AdapterAccount extends Account {
  userId: string
  type: AdapterAccountType
}

/** A database session. */
export interface AdapterSession {
  sessionToken: string
  userId: string
  expires: Date
  /**
   * Ours, optional: how the user signed in (RFC 8176 values, e.g. `['pwd', 'otp']`). Given to
   * `createSession` only after a second factor, so only adapters that store second factors (and
   * accept this field) ever see it.
   */
  amr?: string[]
  /**
   * Ours, optional (session lifecycle): when the session was signed in, last extended, and from
   * which user agent. Adapters that keep them (authchart's memory and PostgreSQL adapters) return
   * them; the absolute lifetime is measured from `createdAt` and is not checked without it.
   */
  createdAt?: Date
  lastSeenAt?: Date
  userAgent?: string | null
  /**
   * Ours, optional (step-up): when each factor was last proven in this session, factor → epoch
   * seconds (e.g. `{ pwd: 1767225600 }`). Given with the lifecycle details (adapters with
   * `listSessions`) at creation, and through `updateSession` on re-authentication.
   */
  fva?: Partial<Record<'pwd' | 'otp' | 'hwk' | 'email' | 'fed', number>>
  /**
   * Ours, optional (logout by the provider): the OpenID Connect provider session the user signed in
   * with. Given to `createSession` only by adapters with {@link Adapter.deleteProviderSessions}.
   */
  providerSession?: ProviderSession
}

/**
 * Ours: an OpenID Connect provider's session a session of ours was signed in with: our id of the
 * provider, the provider's subject (`sub` of its ID token) and, when it sent one, its session id (`sid`).
 */
export interface ProviderSession {
  provider: string
  sub: string
  sid?: string
}

/** A single-use e-mail sign-in token; only its hash is stored. */
export interface VerificationToken {
  identifier: string
  expires: Date
  token: string
}

/** A WebAuthn authenticator as stored by an adapter. */
export interface AdapterAuthenticator {
  credentialID: string
  userId: string
  providerAccountId: string
  counter: number
  credentialBackedUp: boolean
  credentialPublicKey: string
  transports?: string | null
  credentialDeviceType: string
}

/**
 * Ours: an enrolled second factor. `secret` is opaque to the adapter: a TOTP secret encrypted with
 * the auth secret, or the keyed hashes of the remaining backup codes, space-separated.
 */
export interface AdapterSecondFactor {
  id: string
  userId: string
  type: 'totp' | 'backup-codes'
  secret: string
  createdAt: Date
}

/**
 * Ours: an application step of the sign-in a user has completed (an extension at
 * `afterFirstSignIn`), at the step's version.
 */
export interface AdapterCompletedStep {
  stepId: string
  version: string
}

/** The Auth.js adapter interface, with our optional methods (API keys' are declared by that feature). */
export interface Adapter extends ApiKeyAdapterMethods, ServiceAccountAdapterMethods {
  createUser?(user: AdapterUser): Awaitable<AdapterUser>
  getUser?(id: string): Awaitable<AdapterUser | null>
  getUserByEmail?(email: string): Awaitable<AdapterUser | null>
  getUserByAccount?(
    providerAccountId: Pick<AdapterAccount, 'provider' | 'providerAccountId'>,
  ): Awaitable<AdapterUser | null>
  updateUser?(user: Partial<AdapterUser> & Pick<AdapterUser, 'id'>): Awaitable<AdapterUser>
  deleteUser?(userId: string): Promise<void> | Awaitable<AdapterUser | null | undefined>
  linkAccount?(account: AdapterAccount): Promise<void> | Awaitable<AdapterAccount | null | undefined>
  /**
   * Ours, optional: replaces the stored tokens of a linked account on a repeat sign-in (Auth.js never
   * updates them, its issues #3599 and #854). Without it the account is unlinked and linked again.
   */
  updateAccount?(
    account: Partial<AdapterAccount> & Pick<AdapterAccount, 'provider' | 'providerAccountId'>,
  ): Awaitable<AdapterAccount | null | undefined>
  /**
   * Ours, optional: the accounts linked to a user. Refresh-token rotation with database sessions
   * needs it (the session row names the user, not the account); without it tokens are not refreshed.
   */
  listAccounts?(userId: string): Awaitable<AdapterAccount[]>
  /**
   * Ours, optional: creates a user and links an account to it (its `userId` is the new user's id)
   * in one transaction: both rows or neither. Without it the engine calls `createUser` then
   * `linkAccount`, as Auth.js does, and an instance killed between the two leaves a user with no
   * account, whose next sign-in is refused as an e-mail address already taken.
   */
  createUserAndAccount?(user: AdapterUser, account: AdapterAccount): Awaitable<{ user: AdapterUser; account: AdapterAccount }>
  /** Ours, optional: every database session of a user (to list and revoke them). */
  listSessions?(userId: string): Awaitable<AdapterSession[]>
  /**
   * Ours, optional, with {@link Adapter.recordCompletedStep}: the steps a user has completed. A step
   * at `afterFirstSignIn` runs until its user has completed it at its current version; without
   * these two methods it runs on every sign-in (warned at load).
   */
  getCompletedSteps?(userId: string): Awaitable<AdapterCompletedStep[]>
  /** Ours, optional: records that a user completed a step at a version (again: no change). */
  recordCompletedStep?(userId: string, stepId: string, version: string): Awaitable<void>
  unlinkAccount?(
    providerAccountId: Pick<AdapterAccount, 'provider' | 'providerAccountId'>,
  ): Promise<void> | Awaitable<AdapterAccount | undefined>
  createSession?(session: {
    sessionToken: string
    userId: string
    expires: Date
    amr?: string[]
    /** Given only to adapters with `listSessions` (ours): others may refuse unknown fields. */
    createdAt?: Date
    userAgent?: string | null
    fva?: AdapterSession['fva']
    /** Given only to adapters with `deleteProviderSessions` (ours). */
    providerSession?: ProviderSession
  }): Awaitable<AdapterSession>
  getSessionAndUser?(
    sessionToken: string,
  ): Awaitable<{ session: AdapterSession; user: AdapterUser } | null>
  updateSession?(
    session: Partial<AdapterSession> & Pick<AdapterSession, 'sessionToken'>,
  ): Awaitable<AdapterSession | null | undefined>
  deleteSession?(
    sessionToken: string,
  ): Promise<void> | Awaitable<AdapterSession | null | undefined>
  /**
   * Ours, optional (OpenID Connect back-channel logout): deletes every session signed in through
   * `provider`'s session `sid` (when given) of its subject `sub` (when given; with only `sub`, all of
   * that subject's sessions through the provider), as recorded by `createSession`'s
   * `providerSession`; returns how many it deleted. Without it, the sessions are found through an
   * index in the store.
   */
  deleteProviderSessions?(match: { provider: string; sid?: string; sub?: string }): Awaitable<number>
  createVerificationToken?(
    verificationToken: VerificationToken,
  ): Awaitable<VerificationToken | null | undefined>
  useVerificationToken?(params: {
    identifier: string
    token: string
  }): Awaitable<VerificationToken | null>
  getAccount?(providerAccountId: string, provider: string): Awaitable<AdapterAccount | null>
  getAuthenticator?(credentialID: string): Awaitable<AdapterAuthenticator | null>
  createAuthenticator?(authenticator: AdapterAuthenticator): Awaitable<AdapterAuthenticator>
  listAuthenticatorsByUserId?(userId: string): Awaitable<AdapterAuthenticator[]>
  updateAuthenticatorCounter?(
    credentialID: string,
    newCounter: number,
  ): Awaitable<AdapterAuthenticator>
  /** Ours, optional: a user's second factors. Without it no user has one. */
  listSecondFactors?(userId: string): Awaitable<AdapterSecondFactor[]>
  /** Ours, optional: stores a confirmed second factor; throws when a factor with its id exists. */
  createSecondFactor?(factor: AdapterSecondFactor): Awaitable<AdapterSecondFactor>
  /** Ours, optional: replaces a factor's secret. */
  updateSecondFactor?(factor: Pick<AdapterSecondFactor, 'id' | 'secret'>): Awaitable<AdapterSecondFactor | null | undefined>
  /**
   * Ours, optional: spends one backup code of a backup-codes factor, removing `hash` from its
   * secret in one conditional update (a compare-and-set); `true` only for the call that removed it,
   * `false` when it was not (or no longer) there. Two different codes spent at once must both be
   * gone afterwards. Without it, spends of one factor are serialised through a lock in the store.
   */
  spendBackupCode?(factor: { id: string; hash: string }): Awaitable<boolean>
  /** Ours, optional: removes a second factor. */
  deleteSecondFactor?(id: string): Awaitable<void>
}

/** Attributes of a `Set-Cookie` header. */
export interface CookieSerializeOptions {
  domain?: string
  expires?: Date
  httpOnly?: boolean
  maxAge?: number
  partitioned?: boolean
  path?: string
  priority?: 'low' | 'medium' | 'high'
  sameSite?: boolean | 'lax' | 'strict' | 'none'
  secure?: boolean
}

/** A cookie's name and attributes, as configured. */
export interface CookieOption {
  name: string
  options: CookieSerializeOptions
}

/** A cookie to set (or, with an empty value and `maxAge: 0`, to delete). */
export interface Cookie extends CookieOption {
  value: string
}

/** The claims Auth.js puts in a session token by default. */
export interface DefaultJWT extends Record<string, unknown> {
  name?: string | null
  email?: string | null
  picture?: string | null
  sub?: string
  iat?: number
  exp?: number
  jti?: string
}

/** A decoded session token. Extend it through declaration merging to type custom claims. */
export interface JWT extends Record<string, unknown>, DefaultJWT {}

/** Parameters of {@link encode}. */
export interface JWTEncodeParams<Payload = JWT> {
  /** Lifetime in seconds; the `exp` claim is now + `maxAge`. Defaults to 30 days. */
  maxAge?: number
  /** Binds the token to its use; the core passes the session cookie name. */
  salt: string
  /** One secret, or several for rotation (the first encrypts). */
  secret: string | string[]
  token?: Payload
}

/** Parameters of {@link decode}. */
export interface JWTDecodeParams {
  salt: string
  secret: string | string[]
  token?: string
}

/** `config.jwt`: replaces the token lifetime or the codec itself. */
export interface JWTOptions {
  secret: string | string[]
  maxAge: number
  encode: (params: JWTEncodeParams) => string | Promise<string>
  decode: (params: JWTDecodeParams) => JWT | null | Promise<JWT | null>
}

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
  | 'service-token-rate-limited'
  | 'second-factor-attempts-exhausted'
  | 'second-factor-codes-tried'
  | 'reauthentication-failed'
  | 'reauthentication-other-user'
  | 'reauthentication-unavailable'
  | 'inspector-refused-outside-development'
  | 'inspector-refused-remote-client'
  | 'after-first-sign-in-unrecorded'
  | 'session-cache-ignored'
  | 'short-secret-for-reading'
  | 'flow-restarted-after-update'
  | 'rate-limit-unchecked'
  | 'jwt-callback-changed-subject'

/** A logger; any subset of the methods may be given in `config.logger`. */
export interface LoggerInstance {
  error: (error: Error) => void
  warn: (code: WarningCode) => void
  debug: (message: string, metadata?: unknown) => void
  [method: string]: ((...args: never[]) => unknown) | undefined
}

/** The logger methods every part of the engine calls. */
export type Logger = Pick<LoggerInstance, 'error' | 'warn' | 'debug'>

/** One input of the built-in credentials form; extra keys become input attributes. */
export interface CredentialInput {
  label?: string
  type?: string
  placeholder?: string
  [attribute: string]: unknown
}

/** A method of the adapter. */
export type AdapterMethod = keyof Adapter

/**
 * The adapter as a flow's effects see it: the methods the flow declares (`Needs`) are there, the
 * rest optional as in {@link Adapter}. True because the config is refused at load when a configured
 * flow's adapter lacks one of them.
 */
export type AdapterView<Needs extends AdapterMethod> = Omit<Adapter, Needs> & Required<Pick<Adapter, Needs>>

/**
 * Every option of `T` optional, and each may be given as `undefined` (an unset variable:
 * `clientId: process.env.AUTH_GITHUB_ID`) also under `exactOptionalPropertyTypes`, which
 * `tsc --init` turns on. An `undefined` option counts as not given.
 */
export type UserOptions<T> = { [K in keyof T]?: T[K] | undefined }
