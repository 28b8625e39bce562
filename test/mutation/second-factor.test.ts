/**
 * The built-in second factor's checks at the unit level (core/second-factor/index.ts), on the
 * memory adapter and store: the limits per challenge and per user and the late check past them,
 * single use of a TOTP step and of a backup code (by the adapter's conditional update, or under the
 * store lock for an adapter that can only replace a secret), the sealed secret, and the codes made.
 */
import { CompactEncrypt } from 'jose'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { hkdfSha256 } from '../../core/crypto.js'
import {
  BACKUP_CODE_COUNT,
  checkCode,
  createBackupCodes,
  enrolledFactors,
  hashBackupCode,
  MAX_CODE_ATTEMPTS,
  MAX_USER_ATTEMPTS,
  CLEAN_CLIENT_CODES,
  newChallenge,
  openFactorSecret,
  removeSecondFactors,
  sealFactorSecret,
  spendBackupCode,
  USER_LOCK_SLOT,
  userAttemptsKey,
} from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode, totpEnrolment, totpStep } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { SECRET } from '../fixtures/http.js'

const SECRETS = [SECRET]
const AT = 1_800_000_000 // a whole minute: AT % 60 === 0
const USER = 'user-1'

afterEach(() => {
  vi.useRealTimers()
})

async function enrolled(options: { conditional?: boolean } = {}) {
  const memory = createMemoryStore()
  const full = MemoryAdapter(memory)
  const { spendBackupCode: _conditional, ...replaceOnly } = full
  const adapter: Adapter = options.conditional === false ? replaceOnly : full
  const secret = createTotpSecret()
  const codes = createBackupCodes()
  await adapter.createSecondFactor!({ id: 'totp-1', userId: USER, type: 'totp', secret: await sealFactorSecret(secret, SECRETS) } as never)
  const hashes = await Promise.all(codes.map((code) => hashBackupCode(code, SECRET)))
  await adapter.createSecondFactor!({ id: 'backup-1', userId: USER, type: 'backup-codes', secret: hashes.join(' ') } as never)
  const store = memoryAuthStore()
  const check = (code: string, challenge = 'challenge-1', at = AT) => checkCode({ adapter, store, secrets: SECRETS, userId: USER, challenge, code, at })
  const backupLeft = async () => (await enrolledFactors(adapter, USER)).find((f) => f.type === 'backup-codes')!.secret.split(' ').filter(Boolean).length
  return { adapter, store, secret, codes, check, backupLeft }
}

