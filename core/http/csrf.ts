/**
 * Double-submit CSRF protection, as Auth.js does it: a random token lives in an HttpOnly cookie as
 * `token|sha256(token + secret)`; a state-changing POST must repeat the token in its body. The hash
 * proves the cookie was set by us, so an attacker who can plant cookies (a sibling subdomain) still
 * cannot choose the token; and a cross-site form cannot read the cookie to repeat it.
 *
 * @module
 */
import { randomHex, sha256Hex, timingSafeEqual } from '../crypto.js'
import type { CsrfState } from '../engine/types.js'

export type { CsrfState }


/**
 * Verifies the CSRF cookie against each secret (so rotating secrets keeps existing tokens valid) and
 * compares the body's token to it in constant time. Mints a new token when the cookie is missing
 * or forged. The hash of a new token uses the first secret.
 */
export async function readCsrf(
  cookieValue: string | undefined,
  secrets: readonly string[],
  bodyToken: unknown,
  isPost: boolean,
): Promise<CsrfState> {
  if (cookieValue) {
    const separator = cookieValue.indexOf('|')
    const token = cookieValue.slice(0, separator)
    const hash = cookieValue.slice(separator + 1)
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, without a separator or before it the token is not 64 hex (the pattern refuses it)
    if (separator > 0 && /^[0-9a-f]{64}$/.test(token)) {
      // Auth.js hashes with an array secret joined by commas; accept its cookies too.
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, one secret joined is that secret again (a second, identical hash)
      const candidates = secrets.length > 1 ? [...secrets, secrets.join(',')] : secrets
      for (const secret of candidates) {
        if (timingSafeEqual(hash, await sha256Hex(`${token}${secret}`))) {
          const verified = isPost && typeof bodyToken === 'string' && timingSafeEqual(bodyToken, token)
          return { token, verified }
        }
      }
    }
  }
  const token = randomHex(32)
  const hash = await sha256Hex(`${token}${secrets[0]}`)
  return { token, verified: false, cookie: `${token}|${hash}` }
}
