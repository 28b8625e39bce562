/**
 * `deviceSession`: the session a device's bearer token carries, read by the one authority for who
 * is signed in. The token is the session itself (a database session's token, or the JWT session
 * token), so it is read exactly as the session cookie would be: signing out, sign-out everywhere,
 * a revoked session, the idle and absolute lifetimes all end it.
 *
 * @module
 */
import { MAX_SESSION_CHUNKS, SESSION_CHUNK_SIZE } from '../cookies.js'
import { cookiesFor } from '../config/read.js'
import { assertConfig } from '../config/resolve-config.js'
import { clientAddressOf } from '../http/request.js'
import { readSession } from '../server.js'
import type { AuthConfig, Session } from '../types.js'

/** A bearer token of ours: a session token (UUID) or a JWT session token (JWE compact). */
const BEARER = /^Bearer +([A-Za-z0-9._~-]{16,65536})$/i

/** The `Cookie` header that carries `token` as the session cookie `name`, in chunks when it is long. */
function sessionCookieHeader(name: string, token: string): string | undefined {
  if (token.length <= SESSION_CHUNK_SIZE) return `${name}=${token}`
  const chunks: string[] = []
  for (let offset = 0; offset < token.length; offset += SESSION_CHUNK_SIZE) chunks.push(token.slice(offset, offset + SESSION_CHUNK_SIZE))
  if (chunks.length > MAX_SESSION_CHUNKS) return undefined
  return chunks.map((chunk, index) => `${name}.${index}=${chunk}`).join('; ')
}

/**
 * The session of the device that sent `request` with `Authorization: Bearer <access_token>` (the
 * token the device code grant gave it), read as the session route reads a session cookie: the
 * same checks and `session` callback. `null` without a bearer token, or for one whose session has
 * ended or never was.
 *
 * @throws the configuration's error (`ConfigError`, `MissingSecret`…), and `ServiceUnavailable`
 *   (`retryAfter` in seconds) while the database or store the read needs is down: never `null` for it.
 */
export async function deviceSession(request: Request, config: Omit<AuthConfig, 'raw'>): Promise<Session | null> {
  const match = BEARER.exec(request.headers.get('authorization')?.trim() ?? '')
  if (!match) return null
  const resolved = assertConfig(config as AuthConfig)
  const url = new URL(request.url)
  const cookie = sessionCookieHeader(cookiesFor(resolved, url).sessionToken.name, match[1]!)
  if (cookie === undefined) return null
  // Only the bearer token speaks for the device: a cookie sent beside it is not read.
  const headers = new Headers(request.headers)
  headers.delete('authorization')
  headers.delete('cookie')
  const { session } = await readSession({ origin: url.origin, cookie, headers, clientAddress: clientAddressOf(request) }, config)
  return session
}
