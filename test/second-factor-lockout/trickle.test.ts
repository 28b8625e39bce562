/**
 * Issue #48 item 3, at the level of `checkCode`: someone who knows the password and sends one
 * wrong code a minute must not keep the owner's right code refused for ever. Codes are counted per
 * sign-in, per client (address bucket) and per user; the per-user limit binds the clients that
 * spent it, a device that completed a sign-in before is counted on its own, and a backup code is
 * checked whatever TOTP codes have cost. Before the fix, every one of the owner's attempts below
 * was answered `locked`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import {
  checkCode,
  createBackupCodes,
  hashBackupCode,
  MAX_CLEAN_CLIENT_CHECKS,
  MAX_CODE_ATTEMPTS,
  MAX_USER_ATTEMPTS,
  sealFactorSecret,
  USER_LOCK_SLOT,
  type CodeCheckInput,
} from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import { ServiceUnavailable } from '../../core/errors.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { SECRET } from '../fixtures/http.js'
import { wrongCode } from './codes.js'

const T0 = Math.ceil(Date.now() / 1000 / 3600) * 3600
let clock = T0
const advance = (seconds: number) => {
  clock += seconds
  vi.setSystemTime(clock * 1000)
}
beforeEach(() => {
  clock = T0
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(T0 * 1000)
})
afterEach(() => vi.useRealTimers())

const ATTACKER = '203.0.113.7'
const OWNER = '198.51.100.2'

/** An enrolled user with backup codes, and an adapter that counts the codes actually checked. */
export async function enrolledUser(store: AuthStore = memoryAuthStore()) {
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
  const send = (code: string, client: CodeCheckInput['client'] = {}, challenge = `c${++challenges}`, on: AuthStore = store) =>
    checkCode({ adapter, store: on, secrets: [SECRET], userId: 'u', challenge, code, at: clock, client })
  return { secret, backupCodes, store, send, checked: () => checked }
}

describe('a trickle of wrong codes from someone who knows the password', () => {
  it("does not keep the owner's right code from another client refused", async () => {
    const { secret, send } = await enrolledUser()
    for (let i = 0; i < MAX_USER_ATTEMPTS; i++) await send(wrongCode(secret, clock), { address: ATTACKER })
    // One wrong code at the start of every minute for half an hour, each from a new sign-in.
    for (let minute = 0; minute < 30; minute++) {
      advance(USER_LOCK_SLOT)
      await send(wrongCode(secret, clock), { address: ATTACKER })
      if (minute % 10 === 9) {
        // The owner, from their own address, a few seconds after the attacker's code.
        advance(5)
        expect(await send(totpCode(secret, clock), { address: OWNER })).toEqual({ ok: true, method: 'otp' })
        advance(-5)
      }
    }
  })

  it('keeps the client that spent the codes to one code a minute', async () => {
    const { secret, send, checked } = await enrolledUser()
    for (let i = 0; i < MAX_USER_ATTEMPTS; i++) await send(wrongCode(secret, clock), { address: ATTACKER })
    expect(await send(wrongCode(secret, clock), { address: ATTACKER })).toEqual({ ok: false, reason: 'exhausted' })
    const before = checked()
    for (let i = 0; i < 5; i++) {
      const refused = await send(totpCode(secret, clock), { address: ATTACKER })
      expect(refused).toMatchObject({ ok: false, reason: 'locked' })
    }
    expect(checked()).toBe(before)
  })

  it("counts a device that signed in before on its own, even on the attacker's address", async () => {
    const { secret, send } = await enrolledUser()
    for (let i = 0; i < MAX_USER_ATTEMPTS + 3; i++) await send(wrongCode(secret, clock), { address: ATTACKER })
    // The same NAT, the same bucket: only the device mark tells the owner apart.
    expect(await send(totpCode(secret, clock), { address: ATTACKER })).toMatchObject({ ok: false, reason: 'locked' })
    expect(await send(totpCode(secret, clock), { address: ATTACKER, device: 'owner-laptop' })).toEqual({ ok: true, method: 'otp' })
  })

  it('checks a backup code while TOTP codes are locked for the client, five per sign-in', async () => {
    const { secret, backupCodes, send } = await enrolledUser()
    for (let i = 0; i < MAX_USER_ATTEMPTS + 1; i++) await send(wrongCode(secret, clock), { address: ATTACKER })
    expect(await send(totpCode(secret, clock), { address: ATTACKER })).toMatchObject({ ok: false, reason: 'locked' })
    expect(await send(backupCodes[0]!, { address: ATTACKER })).toEqual({ ok: true, method: 'backup' })
    // Backup-shaped guesses are still limited per sign-in.
    const results = []
    for (let i = 0; i < MAX_CODE_ATTEMPTS + 1; i++) results.push(await send('aaaaa-aaaaa', { address: ATTACKER }, 'guessing'))
    expect(results.map((r) => !r.ok && r.reason)).toEqual(['wrongCode', 'wrongCode', 'wrongCode', 'wrongCode', 'exhausted', 'exhausted'])
  })

  it("says a reused TOTP code was already used, not that it is wrong", async () => {
    const { secret, send } = await enrolledUser()
    const code = totpCode(secret, clock)
    expect(await send(code, { address: OWNER })).toEqual({ ok: true, method: 'otp' })
    expect(await send(code, { address: OWNER })).toEqual({ ok: false, reason: 'codeUsed' })
  })
})

describe('the documented limits under 50 codes at once', () => {
  it('checks five codes of one sign-in', async () => {
    const { secret, send, checked } = await enrolledUser()
    const results = await Promise.all(Array.from({ length: 50 }, () => send(wrongCode(secret, clock), { address: ATTACKER }, 'one')))
    expect(checked()).toBe(MAX_CODE_ATTEMPTS)
    expect(results.filter((r) => !r.ok && r.reason === 'wrongCode')).toHaveLength(MAX_CODE_ATTEMPTS - 1)
  })

  it("checks the user's ten and the minute's one from one client, however many sign-ins", async () => {
    const { secret, send, checked } = await enrolledUser()
    await Promise.all(Array.from({ length: 50 }, () => send(wrongCode(secret, clock), { address: ATTACKER })))
    expect(checked()).toBe(MAX_USER_ATTEMPTS + 1)
  })

  it('checks ten, then ten from clean clients, then the minute’s one, from fifty addresses', async () => {
    const { secret, send, checked } = await enrolledUser()
    await Promise.all(Array.from({ length: 50 }, (_, i) => send(wrongCode(secret, clock), { address: `192.0.2.${i + 1}` })))
    expect(checked()).toBe(MAX_USER_ATTEMPTS + MAX_CLEAN_CLIENT_CHECKS + 1)
  })
})

describe('a store that cannot count', () => {
  it('fails the check closed: nothing is checked', async () => {
    const { secret, send, checked } = await enrolledUser()
    const broken: AuthStore = {
      ...memoryAuthStore(),
      increment: () => Promise.reject(new ServiceUnavailable('store', 'store down', 5)),
    }
    await expect(send(totpCode(secret, clock), { address: OWNER }, 'c', broken)).rejects.toBeInstanceOf(ServiceUnavailable)
    expect(checked()).toBe(0)
  })
})
