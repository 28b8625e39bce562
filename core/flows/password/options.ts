/**
 * The `Password` provider's options and merged shape, and how the flows read them: a leaf the
 * provider factory, the flows and the pages share.
 *
 * @module
 */
import type { Struct } from 'superstruct'
import type { AdapterUser } from '../../adapters.js'
import type { RequestContext, ResolvedProvider } from '../../config/types.js'
import type { PasswordHasher } from '../../password/hashing.js'
import type { Awaitable, CommonProviderOptions } from '../../shapes.js'

/** The provider type the password flows serve. */
export const PASSWORD_TYPE = 'password'

/** Hashes and verifies passwords (`passwordHasher()` from `authchart/password` makes one). */
export type { PasswordHasher }

/** What a password policy says of a new password: fine, or why not (shown to the user). */
export type PolicyVerdict = { ok: true } | { ok: false; reason: string }

/** The application's check of a new password (length bounds, a breached-password list, its own rules). */
export type PasswordPolicy = (password: string, context: { email: string; user: AdapterUser | null }) => Awaitable<PolicyVerdict>

/** Why the flows send a message. */
export type PasswordMailKind = 'verify' | 'reset' | 'reset-unknown' | 'signup-existing'

/** One message the password flows send. The link and code exist only here: never log them. */
export interface PasswordMail {
  kind: PasswordMailKind
  /** The normalised address. */
  to: string
  subject: string
  text: string
  /** The link to open (verification, reset, or the reset request page for a notice). */
  url: string
  /** The single-use token in the link, when it carries one. */
  token?: string
  request: Request
}

/** Sends one message; throwing fails the step with `EmailSignin` (nothing is told to the requester). */
export type PasswordSender = (mail: PasswordMail) => Awaitable<void>

/** The options of `Password()`. */
export interface PasswordOptions {
  id?: string
  name?: string
  /** How passwords are hashed (default: `passwordHasher()`, argon2id at RFC 9106's second recommended parameters). */
  hasher?: PasswordHasher
  /** A new address must be proven by an e-mailed link before the account signs in (default `true`). */
  requireEmailVerification?: boolean
  /** The application's own sign-up fields (a superstruct schema over the posted body's other fields). */
  signUpFields?: Struct<Record<string, unknown>, unknown>
  /**
   * The check of every new password (sign-up, reset), after the default length bounds (8 to 128
   * characters): `passwordPolicy()` from `authchart/password` adds the breached-password check.
   */
  policy?: PasswordPolicy
  /**
   * For a user with no local hash (imported from a system a team leaves): asked once whether the
   * password is right; on `true` our own hash is stored.
   */
  verifyLegacyPassword?: (user: AdapterUser, password: string) => Awaitable<boolean>
  /** Sends every message (default: the configured e-mail provider's `sendVerificationRequest`). */
  send?: PasswordSender
  /** Sends the address verification (default: `send`). */
  sendVerification?: PasswordSender
  /** Sends the reset link (default: `send`). */
  sendReset?: PasswordSender
  /** Seconds a reset link lives (default 900). */
  resetMaxAge?: number
  /** Seconds a verification link lives (default 86,400). */
  verificationMaxAge?: number
  /** Reset requests allowed per address and per client address in each window (default 3 and 20 per hour). */
  resetLimit?: { perAddress?: number; perClient?: number; window?: number }
}

/** The merged provider (a type, not an interface, so a config's `providers` list takes it as it takes any provider). */
export type PasswordConfig = Omit<CommonProviderOptions, 'type'> &
  Omit<PasswordOptions, 'id' | 'name'> & {
    type: typeof PASSWORD_TYPE
    requireEmailVerification: boolean
  }

/** The configured password provider `providerId`. */
export function passwordProviderOf(ctx: RequestContext, providerId: string): PasswordConfig {
  const provider = ctx.config.providerById.get(providerId) as ResolvedProvider | undefined
  return provider!.config as unknown as PasswordConfig
}

/** The hasher of `provider`. @throws {TypeError} when none is configured. */
export function hasherOf(provider: PasswordConfig): PasswordHasher {
  if (!provider.hasher) throw new TypeError('the password provider has no hasher')
  return provider.hasher
}

/** Default length bounds of a new password (NIST SP 800-63B: no composition rules). */
export const DEFAULT_LENGTH = { min: 8, max: 128 } as const

/** The policy's verdict on `password`: the default length bounds, then the application's check. */
export async function checkPolicy(
  provider: PasswordConfig,
  password: string,
  context: { email: string; user: AdapterUser | null },
): Promise<PolicyVerdict> {
  const length = [...password].length
  if (length < DEFAULT_LENGTH.min) return { ok: false, reason: 'too_short' }
  if (length > DEFAULT_LENGTH.max) return { ok: false, reason: 'too_long' }
  return provider.policy ? provider.policy(password, context) : { ok: true }
}
