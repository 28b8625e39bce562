/**
 * The password flows' single-use tokens at the module: every token of a user and purpose ended by
 * a revocation, and no other; and the sign-in's attempt limit for what is typed as an address but
 * is none, spelled any way, with the refusal logged.
 */
import { coerce, number, object, string } from 'superstruct'
import { describe, expect, it, vi } from 'vitest'
import { Client, ORIGIN } from '../fixtures/http.js'
import { addUser, passwordWorld, postPassword, signInWithPassword, type PasswordWorld } from '../password-flow/fixtures.js'
import { assignments as signInAssignments } from '../../machines/password-signin.logic.js'
import { assignments as signUpAssignments } from '../../machines/password-signup.logic.js'
import type { AuthStore } from '../../core/store/types.js'
import { issueToken, peekToken, revokeTokens, spendToken } from '../../core/flows/password/tokens.js'
import { memoryAuthStore } from '../../core/store/index.js'

const SECRET = 'a-secret-for-the-password-tokens-0123456789'

describe('password tokens', () => {
  it('ends every token of the user and purpose when revoked, and no other', async () => {
    const tokens = { store: memoryAuthStore(), secret: SECRET }
    const reset = await issueToken(tokens, 'password-reset', 'u-1', 600)
    const verify = await issueToken(tokens, 'password-verify', 'u-1', 600)
    const other = await issueToken(tokens, 'password-reset', 'u-2', 600)
    await revokeTokens(tokens, 'password-reset', 'u-1')
    expect(await peekToken(tokens, 'password-reset', reset)).toBeNull()
    expect(await spendToken(tokens, 'password-reset', reset, 600)).toBeNull()
    expect(await peekToken(tokens, 'password-verify', verify)).toBe('u-1')
    expect(await peekToken(tokens, 'password-reset', other)).toBe('u-2')
  })
})

describe('the password sign-in’s attempt limit', () => {
  it('counts an identifier that is no address as one, whatever its case and surrounding spaces, and logs the refusal', async () => {
    const world = passwordWorld({}, { rateLimit: { credentials: { perIdentifier: 2 } } })
    await addUser(world, 'alice@example.com', 'correct horse battery')
    for (const typed of ['Not An Address', ' not an address ']) await signInWithPassword(new Client(world.config), typed, 'a guess at it')
    const limited = await signInWithPassword(new Client(world.config), 'NOT AN ADDRESS  ', 'a guess at it')
    expect(limited.headers.get('location')).toMatch(/error=CredentialsSignin&code=rate_limited&retryAfter=\d+/)
    expect(world.config.logger.warn).toHaveBeenCalledWith('credentials-rate-limited')
    const other = await signInWithPassword(new Client(world.config), 'alice@example.com', 'correct horse battery')
    expect(other.headers.get('location')).not.toMatch(/rate_limited/)
  })
})

/** A store that records the key of every call, to see which namespace each count or token lives under. */
function recordingStore(store: AuthStore = memoryAuthStore()) {
  const calls: { method: string; key: string }[] = []
  const recorded = new Proxy(store, {
    get(target, method: string) {
      const value = target[method as keyof AuthStore]
      if (typeof value !== 'function') return value
      return (key: string, ...rest: unknown[]) => {
        calls.push({ method, key })
        return (value as (...args: unknown[]) => unknown).call(target, key, ...rest)
      }
    },
  }) as AuthStore
  return { store: recorded, calls }
}

const SIGN_IN = `${ORIGIN}/auth/signin`
const REFUSED = `${ORIGIN}/auth/error?error=Verification`
const CHECK_EMAIL = `${ORIGIN}/auth/verify-request?provider=password&type=email`

const signUp = (world: PasswordWorld, email: string, password: string, extra: Record<string, string> = {}) =>
  postPassword(new Client(world.config), { intent: 'signup', email, password, ...extra })
