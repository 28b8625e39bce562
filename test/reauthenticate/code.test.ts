/**
 * Step-up with a one-time code (the authenticator app's TOTP), with JWT and database sessions: a
 * user with a second factor whose proof is stale is asked for a code (not the password), a wrong
 * code leaves the action undone and counts against the user's code limits, the right one resumes
 * the action once.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { sealFactorSecret, USER_ATTEMPT_WINDOW, userAttemptsKey } from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { decode } from '../../core/jwt.js'
import { ALICE, Client, ORIGIN, SECRET, featureConfig } from '../fixtures/http.js'

const HTML = { accept: 'text/html' }
const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`
const SESSION_COOKIE = '__Secure-authjs.session-token'
const now = () => Math.floor(Date.now() / 1000)

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

async function post(client: Client, path: string, body: Record<string, string>) {
  return client.send({ path, body: { ...body, csrfToken: await client.csrfToken() }, headers: HTML })
}

describe.each(['jwt', 'database'] as const)('step-up with a one-time code (%s sessions)', (strategy) => {
  it('asks for a code, counts a wrong one against the user, and resumes the action once on the right one', async () => {
    const store = createMemoryStore()
    const authStore = memoryAuthStore()
    const config = featureConfig({ adapter: MemoryAdapter(store), session: { strategy }, store: authStore })
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    const userId = strategy === 'jwt' ? ALICE.id : [...store.users.values()][0]!.id
    const secret = createTotpSecret()
    await MemoryAdapter(store).createSecondFactor({ id: 'totp:a', userId, type: 'totp', secret: await sealFactorSecret(secret, [SECRET]), createdAt: new Date() })
    vi.setSystemTime(Date.now() + 11 * 60_000)

    // Turning two-step verification off: a user with a second factor must prove a second factor.
    expect((await post(alice, '/two-factor', { action: 'disable' })).headers.get('location')).toBe(STEP_PAGE)
    const page = await (await alice.send({ path: '/step/reauthenticate', headers: HTML })).text()
    expect(page).toContain('name="code"')
    expect(page).not.toContain('name="password"')

    const before = await authStore.increment(userAttemptsKey(userId), USER_ATTEMPT_WINDOW)
    const wrong = await post(alice, '/step/reauthenticate', { event: 'reauth.code', code: '000000' })
    expect(wrong.headers.get('location')).toBe(STEP_PAGE)
    expect(await authStore.increment(userAttemptsKey(userId), USER_ATTEMPT_WINDOW)).toBe(before + 2)
    expect(store.secondFactors.size).toBe(1)

    const resumed = await post(alice, '/step/reauthenticate', { event: 'reauth.code', code: totpCode(secret, now()) })
    expect(resumed.status).toBe(200)
    expect(await resumed.text()).toContain('action="/auth/two-factor"')
    const fva =
      strategy === 'jwt'
        ? ((await decode({ token: alice.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })) as { fva?: Record<string, number> }).fva
        : [...store.sessions.values()][0]!.fva
    expect(fva?.otp).toBe(now())
    // The resumed form: the factor is removed now, once.
    expect((await post(alice, '/two-factor', { action: 'disable' })).headers.get('location')).toBe(`${ORIGIN}/auth/two-factor`)
    expect(store.secondFactors.size).toBe(0)
  })
})
