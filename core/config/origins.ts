/**
 * Origin allowlists from the configuration (`redirectProxyOrigins`): exact origins, or origins
 * whose leftmost host label holds one `*` wildcard.
 *
 * @module
 */
import type { OriginPattern } from './types.js'

export type { OriginPattern }


// A wildcard stands for one or more characters of a single DNS label, never a dot: `*.example.com`
// matches `a.example.com` but not `a.b.example.com` nor `example.com`, and `app-*.host.test`
// cannot be stretched across labels to reach a host the owner does not control.
const WILDCARD_LABEL = '[a-z0-9-]+'
const PLACEHOLDER = 'x-wildcard-x'

/**
 * Parses one allowlist entry.
 *
 * @returns the compiled pattern, or a reason it is not a valid entry.
 */
export function compileOriginPattern(entry: string): OriginPattern | string {
  const stars = entry.split('*').length - 1
  if (stars > 1) return 'must contain at most one "*"'
  let url: URL
  try {
    url = new URL(entry.replace('*', PLACEHOLDER))
  } catch {
    return 'must be an origin such as "https://app.example.com"'
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) origin'
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) {
    return 'must be an origin only, without path, query or credentials'
  }
  const source = url.origin.replace(PLACEHOLDER, '*')
  if (stars === 0) return { source, test: (origin) => origin === source }
  const [label, ...rest] = url.hostname.split('.')
  if (!label!.includes(PLACEHOLDER) || rest.length < 2) {
    return 'may hold "*" only in the leftmost label of a host with at least three labels'
  }
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const [before, after] = source.split('*') as [string, string]
  const pattern = new RegExp(`^${escape(before)}${WILDCARD_LABEL}${escape(after)}$`)
  return { source, test: (origin) => pattern.test(origin) }
}

/** Whether `origin` (as `URL.origin` gives it) is on the allowlist. */
export function isAllowedOrigin(patterns: readonly OriginPattern[], origin: string): boolean {
  return patterns.some((pattern) => pattern.test(origin))
}