const forgot = (world: PasswordWorld, email: string) => postPassword(new Client(world.config), { intent: 'forgot', email })
const newestLink = (world: PasswordWorld, to: string, kind: string) => {
  const mail = world.mailbox.filter((m) => m.to === to && m.kind === kind).at(-1)
  if (!mail) throw new Error(`no ${kind} message to ${to}`)
  return new URL(mail.url)
}
const tokenOf = (world: PasswordWorld, to: string, kind: string) => newestLink(world, to, kind).searchParams.get('token')!
const confirm = (world: PasswordWorld, token: string, password: string) => postPassword(new Client(world.config), { intent: 'verify', token, password })
const userNamed = (world: PasswordWorld, email: string) => [...world.store.users.values()].find((user) => user.email === email)!
const closeToNow = (date: unknown) => date instanceof Date && Math.abs(date.getTime() - Date.now()) < 60_000

describe('password sign-up at its edges', () => {
  it('refuses an address that is none, before any adapter call', async () => {
    const world = passwordWorld()
    const lookups = vi.spyOn(world.config.adapter!, 'getUserByEmail')
    const answer = await signUp(world, 'not an address', 'a long enough password')
    expect(answer.headers.get('location')).toBe(`${SIGN_IN}?error=CredentialsSignin&code=invalid_email`)
    expect(lookups).not.toHaveBeenCalled()
    expect(world.store.users.size).toBe(0)
  })

  it('refuses a sign-up without a password as too short, and stores the address normalised', async () => {
    const world = passwordWorld()
    const missing = await postPassword(new Client(world.config), { intent: 'signup', email: 'new@example.com' })
    expect(missing.headers.get('location')).toBe(`${SIGN_IN}?error=CredentialsSignin&code=password_too_short`)
    await signUp(world, '  New@Example.com ', 'a long enough password')
    expect([...world.store.users.values()].map((user) => user.email)).toEqual(['new@example.com'])
  })

  it("stores the application's fields as its schema coerces them", async () => {
    const world = passwordWorld({ signUpFields: object({ seats: coerce(number(), string(), (text) => Number(text)) }) as never })
    await signUp(world, 'new@example.com', 'a long enough password', { seats: '12' })
    expect(userNamed(world, 'new@example.com')).toMatchObject({ seats: 12 })
  })

  it('shows the policy the address being signed up, never a user', async () => {
    const seen: unknown[] = []
    const world = passwordWorld({ policy: (_password, context) => (seen.push(context), { ok: true }) })
    await signUp(world, 'new@example.com', 'a long enough password')
    expect(seen).toEqual([{ email: 'new@example.com', user: null }])
  })

  it('creates no user for a known address, and emits createUser with the one it creates', async () => {
    const createUser = vi.fn()
    const world = passwordWorld({}, { events: { createUser } })
    await addUser(world, 'owner@example.com', 'the owner password')
    const creates = vi.spyOn(world.config.adapter!, 'createUser')
    await signUp(world, 'owner@example.com', 'a long enough password')
    expect(creates).not.toHaveBeenCalled()
    await signUp(world, 'new@example.com', 'a long enough password')
    expect(createUser).toHaveBeenCalledWith({ user: expect.objectContaining({ email: 'new@example.com', emailVerified: null }) })
  })

  it('tells the owner when a sign-up racing this one created the address first', async () => {
    const world = passwordWorld()
    const adapter = world.config.adapter!
    const realLookup = adapter.getUserByEmail!.bind(adapter)
    let first = true
    // The first look finds nobody; the racing sign-up then creates the user before ours.
    adapter.getUserByEmail = async (email) => {
      if (!first) return realLookup(email)
      first = false
      await addUser(world, email, 'the other password')
      return null
    }
    const answer = await signUp(world, 'raced@example.com', 'a long enough password')
    expect(answer.headers.get('location')).toBe(CHECK_EMAIL)
    expect(world.mailbox.map((mail) => mail.kind)).toEqual(['signup-existing'])
    expect(world.store.users.size).toBe(1)
  })
})

