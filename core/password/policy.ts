/**
 * The policy every new password passes (sign-up, reset, change), after NIST SP 800-63B §3.1.1.2:
 * length bounds counted in Unicode code points after NFKC, no composition rules, a check against
 * known-breached passwords, and the app's own rule.
 *
 * The breach check asks a k-anonymity range API (Have I Been Pwned's by default): only the first
 * five hex digits of the password's SHA-1 leave the server, with `Add-Padding: true` so the
 * response size does not narrow down the suffix either.
 *
 * @module
 */
import { toHex } from '../crypto.js'

/** Why a password was refused: a stable code for JSON clients and a message for pages. */
export interface PolicyReason {
  code: 'too_short' | 'too_long' | 'breached' | 'breach_check_unavailable' | 'app_rule'
  message: string
}

/** The policy's verdict. `reason` is the first reason's code (the shape the password flows read). */
export type PolicyResult = { ok: true } | { ok: false; reason: PolicyReason['code']; reasons: PolicyReason[] }

/** Who the password is for, handed to the app's rule (so it can refuse the address or the name). */
export interface PolicyContext {
  email?: string
  user?: { id?: string; email?: string | null; name?: string | null } | null
}

/** The breached-password check's options. */
export interface BreachCheckOptions {
  /** The range API's base; `<5 hex>` is appended after a `/` (default HIBP's). */
  url?: string
  /** Accept the password when the API cannot be asked (default `false`: refuse, fail closed). */
  failOpen?: boolean
  /** Milliseconds to wait for the API (default 3000). */
  timeout?: number
  /** Refuse a password seen at least this many times (default 1). */
  minimumCount?: number
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch
}

/** Options of {@link passwordPolicy}. */
export interface PasswordPolicyOptions {
  /** Fewest code points (default 8). */
  minLength?: number
  /** Most code points (default 128). */
  maxLength?: number
  /** The breached-password check; `false` turns it off (default on, failing closed). */
  breachCheck?: BreachCheckOptions | false
  /** The app's own rule: a message to refuse with, or `undefined` to accept. */
  check?: (password: string, context: PolicyContext) => string | undefined | Promise<string | undefined>
  /** Where warnings go (default `console.warn`). */
  warn?: (message: string) => void
}

/** A configured policy: call it with each new password. */
export type PasswordPolicyCheck = (password: string, context?: PolicyContext) => Promise<PolicyResult>

/** HIBP's range API. */
export const DEFAULT_BREACH_RANGE_URL = 'https://api.pwnedpasswords.com/range'

/** NIST SP 800-63B's floor, and a ceiling that keeps hashing cost bounded. */
export const DEFAULT_PASSWORD_LENGTH = { min: 8, max: 128 } as const

/** Code points of the NFKC form: what a user perceives as the password's length. */
export function passwordLength(password: string): number {
  let count = 0
  for (const _ of password.normalize('NFKC')) count++
  return count
}

/** Whether the range API lists `password` at least `minimumCount` times; throws when it cannot answer. */
async function isBreached(password: string, options: BreachCheckOptions): Promise<boolean> {
  const digest = toHex(new Uint8Array(await crypto.subtle.digest('SHA-1', new TextEncoder().encode(password)))).toUpperCase()
  const prefix = digest.slice(0, 5)
  const suffix = digest.slice(5)
  const base = (options.url ?? DEFAULT_BREACH_RANGE_URL).replace(/\/+$/, '')
  const response = await (options.fetch ?? fetch)(`${base}/${prefix}`, {
    headers: { 'Add-Padding': 'true' },
    signal: AbortSignal.timeout(options.timeout ?? 3000),
  })
  if (!response.ok) throw new Error(`range API answered ${response.status}`)
  const body = await response.text()
  const minimum = options.minimumCount ?? 1
  for (const line of body.split('\n')) {
    const [lineSuffix, count] = line.trim().toUpperCase().split(':')
    // Padding lines carry a count of 0: they are not breaches.
    if (lineSuffix === suffix && Number(count) >= minimum) return true
  }
  return false
}

/**
 * Builds the password policy. Every check runs and every reason is returned, so a page can show
 * them all; the breach check is skipped for a password already refused by length.
 *
 * @throws {RangeError} when the length bounds are not 1 ≤ min ≤ max.
 */
export function passwordPolicy(options: PasswordPolicyOptions = {}): PasswordPolicyCheck {
  const min = options.minLength ?? DEFAULT_PASSWORD_LENGTH.min
  const max = options.maxLength ?? DEFAULT_PASSWORD_LENGTH.max
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min)
    throw new RangeError(`password policy: length bounds must satisfy 1 ≤ min ≤ max, got ${min} and ${max}`)
  const breach = options.breachCheck ?? {}
  const warn = options.warn ?? ((message: string) => console.warn(message))

  return async (password, context = {}) => {
    const reasons: PolicyReason[] = []
    const length = typeof password === 'string' ? passwordLength(password) : 0
    if (length < min) reasons.push({ code: 'too_short', message: `Use at least ${min} characters.` })
    if (length > max) reasons.push({ code: 'too_long', message: `Use at most ${max} characters.` })
    if (breach && reasons.length === 0) {
      try {
        if (await isBreached(password, breach))
          reasons.push({
            code: 'breached',
            message: 'This password has appeared in a data breach. Choose another one.',
          })
      } catch (error) {
        if (breach.failOpen) {
          // The app chose availability over the check; the log says the check was skipped.
          warn(`password policy: breached-password check skipped (failOpen): ${(error as Error).message}`)
        } else {
          reasons.push({
            code: 'breach_check_unavailable',
            message: 'The password could not be checked right now. Try again in a moment.',
          })
        }
      }
    }
    if (options.check && typeof password === 'string') {
      const message = await options.check(password, context)
      if (typeof message === 'string') reasons.push({ code: 'app_rule', message })
    }
    return reasons.length === 0 ? { ok: true } : { ok: false, reason: reasons[0]!.code, reasons }
  }
}
