/**
 * Attacks on passkey sign-in, each ending with no session and a logged reason: a replayed
 * assertion (in this process, and on another instance sharing the store), a foreign challenge, a
 * wrong origin or RP id, a counter that does not grow, an unknown credential, an answer without
 * user verification, a malformed or mismatched answer, an expired or foreign-provider envelope,
 * and a login CSRF attempt (the reason the callback needs no CSRF token).
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, type MemoryStore } from '../../adapters/memory.js'
import { WebAuthnVerificationError } from '../../core/errors.js'
import { memoryAuthStore } from '../../core/store/index.js'
import Passkey from '../../providers/passkey.js'
import WebAuthn from '../../providers/webauthn.js'
import { authRequest, ORIGIN, setCookie } from '../fixtures/http.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import {
  CHALLENGE_COOKIE,
  PasskeyBrowser,
  passkeyConfig,
  SESSION_COOKIE,
  seedPasskeyUser,
} from './helpers.js'

const ADA = { id: 'u-ada', email: 'ada@example.com', name: 'Ada' }

let store: MemoryStore
let config: ReturnType<typeof passkeyConfig>
let browser: PasskeyBrowser

beforeEach(async () => {
  store = createMemoryStore()
  config = passkeyConfig(store)
  browser = new PasskeyBrowser(config)
  await seedPasskeyUser(store, browser.authenticator, ADA)
})

/** The refusal: the WebAuthn error page, no session cookie, no session, the reason in the log. */
async function expectRefused(response: Response, reason: RegExp, page = 'WebAuthnVerificationError') {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=${page}`)
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  expect(store.sessions.size).toBe(0)
  expect(await browser.session()).toBeNull()
  const logged = config.logger.error.mock.calls.map(([error]) => error as Error)
  const described = logged.map((e) => `${e.name}: ${e.message} ${String((e.cause as { err?: Error })?.err?.message ?? '')}`)
  expect(described.join('\n')).toMatch(reason)
}

async function authenticationOptions(client = browser): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { body } = await client.options({ action: 'authenticate' })
  return body.options as PublicKeyCredentialRequestOptionsJSON
}

describe('passkey sign-in refuses', () => {
  it('a replayed assertion: the same answer and challenge cookie, posted again', async () => {
    const options = await authenticationOptions()
    const sealed = browser.jar.get(CHALLENGE_COOKIE)!
    const answer = browser.authenticator.authenticate(options)
    expect((await browser.answer('authenticate', answer)).headers.get('location')).toBe(ORIGIN)
    // The thief has a copy of the request: the cookie as it was, the same body.
    const thief = new PasskeyBrowser(config, browser.authenticator)
    thief.jar.cookies.set(CHALLENGE_COOKIE, sealed)
    const replay = await thief.answer('authenticate', answer)
    expect(replay.status).toBe(302)
    expect(replay.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(setCookie(replay, SESSION_COOKIE)).toBeUndefined()
    expect(await thief.session()).toBeNull()
    expect(config.logger.error.mock.calls.map(([e]) => (e as Error).message).join()).toMatch(/already used/)
  })

  it('a replayed assertion on another instance that shares the store: the challenge is spent', async () => {
    const shared = memoryAuthStore()
    const first = passkeyConfig(store, { store: shared })
    const client = new PasskeyBrowser(first, browser.authenticator)
    const options = await authenticationOptions(client)
    const sealed = client.jar.get(CHALLENGE_COOKIE)!
    const answer = client.authenticator.authenticate(options)
    expect((await client.answer('authenticate', answer)).headers.get('location')).toBe(ORIGIN)

    // A second instance: its own module state (the envelope's in-process single use is fresh
    // there), the same database and the same store.
    vi.resetModules()
    const instance = (await import('../../core/index.js')) as typeof import('../../core/index.js')
    const second = passkeyConfig(store, { store: shared, logger: config.logger })
    const sessionsBefore = store.sessions.size
    const replay = await instance.Auth(
      authRequest({
        path: '/auth/callback/passkey',
        body: { action: 'authenticate', data: JSON.stringify(answer) },
        cookies: { [CHALLENGE_COOKIE]: sealed },
      }),
      second,
    )
    // The engine spends the sealed flow through the shared store before the chart runs: refused as
    // on the first instance.
    expect(replay.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(setCookie(replay, SESSION_COOKIE)).toBeUndefined()
    expect(store.sessions.size).toBe(sessionsBefore)
    const logged = config.logger.error.mock.calls.map(([e]) => (e as Error).message)
    expect(logged.join()).toMatch(/envelope was already used/)
  })

  it('an assertion over a foreign challenge (one this browser was never given)', async () => {
    const options = await authenticationOptions()
    const foreign = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
    const response = await browser.answer('authenticate', browser.authenticator.authenticate(options, { challenge: foreign }))
    await expectRefused(response, /Unexpected authentication response challenge/)
  })

  it('an assertion made for another origin (a phishing site relaying the challenge)', async () => {
    const options = await authenticationOptions()
    const answer = browser.authenticator.authenticate(options, { origin: 'https://authchart.test.evil.example' })
    await expectRefused(await browser.answer('authenticate', answer), /Unexpected authentication response origin/)
  })

  it('an assertion signed for another RP id', async () => {
    const options = await authenticationOptions()
    const answer = browser.authenticator.authenticate(options, { rpId: 'evil.example' })
    await expectRefused(await browser.answer('authenticate', answer), /RP ID/i)
  })

  it('a registration made for another origin or RP id, and stores no passkey', async () => {
    for (const overrides of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }]) {
      const { body } = await browser.options({ email: `new-${Object.keys(overrides)[0]}@example.com` })
      const answer = browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON, overrides)
      await expectRefused(await browser.answer('register', answer), /origin|RP ID/i)
    }
    expect(store.authenticators.size).toBe(1)
    expect([...store.users.values()].map((u) => u.email)).toEqual([ADA.email])
  })

  it('a signature counter that goes backwards or stays put (a cloned authenticator)', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await browser.signIn()).headers.get('location')).toBe(ORIGIN)
    }
    const [stored] = store.authenticators.values()
    expect(stored!.counter).toBe(5)
    await browser.signOut()
    // Each of the five sign-ins above made its own session row; only the refusals are counted below.
    store.sessions.clear()
    config.logger.error.mockClear()
    for (const counter of [3, 5]) {
      const options = await authenticationOptions()
      const response = await browser.answer('authenticate', browser.authenticator.authenticate(options, { counter }))
      await expectRefused(response, new RegExp(`signature counter did not increase \\(received ${counter}, stored 5\\)`))
    }
    expect([...store.authenticators.values()][0]!.counter).toBe(5)
  })

  it('an assertion from a credential that was never registered here', async () => {
    const options = await authenticationOptions()
    const stranger = new SoftwareAuthenticator(ORIGIN)
    stranger.register({ ...options, rp: { id: options.rpId!, name: 'x' }, user: { id: 'eA', name: 'x', displayName: '' } } as never)
    const response = await browser.answer('authenticate', stranger.authenticate({ ...options, allowCredentials: [] }))
    await expectRefused(response, /authenticator not found in database/)
  })

  it('an assertion without user verification, which the passkey provider requires', async () => {
    const options = await authenticationOptions()
    const answer = browser.authenticator.authenticate(options, { userVerified: false })
    await expectRefused(await browser.answer('authenticate', answer), /[Uu]ser verification/)
  })

  it('a malformed answer, with a 400 or the refusal and never a 500', async () => {
    await authenticationOptions()
    await expectRefused(await browser.answer('authenticate', '{"id": 1}'), /Invalid WebAuthn Authentication response/)
    await authenticationOptions()
    const noData = await browser.client.send({ path: '/callback/passkey', body: { action: 'authenticate' } })
    expect(noData.status).toBe(400)
    const badAction = await browser.client.send({ path: '/callback/passkey', body: { action: 'login', data: '{}' } })
    expect(badAction.status).toBe(400)
  })

  it("an answer for the other ceremony than the challenge's", async () => {
    const options = await authenticationOptions()
    const creation = { ...options, rp: { id: options.rpId!, name: 'x' }, user: { id: 'eA', name: ADA.email, displayName: '' } }
    const answer = browser.authenticator.register(creation as PublicKeyCredentialCreationOptionsJSON)
    await expectRefused(await browser.answer('register', answer), /register answer for a challenge issued to authenticate/)
    expect(store.authenticators.size).toBe(1)
  })

  it('a challenge cookie older than 15 minutes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const options = await authenticationOptions()
      vi.setSystemTime(Date.now() + 16 * 60 * 1000)
      const response = await browser.answer('authenticate', browser.authenticator.authenticate(options))
      // An expired ceremony asks the user to start again (FlowExpired); nothing is signed in.
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=FlowExpired`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      expect(store.sessions.size).toBe(0)
      expect(config.logger.error.mock.calls.map(([e]) => (e as Error).message).join()).toMatch(/expired/)
    } finally {
      vi.useRealTimers()
    }
  })

  it("a challenge cookie sealed for another provider's ceremony", async () => {
    const twoProviders = passkeyConfig(store, {
      providers: [Passkey(), WebAuthn({ id: 'security-key', enableConditionalUI: false })],
    })
    const client = new PasskeyBrowser(twoProviders, browser.authenticator, 'security-key')
    const { body } = await client.options({ action: 'authenticate' })
    const answer = client.authenticator.authenticate(body.options as PublicKeyCredentialRequestOptionsJSON)
    const crossed = new PasskeyBrowser(twoProviders, browser.authenticator, 'passkey')
    crossed.jar.cookies.set(CHALLENGE_COOKIE, client.jar.get(CHALLENGE_COOKIE)!)
    const response = await crossed.answer('authenticate', answer)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect(twoProviders.logger.error.mock.calls.map(([e]) => (e as Error).message).join()).toMatch(/bound to another provider/)
  })
})