describe('the sign-up verification link at its edges', () => {
  it('reads no user for a made-up token, and counts no attempt', async () => {
    const world = passwordWorld()
    const reads = vi.spyOn(world.config.adapter!, 'getUser')
    const answer = await confirm(world, 'a'.repeat(64), 'a long enough password')
    expect(answer.headers.get('location')).toBe(REFUSED)
    expect(reads).not.toHaveBeenCalled()
  })

  it('counts guesses through a link as attempts of its user (and of no other), under the credentials limits', async () => {
    const world = passwordWorld({}, { rateLimit: { credentials: { perIdentifier: 2 } } })
    await signUp(world, 'a@example.com', 'the right password')
    await signUp(world, 'b@example.com', 'the right password')
    const a = tokenOf(world, 'a@example.com', 'verify')
    for (let i = 0; i < 2; i++) expect((await confirm(world, a, `guess ${i} at it`)).headers.get('location')).toBe(REFUSED)
    const limited = await confirm(world, a, 'the right password')
    expect(limited.headers.get('location')).toMatch(/error=Verification/)
    expect(userNamed(world, 'a@example.com').emailVerified).toBeNull()
    // Another user's link is not limited by those guesses.
    expect((await confirm(world, tokenOf(world, 'b@example.com', 'verify'), 'the right password')).headers.get('location')).toBe(SIGN_IN)
  })

  it('confirms a link without any credentials limit when the limits are off', async () => {
    const world = passwordWorld({}, { rateLimit: false })
    await signUp(world, 'a@example.com', 'the right password')
    expect((await confirm(world, tokenOf(world, 'a@example.com', 'verify'), 'the right password')).headers.get('location')).toBe(SIGN_IN)
  })

  it('refuses a link whose user or pending password is gone', async () => {
    const world = passwordWorld()
    await signUp(world, 'a@example.com', 'the right password')
    await signUp(world, 'b@example.com', 'the right password')
    world.store.passwords.delete(userNamed(world, 'a@example.com').id)
    expect((await confirm(world, tokenOf(world, 'a@example.com', 'verify'), 'the right password')).headers.get('location')).toBe(REFUSED)
    expect(userNamed(world, 'a@example.com').emailVerified).toBeNull()
    world.store.users.delete(userNamed(world, 'b@example.com').id)
    expect((await confirm(world, tokenOf(world, 'b@example.com', 'verify'), 'the right password')).headers.get('location')).toBe(REFUSED)
  })

  it('drops the pending password of an address proven another way, even with the right password', async () => {
    const world = passwordWorld()
    await signUp(world, 'a@example.com', 'the right password')
    const user = userNamed(world, 'a@example.com')
    world.store.users.set(user.id, { ...user, emailVerified: new Date() })
    expect((await confirm(world, tokenOf(world, 'a@example.com', 'verify'), 'the right password')).headers.get('location')).toBe(REFUSED)
    expect(world.store.passwords.has(user.id)).toBe(false)
  })

  it('confirms one of two requests racing with the same link, dates the proof now and emits updateUser', async () => {
    const updateUser = vi.fn()
    const world = passwordWorld({}, { events: { updateUser } })
    await signUp(world, 'a@example.com', 'the right password')
    const token = tokenOf(world, 'a@example.com', 'verify')
    const answers = await Promise.all([confirm(world, token, 'the right password'), confirm(world, token, 'the right password')])
    expect(answers.map((answer) => answer.headers.get('location')).sort()).toEqual([REFUSED, SIGN_IN])
    expect(closeToNow(userNamed(world, 'a@example.com').emailVerified)).toBe(true)
    expect(updateUser).toHaveBeenCalledTimes(1)
    expect(updateUser).toHaveBeenCalledWith({ user: expect.objectContaining({ email: 'a@example.com' }) })
  })
})

