/**
 * A passkey sign-up while an e-mail provider is configured: the address typed in is verified with a
 * one-time code sent through the e-mail flow (its normaliser, limits, mailer, code checks and
 * single-use tokens) before any registration options are issued, and the user is stored with the
 * address verified. Without an e-mail provider the sign-up stays as in Auth.js, stored unverified.
 */
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { EmailUserConfig } from '../../providers/email.js'
import Email from '../../providers/email.js'
import Passkey from '../../providers/passkey.js'
import { EmailClient, lastLink, type Outbox } from '../email/helpers.js'
import { ORIGIN, setCookie } from '../fixtures/http.js'
import { CHALLENGE_COOKIE, PasskeyBrowser, passkeyConfig, SESSION_COOKIE, seedPasskeyUser, signInAs } from './helpers.js'

const NEWCOMER = 'newcomer@example.com'

function verifyingConfig(store: MemoryStore = createMemoryStore(), provider: EmailUserConfig = {}) {
  const outbox: Outbox = []
  const config = passkeyConfig(store, {
    providers: [Passkey(), Email({ sendVerificationRequest: async (params) => void outbox.push(params), ...provider })],
  })
  return { store, outbox, config, code: () => outbox.at(-1)!.code! }
}

const sessionUser = (store: MemoryStore, browser: PasskeyBrowser) =>
  store.sessions.get(browser.jar.get(SESSION_COOKIE) ?? '')?.userId

