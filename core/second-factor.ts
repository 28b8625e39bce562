/**
 * Two-step verification, brought in by its import: `secondFactor: totp({ issuer? })` from
 * `authchart/second-factor`. With it, a signed-in user turns on a TOTP authenticator app at
 * `{basePath}/two-factor` (a QR code, then a code to confirm, then single-use backup codes), and
 * every sign-in of a user with a second factor asks for a code before the session is issued.
 *
 * Without it the core links none of this (`otpauth`, the QR encoder, the enrolment flow), and a
 * user who has a stored second factor cannot sign in at all: the sign-in completion still asks the
 * adapter, and refuses (fails closed) rather than issue a session past the factor.
 *
 * @example
 * ```ts
 * import { totp } from 'authchart/second-factor'
 *
 * const config = { adapter, providers, secondFactor: totp({ issuer: 'Example' }) }
 * ```
 *
 * @module
 */
import { totpEnrolmentModule } from './flows/totp-enrolment/index.js'
import { respondBackupCodesPage } from './flows/totp-enrolment/settings.js'
import type { SecondFactorModule } from './config/types.js'
import { FEATURE } from './modules.js'
import { checkCode } from './second-factor/index.js'

export type { SecondFactorModule }

/** The options of {@link totp}. */
export interface TotpOptions {
  /** The issuer the authenticator app shows next to the account (default: the request's host). */
  issuer?: string | undefined
}

/**
 * The TOTP second factor (RFC 6238, 30-second codes, 6 digits) with ten single-use backup codes.
 * The adapter stores the factors (`listSecondFactors`, `createSecondFactor`, … as the memory and
 * Postgres adapters have them).
 */
export function totp(options: TotpOptions = {}): SecondFactorModule {
  return Object.freeze({
    [FEATURE]: 'second-factor' as const,
    flows: Object.freeze([totpEnrolmentModule]),
    issuer: options.issuer,
    checkCode,
    outcomePages: Object.freeze({ 'backup-codes': respondBackupCodesPage }),
  })
}
