/**
 * Codes for the lockout tests.
 *
 * @module
 */
import { totpCode } from '../../core/second-factor/totp.js'

/** A wrong six-digit code at `at` (not within a step of the right one). */
export function wrongCode(secret: string, at: number): string {
  const near = new Set([-30, 0, 30].map((d) => totpCode(secret, at + d)))
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0')
    if (!near.has(code)) return code
  }
}

