/**
 * The identifier of an e-mail sign-in: the address as Auth.js normalises it, and the escaping
 * that keeps an attacker's address from forging log lines.
 *
 * @module
 */
import { escapeControl } from '../logger.js'

/**
 * Auth.js's default `normalizeIdentifier`, byte for byte: NFKC first (so a homoglyph of `@` such
 * as U+FF20 becomes a real `@` and is then refused), lower case, trimmed; no `"`; exactly one `@`
 * with both parts non-empty; anything after a `,` in the domain dropped.
 *
 * @throws {Error} when the address is missing or malformed.
 * @see reference §5.2 step 1
 */
export function defaultNormalizer(email: unknown): string {
  if (!email) throw new Error('Missing email from request body.')
  if (typeof email !== 'string') throw new Error('Invalid email address format.')
  const trimmed = email.normalize('NFKC').toLowerCase().trim()
  // Quotes would let `"attacker@evil.com"@victim.com` confuse address parsers downstream.
  if (trimmed.includes('"')) throw new Error('Invalid email address format.')
  const parts = trimmed.split('@')
  const [local, domainPart] = parts
  if (!local || !domainPart || parts.length !== 2) throw new Error('Invalid email address format.')
  const domain = domainPart.split(',')[0]
  if (!domain) throw new Error('Invalid email address format.')
  return `${local}@${domain}`
}

/** Domains whose mailboxes ignore dots in the local part, and the one they all deliver to. */
const DOTLESS_DOMAINS: ReadonlyMap<string, string> = new Map([
  ['gmail.com', 'gmail.com'],
  ['googlemail.com', 'gmail.com'],
])

/** A domain as DNS sees it: an internationalised name in its ASCII (punycode) form. */
function asciiDomain(domain: string): string {
  try {
    return new URL(`http://${domain}`).hostname
  } catch {
    return domain
  }
}

/**
 * The inbox an address delivers to, for counting sends (never for sending, nor as the user's
 * identity): lower case, a `+tag` removed, the domain in its ASCII form without a trailing dot
 * and, for Gmail's domains, dots in the local part removed and `googlemail.com` read as
 * `gmail.com`. Without it, `victim+1@…`, `v.ictim@gmail.com` … would each get their own send
 * limit: a mail bomb through the sign-in form.
 */
export function mailboxOf(address: string): string {
  const lower = address.toLowerCase()
  const at = lower.lastIndexOf('@')
  if (at === -1) return lower
  const domain = asciiDomain(lower.slice(at + 1)).replace(/\.+$/, '')
  let local = lower.slice(0, at)
  const plus = local.indexOf('+')
  if (plus !== -1) local = local.slice(0, plus)
  const dotless = DOTLESS_DOMAINS.get(domain)
  return dotless ? `${local.replaceAll('.', '')}@${dotless}` : `${local}@${domain}`
}

/**
 * Whether a normalised address may be used at all: no control characters, no line breaks (a
 * header injection into the message's `To:`), no angle brackets or spaces (address-list syntax)
 * and at most 254 characters (RFC 5321 §4.5.3.1.3). Checked after any custom normaliser too.
 */
export function isDeliverableAddress(address: string): boolean {
  return address.length <= 254 && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s<>]/.test(address)
}

/**
 * A user-supplied value made safe for one log line: cut to `max` characters, then control
 * characters (CR/LF above all) written as escapes by the logger's own {@link escapeControl}.
 */
export function escapeForLog(value: unknown, max = 200): string {
  const text = typeof value === 'string' ? value : String(value)
  return escapeControl(text.length > max ? `${text.slice(0, max)}…` : text)
}
