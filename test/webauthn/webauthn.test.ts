/**
 * Passkeys through `Auth`: the config checks of reference §5.4, the options endpoint (Auth.js's
 * decision rules and 400 bodies, compared with @auth/core itself), the challenge cookie, both
 * ceremonies with the callbacks, events and sessions of the sign-in completion, the linking
 * refusals, and the built-in page.
 */
import { Auth as AuthjsAuth } from '@auth/core'
import AuthjsPasskey from '@auth/core/providers/passkey'
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server'
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import { decideCeremony, type WebAuthnCeremony } from '../../machines/webauthn-signin.machine.js'
import Passkey from '../../providers/passkey.js'
import WebAuthn from '../../providers/webauthn.js'
import { authRequest, Client, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import {
  CHALLENGE_COOKIE,
  PasskeyBrowser,
  passkeyConfig,
  SESSION_COOKIE,
  seedPasskeyUser,
  signInAs,
} from './helpers.js'
// Auth.js's internal module (not in its exports map): the decision rules are compared with it.
import { inferWebAuthnOptions } from '../../node_modules/@auth/core/lib/utils/webauthn-utils.js'

const ADA = { id: 'u-ada', email: 'ada@example.com', name: 'Ada' }

async function configFailure(config: AuthConfig): Promise<Error> {
  const response = await Auth(authRequest({ path: '/auth/providers' }), config)
  expect(response.status).toBe(500)
  const logger = config.logger as ReturnType<typeof spyLogger>
  return logger.error.mock.calls[0]![0] as Error
}

describe('passkey configuration (checked when the config is loaded)', () => {
  it('refuses WebAuthn unless experimental.enableWebAuthn is set', async () => {
    const error = await configFailure(passkeyConfig(undefined, { experimental: {} }))
    expect(error.name).toBe('ExperimentalFeatureNotEnabled')
    expect(error.message).toMatch(/experimental\.enableWebAuthn/)
  })

  it('logs the experimental-webauthn warning when it is on', async () => {
    const config = passkeyConfig()
    await Auth(authRequest({ path: '/auth/providers' }), config)
    await Auth(authRequest({ path: '/auth/providers' }), config)
    expect(config.logger.warn.mock.calls).toEqual([['experimental-webauthn']])
  })

  it('needs an adapter, with every method the ceremonies call', async () => {
    expect((await configFailure(passkeyConfig(undefined, { adapter: undefined }))).name).toBe('MissingAdapter')
    const { getAuthenticator: _, updateAuthenticatorCounter: __, ...adapter } = MemoryAdapter(createMemoryStore())
    const error = await configFailure(passkeyConfig(undefined, { adapter }))
    expect(error.name).toBe('MissingAdapterMethods')
    expect(error.message).toBe('Required adapter methods were missing: getAuthenticator, updateAuthenticatorCounter')
  })

  it('allows conditional UI on one provider only, and only with a webauthn autocomplete field', async () => {
    const two = passkeyConfig(undefined, { providers: [Passkey(), WebAuthn()] })
    expect((await configFailure(two)).name).toBe('DuplicateConditionalUI')
    const noField = passkeyConfig(undefined, { providers: [Passkey({ formFields: { email: { label: 'Email' } } })] })
    expect((await configFailure(noField)).name).toBe('MissingWebAuthnAutocomplete')
    const fine = passkeyConfig(undefined, { providers: [Passkey(), WebAuthn({ enableConditionalUI: false })] })
    expect((await Auth(authRequest({ path: '/auth/providers' }), fine)).status).toBe(200)
  })

  it('lists the provider like Auth.js: id, name, type and its URLs', async () => {
    const response = await Auth(authRequest({ path: '/auth/providers' }), passkeyConfig())
    expect(await response.json()).toEqual({
      passkey: {
        id: 'passkey',
        name: 'Passkey',
        type: 'webauthn',
        signinUrl: `${ORIGIN}/auth/signin/passkey`,
        callbackUrl: `${ORIGIN}/auth/callback/passkey`,
      },
    })
  })
})

describe('GET /webauthn-options/:provider', () => {
  const ASKERS = {
    nobody: { signedIn: false, user: null, exists: false },
    'a new address': { signedIn: false, user: { email: 'new@example.com' }, exists: false },
    'a known address': { signedIn: false, user: ADA, exists: true },
    'a signed-in user': { signedIn: true, user: ADA, exists: true },
  }

  it("decides like Auth.js's inferWebAuthnOptions for every action and asker", () => {
    for (const action of ['authenticate', 'register', undefined] as const) {
      for (const found of Object.values(ASKERS)) {
        const theirs = inferWebAuthnOptions(action, found.signedIn, found.user ? found : null) as string | null
        expect(decideCeremony((action ?? null) as WebAuthnCeremony | null, found), `${action} ${JSON.stringify(found)}`).toBe(theirs)
      }
    }
  })

  it('answers the decisions over HTTP, with Auth.js’s 400 bodies', async () => {
    const store = createMemoryStore()
    const config = passkeyConfig(store)
    await seedPasskeyUser(store, new PasskeyBrowser(config).authenticator, ADA)
    const ask = async (query: Record<string, string>, signedIn = false) => {
      const client = new PasskeyBrowser(config)
      if (signedIn) await signInAs(store, client.jar, ADA.id)
      const { response, body } = await client.options(query)
      return response.status === 200 ? body.action : `${response.status} ${JSON.stringify(body)}`
    }
    expect(await ask({ action: 'login' })).toBe('400 {"error":"Invalid action"}')
    expect(await ask({ action: '' })).toBe('400 {"error":"Invalid action"}')
    expect(await ask({})).toBe('authenticate')
    expect(await ask({ email: 'new@example.com' })).toBe('register')
    expect(await ask({ email: ADA.email })).toBe('authenticate')
    expect(await ask({ action: 'register', email: ADA.email })).toBe('400 {"error":"Invalid request"}')
    expect(await ask({ action: 'register' })).toBe('400 {"error":"Invalid request"}')
    expect(await ask({}, true)).toBe('400 {"error":"Invalid request"}')
    expect(await ask({ action: 'register' }, true)).toBe('register')
    expect(await ask({ action: 'authenticate' }, true)).toBe('authenticate')
  })

  it('answers bad requests exactly as @auth/core does', async () => {
    for (const query of [{ action: 'login' }, { action: 'register' }]) {
      const answers = []
      for (const [Handler, provider] of [
        [AuthjsAuth, AuthjsPasskey({})],
        [Auth, Passkey()],
      ] as const) {
        const config = { ...passkeyConfig(), providers: [provider] }
        const response = (await (Handler as (request: Request, config: never) => Promise<Response>)(
          authRequest({ path: '/auth/webauthn-options/passkey', query }),
          config as never,
        ))
        answers.push({ status: response.status, body: await response.json() })
      }
      expect(answers[1]).toEqual(answers[0])
    }
  })

  it('seals the challenge in the httpOnly challenge cookie for 15 minutes, and never shows it elsewhere', async () => {
    const browser = new PasskeyBrowser(passkeyConfig())
    const { response, body } = await browser.options({ action: 'authenticate' })
    const cookie = setCookie(response, CHALLENGE_COOKIE)!
    expect(cookie.attributes).toMatchObject({ httponly: true, secure: true, samesite: 'Lax', path: '/', 'max-age': '900' })
    expect(cookie.value).not.toContain(body.options.challenge)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('cache-control')).toBe('private, no-cache, no-store')
  })

  it('uses cookies.webauthnChallenge for the cookie, as Auth.js', async () => {
    const config = passkeyConfig(undefined, { cookies: { webauthnChallenge: { name: 'passkey-challenge' } } })
    const browser = new PasskeyBrowser(config)
    const { response } = await browser.options({ action: 'authenticate' })
    expect(setCookie(response, 'passkey-challenge')?.value).toMatch(/^ey/)
    expect(setCookie(response, CHALLENGE_COOKIE)).toBeUndefined()
  })

  it('takes the relying party from the provider config, origins as a list', async () => {
    const relayingParty = { id: 'example.com', name: 'Example', origin: ['https://app.example.com', ORIGIN] }
    const store = createMemoryStore()
    const config = passkeyConfig(store, { providers: [Passkey({ relayingParty })] })
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: 'new@example.com' })
    const options = body.options as PublicKeyCredentialCreationOptionsJSON
    expect(options.rp).toEqual({ id: 'example.com', name: 'Example' })
    // The answer comes from the second configured origin: accepted.
    const response = await browser.answer('register', browser.authenticator.register(options))
    expect(response.headers.get('location')).toBe(ORIGIN)
  })

  it('keeps the challenge cookie small however many passkeys a user has (the options are not sealed)', async () => {
    const store = createMemoryStore()
    const config = passkeyConfig(store)
    const browser = new PasskeyBrowser(config)
    await signInAs(store, browser.jar, (await MemoryAdapter(store).createUser({ ...ADA, emailVerified: null })).id)
    const sizes: number[] = []
    for (const count of [1, 20]) {
      while (store.authenticators.size < count) await seedPasskeyUser(store, browser.authenticator, ADA)
      const { response, body } = await browser.options({ action: 'register' })
      expect((body.options as PublicKeyCredentialCreationOptionsJSON).excludeCredentials).toHaveLength(count)
      sizes.push(setCookie(response, CHALLENGE_COOKIE)!.value.length)
    }
    expect(sizes[1]).toBe(sizes[0])
    expect(sizes[0]).toBeLessThan(1200)
  })
})

