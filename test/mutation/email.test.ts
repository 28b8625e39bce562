/**
 * E-mail sign-in down to what the mutation group of `core/flows/email/flow.ts` changes: the reason each
 * refusal logs (what an operator reads), the counters' store keys (shared by every instance, of this
 * version and the next), the confirmation page's headers, and whose database session a sign-in ends.
 * The attacks themselves live in test/email/.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter, VerificationToken } from '../../core/adapters.js'
import type { RequestContext } from '../../core/config/types.js'
import { hashCode } from '../../core/email/secrets.js'
import { checkSignInCode, spendCodeToken, voidCodeToken } from '../../core/flows/email/flow.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { sha256Hex } from '../../core/crypto.js'
import { ORIGIN } from '../fixtures/http.js'
import { addressBlind, emailConfig, EmailClient, lastLink } from '../email/helpers.js'

const VERIFY_REQUEST = `${ORIGIN}/auth/verify-request?provider=email&type=email`
const VERIFICATION = `${ORIGIN}/auth/error?error=Verification`
const SESSION_COOKIE = '__Secure-authjs.session-token'
const wrong = (code: string) => (code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ')

afterEach(() => vi.useRealTimers())

/** Every logged error as "Name: message". */
function errors(config: ReturnType<typeof emailConfig>['config']): string {
  return config.logger.error.mock.calls.map(([error]) => `${(error as Error).name}: ${(error as Error).message}`).join('\n')
}

/** A store that records the keys counted and claimed. */
function recording(): { store: AuthStore; keys: string[] } {
  const backend = memoryAuthStore()
  const keys: string[] = []
  return {
    keys,
    store: {
      ...backend,
      increment: (key, ttl) => (keys.push(`increment ${key} ${ttl}`), backend.increment(key, ttl)),
    },
  }
}

describe('the reasons an e-mail sign-in logs', () => {
  it('a wrong code: a debug line with the attempt and the limit; the last one allowed: too many', async () => {
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const { code } = outbox[0]!
    await client.enterCode(wrong(code!))
    expect(config.logger.debug).toHaveBeenCalledWith('email_code_rejected', { attempt: 1, limit: 5 })
    for (let i = 2; i <= 5; i++) await client.enterCode(wrong(code!))
    expect(errors(config)).toContain('Verification: Too many wrong one-time codes (5)')
  })

  it('an expired code: says so', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    vi.setSystemTime(outbox[0]!.expires.getTime())
    expect((await client.enterCode(outbox[0]!.code!)).headers.get('location')).toBe(VERIFICATION)
    expect(errors(config)).toContain('Verification: The one-time code has expired')
  })

  it('an address refused by the normaliser: the address, escaped, and the reason', async () => {
    const { config } = emailConfig()
    const response = await new EmailClient(config).requestLink('not an address')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    expect(errors(config)).toContain('EmailSignInError: Refused the address "not an address": Invalid email address format.')
  })

  it('too many messages to one inbox, or from one client: which limit, with its numbers', async () => {
    const { config } = emailConfig({ provider: { throttle: { perIdentifier: 1, perAddress: 1, window: 60, addressHeader: 'X-Real-IP' } } })
    const client = new EmailClient(config)
    const ask = async (email: string, ip: string) => {
      const csrfToken = await client.csrfToken()
      return (await client.send({ path: '/signin/email', body: { email, csrfToken }, headers: { 'x-real-ip': ip } })).headers.get('location')
    }
    expect(await ask('alice@example.com', '203.0.113.1')).toBe(VERIFY_REQUEST)
    await ask('alice@example.com', '203.0.113.2')
    expect(errors(config)).toContain('EmailSignInError: Too many sign-in e-mails to one address (1 per 60 s)')
    await ask('bob@example.com', '203.0.113.1')
    expect(errors(config)).toContain('EmailSignInError: Too many sign-in e-mails from one client (1 per 60 s)')
  })

  it('a link without a token: the Configuration error, with its Auth.js message', async () => {
    const { config } = emailConfig()
    const client = new EmailClient(config)
    const response = await client.send({ path: '/callback/email', query: { email: 'alice@example.com' } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(errors(config)).toContain(
      'Configuration: Missing token. The sign-in URL was manually opened without token or the link was not sent correctly in the email.',
    )
  })

  it('a link used twice, or expired: whether the token was found, and whether it had expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const link = lastLink(outbox)
    await client.confirm(link)
    expect((await new EmailClient(config).confirm(link)).headers.get('location')).toBe(VERIFICATION)
    const causes = config.logger.error.mock.calls.map(([error]) => (error as Error).cause)
    expect(causes).toContainEqual({ hasInvite: false, expired: false })

    await client.requestLink('bob@example.com')
    vi.setSystemTime(Date.now() + 24 * 3600 * 1000 + 1000)
    expect((await new EmailClient(config).confirm(lastLink(outbox))).headers.get('location')).toBe(VERIFICATION)
    const later = config.logger.error.mock.calls.map(([error]) => (error as Error).cause)
    expect(later).toContainEqual({ hasInvite: true, expired: true })
  })

  it('a token that expires this very second is expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    vi.setSystemTime(outbox[0]!.expires.getTime())
    expect((await client.confirm(lastLink(outbox))).headers.get('location')).toBe(VERIFICATION)
  })
})

