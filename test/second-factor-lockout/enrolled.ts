/**
 * The user of the lockout tests: enrolled with a TOTP factor and backup codes in a memory adapter
 * that counts the codes actually checked (each check lists the user's factors once).
 *
 * @module
 */
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { checkCode, createBackupCodes, hashBackupCode, sealFactorSecret, type CodeCheckInput } from '../../core/second-factor/index.js'
import { createTotpSecret } from '../../core/second-factor/totp.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { SECRET } from '../fixtures/http.js'

/** An enrolled user; `send` checks a code at `now()`, `sendAt` at a given time. */
export async function enrolledUser(store: AuthStore = memoryAuthStore(), now: () => number = () => Math.floor(Date.now() / 1000)) {
  const memory = MemoryAdapter(createMemoryStore())
  const secret = createTotpSecret()
  const backupCodes = createBackupCodes()
  await memory.createUser({ id: 'u', email: 'u@example.com', emailVerified: null })
  await memory.createSecondFactor({ id: 'totp:u', userId: 'u', type: 'totp', secret: await sealFactorSecret(secret, [SECRET]), createdAt: new Date() })
  const hashes = await Promise.all(backupCodes.map((code) => hashBackupCode(code, SECRET)))
  await memory.createSecondFactor({ id: 'backup:u', userId: 'u', type: 'backup-codes', secret: hashes.join(' '), createdAt: new Date() })
  let checked = 0
  const adapter: Adapter = {
    ...memory,
    listSecondFactors: (userId) => {
      checked++
      return memory.listSecondFactors(userId)
    },
  }
  let challenges = 0
  const sendAt = (code: string, at: number, client: CodeCheckInput['client'] = {}, challenge = `c${++challenges}`, on: AuthStore = store) =>
    checkCode({ adapter, store: on, secrets: [SECRET], userId: 'u', challenge, code, at, client })
  const send = (code: string, client: CodeCheckInput['client'] = {}, challenge?: string, on: AuthStore = store) =>
    sendAt(code, now(), client, challenge, on)
  /** The rest of a check's input at `at`, for a test that calls `checkCode` itself. */
  const inputFor = (at: number) => ({ adapter, store, secrets: [SECRET], userId: 'u', at })
  return { secret, backupCodes, store, send, sendAt, inputFor, checked: () => checked }
}

