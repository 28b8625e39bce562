/**
 * `trustHost` as a list: the hosts (or origins) this deployment answers for. A request for any
 * other host is refused before any route runs, so a forged `Host` never reaches an e-mailed link,
 * a redirect, a form action or a cookie.
 *
 * An entry is a host name (`app.example.com`: any port, the same trust boundary for cookies), a
 * host with a port (`localhost:3000`: that port only), or an origin (`https://app.example.com`:
 * that scheme, host and port only).
 *
 * @module
 */

import { UntrustedHost } from '../errors.js'
import type { TrustedHosts } from './types.js'

export type { TrustedHosts }

// A host name or IPv4 address, optionally with a port; IPv6 literals in brackets.
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/

/**
 * Parses one `trustHost` entry.
 *
 * @returns `'origin'`, `'host'` (with a port) or `'hostname'`, the normalised entry, or a reason
 *   it is not a valid entry.
 */
export function parseTrustedHost(entry: string): { kind: keyof TrustedHosts; value: string } | string {
  if (/^https?:\/\//i.test(entry)) {
    let url: URL
    try {
      url = new URL(entry)
    } catch {
      return 'must be a host ("app.example.com") or an origin ("https://app.example.com")'
    }
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || entry.endsWith('/')) {
      return 'must be an origin only, without path, query or credentials'
    }
    return { kind: 'origins', value: url.origin }
  }
  const host = entry.toLowerCase()
  if (!HOST.test(host)) return 'must be a host ("app.example.com", "localhost:3000") or an origin ("https://app.example.com")'
  const hasPort = /:\d+$/.test(host)
  return { kind: hasPort ? 'hosts' : 'hostnames', value: host }
}

/** Compiles valid entries (see {@link parseTrustedHost}). */
export function compileTrustedHosts(entries: readonly string[]): TrustedHosts {
  const lists = { hostnames: new Set<string>(), hosts: new Set<string>(), origins: new Set<string>() }
  for (const entry of entries) {
    const parsed = parseTrustedHost(entry)
    if (typeof parsed !== 'string') lists[parsed.kind].add(parsed.value)
  }
  return lists
}

/** Whether the request URL's host is one the list trusts. */
export function isTrustedHost(trusted: TrustedHosts, url: URL): boolean {
  return trusted.origins.has(url.origin) || trusted.hosts.has(url.host) || trusted.hostnames.has(url.hostname)
}

/**
 * The message an unlisted host is refused with: the host as received (the logger escapes control
 * characters), and the list's option to add it to.
 */
export function unlistedHostMessage(url: URL): string {
  return `Host "${url.host}" is not in trustHost: the request was refused (add it to trustHost if this deployment answers for it). URL was: ${url.href}`
}

/**
 * Refuses a server-side call (`auth()`, a server action) for an origin the configuration does not
 * trust: `trustHost` unset, or a list that does not name the origin's host.
 *
 * @throws {UntrustedHost} naming the origin.
 */
export function assertTrustedOrigin(config: { readonly trustHost: boolean; readonly trustedHosts?: TrustedHosts }, origin: string): void {
  if (!config.trustHost) throw new UntrustedHost(`Host must be trusted. URL was: ${origin}`)
  if (!config.trustedHosts) return
  const url = new URL(origin)
  if (!isTrustedHost(config.trustedHosts, url)) throw new UntrustedHost(unlistedHostMessage(url))
}
