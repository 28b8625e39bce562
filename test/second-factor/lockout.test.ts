/**
 * Lockout of the second factor, from both sides. Someone who knows the password cannot keep the
 * owner out with wrong codes for more than a minute once they stop (before, twenty wrong codes shut
 * the owner out for the rest of the quarter hour, and correct codes never reset the count); a
 * guesser with as many sign-ins as they like, on one address, still gets at most 10 + 3 + 16 codes
 * checked per user per quarter hour (the per-client counting is test/second-factor-lockout/). At the level of `checkCode`, and through `Auth`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import {
  checkCode,
  MAX_CODE_ATTEMPTS,
  MAX_USER_ATTEMPTS,
  CLEAN_CLIENT_CODES,
  sealFactorSecret,
  USER_ATTEMPT_WINDOW,
  USER_LOCK_SLOT,
} from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, ORIGIN, SECRET, featureConfig } from '../fixtures/http.js'

/** A minute boundary, so "this minute" is the same for every request of a test step. */
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

/** A wrong six-digit code at `at` (not within a step of the right one). */
function wrongCode(secret: string, at: number): string {
  const near = new Set([-30, 0, 30].map((d) => totpCode(secret, at + d)))
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0')
    if (!near.has(code)) return code
  }
}

describe('checkCode', () => {
  /** An enrolled user, and an adapter that counts the codes actually checked. */
  async function enrolled() {
    const memory = MemoryAdapter(createMemoryStore())
    const secret = createTotpSecret()
    await memory.createUser({ id: 'u', email: 'u@example.com', emailVerified: null })
    await memory.createSecondFactor({ id: 'totp:u', userId: 'u', type: 'totp', secret: await sealFactorSecret(secret, [SECRET]), createdAt: new Date() })
    let checked = 0
    const adapter: Adapter = {
      ...memory,
      listSecondFactors: (userId) => {
        checked++
        return memory.listSecondFactors(userId)
      },
    }
    const store = memoryAuthStore()
    let challenges = 0
    const send = (code: string, challenge = `c${++challenges}`) =>
      checkCode({ adapter, store, secrets: [SECRET], userId: 'u', challenge, code, at: clock })
    return { secret, store, send, checked: () => checked }
  }

  it('voids a challenge after its five wrong codes', async () => {
    const { secret, send } = await enrolled()
    const results = []
    for (let i = 0; i < MAX_CODE_ATTEMPTS + 1; i++) results.push(await send(wrongCode(secret, clock), 'one'))
    expect(results.map((r) => !r.ok && r.reason)).toEqual(['wrongCode', 'wrongCode', 'wrongCode', 'wrongCode', 'exhausted', 'exhausted'])
  })

  it("checks one code a minute once the user's ten and the client's three are spent, each from a sign-in that had none", async () => {
    const { secret, send, checked } = await enrolled()
    const spent = MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES
    for (let i = 0; i < spent; i++) await send(wrongCode(secret, clock))
    expect(checked()).toBe(spent)
    // The next is checked (this minute's one late check); wrong, it voids its sign-in.
    expect(await send(wrongCode(secret, clock), 'late')).toEqual({ ok: false, reason: 'exhausted' })
    expect(checked()).toBe(spent + 1)
    // The rest of the minute, nothing is checked, not even the right code.
    advance(20)
    expect(await send(totpCode(secret, clock), 'owner')).toEqual({ ok: false, reason: 'locked', retryAfter: USER_LOCK_SLOT - 20 })
    expect(checked()).toBe(spent + 1)
    // The sign-in that had its late check gets no other, even in a new minute.
    advance(USER_LOCK_SLOT)
    expect(await send(totpCode(secret, clock), 'late')).toEqual({ ok: false, reason: 'exhausted' })
    // The owner's sign-in, waiting, gets the new minute's check.
    expect(await send(totpCode(secret, clock), 'owner')).toEqual({ ok: true, method: 'otp' })
  })

  it("resets the user's count with a right code", async () => {
    const { secret, send, checked } = await enrolled()
    for (let i = 0; i < MAX_USER_ATTEMPTS - 1; i++) await send(wrongCode(secret, clock))
    expect(await send(totpCode(secret, clock))).toEqual({ ok: true, method: 'otp' })
    // Ten more wrong codes are checked, in this same minute: the count started again.
    const before = checked()
    for (let i = 0; i < MAX_USER_ATTEMPTS; i++) expect(await send(wrongCode(secret, clock))).toEqual({ ok: false, reason: 'wrongCode' })
    expect(checked() - before).toBe(MAX_USER_ATTEMPTS)
  })

  it('checks at most 10 + 3 + 16 codes per user in a quarter hour from one client, however many sign-ins guess', async () => {
    const { secret, send, checked } = await enrolled()
    // A new sign-in every second, each sending a code, for the whole window.
    for (let second = 0; second < USER_ATTEMPT_WINDOW; second++) {
      await send(wrongCode(secret, clock))
      advance(1)
    }
    expect(checked()).toBeLessThanOrEqual(MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 16)
    expect(checked()).toBeGreaterThanOrEqual(MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 15)
  })
})

