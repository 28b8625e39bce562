/**
 * Rate limits on attempts, counted in the configured store (rate-limiter-flexible underneath), so
 * a limit holds across every instance that shares it. Keys hold hashes, never an identifier or an
 * address in clear.
 *
 * @module
 */
import { sha256Hex } from '../crypto.js'
import type { ResolvedLimit } from '../config/types.js'
import type { AuthStore } from './index.js'

/** What a checked attempt was told: go on, or retry after some seconds. */
export type Admission = { allowed: true } | { allowed: false; retryAfter: number }

/** Expands an IPv6 address to its eight groups, or `null` when it is not one. */
function ipv6Groups(address: string): string[] | null {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!.toLowerCase()
  if (!bare.includes(':') || !/^[0-9a-f:.]+$/.test(bare)) return null
  const [head, tail, ...rest] = bare.split('::')
  if (rest.length) return null
  const part = (text: string | undefined) => (text ? text.split(':') : [])
  const left = part(head)
  const right = part(tail)
  // An embedded IPv4 tail (::ffff:192.0.2.1) is two groups.
  const last = (tail === undefined ? left : right).at(-1)
  if (last?.includes('.')) {
    const octets = last.split('.').map(Number)
    if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) return null
    const groups = [((octets[0]! << 8) | octets[1]!).toString(16), ((octets[2]! << 8) | octets[3]!).toString(16)]
    ;(tail === undefined ? left : right).splice(-1, 1, ...groups)
  }
  const missing = 8 - left.length - right.length
  if (tail === undefined ? missing !== 0 : missing < 1) return null
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right]
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null
  return groups.map((g) => g.padStart(4, '0'))
}

/**
 * The bucket a client address is counted in: an IPv4 address itself, an IPv6 address by its /64
 * (one subscriber usually holds a whole /64, so per-address counting would be trivial to evade);
 * IPv4-mapped IPv6 addresses count as the IPv4 address they carry.
 */
export function addressBucket(address: string): string {
  const groups = ipv6Groups(address)
  if (!groups) return address.trim().toLowerCase()
  if (groups.slice(0, 5).every((g) => g === '0000') && groups[5] === 'ffff') {
    const [a, b] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)]
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`
  }
  return `${groups.slice(0, 4).join(':')}::/64`
}

/** One limit to count an attempt against: its kind (for the key), what is counted, the limit. */
export interface LimitedSubject {
  kind: string
  value: string
  limit: ResolvedLimit
}

/**
 * Counts one attempt against every subject's limit (all of them, even when one is already over,
 * so a script cannot probe one limit while staying under the other), and admits it only when all
 * are within their limits.
 */
export async function admitAttempt(
  store: AuthStore,
  scope: string,
  secret: string,
  subjects: readonly LimitedSubject[],
): Promise<Admission> {
  const results = await Promise.all(
    subjects.map(async ({ kind, value, limit }) =>
      store.consume(`limit:${scope}:${kind}:${await sha256Hex(`${value}\u0000${secret}`)}`, limit.points, limit.window),
    ),
  )
  const refused = results.filter((result) => !result.allowed)
  if (refused.length === 0) return { allowed: true }
  return { allowed: false, retryAfter: Math.max(...refused.map((result) => result.retryAfter)) }
}