describe('checking a typed code (checkSignInCode)', () => {
  const TOKEN_HASH = 'a'.repeat(64)
  async function checker(attempts = 2) {
    const store = memoryAuthStore()
    const logger = { error: vi.fn(), warn: vi.fn(), debug: vi.fn() }
    const ctx = {
      at: 1_000,
      config: { providerById: new Map([['email', { id: 'email', config: {}, email: { maxAge: 600 } }]]), store },
      logger,
    } as unknown as RequestContext
    const codeHash = await hashCode('K7Q2XM', TOKEN_HASH)
    const check = (typed: unknown, at = 1_000) =>
      checkSignInCode({ ...ctx, at } as RequestContext, { providerId: 'email', tokenHash: TOKEN_HASH, codeHash, expires: 1_100, attempts, typed })
    return { check, logger, store }
  }

  it('accepts the right code up to the last allowed attempt, and refuses it after, before any comparison', async () => {
    const { check, logger } = await checker(2)
    expect(await check('WRONG1')).toMatchObject({ reason: 'wrong' })
    expect(await check('k7q2xm')).toBeNull()
    expect(await check('K7Q2XM')).toMatchObject({ reason: 'exhausted', error: 'Verification' })
    expect(logger.error.mock.calls.map(([e]) => (e as Error).message)).toEqual(['Too many wrong one-time codes (2)'])
  })

  it('voids the token at the last allowed wrong code', async () => {
    const { check, logger } = await checker(2)
    expect(await check('WRONG1')).toMatchObject({ reason: 'wrong', error: 'Verification' })
    expect(await check('WRONG2')).toMatchObject({ reason: 'exhausted', error: 'Verification' })
    expect(logger.error.mock.calls.map(([e]) => (e as Error).message)).toEqual(['Too many wrong one-time codes (2)'])
  })

  it('treats anything but a string as a wrong code', async () => {
    const { check } = await checker(5)
    expect(await check(['K7Q2XM'])).toMatchObject({ reason: 'wrong' })
  })

  it('refuses a code from the second it expires, without counting it', async () => {
    const { check, store } = await checker(2)
    expect(await check('K7Q2XM', 1_100)).toMatchObject({ reason: 'expired', error: 'Verification' })
    expect(await check('K7Q2XM', 1_099)).toBeNull()
    expect(await store.increment(`email:code:${TOKEN_HASH}`, 600)).toBe(2)
  })
})

describe("the token of a passkey sign-up's code (spendCodeToken, voidCodeToken)", () => {
  const TOKEN_HASH = 'b'.repeat(64)
  function env(adapter: Pick<Adapter, 'useVerificationToken'>) {
    return { at: 1_000, adapter, logger: { error: vi.fn(), warn: vi.fn(), debug: vi.fn() } } as never as Parameters<typeof spendCodeToken>[0] & {
      logger: { error: ReturnType<typeof vi.fn> }
    }
  }
  const token = { providerId: 'email', identifier: 'alice@example.com', tokenHash: TOKEN_HASH }
  async function holding(expires: Date) {
    const store = createMemoryStore()
    const adapter = MemoryAdapter(store)
    await adapter.createVerificationToken!({ identifier: 'alice@example.com', token: TOKEN_HASH, expires })
    return { adapter, store }
  }

  it('spends the token of a right code once, for its address, and refuses it after', async () => {
    const { adapter } = await holding(new Date(2_000_000))
    expect(await spendCodeToken(env(adapter), token)).toEqual({ identifier: 'alice@example.com' })
    expect(await spendCodeToken(env(adapter), token)).toMatchObject({ reason: 'invalid', error: 'Verification' })
    const other = await holding(new Date(2_000_000))
    expect(await spendCodeToken(env(other.adapter), { ...token, identifier: 'mallory@example.com' })).toMatchObject({ reason: 'invalid' })
  })

  it('voids the token of a code got wrong too often, so that its link no longer signs in', async () => {
    const { adapter, store } = await holding(new Date(2_000_000))
    expect(await voidCodeToken(env(adapter), token)).toBeNull()
    expect(store.verificationTokens.size).toBe(0)
  })

  it('answers null when the adapter fails to void it, and logs the failure', async () => {
    const failing = env({ useVerificationToken: () => Promise.reject(new Error('constraint violated')) })
    expect(await voidCodeToken(failing, token)).toBeNull()
    expect(failing.logger.error).toHaveBeenCalledTimes(1)
    expect(failing.logger.error.mock.calls[0]![0]).toMatchObject({ type: 'CallbackRouteError' })
  })
})

