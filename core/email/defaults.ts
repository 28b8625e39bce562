/**
 * The defaults of every e-mail provider, in a module that loads nothing: the flows that send
 * e-mail for another (the passkey sign-up's code) read them without importing the provider
 * factory, which loads the e-mail flow on demand (an import circle otherwise).
 *
 * @module
 */

/** The sender Auth.js's providers use by default. */
export const DEFAULT_FROM = 'Auth.js <no-reply@authjs.dev>'
/** Seconds a link lives by default (one day), and with codes (ten minutes). */
export const DEFAULT_MAX_AGE = 86_400
/** Seconds a one-time code (and the token it stands for) lives by default. */
export const DEFAULT_CODE_MAX_AGE = 600
/** A one-time code by default: 6 characters of Crockford's base32, 5 wrong tries. */
export const DEFAULT_CODE = Object.freeze({ length: 6, alphabet: 'base32', attempts: 5 } as const)