describe('the password reset at its edges', () => {
  it('counts requests for what is no address as one per spelling, folding case and spaces only', async () => {
    const world = passwordWorld({ resetLimit: { perAddress: 1 } })
    const lookups = vi.spyOn(world.config.adapter!, 'getUserByEmail')
    expect((await forgot(world, 'Strasse x')).headers.get('location')).toBe(CHECK_EMAIL)
    const limited = await forgot(world, ' STRASSE X ')
    expect(limited.headers.get('location')).toMatch(/error=EmailSignin&retryAfter=\d+$/)
    expect(world.config.logger.warn).toHaveBeenCalledWith('email-send-throttled')
    expect((await forgot(world, 'straße x')).headers.get('location')).toBe(CHECK_EMAIL)
    expect((await forgot(world, 'another one')).headers.get('location')).toBe(CHECK_EMAIL)
    // Nothing is looked up or sent for what is no address.
    expect(lookups).not.toHaveBeenCalled()
    expect(world.mailbox).toEqual([])
  })

  it('points an unknown address to the sign-up', async () => {
    const world = passwordWorld()
    await forgot(world, 'nobody@example.com')
    expect(newestLink(world, 'nobody@example.com', 'reset-unknown').href).toBe(`${ORIGIN}/auth/callback/password?intent=signup`)
  })

  it('reads no user for a made-up reset token, and refuses a reset without a new password as too short', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    const reads = vi.spyOn(world.config.adapter!, 'getUser')
    const made = await postPassword(new Client(world.config), { intent: 'reset', token: 'b'.repeat(64), password: 'a long new password' })
    expect(made.headers.get('location')).toBe(REFUSED)
    expect(reads).not.toHaveBeenCalled()
    await forgot(world, 'alice@example.com')
    const missing = await postPassword(new Client(world.config), { intent: 'reset', token: tokenOf(world, 'alice@example.com', 'reset') })
    expect(missing.headers.get('location')).toMatch(/code=password_too_short/)
  })

  it('shows the policy the user whose password is reset', async () => {
    const seen: unknown[] = []
    const world = passwordWorld({ policy: (_password, context) => (seen.push(context), { ok: true }) })
    const alice = await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    await postPassword(new Client(world.config), { intent: 'reset', token: tokenOf(world, 'alice@example.com', 'reset'), password: 'a long new password' })
    expect(seen).toEqual([{ email: 'alice@example.com', user: expect.objectContaining({ id: alice.id }) }])
  })

  it('proves an unverified address by its reset link (dated now, with updateUser), and leaves a verified one as it was', async () => {
    const updateUser = vi.fn()
    const world = passwordWorld({}, { events: { updateUser } })
    const unverified = await addUser(world, 'new@example.com', 'the old password', { verified: false })
    const verified = await addUser(world, 'old@example.com', 'the old password')
    const provenAt = world.store.users.get(verified.id)!.emailVerified
    for (const email of ['new@example.com', 'old@example.com']) {
      await forgot(world, email)
      const answer = await postPassword(new Client(world.config), { intent: 'reset', token: tokenOf(world, email, 'reset'), password: 'a long new password' })
      expect(answer.headers.get('location')).toBe(SIGN_IN)
    }
    expect(closeToNow(world.store.users.get(unverified.id)!.emailVerified)).toBe(true)
    expect(world.store.users.get(verified.id)!.emailVerified).toBe(provenAt)
    expect(updateUser.mock.calls).toEqual([[{ user: expect.objectContaining({ id: unverified.id }) }]])
  })

  it('ends the pending sign-up link of the user whose password is reset', async () => {
    const world = passwordWorld()
    await signUp(world, 'new@example.com', 'the sign-up password')
    const verify = tokenOf(world, 'new@example.com', 'verify')
    await forgot(world, 'new@example.com')
    await postPassword(new Client(world.config), { intent: 'reset', token: tokenOf(world, 'new@example.com', 'reset'), password: 'a long new password' })
    const tokens = { store: world.config.store!, secret: String(world.config.secret) }
    expect(await peekToken(tokens, 'password-verify', verify)).toBeNull()
  })
})

