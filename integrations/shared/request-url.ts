/**
 * The one rule every integration follows to build the URL a request is answered for. The URL's
 * origin lands in sealed OAuth state, in redirects and in the sign-in page's form action, so an
 * attacker who can choose it can send a victim's sign-in to their own host:
 *
 * 1. the origin of `AUTH_URL` when it is set (read once, at boot);
 * 2. otherwise the `Host` header with the protocol the framework detected; `X-Forwarded-Host` and
 *    `X-Forwarded-Proto` count only when the framework's own proxy trust is on (the framework
 *    decides, the integration asks it);
 * 3. plus the path and query of the request target, never its authority: an absolute-form target
 *    (`GET http://evil.example/auth/signin/op HTTP/1.1`) contributes only `/auth/signin/op`.
 *
 * @module
 */
import { RequestError } from '../../core/errors.js'
import type { EnvObject } from '../../core/env.js'

// A registered name, an IPv4 address or a bracketed IPv6 address, with an optional port: nothing
// that could smuggle a userinfo (`a@evil`), a path or a second host into the origin.
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * The origin `AUTH_URL` pins, if it is set to a valid http(s) URL.
 *
 * @see reference §8 (`createActionURL` reads `AUTH_URL`, then `NEXTAUTH_URL`)
 */
export function configuredOrigin(env: EnvObject): string | undefined {
  const value = env.AUTH_URL ?? env.NEXTAUTH_URL
  if (!value) return undefined
  try {
    const url = new URL(value)
    return /^https?:$/.test(url.protocol) ? url.origin : undefined
  } catch {
    return undefined
  }
}

/**
 * The origin of a request from the protocol and host the framework detected.
 *
 * @throws {RequestError} 400 when the host is missing or is not a host name (with optional port).
 */
export function originFromHost(protocol: string, host: string | undefined): string {
  // NUL is in neither an accepted protocol nor an accepted host: the key names one pair.
  const key = `${protocol}\u0000${host ?? ''}`
  const known = origins.get(key)
  if (known !== undefined) return known
  const scheme = protocol.replace(/:$/, '').toLowerCase()
  if (scheme !== 'http' && scheme !== 'https') throw new RequestError(`Unsupported protocol ${scheme}`)
  if (!host || !HOST.test(host)) throw new RequestError('Missing or malformed Host header')
  const origin = `${scheme}://${host}`
  // The pattern cannot bound a port (65536 and up) or an IPv4 octet; the URL parser can.
  if (!URL.canParse(origin)) throw new RequestError('Missing or malformed Host header')
  // Only accepted hosts are remembered, a bounded few: a flood of invented hosts cannot grow it.
  if (origins.size < MAX_REMEMBERED_ORIGINS) origins.set(key, origin)
  return origin
}
/** Origins already checked, by protocol and host: a server answers for a handful. */
const origins = new Map<string, string>()
const MAX_REMEMBERED_ORIGINS = 64

/**
 * The path and query of a request target. An origin-form target (`/auth/x?y`) is kept as it is;
 * an absolute-form target keeps only its path and query; anything else is `/`.
 */
export function targetPath(target: string): string {
  if (target.startsWith('/')) return target
  try {
    const url = new URL(target)
    return `${url.pathname}${url.search}`
  } catch {
    return '/'
  }
}

/**
 * The URL a request is answered for: `configured` (from {@link configuredOrigin}) or the detected
 * origin, plus the target's path. The detected origin is computed only when nothing is configured.
 *
 * @throws {RequestError} 400 when the origin must be detected and the host is malformed.
 */
export function requestUrl(target: string, configured: string | undefined, detect: () => string): URL {
  // Concatenated, never resolved: `new URL('//evil.example/x', origin)` would change the host.
  const url = URL.parse(`${configured ?? detect()}${targetPath(target)}`)
  if (!url) throw new RequestError('Malformed request target')
  return url
}

/**
 * For frameworks with no proxy setting of their own (Next.js, Hono): whether the deployment says a
 * proxy in front of it sets `X-Forwarded-Host` and `X-Forwarded-Proto` (`AUTH_TRUST_PROXY=true`),
 * or runs on Vercel, whose edge writes them itself. `AUTH_TRUST_HOST` does not say that: a
 * self-hosted app without `AUTH_URL` needs it only to answer for its own `Host`, and a forged
 * `X-Forwarded-Host` would otherwise choose the host of the links it e-mails and the redirects it
 * sends.
 */
export function trustsForwardedHeaders(env: EnvObject): boolean {
  return env.AUTH_TRUST_PROXY === 'true' || env.AUTH_TRUST_PROXY === '1' || Boolean(env.VERCEL)
}

const firstValue = (headers: Headers, name: string) => headers.get(name)?.split(',')[0]?.trim() || undefined

/**
 * The origin of a request from its headers, for frameworks that hand over headers and the protocol
 * they detected but have no proxy trust (rule 2 above): `Host`, or `X-Forwarded-Host` and
 * `X-Forwarded-Proto` when {@link trustsForwardedHeaders}.
 *
 * @throws {RequestError} 400 when the host is missing or malformed.
 */
export function originFromHeaders(headers: Headers, protocol: string, trustForwarded: boolean): string {
  const host = (trustForwarded && firstValue(headers, 'x-forwarded-host')) || headers.get('host') || undefined
  const scheme = (trustForwarded && firstValue(headers, 'x-forwarded-proto')) || protocol
  return originFromHost(scheme, host)
}
