/**
 * Attacks on step-up, each from the attacker's side through `Auth` over HTTP: a replayed
 * re-authentication, a resumption after sign-out everywhere, another user's password, a stale
 * session posting straight to the action, an old session cookie kept across the re-authentication,
 * wrong proofs against the credentials limits; and the code factor of a user with a second factor.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { sealFactorSecret, USER_ATTEMPT_WINDOW, userAttemptsKey } from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { ALICE, Client, credentialsProvider, ORIGIN, SECRET, featureConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const FLOW_COOKIE = '__Secure-authchart.flow.reauthenticate'
const HTML = { accept: 'text/html' }
const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`
const now = () => Math.floor(Date.now() / 1000)
const BOB = { id: 'u-2', name: 'Bob', email: 'bob@example.com' }

const twoUsers = credentialsProvider((c) =>
  c.username === 'alice' && c.password === 'wonderland' ? { ...ALICE } : c.username === 'bob' && c.password === 'builder' ? { ...BOB } : null,
)

function app(strategy: 'jwt' | 'database', overrides: Partial<AuthConfig> = {}) {
  const store = createMemoryStore()
  const config = featureConfig({ adapter: MemoryAdapter(store), session: { strategy }, store: memoryAuthStore(), providers: [twoUsers], ...overrides })
  return { store, config }
}

async function signedIn(config: AuthConfig, username = 'alice', password = 'wonderland') {
  const client = new Client(config)
  await client.signIn({ username, password })
  return client
}

const later = (minutes: number) => vi.setSystemTime(Date.now() + minutes * 60_000)

async function revoke(client: Client, revoke: 'others' | 'all', headers: Record<string, string> = HTML) {
  return client.send({ path: '/sessions', body: { csrfToken: await client.csrfToken(), revoke }, headers })
}

async function prove(client: Client, fields: Record<string, string>) {
  return client.send({ path: '/step/reauthenticate', body: { ...fields, csrfToken: await client.csrfToken() }, headers: HTML })
}

const alicePassword = { event: 'reauth.password', username: 'alice', password: 'wonderland' }
const aliceRows = (store: MemoryStore) => [...store.sessions.values()].filter((s) => s.userId !== BOB.id).length

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('step-up attacks (database sessions)', () => {
  it('refuses a stale session posting straight to the action: the other sessions stay', async () => {
    const { store, config } = app('database')
    await signedIn(config) // the owner's other device
    const thief = await signedIn(config)
    later(11)
    const asked = await revoke(thief, 'others')
    expect(asked.status).toBe(303)
    expect(asked.headers.get('location')).toBe(STEP_PAGE)
    const fetched = await revoke(thief, 'others', { accept: 'application/json' })
    expect(fetched.status).toBe(401)
    expect(await fetched.json()).toMatchObject({ error: 'insufficient_user_authentication', url: STEP_PAGE })
    expect(aliceRows(store)).toBe(2)
  })

  it('resumes the revocation once the password is proven again, and only then', async () => {
    const { store, config } = app('database')
    await signedIn(config)
    const owner = await signedIn(config)
    later(11)
    await revoke(owner, 'others')
    const resumed = await prove(owner, alicePassword)
    const page = await resumed.text()
    expect(page).toContain('action="/auth/sessions"')
    expect(page).toContain('name="revoke" value="others"')
    expect(aliceRows(store)).toBe(2)
    // The resumption page posts the form once: now fresh, it goes through.
    await revoke(owner, 'others')
    expect(aliceRows(store)).toBe(1)
  })

  it('refuses a replayed re-authentication: the spent flow cookie proves nothing again', async () => {
    const { store, config } = app('database')
    const owner = await signedIn(config)
    later(11)
    await revoke(owner, 'others')
    const sealed = owner.jar.get(FLOW_COOKIE)!
    await prove(owner, alicePassword)
    const row = [...store.sessions.values()][0]!
    const marked = row.fva
    later(11)
    owner.jar.cookies.set(FLOW_COOKIE, sealed)
    const replayed = await prove(owner, alicePassword)
    // Refused as the flow refuses, not as a broken server.
    expect(replayed.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect((await replayed.text()).includes('action="/auth/sessions"')).toBe(false)
    expect([...store.sessions.values()][0]!.fva).toEqual(marked)
  })

  it('refuses to resume after sign-out everywhere, even with the right password', async () => {
    const { store, config } = app('database')
    const thief = await signedIn(config)
    later(11)
    await revoke(thief, 'others')
    const owner = await signedIn(config)
    await revoke(owner, 'all')
    const late = await prove(thief, alicePassword)
    expect(late.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(store.sessions.size).toBe(0)
  })

  it("refuses another user's password as a proof, and counts it", async () => {
    const { config } = app('database')
    const alice = await signedIn(config)
    later(11)
    await revoke(alice, 'others')
    const other = await prove(alice, { event: 'reauth.password', username: 'bob', password: 'builder' })
    expect(other.headers.get('location')).toBe(STEP_PAGE)
    expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-other-user')
    expect((await revoke(alice, 'others')).headers.get('location')).toBe(STEP_PAGE)
  })

  it('counts wrong proofs against the credentials sign-in limits', async () => {
    const { config } = app('database', { rateLimit: { credentials: { perIdentifier: 3 } } })
    const alice = await signedIn(config) // attempt 1
    later(11)
    await revoke(alice, 'others')
    await prove(alice, { event: 'reauth.password', username: 'alice', password: 'guess-1' }) // 2
    await prove(alice, { event: 'reauth.password', username: 'alice', password: 'guess-2' }) // 3
    const limited = await prove(alice, alicePassword)
    expect(limited.headers.get('location')).toMatch(/error=CredentialsSignin&code=rate_limited/)
  })

  it('asks a user with a second factor for a code, not the password, and resumes on the code', async () => {
    const { store, config } = app('database')
    await signedIn(config) // another device
    const alice = await signedIn(config)
    const secret = createTotpSecret()
    const userId = [...store.users.values()][0]!.id
    await MemoryAdapter(store).createSecondFactor({ id: 'totp:a', userId, type: 'totp', secret: await sealFactorSecret(secret, [SECRET]), createdAt: new Date() })
    // Fresh by the password, but the policy wants the second factor.
    const asked = await revoke(alice, 'others')
    expect(asked.headers.get('location')).toBe(STEP_PAGE)
    const page = await (await alice.send({ path: '/step/reauthenticate', headers: HTML })).text()
    expect(page).toContain('name="code"')
    expect(page).not.toContain('name="password"')
    // The password is not offered: posting it anyway proves nothing (the flow refuses the event).
    const refused = await prove(alice, alicePassword)
    expect(refused.headers.get('location')).toMatch(/\/auth\/error\?error=/)
    expect(aliceRows(store)).toBe(2)
    await revoke(alice, 'others')
    await prove(alice, { event: 'reauth.code', code: totpCode(secret, now()) })
    expect(aliceRows(store)).toBe(2)
    expect((await revoke(alice, 'others', { accept: 'application/json' })).status).toBe(200)
    expect(aliceRows(store)).toBe(1)
  })
})

describe('a second post of the same re-authentication page', () => {
  for (const strategy of ['jwt', 'database'] as const) {
    it(`is answered AccessDenied: nothing recorded again, its code counted against the user (${strategy} sessions)`, async () => {
      const authStore = memoryAuthStore()
      const { store, config } = app(strategy, { store: authStore })
      await signedIn(config) // another device
      const alice = await signedIn(config)
      const secret = createTotpSecret()
      const userId = strategy === 'jwt' ? ALICE.id : [...store.users.values()][0]!.id
      await MemoryAdapter(store).createSecondFactor({ id: 'totp:a', userId, type: 'totp', secret: await sealFactorSecret(secret, [SECRET]), createdAt: new Date() })
      later(11)
      await alice.send({ path: '/two-factor', body: { csrfToken: await alice.csrfToken(), action: 'disable' }, headers: HTML })
      const page = alice.jar.get(FLOW_COOKIE)!
      const first = await prove(alice, { event: 'reauth.code', code: totpCode(secret, now()) })
      expect(first.status).toBe(200)
      expect(await first.text()).toContain('action="/auth/two-factor"')
      const marked = { cookie: alice.jar.get(SESSION_COOKIE), rows: structuredClone([...store.sessions.values()].map((s) => s.fva)) }
      later(1)
      // The same page posted again (its sealed flow copied before the proof), with a new code.
      alice.jar.cookies.set(FLOW_COOKIE, page)
      const counted = await authStore.increment(userAttemptsKey(userId), USER_ATTEMPT_WINDOW)
      const second = await prove(alice, { event: 'reauth.code', code: totpCode(secret, now()) })
      expect(second.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
      expect({ cookie: alice.jar.get(SESSION_COOKIE), rows: [...store.sessions.values()].map((s) => s.fva) }).toEqual(marked)
      expect(await authStore.increment(userAttemptsKey(userId), USER_ATTEMPT_WINDOW)).toBe(counted + 2)
      expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-failed')
    })
  }
})

describe('step-up attacks (JWT sessions)', () => {
  it('keeps a session cookie from before the re-authentication stale after it', async () => {
    const { config } = app('jwt')
    const alice = await signedIn(config)
    later(11)
    await alice.send({ path: '/two-factor', body: { csrfToken: await alice.csrfToken() }, headers: HTML })
    const before = alice.jar.get(SESSION_COOKIE)!
    await prove(alice, alicePassword)
    expect(alice.jar.get(SESSION_COOKIE)).not.toBe(before)
    const copy = new Client(config)
    copy.jar.cookies.set(SESSION_COOKIE, before)
    const asked = await copy.send({ path: '/two-factor', body: { csrfToken: await copy.csrfToken() }, headers: HTML })
    expect(asked.headers.get('location')).toBe(STEP_PAGE)
    const fresh = await alice.send({ path: '/two-factor', body: { csrfToken: await alice.csrfToken() }, headers: HTML })
    expect(fresh.headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)
  })

  it('keeps the re-issued token in the same session: same subject and sign-in time', async () => {
    const { config } = app('jwt', { session: { strategy: 'jwt', absoluteMaxAge: 86_400 } })
    const alice = await signedIn(config)
    const { decode } = await import('../../core/jwt.js')
    const read = async () => (await decode({ token: alice.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE }))!
    const signedInAt = (await read()).auth_time
    later(11)
    await alice.send({ path: '/two-factor', body: { csrfToken: await alice.csrfToken() }, headers: HTML })
    await prove(alice, alicePassword)
    const token = await read()
    expect(token.sub).toBe(ALICE.id)
    expect(token.auth_time).toBe(signedInAt)
    expect(token.fva).toEqual({ pwd: now() })
  })
})
