/**
 * The public id of a database session: what the session list shows and a revocation names,
 * never the token itself.
 *
 * @module
 */
import { sha256Hex } from '../crypto.js'

/** The public id of a session token. */
export async function sessionId(sessionToken: string): Promise<string> {
  return (await sha256Hex(`authchart-session\u0000${sessionToken}`)).slice(0, 32)
}
