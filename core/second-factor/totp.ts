/**
 * TOTP codes (RFC 6238, through `otpauth`): new secrets, the codes of a secret, the enrolment's
 * `otpauth://` URI and QR code. Reached through `import()` from the second-factor code that checks
 * or enrols a code ({@link ./index.ts}'s `loadTotp`), so `otpauth` is loaded only when a second
 * factor is used, and the QR encoder only when the enrolment page is drawn.
 *
 * @module
 */
/// <reference path="../deep-imports.d.ts" />
import { Secret, TOTP } from 'otpauth'
import { TOTP_DIGITS, TOTP_PERIOD, TOTP_WINDOW } from './totp-parameters.js'

// Stryker disable next-line StringLiteral: eq#second-factor-totp-label
function totpFor(secret: string, label = '', issuer = ''): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    secret: Secret.fromBase32(secret),
  })
}

/** A new TOTP secret (160 random bits, base32, as RFC 4226 recommends). */
export function createTotpSecret(): string {
  // Stryker disable next-line ObjectLiteral: eq#second-factor-secret-size
  return new Secret({ size: 20 }).base32
}

/** What an authenticator app is shown: the `otpauth://` URI and its QR code as SVG. */
export async function totpEnrolment(
  secret: string,
  label: string,
  issuer: string,
): Promise<{ uri: string; qr: string }> {
  const uri = totpFor(secret, label, issuer).toString()
  // Loaded for the enrolment page alone: nothing else draws a QR code.
  const [{ create }, { render }] = await Promise.all([import('qrcode/lib/core/qrcode.js'), import('qrcode/lib/renderer/svg-tag.js')])
  // Stryker disable next-line ObjectLiteral,StringLiteral: eq#second-factor-qr-options
  const code = create(uri, { errorCorrectionLevel: 'M' })
  // Stryker disable next-line StringLiteral: eq#second-factor-qr-options
  return { uri, qr: render(code, { type: 'svg', margin: 1 }) }
}

/**
 * The time step a TOTP code belongs to at `at` (epoch seconds), allowing one step of drift each
 * way; `null` for a wrong code.
 */
export function totpStep(secret: string, code: string, at: number): number | null {
  // Stryker disable next-line ConditionalExpression,Regex: eq#second-factor-six-digits
  if (!/^\d{6}$/.test(code)) return null
  const delta = totpFor(secret).validate({ token: code, timestamp: at * 1000, window: TOTP_WINDOW })
  return delta === null ? null : Math.floor(at / TOTP_PERIOD) + delta
}

/** The TOTP code of `secret` at `at` (for tests and tools). */
export function totpCode(secret: string, at: number): string {
  return totpFor(secret).generate({ timestamp: at * 1000 })
}
