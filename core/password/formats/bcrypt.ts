/**
 * bcrypt (`$2a$`, `$2b$`, `$2y$`), as OpenBSD, PHP's `password_hash` and the node libraries
 * write it, verified by `bcryptjs`. bcrypt reads only the first 72 bytes of a password.
 *
 * @module
 */
import { bytesEqual, utf8 } from '../encoding.js'
import type { StoredHashFormat } from './types.js'

/** The highest cost accepted from a stored hash (2^18 rounds, seconds in plain JS). */
export const BCRYPT_MAX_COST = 18

const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/

/** bcrypt in modular crypt form. */
export const bcryptFormat: StoredHashFormat = {
  id: 'bcrypt',
  recognises: (stored) => stored.startsWith('$2a$') || stored.startsWith('$2b$') || stored.startsWith('$2y$'),
  async verify(stored, password) {
    const match = BCRYPT.exec(stored)
    const cost = Number(match?.[1])
    if (!match || cost < 4 || cost > BCRYPT_MAX_COST) return false
    // Loaded on first use: only apps that imported bcrypt hashes pay for it.
    const { default: bcrypt } = await import('bcryptjs')
    const computed = await bcrypt.hash(password, stored.slice(0, 29))
    return bytesEqual(utf8(computed), utf8(stored))
  },
}