describe('the password sign-in at its edges', () => {
  it('looks up nobody for what is no address, and asks the legacy check only for a known user without a hash', async () => {
    const asked: string[] = []
    const world = passwordWorld({ verifyLegacyPassword: async (user) => (asked.push(user.email), false) })
    const lookups = vi.spyOn(world.config.adapter!, 'getUserByEmail')
    await signInWithPassword(new Client(world.config), 'not an address', 'a guess at it')
    expect(lookups).not.toHaveBeenCalled()
    await signInWithPassword(new Client(world.config), 'nobody@example.com', 'a guess at it')
    // A pending password of an address since proven another way: dropped, and no legacy question.
    await signUp(world, 'pending@example.com', 'the sign-up password')
    const pending = userNamed(world, 'pending@example.com')
    world.store.users.set(pending.id, { ...pending, emailVerified: new Date() })
    await signInWithPassword(new Client(world.config), 'pending@example.com', 'the sign-up password')
    expect(world.store.passwords.has(pending.id)).toBe(false)
    expect(asked).toEqual([])
  })

  it('hashes a migrated legacy password once, not again as an outdated one', async () => {
    const world = passwordWorld({ verifyLegacyPassword: async (_user, password) => password === 'legacy secret' })
    await addUser(world, 'imported@example.com', null)
    const before = world.hasher.calls.hash
    const answer = await signInWithPassword(new Client(world.config), 'imported@example.com', 'legacy secret')
    expect(answer.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(world.hasher.calls.hash - before).toBe(1)
  })

  it('signs in without counting when the credentials limits are off', async () => {
    const world = passwordWorld({}, { rateLimit: false })
    await addUser(world, 'alice@example.com', 'correct horse battery')
    const answer = await signInWithPassword(new Client(world.config), 'alice@example.com', 'correct horse battery')
    expect(answer.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
  })

  it('counts two identifiers that are no address apart, even when they differ only in a letter that upper-cases alike', async () => {
    const world = passwordWorld({}, { rateLimit: { credentials: { perIdentifier: 1 } } })
    await signInWithPassword(new Client(world.config), 'strasse x', 'a guess at it')
    for (const other of ['straße x', 'another one']) {
      const answer = await signInWithPassword(new Client(world.config), other, 'a guess at it')
      expect(answer.headers.get('location')).not.toMatch(/rate_limited/)
    }
  })
})

describe('the namespaces of the password flows’ counts', () => {
  it('counts sign-in, link and reset attempts each under its own scope, by the identifier', async () => {
    const { store, calls } = recordingStore()
    const world = passwordWorld({}, { store })
    await addUser(world, 'alice@example.com', 'correct horse battery')
    await signInWithPassword(new Client(world.config), 'alice@example.com', 'a guess')
    await signUp(world, 'new@example.com', 'the sign-up password')
    await confirm(world, tokenOf(world, 'new@example.com', 'verify'), 'a guess')
    await forgot(world, 'alice@example.com')
    const scopes = calls.filter((call) => call.method === 'consume').map((call) => call.key.split(':').slice(0, -1).join(':'))
    expect(scopes).toEqual(['limit:credentials:password:identifier', 'limit:credentials:password:identifier', 'limit:password-reset:password:identifier'])
  })
})

describe('password tokens at the module', () => {
  const hex = 'c'.repeat(64)

  it('reads nothing for a token that is not 64 hex digits, and claims nothing for an unknown one', async () => {
    const { store, calls } = recordingStore()
    const tokens = { store, secret: SECRET }
    for (const token of ['x', `x${hex}`, `${hex}x`]) expect(await peekToken(tokens, 'password-reset', token)).toBeNull()
    expect(calls).toEqual([])
    expect(await spendToken(tokens, 'password-reset', hex, 600)).toBeNull()
    expect(calls.map((call) => call.method)).not.toContain('claim')
  })
})

describe('what the password charts forget', () => {
  it('forgets the password once checked, and the password and token once the address is proven', () => {
    expect((signInAssignments.forgetPassword as () => unknown)()).toEqual({ password: null })
    expect((signUpAssignments.forgetSecrets as () => unknown)()).toEqual({ password: null, token: null })
  })
})