describe('a passkey sign-up with an e-mail provider', () => {
  it('sends a code to the address and issues registration options only for the right code', async () => {
    const { store, outbox, config, code } = verifyingConfig()
    const browser = new PasskeyBrowser(config)
    const before = Date.now()
    const asked = await browser.postOptions({ email: 'Newcomer@Example.com' })
    expect(asked.response.status).toBe(200)
    expect(asked.body).toEqual({ action: 'verify-email' })
    expect(browser.jar.get(CHALLENGE_COOKIE)).toBeDefined()
    // The e-mail flow's normaliser chose the address; the message carries a link and a code.
    expect(outbox.map((m) => m.identifier)).toEqual([NEWCOMER])
    expect(code()).toMatch(/^[0-9A-Z]{6}$/)
    expect(new URL(outbox[0]!.url).pathname).toBe('/auth/callback/email')
    expect(store.users.size).toBe(0)

    const typed = await browser.submitCode(code())
    expect(typed.response.status).toBe(200)
    const options = typed.body!.options as PublicKeyCredentialCreationOptionsJSON
    expect(typed.body!.action).toBe('register')
    expect(options.user.name).toBe(NEWCOMER)
    const registered = await browser.answer('register', browser.authenticator.register(options))
    expect(registered.headers.get('location')).toBe(ORIGIN)

    const user = (await MemoryAdapter(store).getUserByEmail(NEWCOMER))!
    expect(sessionUser(store, browser)).toBe(user.id)
    expect(user.emailVerified!.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
    expect(user.emailVerified!.getTime()).toBeLessThanOrEqual(Date.now())
    // The code's token is spent: the message's link no longer signs anyone in.
    expect(store.verificationTokens.size).toBe(0)
    const stranger = new EmailClient(config)
    const link = await stranger.confirm(lastLink(outbox))
    expect(link.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
  })

  it('leaves an account whose address a later e-mail link signs into, and the passkey still opens', async () => {
    const { store, outbox, config, code } = verifyingConfig()
    const browser = new PasskeyBrowser(config)
    await browser.signUpWithCode(NEWCOMER, code)
    const user = sessionUser(store, browser)

    const mailbox = new EmailClient(config)
    await mailbox.requestLink(NEWCOMER)
    await mailbox.confirm(lastLink(outbox))
    expect(store.sessions.get(mailbox.jar.get(SESSION_COOKIE)!)?.userId).toBe(user)
    await browser.signOut()
    await browser.signIn({ action: 'authenticate' })
    expect(sessionUser(store, browser)).toBe(user)
  })

  it('does not start a sign-up to verify over GET, which never sends e-mail', async () => {
    const { outbox, config } = verifyingConfig()
    const browser = new PasskeyBrowser(config)
    const queries: Record<string, string>[] = [{ email: NEWCOMER }, { action: 'register', email: NEWCOMER }]
    for (const query of queries) {
      const { response, body } = await browser.options(query)
      expect(response.status).toBe(400)
      expect(body).toEqual({ error: 'Email verification required' })
      expect(setCookie(response, CHALLENGE_COOKIE)).toBeUndefined()
    }
    expect(outbox).toEqual([])
  })

  it('keeps waiting after a wrong code, and after too many voids the code and the link with it', async () => {
    const { store, outbox, config, code } = verifyingConfig()
    const browser = new PasskeyBrowser(config)
    await browser.postOptions({ email: NEWCOMER })
    const sent = code()
    const wrong = sent === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ'
    for (let attempt = 1; attempt < 5; attempt++) {
      const typed = await browser.submitCode(wrong)
      expect(typed.response.status).toBe(400)
      expect(typed.body).toEqual({ action: 'verify-email', error: 'Invalid code' })
    }
    const last = await browser.submitCode(wrong)
    expect(last.body).toEqual({ error: 'The code is no longer valid' })
    expect(setCookie(last.response, CHALLENGE_COOKIE)?.attributes['max-age']).toBe('0')
    expect(store.verificationTokens.size).toBe(0)
    // The right code comes too late: no sign-up waits for it any more.
    const late = await browser.submitCode(sent)
    expect(late.response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
    const link = await new EmailClient(config).confirm(lastLink(outbox))
    expect(link.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
    expect(store.users.size).toBe(0)
  })

  it('sends a code of the provider’s shape, and the default shape from a provider that sends links only', async () => {
    const digits = verifyingConfig(createMemoryStore(), { code: { length: 8, alphabet: 'digits' } })
    await new PasskeyBrowser(digits.config).postOptions({ email: NEWCOMER })
    expect(digits.code()).toMatch(/^\d{8}$/)
    const links = verifyingConfig()
    await new PasskeyBrowser(links.config).postOptions({ email: NEWCOMER })
    expect(links.code()).toMatch(/^[0-9A-Z]{6}$/)
  })

  it('counts the code against the inbox’s send limit, shared with e-mail sign-in', async () => {
    const { outbox, config } = verifyingConfig(createMemoryStore(), { throttle: { perIdentifier: 2 } })
    const mailbox = new EmailClient(config)
    await mailbox.requestLink(NEWCOMER)
    await mailbox.requestLink(NEWCOMER)
    const browser = new PasskeyBrowser(config)
    // Another spelling of the same inbox shares its limit.
    const asked = await browser.postOptions({ email: 'newcomer+passkey@example.com' })
    expect(asked.response.status).toBe(400)
    expect(asked.body).toEqual({ error: 'The e-mail could not be sent' })
    expect(setCookie(asked.response, CHALLENGE_COOKIE)).toBeUndefined()
    expect(outbox).toHaveLength(2)
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ type: 'EmailSignInError', message: expect.stringMatching(/Too many sign-in e-mails to one address/) }),
    )
  })

  it('refuses a posted options request without its CSRF token, sending nothing', async () => {
    const { outbox, config } = verifyingConfig()
    const browser = new PasskeyBrowser(config)
    await browser.client.csrfToken()
    const response = await browser.client.send({ path: '/webauthn-options/passkey', body: { email: NEWCOMER } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(outbox).toEqual([])
  })

  it('refuses a code typed in a browser where no sign-up waits for it', async () => {
    const { store, config, code } = verifyingConfig()
    await new PasskeyBrowser(config).postOptions({ email: NEWCOMER })
    const elsewhere = new PasskeyBrowser(config)
    const typed = await elsewhere.submitCode(code())
    expect(typed.response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
    expect(elsewhere.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(store.users.size).toBe(0)
  })

  it('registers only the address the code went to, whatever address is posted with the code', async () => {
    const { store, config, code } = verifyingConfig()
    const mallory = new PasskeyBrowser(config)
    await mallory.postOptions({ email: 'mallory@example.com' })
    // The code resumes Mallory's own sign-up, sealed in her cookie: the address posted beside it
    // is not read.
    const typed = await mallory.postOptions({ code: code(), email: NEWCOMER })
    const options = typed.body!.options as PublicKeyCredentialCreationOptionsJSON
    expect(options.user.name).toBe('mallory@example.com')
    await mallory.answer('register', mallory.authenticator.register(options))
    expect([...store.users.values()].map((u) => u.email)).toEqual(['mallory@example.com'])
  })

  it('sends nothing for a known address or a signed-in user: only a sign-up is verified', async () => {
    const store = createMemoryStore()
    const { outbox, config } = verifyingConfig(store)
    const known = new PasskeyBrowser(config)
    await seedPasskeyUser(store, known.authenticator, { id: 'u-ada', email: 'ada@example.com' })
    expect((await known.postOptions({ email: 'ada@example.com' })).body?.action).toBe('authenticate')
    const adding = new PasskeyBrowser(config)
    await signInAs(store, adding.jar, 'u-ada')
    expect((await adding.options({ action: 'register' })).body.action).toBe('register')
    expect(outbox).toEqual([])
  })
})

describe('a passkey sign-up without an e-mail provider', () => {
  it('is stored with its address unverified, as in Auth.js', async () => {
    const store = createMemoryStore()
    const browser = new PasskeyBrowser(passkeyConfig(store))
    const posted = await browser.postOptions({ email: NEWCOMER })
    expect(posted.body?.action).toBe('register')
    const registered = await browser.answer(
      'register',
      browser.authenticator.register(posted.body!.options as PublicKeyCredentialCreationOptionsJSON),
    )
    expect(registered.headers.get('location')).toBe(ORIGIN)
    expect((await MemoryAdapter(store).getUserByEmail(NEWCOMER))!.emailVerified).toBeNull()
  })
})
