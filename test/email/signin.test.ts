/**
 * E-mail sign-in through `Auth`, as Auth.js users know it (reference §5.2): the verify-request
 * redirect, the hashed token, the `signIn` callback's verdicts, the identifier normalisation, the
 * Verification error, the stored user and events, and our scanner-safe links.
 */
import { createHash } from 'node:crypto'
import { Auth as AuthJs } from '@auth/core'
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import type { SignInCallbackParams } from '../../core/types.js'
import { authRequest, CookieJar, ORIGIN, SECRET, setCookie } from '../fixtures/http.js'
import { emailConfig, EmailClient, lastLink } from './helpers.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const VERIFY_REQUEST = `${ORIGIN}/auth/verify-request?provider=email&type=email`
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('asking for a link', () => {
  it('sends the link and redirects to the verify-request page, storing only the hash of the token', async () => {
    const { config, outbox, store } = emailConfig()
    const client = new EmailClient(config)
    const before = Date.now()
    const response = await client.requestLink('alice@example.com', { callbackUrl: '/dashboard' })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(VERIFY_REQUEST)
    // No code: nothing rests, no flow cookie.
    expect(setCookie(response, '__Secure-authjs.flow.email-signin')).toBeUndefined()

    expect(outbox).toHaveLength(1)
    const message = outbox[0]!
    expect(message.identifier).toBe('alice@example.com')
    expect(message.token).toMatch(/^[0-9a-f]{64}$/)
    expect(message.url).toBe(
      `${ORIGIN}/auth/callback/email?${new URLSearchParams({ callbackUrl: `${ORIGIN}/dashboard`, token: message.token, email: 'alice@example.com' })}`,
    )
    expect(message.expires.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 86_400_000)
    expect(message.expires.getTime()).toBeLessThanOrEqual(Date.now() + 86_400_000)
    expect(message.code).toBeUndefined()
    expect(message.provider.id).toBe('email')
    expect(message.theme).toMatchObject({ colorScheme: 'auto' })

    const rows = [...store.verificationTokens.values()]
    expect(rows).toEqual([
      { identifier: 'alice@example.com', token: sha256(`${message.token}${SECRET}`), expires: message.expires },
    ])
  })

  it('passes the hashed token to createVerificationToken, with the provider secret when it has one', async () => {
    const { config, outbox, adapter } = emailConfig({ provider: { secret: 'provider-secret-that-is-long-enough!!' } })
    const spy = vi.spyOn(adapter, 'createVerificationToken')
    await new EmailClient(config).requestLink('bob@example.com')
    expect(spy).toHaveBeenCalledWith({
      identifier: 'bob@example.com',
      token: sha256(`${outbox[0]!.token}provider-secret-that-is-long-enough!!`),
      expires: outbox[0]!.expires,
    })
  })

  it('uses generateVerificationToken and maxAge of the provider', async () => {
    const { config, outbox } = emailConfig({
      provider: { generateVerificationToken: () => 'chosen-token', maxAge: 60 },
    })
    await new EmailClient(config).requestLink('bob@example.com')
    expect(outbox[0]!.token).toBe('chosen-token')
    expect(outbox[0]!.expires.getTime() - Date.now()).toBeLessThanOrEqual(60_000)
  })

  it('asks the signIn callback with email.verificationRequest before sending', async () => {
    const signIn = vi.fn(() => true)
    const { config, outbox, store } = emailConfig({ overrides: { callbacks: { signIn } } })
    await MemoryAdapter(store).createUser({ id: 'u-bob', email: 'bob@example.com', emailVerified: null, name: 'Bob' })
    await new EmailClient(config).requestLink('bob@example.com')
    expect(signIn).toHaveBeenCalledWith({
      user: expect.objectContaining({ id: 'u-bob', email: 'bob@example.com', name: 'Bob' }),
      account: { providerAccountId: 'bob@example.com', userId: 'u-bob', type: 'email', provider: 'email' },
      email: { verificationRequest: true },
    })
    expect(outbox).toHaveLength(1)
  })

  it('refuses with AccessDenied and sends nothing when the signIn callback returns false', async () => {
    const { config, outbox, store } = emailConfig({ overrides: { callbacks: { signIn: () => false } } })
    const response = await new EmailClient(config).requestLink('bob@example.com')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(outbox).toHaveLength(0)
    expect(store.verificationTokens.size).toBe(0)
  })

  it('refuses with AccessDenied and sends nothing when the signIn callback throws', async () => {
    const { config, outbox } = emailConfig({
      overrides: {
        callbacks: {
          signIn: () => {
            throw new Error('blocked domain')
          },
        },
      },
    })
    const response = await new EmailClient(config).requestLink('bob@example.com')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(outbox).toHaveLength(0)
  })

  it('redirects where the signIn callback says (a relative URL, through redirect) and sends nothing', async () => {
    const { config, outbox } = emailConfig({ overrides: { callbacks: { signIn: () => '/waitlist' } } })
    const response = await new EmailClient(config).requestLink('bob@example.com')
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/waitlist`)
    expect(outbox).toHaveLength(0)
  })

  it('answers EmailSignin when the message cannot be sent, and logs no secret', async () => {
    let secrets: string[] = []
    const { config } = emailConfig({
      provider: {
        sendVerificationRequest: ({ url, token }) => {
          secrets = [url, token]
          throw new Error(`SMTP refused the message with ${url} (token ${token})`)
        },
      },
    })
    const response = await new EmailClient(config).requestLink('bob@example.com')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    const logged = JSON.stringify(config.logger.error.mock.calls.map(([e]) => [e.message, e.stack, e.cause?.err?.stack]))
    expect(logged).toContain('SMTP refused the message')
    for (const secret of secrets) expect(logged).not.toContain(secret)
  })
})

describe('normalising the address (reference §5.2 step 1)', () => {
  const cases: [string, string][] = [
    ['Alice@Example.COM', 'alice@example.com'],
    ['  alice@example.com  ', 'alice@example.com'],
    ['alice@example.com,attacker.com', 'alice@example.com'],
    ['ａｌｉｃｅ@example.com', 'alice@example.com'],
    ['alice＠example.com', 'alice@example.com'],
  ]
  it.each(cases)('sends %j to %j', async (typed, normalised) => {
    const { config, outbox } = emailConfig()
    const response = await new EmailClient(config).requestLink(typed)
    expect(response.headers.get('location')).toBe(VERIFY_REQUEST)
    expect(outbox[0]!.identifier).toBe(normalised)
  })

  const refused = [
    '',
    'alice',
    '@example.com',
    'alice@',
    'a@b@example.com',
    'victim@example.com＠attacker.com',
    '"attacker@evil.com"@victim.com',
    'alice@,example.com',
    'alice@example.com\r\nBcc: everyone@example.com',
    'alice@exa\u0000mple.com',
    `${'a'.repeat(250)}@example.com`,
  ]
  it.each(refused)('refuses %j with EmailSignin, sending nothing and logging it escaped', async (typed) => {
    const { config, outbox, store } = emailConfig()
    const response = await new EmailClient(config).requestLink(typed)
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    expect(outbox).toHaveLength(0)
    expect(store.verificationTokens.size).toBe(0)
    const [logged] = config.logger.error.mock.calls.at(-1)!
    expect(logged.type).toBe('EmailSignInError')
    expect(logged.message).not.toMatch(/[\r\n\u0000]/)
  })

  it('refuses a body without an address, or with a non-string one, with EmailSignin', async () => {
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    const csrfToken = await client.csrfToken()
    for (const json of [{ csrfToken }, { csrfToken, email: 42 }, { csrfToken, email: ['a@b.c'] }]) {
      const response = await client.send({ path: '/signin/email', json })
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    }
    expect(outbox).toHaveLength(0)
  })

  it('uses the provider normalizeIdentifier instead, and refuses what it throws on', async () => {
    const { config, outbox } = emailConfig({
      provider: {
        normalizeIdentifier: (identifier) => {
          if (!identifier.endsWith('@corp.example')) throw new Error('outside the company')
          return identifier.trim()
        },
      },
    })
    const client = new EmailClient(config)
    expect((await client.requestLink(' Carol@corp.example')).headers.get('location')).toBe(VERIFY_REQUEST)
    expect(outbox[0]!.identifier).toBe('Carol@corp.example')
    const refused = await client.requestLink('carol@gmail.com')
    expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    expect(outbox).toHaveLength(1)
  })
})

describe('following the link', () => {
  it('shows a confirmation page on GET that changes nothing, and signs in on its POST', async () => {
    const signIn = vi.fn((_params: SignInCallbackParams) => true)
    const { config, outbox, store } = emailConfig({ overrides: { callbacks: { signIn } } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com', { callbackUrl: '/dashboard' })
    const link = lastLink(outbox)

    const page = await client.open(link)
    expect(page.status).toBe(200)
    expect(page.headers.get('cache-control')).toBe('private, no-cache, no-store')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    const html = await page.text()
    // The address may wrap before its @ and dots (<wbr>), never inside a word.
    expect(html.replace(/<wbr>|<\/?span[^>]*>/g, '')).toContain('Sign in as alice@example.com')
    expect(html).toContain(`action="${ORIGIN}/auth/callback/email" method="POST"`)
    expect(setCookie(page, SESSION_COOKIE)).toBeUndefined()
    expect(store.verificationTokens.size).toBe(1)

    const signedIn = await client.confirm(link)
    expect(signedIn.status).toBe(302)
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    const token = await decode({ token: setCookie(signedIn, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ email: 'alice@example.com' })
    expect(store.verificationTokens.size).toBe(0)
    // The second signIn call (after the link) carries no `email` key, as in Auth.js.
    expect(signIn).toHaveBeenLastCalledWith({
      user: expect.objectContaining({ email: 'alice@example.com' }),
      account: expect.objectContaining({ type: 'email', provider: 'email', providerAccountId: 'alice@example.com' }),
    })
    expect(signIn.mock.calls.at(-1)![0]).not.toHaveProperty('email')
  })

  it('leaves the token usable after GET and HEAD requests on the link', async () => {
    const { config, outbox, store } = emailConfig()
    const scanner = new EmailClient(config)
    await new EmailClient(config).requestLink('alice@example.com')
    const link = lastLink(outbox)
    for (let i = 0; i < 3; i++) expect((await scanner.open(link)).status).toBe(200)
    // HEAD is answered as GET: it spends nothing either.
    const head = await Auth(new Request(link, { method: 'HEAD' }), config)
    expect(head.status).toBe(200)
    expect(store.verificationTokens.size).toBe(1)
    const user = new EmailClient(config)
    expect((await user.confirm(link)).headers.get('location')).toBe(ORIGIN)
  })

  it('answers Verification (403 page) to a link used twice, expired, or unknown', async () => {
    const { config, outbox, store } = emailConfig()
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const link = lastLink(outbox)
    await client.confirm(link)
    const again = await client.confirm(link)
    expect(again.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
    const errorPage = await client.send({ path: '/error', query: { error: 'Verification' } })
    expect(errorPage.status).toBe(403)

    await client.requestLink('bob@example.com')
    const expiring = lastLink(outbox)
    for (const row of store.verificationTokens.values()) row.expires = new Date(Date.now() - 1000)
    expect((await client.confirm(expiring)).headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)

    const unknown = new URL(link)
    unknown.searchParams.set('token', 'f'.repeat(64))
    expect((await client.confirm(unknown)).headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
  })

  it('answers Configuration to a link without a token', async () => {
    const { config } = emailConfig()
    const client = new EmailClient(config)
    const response = await client.send({ path: '/callback/email', query: { email: 'alice@example.com' } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
  })

  it("signs in on the GET itself with link: 'direct' (Auth.js's one-click link)", async () => {
    const { config, outbox, store } = emailConfig({ provider: { link: 'direct' } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const response = await client.open(lastLink(outbox))
    expect(response.status).toBe(302)
    expect(setCookie(response, SESSION_COOKIE)).toBeDefined()
    expect(store.verificationTokens.size).toBe(0)
  })

  it('verifies links an Auth.js deployment sent (same hash), also under an array secret', async () => {
    const store = createMemoryStore()
    const secrets = [SECRET, 'an-older-secret-that-is-long-enough-123456']
    const sent: { url: string }[] = []
    const authjsConfig = {
      secret: secrets,
      trustHost: true,
      adapter: MemoryAdapter(store),
      providers: [
        {
          id: 'email',
          type: 'email' as const,
          name: 'Email',
          maxAge: 86400,
          sendVerificationRequest: async ({ url }: { url: string }) => {
            sent.push({ url })
          },
          options: {},
        },
      ],
      logger: { error: () => {}, warn: () => {}, debug: () => {} },
    }
    const jar = new CookieJar()
    const csrf = await AuthJs(authRequest({ path: '/auth/csrf', cookies: jar }), authjsConfig as never) as Response
    jar.store(csrf)
    const { csrfToken } = (await csrf.json()) as { csrfToken: string }
    await AuthJs(
      authRequest({ path: '/auth/signin/email', body: { email: 'dana@example.com', csrfToken }, cookies: jar }),
      authjsConfig as never,
    )
    expect(sent).toHaveLength(1)

    const { config } = emailConfig({ store, overrides: { secret: secrets } })
    const client = new EmailClient(config)
    const signedIn = await client.confirm(new URL(sent[0]!.url))
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
  })
})

describe('the signed-in user', () => {
  it('creates the user verified on a first sign-in, with the events and pages.newUser', async () => {
    const events = { createUser: vi.fn(), updateUser: vi.fn(), signIn: vi.fn() }
    const { config, outbox, store } = emailConfig({
      overrides: { session: { strategy: 'database' }, events, pages: { newUser: '/welcome' } },
    })
    const client = new EmailClient(config)
    await client.requestLink('erin@example.com', { callbackUrl: '/app' })
    const response = await client.confirm(lastLink(outbox))
    expect(response.headers.get('location')).toBe(`/welcome?callbackUrl=${encodeURIComponent(`${ORIGIN}/app`)}`)
    const users = [...store.users.values()]
    expect(users).toHaveLength(1)
    expect(users[0]).toMatchObject({ email: 'erin@example.com' })
    expect(users[0]!.emailVerified).toBeInstanceOf(Date)
    expect(store.accounts.size).toBe(0)
    const session = store.sessions.get(setCookie(response, SESSION_COOKIE)!.value)!
    expect(session.userId).toBe(users[0]!.id)
    expect(events.createUser).toHaveBeenCalledWith({ user: expect.objectContaining({ email: 'erin@example.com' }) })
    expect(events.updateUser).not.toHaveBeenCalled()
    expect(events.signIn).toHaveBeenCalledWith({
      user: expect.objectContaining({ email: 'erin@example.com' }),
      account: expect.objectContaining({ type: 'email', userId: users[0]!.id }),
      isNewUser: true,
    })
  })

  it("marks an existing user verified, and ends this browser's database session of another user", async () => {
    const events = { createUser: vi.fn(), updateUser: vi.fn(), signIn: vi.fn() }
    const { config, outbox, store } = emailConfig({ overrides: { session: { strategy: 'database' }, events } })
    const adapter = MemoryAdapter(store)
    await adapter.createUser({ id: 'u-frank', email: 'frank@example.com', emailVerified: null })
    await adapter.createUser({ id: 'u-other', email: 'other@example.com', emailVerified: null })
    await adapter.createSession({ sessionToken: 'other-session', userId: 'u-other', expires: new Date(Date.now() + 60_000) })
    const client = new EmailClient(config)
    client.jar.cookies.set(SESSION_COOKIE, 'other-session')
    await client.requestLink('frank@example.com')
    const response = await client.confirm(lastLink(outbox))
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(store.sessions.has('other-session')).toBe(false)
    expect(store.users.get('u-frank')!.emailVerified).toBeInstanceOf(Date)
    expect(store.users.size).toBe(2)
    expect(events.updateUser).toHaveBeenCalledWith({ user: expect.objectContaining({ id: 'u-frank' }) })
    expect(events.createUser).not.toHaveBeenCalled()
    expect(events.signIn).toHaveBeenCalledWith(expect.objectContaining({ isNewUser: false }))
  })
})

describe('configuration', () => {
  it('requires an adapter (MissingAdapter), as Auth.js does', async () => {
    const { config } = emailConfig({ overrides: { adapter: undefined } })
    const response = await Auth(authRequest({ path: '/auth/providers' }), config)
    expect(response.status).toBe(500)
    expect(config.logger.error.mock.calls[0]![0].type).toBe('MissingAdapter')
  })

  it('requires the verification-token methods of the adapter (MissingAdapterMethods)', async () => {
    const { config, adapter } = emailConfig()
    const { useVerificationToken: _dropped, ...partial } = adapter
    const response = await Auth(authRequest({ path: '/auth/providers' }), { ...config, adapter: partial })
    expect(response.status).toBe(500)
    const [error] = config.logger.error.mock.calls[0]!
    expect(error.type).toBe('MissingAdapterMethods')
    expect(error.message).toContain('useVerificationToken')
  })

  it.each([
    [{ code: { length: 6, alphabet: 'digits' } }, 'code.length'],
    [{ code: { length: 9 } }, 'code.length'],
    [{ code: { attempts: 0 } }, 'code.attempts'],
    [{ link: 'magic' }, 'link'],
    [{ throttle: { perIdentifier: -1 } }, 'throttle.perIdentifier'],
    [{ throttle: { addressHeader: 'bad header' } }, 'throttle.addressHeader'],
    [{ maxAge: 0 }, 'maxAge'],
  ])('refuses the provider option %j at boot (%s)', async (options, path) => {
    const { config } = emailConfig({ provider: options as never })
    const response = await Auth(authRequest({ path: '/auth/providers' }), config)
    expect(response.status).toBe(500)
    expect(config.logger.error.mock.calls[0]![0].message).toContain(`config.providers.0.${path}`)
  })

  it('lists the provider at /providers with its sign-in and callback URLs', async () => {
    const { config } = emailConfig()
    const response = await Auth(authRequest({ path: '/auth/providers' }), config)
    expect(await response.json()).toEqual({
      email: {
        id: 'email',
        name: 'Email',
        type: 'email',
        signinUrl: `${ORIGIN}/auth/signin/email`,
        callbackUrl: `${ORIGIN}/auth/callback/email`,
      },
    })
  })
})