describe('through Auth', () => {
  const STEP = '/step/signin-completion'
  const SESSION_COOKIE = '__Secure-authjs.session-token'

  async function enrolledOwner(): Promise<{ config: AuthConfig; secret: string; store: AuthStore }> {
    const store = memoryAuthStore()
    const config = featureConfig({ adapter: MemoryAdapter(createMemoryStore()), store })
    const owner = new Client(config)
    await owner.signIn({ username: 'alice', password: 'wonderland' })
    await owner.send({ path: '/two-factor', body: { csrfToken: await owner.csrfToken() } })
    const page = await (await owner.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    await owner.send({ path: '/step/totp-enrolment', body: { csrfToken: await owner.csrfToken(), code: totpCode(secret, clock) } })
    await owner.signOut()
    // Past the step the enrolment spent.
    advance(USER_LOCK_SLOT)
    return { config, secret, store }
  }

  async function atStep(config: AuthConfig): Promise<Client> {
    const client = new Client(config)
    const response = await client.signIn({ username: 'alice', password: 'wonderland' }, { callbackUrl: '/dashboard' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    return client
  }

  const answer = async (client: Client, code: string) => client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), code } })

  it('someone who knows the password keeps the owner out for a minute at most, not the quarter hour', async () => {
    const { config, secret } = await enrolledOwner()
    // Twenty wrong codes from four sign-ins of someone who knows the password.
    for (let round = 0; round < 4; round++) {
      const attacker = await atStep(config)
      for (let i = 0; i < MAX_CODE_ATTEMPTS; i++) await answer(attacker, wrongCode(secret, clock))
    }
    const owner = await atStep(config)
    const refused = await answer(owner, totpCode(secret, clock))
    expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(owner.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(await (await owner.send({ path: STEP })).text()).toContain('Someone who knows your password is trying codes')
    // A minute later the owner's same sign-in gets through.
    advance(USER_LOCK_SLOT)
    const signedIn = await answer(owner, totpCode(secret, clock))
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(owner.jar.get(SESSION_COOKIE)).toBeDefined()

    // The right code reset the count: the next wrong codes are checked again (five per sign-in).
    const attacker = await atStep(config)
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) {
      const wrong = await answer(attacker, wrongCode(secret, clock))
      expect(wrong.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
      expect(await (await attacker.send({ path: STEP })).text()).toContain('That code is not right')
    }
  })

  it('a guesser with many sign-ins gets no more checked codes, and a right code sent while locked is refused unchecked', async () => {
    const { config, secret } = await enrolledOwner()
    for (let round = 0; round < 2; round++) {
      const guesser = await atStep(config)
      for (let i = 0; i < MAX_CODE_ATTEMPTS; i++) await answer(guesser, wrongCode(secret, clock))
    }
    // The client's own codes past the user's ten.
    const guesser = await atStep(config)
    for (let i = 0; i < CLEAN_CLIENT_CODES; i++) await answer(guesser, wrongCode(secret, clock))
    // This minute's late check, spent on a wrong code.
    await answer(await atStep(config), wrongCode(secret, clock))
    // Even the right code is not checked for the rest of the minute, from any sign-in.
    for (let i = 0; i < 5; i++) {
      const lucky = await atStep(config)
      await answer(lucky, totpCode(secret, clock))
      expect(lucky.jar.get(SESSION_COOKIE)).toBeUndefined()
    }
  })
})