describe('checking a code', () => {
  it('accepts the current TOTP code once, and one of the step before or after', async () => {
    const { secret, check } = await enrolled()
    expect(await check(totpCode(secret, AT))).toEqual({ ok: true, method: 'otp' })
    expect(await check(totpCode(secret, AT))).toEqual({ ok: false, reason: 'codeUsed' })
    expect(await check(totpCode(secret, AT + 30))).toEqual({ ok: true, method: 'otp' })
    expect(await check(totpCode(secret, AT - 30))).toEqual({ ok: true, method: 'otp' })
    expect(await check(totpCode(secret, AT + 90))).toEqual({ ok: false, reason: 'wrongCode' })
    expect(await check(` ${totpCode(secret, AT + 60)} `, 'other', AT + 60)).toEqual({ ok: true, method: 'otp' })
  })

  it('accepts a backup code once, whatever its case and dashes', async () => {
    const { codes, check, backupLeft } = await enrolled()
    expect(await check(codes[0]!.toUpperCase().replace('-', ' '))).toEqual({ ok: true, method: 'backup' })
    expect(await backupLeft()).toBe(BACKUP_CODE_COUNT - 1)
    expect(await check(codes[0]!)).toEqual({ ok: false, reason: 'wrongCode' })
    expect(await backupLeft()).toBe(BACKUP_CODE_COUNT - 1)
  })

  it(`voids a challenge at its ${MAX_CODE_ATTEMPTS}th wrong code, and a right code resets the counts`, async () => {
    const { secret, check, store } = await enrolled()
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) expect(await check('000000')).toEqual({ ok: false, reason: 'wrongCode' })
    expect(await check('000000')).toEqual({ ok: false, reason: 'exhausted' })
    expect(await check(totpCode(secret, AT))).toEqual({ ok: false, reason: 'exhausted' })
    // Another challenge: the right code passes and resets the user's count.
    expect(await check('000000', 'challenge-2')).toEqual({ ok: false, reason: 'wrongCode' })
    expect(await check(totpCode(secret, AT), 'challenge-2')).toEqual({ ok: true, method: 'otp' })
    expect(await store.increment(userAttemptsKey(USER), 60)).toBe(1)
    expect(await check('000000', 'challenge-2')).toEqual({ ok: false, reason: 'wrongCode' })
  })

  it(`past ${MAX_USER_ATTEMPTS} codes per user and ${CLEAN_CLIENT_CODES} more of the client, checks one code a minute from a fresh challenge`, async () => {
    const { secret, check } = await enrolled()
    for (let i = 0; i < MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES; i++) {
      const result = await check('000000', `guess-${Math.floor(i / 2)}`)
      expect(result.ok).toBe(false)
    }
    // The minute's late check: a wrong one voids its challenge.
    expect(await check('000000', 'late-1', AT + 5)).toEqual({ ok: false, reason: 'exhausted' })
    expect(await check(totpCode(secret, AT), 'late-2', AT + 10)).toEqual({ ok: false, reason: 'locked', retryAfter: USER_LOCK_SLOT - 10 })
    expect(await check(totpCode(secret, AT), 'late-1', AT + USER_LOCK_SLOT)).toEqual({ ok: false, reason: 'exhausted' })
    // The next minute, a challenge that had no late check gets one: the owner's right code passes.
    expect(await check(totpCode(secret, AT + USER_LOCK_SLOT), 'late-3', AT + USER_LOCK_SLOT + 1)).toEqual({ ok: true, method: 'otp' })
    expect(await check('000000', 'fresh', AT + USER_LOCK_SLOT + 2)).toEqual({ ok: false, reason: 'wrongCode' })
  })

  it('spends each of two different backup codes used at once, and one code used twice at once once', async () => {
    for (const conditional of [true, false]) {
      const { codes, check, backupLeft } = await enrolled({ conditional })
      const both = await Promise.all([check(codes[1]!, 'a'), check(codes[2]!, 'b')])
      expect(both.map((r) => r.ok), `conditional: ${conditional}`).toEqual([true, true])
      expect(await backupLeft()).toBe(BACKUP_CODE_COUNT - 2)
      const twice = await Promise.all([check(codes[3]!, 'c'), check(codes[3]!, 'd')])
      expect(twice.filter((r) => r.ok)).toHaveLength(1)
      expect(await backupLeft()).toBe(BACKUP_CODE_COUNT - 3)
    }
  })

  it('without a factor store, knows no factor and accepts no code', async () => {
    expect(await enrolledFactors(undefined, USER)).toEqual([])
    const { listSecondFactors: _none, ...adapter } = MemoryAdapter(createMemoryStore())
    expect(await enrolledFactors(adapter as Adapter, USER)).toEqual([])
  })
})