describe('the passkey callback needs no CSRF token (as in Auth.js), because the challenge binds it', () => {
  it("accepts the browser's own answer without a csrfToken", async () => {
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect((await browser.session())?.user?.email).toBe(ADA.email)
  })

  /** Mallory signs in as herself in her own browser, up to the answer she does not post. */
  async function malloryAnswer(): Promise<AuthenticationResponseJSON> {
    const mallory = new PasskeyBrowser(config)
    await seedPasskeyUser(store, mallory.authenticator, { id: 'u-mallory', email: 'mallory@example.com' })
    const { body } = await mallory.options({ action: 'authenticate' })
    return mallory.authenticator.authenticate(body.options as PublicKeyCredentialRequestOptionsJSON)
  }

  it("refuses a cross-site post of someone else's answer to a victim who has no ceremony open", async () => {
    const answer = await malloryAnswer()
    const response = await browser.client.send({
      path: '/callback/passkey',
      body: { action: 'authenticate', data: JSON.stringify(answer) },
    })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=FlowExpired`)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect(store.sessions.size).toBe(0)
    expect(config.logger.error.mock.calls.map(([e]) => (e as Error).message).join()).toMatch(/no flow to resume/)
  })

  it("refuses it to a victim whose sign-in page has a ceremony open (its challenge is not Mallory's)", async () => {
    const answer = await malloryAnswer()
    await authenticationOptions()
    const response = await browser.answer('authenticate', answer)
    await expectRefused(response, /Unexpected authentication response challenge/)
  })
})

describe('refusals are logged as WebAuthnVerificationError', () => {
  afterEach(() => {
    config.logger.error.mockClear()
  })

  it('with the error class the logger can switch on', async () => {
    const options = await authenticationOptions()
    await browser.answer('authenticate', browser.authenticator.authenticate(options, { origin: 'https://evil.example' }))
    expect(config.logger.error).toHaveBeenCalledWith(expect.any(WebAuthnVerificationError))
  })
})
