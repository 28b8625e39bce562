/**
 * The TOTP parameters, apart from the code that uses them (`./totp.ts`, loaded with `otpauth` on
 * demand), so that the store keys and windows computed from them need no `otpauth`.
 *
 * @module
 */

/** The time step, in seconds (RFC 6238's default, which every authenticator app understands). */
export const TOTP_PERIOD = 30
/** Digits of a code (RFC 6238's default). */
export const TOTP_DIGITS = 6
/** Codes of the previous and next time step are accepted too (clock drift). */
export const TOTP_WINDOW = 1
