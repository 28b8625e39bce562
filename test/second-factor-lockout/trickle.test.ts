/**
 * Issue #48 item 3, at the level of `checkCode`: someone who knows the password and sends one
 * wrong code a minute must not keep the owner's right code refused for ever. Codes are counted per
 * sign-in, per client (address bucket) and per user; the per-user limit binds the clients that
 * spent it, a device that completed a sign-in before is counted on its own, and a backup code is
 * checked whatever TOTP codes have cost. Before the fix, every one of the owner's attempts below
 * was answered `locked`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  CLEAN_CLIENT_CODES,
  MAX_CLEAN_CLIENT_CHECKS,
  MAX_CODE_ATTEMPTS,
  MAX_USER_ATTEMPTS,
  USER_LOCK_SLOT,
} from '../../core/second-factor/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { ServiceUnavailable } from '../../core/errors.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { wrongCode } from './codes.js'
import { enrolledUser as enrolled } from './enrolled.js'

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

/** The user of these tests, their codes checked at the test's clock. */
const enrolledUser = (store?: AuthStore) => enrolled(store, () => clock)

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
    // The user's ten, then the attacker's own address's three past them: all checked.
    for (let i = 0; i < MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES; i++) {
      expect(await send(wrongCode(secret, clock), { address: ATTACKER })).toEqual({ ok: false, reason: 'wrongCode' })
    }
    // Then this minute's one late check; wrong, it voids its sign-in.
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
    for (let i = 0; i < MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 1; i++) await send(wrongCode(secret, clock), { address: ATTACKER })
    // The same NAT, the same bucket: only the device mark tells the owner apart.
    expect(await send(totpCode(secret, clock), { address: ATTACKER })).toMatchObject({ ok: false, reason: 'locked' })
    expect(await send(totpCode(secret, clock), { address: ATTACKER, device: 'owner-laptop' })).toEqual({ ok: true, method: 'otp' })
  })

  it('checks a backup code while TOTP codes are locked for the client, five per sign-in', async () => {
    const { secret, backupCodes, send } = await enrolledUser()
    for (let i = 0; i < MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 1; i++) await send(wrongCode(secret, clock), { address: ATTACKER })
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

  it("checks the user's ten, the client's three and the minute's one from one client, however many sign-ins", async () => {
    const { secret, send, checked } = await enrolledUser()
    await Promise.all(Array.from({ length: 50 }, () => send(wrongCode(secret, clock), { address: ATTACKER })))
    expect(checked()).toBe(MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 1)
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