/** A store where Ada has a passkey, a config over it, and Ada's browser (holding the passkey). */
async function adaWithPasskey(overrides: Partial<AuthConfig> = {}) {
  const store = createMemoryStore()
  const config = passkeyConfig(store, overrides)
  const browser = new PasskeyBrowser(config)
  await seedPasskeyUser(store, browser.authenticator, ADA)
  return { store, config, browser }
}

describe('passkey ceremonies', () => {
  it('signs up: the user, the webauthn account and the authenticator are stored, as Auth.js stores them', async () => {
    const store = createMemoryStore()
    const events = { createUser: vi.fn(), linkAccount: vi.fn(), signIn: vi.fn() }
    const config = passkeyConfig(store, { events, pages: { newUser: '/welcome' } })
    const browser = new PasskeyBrowser(config)
    const response = await browser.register({ email: 'grace@example.com' })
    expect(response.headers.get('location')).toBe(`/welcome?callbackUrl=${encodeURIComponent(ORIGIN)}`)
    expect(setCookie(response, CHALLENGE_COOKIE)?.attributes['max-age']).toBe('0')

    const [user] = store.users.values()
    expect(user).toMatchObject({ email: 'grace@example.com', emailVerified: null })
    const [authenticator] = store.authenticators.values()
    const passkey = browser.authenticator.passkeys[0]!
    const credentialID = Buffer.from(passkey.id, 'base64url').toString('base64')
    expect(authenticator).toEqual({
      credentialID,
      providerAccountId: credentialID,
      userId: user!.id,
      credentialPublicKey: Buffer.from(passkey.publicKey).toString('base64'),
      counter: 0,
      credentialBackedUp: true,
      credentialDeviceType: 'multiDevice',
      transports: 'internal,hybrid',
    })
    expect(await MemoryAdapter(store).getAccount(credentialID, 'passkey')).toMatchObject({
      provider: 'passkey',
      providerAccountId: credentialID,
      type: 'webauthn',
      userId: user!.id,
    })
    expect(events.createUser).toHaveBeenCalledWith({ user })
    expect(events.linkAccount).toHaveBeenCalledOnce()
    expect(events.signIn).toHaveBeenCalledWith(expect.objectContaining({ user, account: expect.objectContaining({ type: 'webauthn' }) }))
    expect((await browser.session())?.user?.email).toBe('grace@example.com')
  })

  it('signs in with a JWT session naming the stored user, and updates the counter', async () => {
    const { store, browser } = await adaWithPasskey({ session: { strategy: 'jwt' } })
    const response = await browser.signIn({ email: ADA.email })
    const token = await decode({ token: setCookie(response, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ sub: ADA.id, email: ADA.email, name: ADA.name })
    expect([...store.authenticators.values()][0]!.counter).toBe(1)
  })

  it('asks the signIn callback with the user and the webauthn account, and ignores a URL it returns (as Auth.js)', async () => {
    const signIn = vi.fn(() => '/elsewhere')
    const { browser } = await adaWithPasskey({ callbacks: { signIn } })
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(setCookie(response, SESSION_COOKIE)?.value).toBeTruthy()
    expect(signIn).toHaveBeenCalledWith({
      user: expect.objectContaining({ id: ADA.id, email: ADA.email }),
      account: expect.objectContaining({ provider: 'passkey', type: 'webauthn', userId: ADA.id }),
    })
  })

  it('stores nothing when the signIn callback refuses a sign-up', async () => {
    const store = createMemoryStore()
    const config = passkeyConfig(store, { callbacks: { signIn: () => false } })
    const response = await new PasskeyBrowser(config).register({ email: 'eve@example.com' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(store.users.size).toBe(0)
    expect(store.authenticators.size).toBe(0)
  })

  it('adds a passkey to the signed-in user, excluding the passkeys they have', async () => {
    const { store, browser } = await adaWithPasskey()
    await signInAs(store, browser.jar, ADA.id)
    const { body } = await browser.options({ action: 'register' })
    const options = body.options as PublicKeyCredentialCreationOptionsJSON
    expect(options.user.name).toBe(ADA.email)
    expect(options.user.displayName).toBe(ADA.name)
    expect(options.excludeCredentials?.map((c) => c.id)).toEqual([browser.authenticator.passkeys[0]!.id])
    const response = await browser.answer('register', browser.authenticator.register(options))
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect([...store.authenticators.values()].map((a) => a.userId)).toEqual([ADA.id, ADA.id])
    expect(store.users.size).toBe(1)
  })

  it('refuses a sign-up whose address was taken meanwhile (AccountNotLinked), storing no passkey', async () => {
    const store = createMemoryStore()
    const config = passkeyConfig(store)
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: ADA.email })
    expect(body.action).toBe('register')
    await MemoryAdapter(store).createUser({ ...ADA, emailVerified: null })
    const response = await browser.answer('register', browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(store.authenticators.size).toBe(0)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ name: 'AccountNotLinked' }))
  })

  it("refuses to sign Bob in with Ada's passkey while Bob is signed in (AccountNotLinked)", async () => {
    const { store, browser } = await adaWithPasskey()
    await MemoryAdapter(store).createUser({ id: 'u-bob', email: 'bob@example.com', emailVerified: null })
    await signInAs(store, browser.jar, 'u-bob')
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect((await browser.session())?.user?.email).toBe('bob@example.com')
  })

  it('refuses to add a passkey for a user who signed out between options and answer', async () => {
    const { store, browser } = await adaWithPasskey()
    await signInAs(store, browser.jar, ADA.id)
    const { body } = await browser.options({ action: 'register' })
    store.sessions.clear()
    const response = await browser.answer('register', browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(store.authenticators.size).toBe(1)
  })

  it('keeps the callback URL of the sign-in page (the callback-url cookie)', async () => {
    const { browser } = await adaWithPasskey()
    await browser.client.send({ path: '/signin', query: { callbackUrl: '/dashboard' } })
    const { body } = await browser.options({ action: 'authenticate' })
    const response = await browser.answer('authenticate', browser.authenticator.authenticate(body.options as PublicKeyCredentialRequestOptionsJSON))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
  })

  it('sends POST /signin/:passkey back to the sign-in page, as Auth.js', async () => {
    const client = new Client(passkeyConfig())
    const response = await client.send({ path: '/signin/passkey', body: { csrfToken: await client.csrfToken() } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
  })
})

describe('the built-in sign-in page with passkeys', () => {
  it("renders Auth.js's passkey form with a webauthn autocomplete field and serves the script inline", async () => {
    const response = await Auth(authRequest({ path: '/auth/signin' }), passkeyConfig())
    const html = await response.text()
    expect(html).toContain(`<form action="${ORIGIN}/auth/callback/passkey" method="POST" id="passkey-form">`)
    expect(html).toMatch(/<input name="email" data-form-field id="input-email-for-passkey-provider" type="text" placeholder="" autofocus required autocomplete="username webauthn">/)
    expect(html).toContain('<button id="submitButton-passkey" type="submit">Sign in with Passkey</button>')
    expect(html).toContain('id="passkey-add" type="button" hidden')
    expect(html).toContain('@simplewebauthn/browser 14.0.0 | MIT')
    // The client's arguments are data beside its (constant, hash-allowed) script.
    expect(html).toContain(`<script type="application/json" id="authchart-passkey-clients">[["${ORIGIN}/auth","passkey",true]]</script>`)
    // Nothing from another host: no script, image or stylesheet URL at all.
    expect(html).not.toMatch(/<script[^>]+src=/)
    expect(html).not.toContain('unpkg.com')
  })

  it('keeps the passkey script out of pages without a WebAuthn provider', async () => {
    const response = await Auth(
      authRequest({ path: '/auth/signin' }),
      { ...passkeyConfig(), experimental: {}, providers: [] } as AuthConfig,
    )
    expect(await response.text()).not.toContain('SimpleWebAuthnBrowser')
  })
})