describe('the counters in the store', () => {
  it('are named by provider, kind and the hash of the inbox or client: every instance and version counts together', async () => {
    const { store, keys } = recording()
    const { config, outbox } = emailConfig({
      provider: { code: true, throttle: { addressHeader: 'X-Real-IP', window: 900 } },
      overrides: { store },
    })
    const client = new EmailClient(config)
    const csrfToken = await client.csrfToken()
    await client.send({ path: '/signin/email', body: { email: 'Alice+news@Example.com', csrfToken }, headers: { 'x-real-ip': '203.0.113.9' } })
    expect(keys).toEqual([
      `increment email:send:email:identifier:${await sha256Hex('alice@example.com')} 900`,
      `increment email:send:email:address:${await sha256Hex('203.0.113.9')} 900`,
    ])
    keys.length = 0
    await client.enterCode(wrong(outbox[0]!.code!))
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatch(/^increment email:code:[0-9a-f]{64} 600$/)
  })
})

describe('the confirmation page', () => {
  it('is kept out of caches and out of Referer headers (its URL holds the token)', async () => {
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const page = await client.open(lastLink(outbox))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('cache-control')).toMatch(/no-store/)
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
  })
})

describe('an e-mail sign-in in a browser with a database session', () => {
  it('keeps the session of the same user: it is theirs (another user\'s is ended, see test/email/signin.test.ts)', async () => {
    const memory = createMemoryStore()
    const { config, outbox } = emailConfig({ store: memory, overrides: { session: { strategy: 'database' } } })
    await MemoryAdapter(memory).createUser({ id: 'u-alice', email: 'alice@example.com', emailVerified: null })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    await client.confirm(lastLink(outbox))
    const first = client.jar.get(SESSION_COOKIE)!
    expect(memory.sessions.has(first)).toBe(true)
    await client.requestLink('alice@example.com')
    await client.confirm(lastLink(outbox))
    expect(memory.sessions.has(first), "the same user's earlier session stays").toBe(true)
  })
})


describe('an e-mail sign-in as another user, in a browser whose database session is cached', () => {
  it("refuses the replaced session's cached copy at once: a copy of the browser's cookies signs in as nobody", async () => {
    const memory = createMemoryStore()
    const { config, outbox } = emailConfig({ store: memory, overrides: { session: { strategy: 'database', cache: { maxAge: 60 } } as never } })
    await MemoryAdapter(memory).createUser({ id: 'u-alice', email: 'alice@example.com', emailVerified: null })
    const client = new EmailClient(config)
    await client.requestLink('bob@example.com')
    await client.confirm(lastLink(outbox))
    expect(((await client.session()).body as { user: { email: string } }).user.email).toBe('bob@example.com')
    // A copy of Bob's cookies, session cache included, taken before Alice signs in here.
    const copy = new EmailClient(config)
    for (const [name, value] of client.jar.cookies) copy.jar.cookies.set(name, value)
    expect(copy.jar.get('__Secure-authjs.session-cache')).toBeDefined()
    await client.requestLink('alice@example.com')
    await client.confirm(lastLink(outbox))
    expect(((await client.session()).body as { user: { email: string } }).user.email).toBe('alice@example.com')
    expect((await copy.session()).body).toBeNull()
  })
})

describe('the longest deliverable address', () => {
  it('is 254 characters (RFC 5321): one more is refused before any message is sent', async () => {
    const longest = `${'a'.repeat(64)}@${'b'.repeat(185)}.com`
    expect(longest).toHaveLength(254)
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    expect((await client.requestLink(longest)).headers.get('location')).toBe(VERIFY_REQUEST)
    expect(outbox.map((message) => message.identifier)).toEqual([longest])
    const overlong = `${'a'.repeat(64)}@${'b'.repeat(186)}.com`
    expect((await client.requestLink(overlong)).headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    expect(outbox).toHaveLength(1)
  })
})

// The same attack as test/email/identifier.test.ts, on the one adapter where only the engine's own
// check refuses it (that file's PostgreSQL case costs seconds per mutant).
describe("a link rewritten to another address, through an adapter that ignores the address", () => {
  it.each(['confirm', 'direct'] as const)('is refused (%s): no session, no user for the victim', async (link) => {
    const adapter = addressBlind(MemoryAdapter(createMemoryStore()))
    const { config, outbox } = emailConfig({ provider: { link }, overrides: { adapter } })
    const attacker = new EmailClient(config)
    await attacker.requestLink('mallory@example.com')
    const forged = new URL(lastLink(outbox))
    forged.searchParams.set('email', 'victim@example.com')
    const response = link === 'direct' ? await attacker.open(forged) : await attacker.confirm(forged)
    expect(response.headers.get('location')).toBe(VERIFICATION)
    expect(attacker.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(await adapter.getUserByEmail!('victim@example.com')).toBeNull()
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'Verification' }))
  })
})