describe('spending a backup code under the store lock', () => {
  it('takes the lock, and frees it after a spend and after a refusal', async () => {
    const { adapter, store, codes } = await enrolled({ conditional: false })
    const factor = (await enrolledFactors(adapter, USER)).find((f) => f.type === 'backup-codes')!
    const hash = await hashBackupCode(codes[4]!, SECRET)
    const claim = vi.spyOn(store, 'claim')
    expect(await spendBackupCode(adapter, store, factor, hash)).toBe(true)
    expect(claim).toHaveBeenCalledWith('2fa:backup-lock:backup-1', 10)
    expect(await spendBackupCode(adapter, store, factor, hash)).toBe(false)
    expect(await spendBackupCode(adapter, store, { ...factor, id: 'missing' }, hash)).toBe(false)
    expect(await store.claim('2fa:backup-lock:backup-1', 10)).toBe(true)
  })

  it('waits for a lock held a moment, and gives up on one never freed', async () => {
    const { adapter, store, codes } = await enrolled({ conditional: false })
    const factor = (await enrolledFactors(adapter, USER)).find((f) => f.type === 'backup-codes')!
    await store.claim('2fa:backup-lock:backup-1', 10)
    setTimeout(() => void store.reset('2fa:backup-lock:backup-1'), 100)
    expect(await spendBackupCode(adapter, store, factor, await hashBackupCode(codes[5]!, SECRET))).toBe(true)
    const stuck = { ...store, claim: async () => false }
    await expect(spendBackupCode(adapter, stuck, factor, await hashBackupCode(codes[6]!, SECRET))).rejects.toThrow(/locked by another sign-in/)
  })
})

describe('the TOTP secret and codes', () => {
  it('seals a secret that opens with any configured secret that sealed it, and no other', async () => {
    const sealed = await sealFactorSecret('JBSWY3DPEHPK3PXP', ['first-secret-0123456789abcdef'])
    expect(sealed.split('.')).toHaveLength(5)
    expect(await openFactorSecret(sealed, ['rotated-secret-0123456789abcdef', 'first-secret-0123456789abcdef'])).toBe('JBSWY3DPEHPK3PXP')
    await expect(openFactorSecret(sealed, ['another-secret-0123456789abcdef'])).rejects.toThrow()
  })

  it('finds the time step of a six-digit code only', () => {
    const secret = createTotpSecret()
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(totpStep(secret, totpCode(secret, AT), AT)).toBe(AT / 30)
    expect(totpStep(secret, totpCode(secret, AT - 30), AT)).toBe(AT / 30 - 1)
    expect(totpStep(secret, `${totpCode(secret, AT)}0`, AT)).toBeNull()
    expect(totpStep(secret, `x${totpCode(secret, AT).slice(1)}`, AT)).toBeNull()
  })

  it('makes backup codes of ten letters and digits, distinct, hashed by their letters alone', async () => {
    const codes = createBackupCodes()
    expect(codes).toHaveLength(BACKUP_CODE_COUNT)
    expect(createBackupCodes(3)).toHaveLength(3)
    for (const code of codes) expect(code).toMatch(/^[a-hjkmnp-z2-9]{5}-[a-hjkmnp-z2-9]{5}$/)
    expect(new Set(codes).size).toBe(codes.length)
    expect(await hashBackupCode('abcde-fghjk', SECRET)).toBe(await hashBackupCode(' ABCDE FGHJK ', SECRET))
    expect(await hashBackupCode('abcde-fghjk', SECRET)).not.toBe(await hashBackupCode('abcde-fghjm', SECRET))
    expect(await hashBackupCode('abcde-fghjk', SECRET)).not.toBe(await hashBackupCode('abcde-fghjk', `${SECRET}x`))
    expect(newChallenge()).toMatch(/^[0-9a-f]{32}$/)
    expect(newChallenge()).not.toBe(newChallenge())
  })
})

describe('the limits, at their edges', () => {
  it(`checks the ${MAX_CODE_ATTEMPTS}th code of a challenge: a right one after ${MAX_CODE_ATTEMPTS - 1} wrong ones passes`, async () => {
    const { secret, check } = await enrolled()
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) expect(await check('000000')).toEqual({ ok: false, reason: 'wrongCode' })
    expect(await check(totpCode(secret, AT))).toEqual({ ok: true, method: 'otp' })
  })

  it("counts each user's codes apart: one user's spent codes lock out no other user", async () => {
    const { adapter, store, secret, check } = await enrolled()
    const otherSecret = createTotpSecret()
    await adapter.createSecondFactor!({ id: 'totp-2', userId: 'user-2', type: 'totp', secret: await sealFactorSecret(otherSecret, SECRETS) } as never)
    for (let i = 0; i < MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES; i++) await check('000000', `guess-${i}`)
    expect(await check('000000', 'late-0', AT + 1)).toEqual({ ok: false, reason: 'exhausted' })
    expect(await check(totpCode(secret, AT), 'late-1', AT + 2)).toMatchObject({ ok: false, reason: 'locked' })
    const other = (code: string, challenge: string) => checkCode({ adapter, store, secrets: SECRETS, userId: 'user-2', challenge, code, at: AT + 2 })
    expect(await other('000000', 'other-1')).toEqual({ ok: false, reason: 'wrongCode' })
    expect(await other(totpCode(otherSecret, AT), 'other-2')).toEqual({ ok: true, method: 'otp' })
  })

  it('keeps a spent TOTP code spent for as long as any clock would accept it (90 s)', async () => {
    vi.useFakeTimers({ now: (AT - 30) * 1000, toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const { secret, check } = await enrolled()
    // The code of the step at AT is accepted from AT - 30 (one step early) until AT + 59 (one late).
    expect(await check(totpCode(secret, AT), 'early', AT - 30)).toEqual({ ok: true, method: 'otp' })
    vi.setSystemTime((AT + 59) * 1000)
    expect(await check(totpCode(secret, AT), 'late', AT + 59)).toEqual({ ok: false, reason: 'codeUsed' })
  })
})

describe('the backup-code spend', () => {
  it("goes through the adapter's conditional spend alone when it has one (no replace method needed)", async () => {
    const { adapter, store, codes, backupLeft } = await enrolled()
    const { updateSecondFactor: _replace, ...conditionalOnly } = adapter
    const factor = (await enrolledFactors(adapter, USER)).find((f) => f.type === 'backup-codes')!
    const hash = await hashBackupCode(codes[7]!, SECRET)
    expect(await spendBackupCode(conditionalOnly as Adapter, store, factor, hash)).toBe(true)
    expect(await spendBackupCode(conditionalOnly as Adapter, store, factor, hash)).toBe(false)
    expect(await backupLeft()).toBe(BACKUP_CODE_COUNT - 1)
  })

  it('waits for a held lock 50 times, 20 ms apart, then gives up', async () => {
    const { adapter, store, codes } = await enrolled({ conditional: false })
    const factor = (await enrolledFactors(adapter, USER)).find((f) => f.type === 'backup-codes')!
    let claims = 0
    const stuck = { ...store, claim: async () => (claims++, false) }
    await expect(spendBackupCode(adapter, stuck, factor, await hashBackupCode(codes[8]!, SECRET))).rejects.toThrow(/locked by another sign-in/)
    expect(claims).toBe(1 + 50)
  })
})

describe('what is stored stays readable: a secret and codes made by an earlier release', () => {
  const RELEASED_SECRET = 'a-secret-0123456789abcdef0123456789'
  // Sealed and hashed by the released code under RELEASED_SECRET: the key derivation may not change.
  const SEALED =
    'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIiwia2lkIjoiVVF4bFFFdjE0bzB5TVU4LV9ocEttM3hXQklMOHUzVmgyVldadUdXa2cydyJ9..LWMDoA6Usdg6lsiL.1VV3_Ydn25D0fKvqkQYQlQ.JkRVJHDBjjxxJfTW7-sWoA'
  const HASHED = '1d7014429a8396ec0906629e4f45937f71365176f33e367fafef5d19b939212f'

  it('opens a stored TOTP secret, and says why it cannot open one under another secret', async () => {
    expect(await openFactorSecret(SEALED, [RELEASED_SECRET])).toBe('JBSWY3DPEHPK3PXP')
    await expect(openFactorSecret(SEALED, [SECRET])).rejects.toThrow('the second-factor secret was sealed with an unknown secret')
  })

  it('matches a stored backup-code hash', async () => {
    expect(await hashBackupCode('ABCDE FGHJK', RELEASED_SECRET)).toBe(HASHED)
  })

  it('opens only what it seals (dir, A256GCM): the same key under another content encryption is refused', async () => {
    const key = await hkdfSha256(RELEASED_SECRET, 'authchart.second-factor', 'authchart second factor secrets', 32)
    const kid = JSON.parse(Buffer.from(SEALED.split('.')[0]!, 'base64url').toString()).kid as string
    const other = await new CompactEncrypt(new TextEncoder().encode('JBSWY3DPEHPK3PXP'))
      .setProtectedHeader({ alg: 'dir', enc: 'A128CBC-HS256', kid })
      .encrypt(key)
    await expect(openFactorSecret(other, [RELEASED_SECRET])).rejects.toThrow()
  })
})

describe('the enrolment QR code', () => {
  it('is an SVG with a quiet zone of one module around the code', async () => {
    const { uri, qr } = await totpEnrolment('JBSWY3DPEHPK3PXP', 'alice@example.com', 'example.com')
    expect(uri).toBe('otpauth://totp/example.com:alice%40example.com?issuer=example.com&secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30')
    const size = Number(/viewBox="0 0 (\d+) \1"/.exec(qr)![1])
    // The finder patterns' outer rows: the top one a module below the top edge and a module in, the
    // bottom-left one a module above the bottom edge.
    expect(qr).toMatch(/d="M1 1\.5h7/)
    expect(qr).toContain(`M1 ${size - 1.5}h7`)
  })
})

describe('turning two-step verification off', () => {
  it("removes the user's backup codes, then their TOTP factor, and says how many", async () => {
    const { adapter } = await enrolled()
    await adapter.createSecondFactor!({ id: 'totp-2', userId: 'user-2', type: 'totp', secret: 'sealed' } as never)
    const removed: string[] = []
    const recording: Adapter = { ...adapter, deleteSecondFactor: async (id: string) => void (removed.push(id), await adapter.deleteSecondFactor!(id)) }
    expect(await removeSecondFactors(recording, USER)).toBe(2)
    expect(removed).toEqual(['backup-1', 'totp-1'])
    expect(await enrolledFactors(adapter, USER)).toEqual([])
    expect((await enrolledFactors(adapter, 'user-2')).map((f) => f.id)).toEqual(['totp-2'])
    expect(await removeSecondFactors(recording, USER)).toBe(0)
  })

  it("removes nothing an adapter lists that is not the user's own TOTP factor or backup codes", async () => {
    const { adapter } = await enrolled()
    const listed = [
      { id: 'bob-totp', userId: 'user-2', type: 'totp', secret: 'x', createdAt: new Date() },
      { id: 'bob-codes', userId: 'user-2', type: 'backup-codes', secret: 'x', createdAt: new Date() },
      { id: 'passkey-ish', userId: USER, type: 'webauthn', secret: 'x', createdAt: new Date() },
    ]
    const removed: string[] = []
    const careless: Adapter = {
      ...adapter,
      listSecondFactors: async (userId: string) => [...(await adapter.listSecondFactors!(userId)), ...listed] as never,
      deleteSecondFactor: async (id: string) => void removed.push(id),
    }
    expect(await removeSecondFactors(careless, USER)).toBe(2)
    expect(removed).toEqual(['backup-1', 'totp-1'])
  })

  it('removes nothing, and says so, without an adapter that deletes factors', async () => {
    const { adapter } = await enrolled()
    const { deleteSecondFactor: _none, ...readOnly } = adapter
    expect(await removeSecondFactors(readOnly as Adapter, USER)).toBe(0)
    expect(await removeSecondFactors(undefined, USER)).toBe(0)
    expect(await enrolledFactors(adapter, USER)).toHaveLength(2)
  })
})
