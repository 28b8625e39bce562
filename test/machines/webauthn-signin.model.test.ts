/**
 * Model-based test of the WebAuthn (passkey) machine through `Auth`: every path from the options
 * request (each action, each kind of asker: nobody, a new or a known e-mail address, a signed-in
 * user; a GET, or the page's POST while an e-mail provider verifies sign-ups) through the code a
 * sign-up is sent and the challenge resting in its cookie to the browser's answer, produced by the
 * software authenticator and verified for real by `@simplewebauthn/server`. The world decides
 * what fails: the database, the store, the mailer and its limits, the code typed, the answer
 * (malformed, forged, for the other ceremony).
 */
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server'
import { afterEach, expect, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import type { Adapter } from '../../core/adapters.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { SendVerificationRequestParams } from '../../core/email/provider.js'
import type { AuthConfig } from '../../core/types.js'
import { webauthnSignInMachine, type WebAuthnSignInContext } from '../../machines/webauthn-signin.machine.js'
import Email from '../../providers/email.js'
import Passkey from '../../providers/passkey.js'
import { authRequest, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { CHALLENGE_COOKIE, SESSION_COOKIE, seedPasskeyUser, signInAs } from '../webauthn/helpers.js'
import { describeModel, type ModelDriver } from './harness.js'

const T0 = Math.floor(Date.now() / 1000)
const ADA = { id: 'u-ada', email: 'ada@example.com', name: 'Ada' }
const NEWCOMER = 'new@example.com'
const RP_ID = new URL(ORIGIN).hostname
/** The e-mail provider's token lifetime: a code typed later than this has expired. */
const CODE_MAX_AGE = 600

afterEach(() => {
  vi.useRealTimers()
})

type Situation = 'anonymous' | 'newEmail' | 'knownEmail' | 'signedIn'
const FOUND: Record<Situation, { signedIn: boolean; user: Record<string, unknown> | null; exists: boolean }> = {
  anonymous: { signedIn: false, user: null, exists: false },
  newEmail: { signedIn: false, user: { email: NEWCOMER }, exists: false },
  knownEmail: { signedIn: false, user: ADA, exists: true },
  signedIn: { signedIn: true, user: ADA, exists: true },
}

interface World {
  store: MemoryStore
  authStore: AuthStore
  authenticator: SoftwareAuthenticator
  jar: CookieJar
  logger: ReturnType<typeof spyLogger>
  situation: Situation
  options: Record<string, unknown> | null
  fails: Set<
    | 'findUser'
    | 'relyingParty'
    | 'claim'
    | 'getAuthenticator'
    | 'updateCounter'
    | 'getAccount'
    | 'createVerificationToken'
    | 'useVerificationToken'
  >
  answer: 'genuine' | 'malformed' | 'forged' | 'unknownCredential' | 'replayed'
  /** The e-mail provider verifying sign-ups, when the config has one. */
  verifier: string | null
  outbox: SendVerificationRequestParams[]
  /** The application's normaliser refuses the address; the send limit was reached before. */
  badAddress: boolean
  throttled: boolean
  mailerDown: boolean
  typed: 'right' | 'wrong'
  wrongs: number
  attempts: number
  late: boolean
  tokenGone: boolean
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  const memory = MemoryAdapter(world.store)
  const failing = (name: Parameters<World['fails']['add']>[0]) => () => {
    if (world.fails.has(name)) throw new Error(`${name}: database unavailable`)
  }
  const adapter: Adapter = {
    ...memory,
    getUserByEmail: async (email) => (failing('findUser')(), memory.getUserByEmail(email)),
    getAuthenticator: async (id) => (failing('getAuthenticator')(), memory.getAuthenticator(id)),
    updateAuthenticatorCounter: async (id, n) => (failing('updateCounter')(), memory.updateAuthenticatorCounter(id, n)),
    getAccount: async (id, provider) => (failing('getAccount')(), memory.getAccount(id, provider)),
    createVerificationToken: async (token) => (failing('createVerificationToken')(), memory.createVerificationToken(token)),
    useVerificationToken: async (params) => (failing('useVerificationToken')(), memory.useVerificationToken(params)),
  }
  // An e-mail provider that sends links only: a sign-up's code then has the default settings but
  // the attempts the world allows.
  const verifier = Email({
    id: 'email',
    maxAge: CODE_MAX_AGE,
    throttle: { perIdentifier: 1 },
    code: { attempts: world.attempts },
    normalizeIdentifier: (address) => {
      if (world.badAddress) throw new Error('the application refuses this address')
      return address.toLowerCase()
    },
    sendVerificationRequest: async (params) => {
      if (world.mailerDown) throw new Error('SMTP refused')
      world.outbox.push(params)
    },
  })
  const store: AuthStore = {
    ...world.authStore,
    // The challenge's own claim fails (the engine's claim of the sealed flow comes first and works).
    claim: async (key, ttl) => (key.startsWith('webauthn-challenge:') && failing('claim')(), world.authStore.claim(key, ttl)),
  }
  return {
    secret: SECRET,
    trustHost: true,
    logger: world.logger,
    inspect,
    adapter,
    store,
    experimental: { enableWebAuthn: true },
    providers: [
      Passkey({
        getRelayingParty: ({ url }) => {
          // Creating options has no I/O for an anonymous request: a broken RP hook is what fails.
          failing('relyingParty')()
          return { id: url.hostname, name: url.host, origin: url.origin }
        },
      }),
      ...(world.verifier ? [verifier] : []),
    ],
  }
}

/** A CSRF-checked POST, as the built-in page sends it. */
async function post(world: World, config: AuthConfig, path: string, body: Record<string, string>) {
  const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
  world.jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const response = await Auth(authRequest({ path, body: { ...body, csrfToken }, cookies: world.jar }), config)
  world.jar.store(response)
  return response
}

/** What the browser posts back for `ceremony`, as the world wants it. */
function answerFor(world: World, ceremony: 'register' | 'authenticate'): string {
  if (world.answer === 'malformed') return '{"not":"a credential"'
  const options = world.options as { challenge: string; rp?: { id: string }; user?: { id: string } }
  const forged = world.answer === 'forged' ? { origin: 'https://evil.example' } : {}
  if (ceremony === 'register') {
    // For the other ceremony's challenge (a mismatch), answer as if it were creation options.
    const creation = options.rp ? options : { ...options, rp: { id: RP_ID, name: RP_ID }, user: { id: 'dXNlcg', name: NEWCOMER } }
    return JSON.stringify(world.authenticator.register(creation as PublicKeyCredentialCreationOptionsJSON, forged))
  }
  const request = { ...options, rpId: RP_ID, allowCredentials: [] } as PublicKeyCredentialRequestOptionsJSON
  const signer = world.answer === 'unknownCredential' ? new SoftwareAuthenticator(ORIGIN) : world.authenticator
  if (signer !== world.authenticator) signer.register({ ...request, rp: { id: RP_ID, name: RP_ID }, user: { id: 'eA', name: 'x', displayName: '' } } as never)
  return JSON.stringify(signer.authenticate(request, forged))
}

const CALLBACK = { response: '', callbackUrl: `${ORIGIN}/dashboard` }

const driver: ModelDriver<World> = {
  machine: webauthnSignInMachine,
  samples: [
    ...['authenticate', 'register', null, 'login'].map((action) => ({
      type: 'webauthn.options',
      at: T0,
      providerId: 'passkey',
      action,
      verifier: null,
      mayEmail: false,
    })),
    // With an e-mail provider: the page's POST, which may send a sign-up its code, and a GET, which
    // may not.
    { type: 'webauthn.options', at: T0, providerId: 'passkey', action: null, verifier: 'email', mayEmail: true },
    { type: 'webauthn.options', at: T0, providerId: 'passkey', action: 'register', verifier: 'email', mayEmail: false },
    { type: 'webauthn.code', at: T0, code: 'typed' },
    ...(Object.keys(FOUND) as Situation[]).map((situation) => ({ type: 'findUser.done', at: T0, output: FOUND[situation] })),
    { type: 'findUser.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'admitAddress.done', at: T0, output: { email: NEWCOMER } },
    { type: 'admitAddress.failed', at: T0, reason: 'invalidIdentifier', error: 'EmailSignInError' },
    { type: 'admitAddress.failed', at: T0, reason: 'throttled', error: 'EmailSignInError' },
    { type: 'sendCode.done', at: T0, output: { tokenHash: 'h', codeHash: 'c', expires: T0 + CODE_MAX_AGE } },
    { type: 'sendCode.failed', at: T0, reason: 'notSent', error: 'EmailSignInError' },
    { type: 'sendCode.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'checkCode.done', at: T0, output: null },
    { type: 'checkCode.failed', at: T0, reason: 'wrong', error: 'Verification' },
    { type: 'checkCode.failed', at: T0, reason: 'exhausted', error: 'Verification' },
    { type: 'checkCode.failed', at: T0, reason: 'expired', error: 'Verification' },
    { type: 'voidToken.done', at: T0, output: null },
    { type: 'spendToken.done', at: T0, output: null },
    { type: 'spendToken.failed', at: T0, reason: 'invalid', error: 'Verification' },
    { type: 'spendToken.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'createAuthenticationOptions.done', at: T0, output: { options: {}, challenge: 'c' } },
    { type: 'createAuthenticationOptions.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'createRegistrationOptions.done', at: T0, output: { options: {}, challenge: 'c' } },
    { type: 'createRegistrationOptions.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'webauthn.answer', at: T0, ceremony: 'authenticate', ...CALLBACK },
    { type: 'webauthn.answer', at: T0, ceremony: 'register', ...CALLBACK },
    { type: 'spendChallenge.done', at: T0, output: null },
    { type: 'spendChallenge.failed', at: T0, reason: 'mismatch', error: 'WebAuthnVerificationError' },
    { type: 'spendChallenge.failed', at: T0, reason: 'replayed', error: 'WebAuthnVerificationError' },
    { type: 'spendChallenge.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'findAuthenticator.done', at: T0, output: { authenticator: {} } },
    { type: 'findAuthenticator.failed', at: T0, reason: 'invalid', error: 'WebAuthnVerificationError' },
    { type: 'findAuthenticator.failed', at: T0, reason: 'unknown', error: 'WebAuthnVerificationError' },
    { type: 'findAuthenticator.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'verifyAssertion.done', at: T0, output: { newCounter: 1 } },
    { type: 'verifyAssertion.failed', at: T0, reason: 'invalid', error: 'WebAuthnVerificationError' },
    { type: 'updateCounter.done', at: T0, output: null },
    { type: 'updateCounter.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'findAccount.done', at: T0, output: { account: {}, user: {} } },
    { type: 'findAccount.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'verifyAttestation.done', at: T0, output: { account: {}, authenticator: {} } },
    { type: 'verifyAttestation.failed', at: T0, reason: 'invalid', error: 'WebAuthnVerificationError' },
  ],
  onlySamples: true,
  possible: (snapshot, event) => {
    // Whether the answer is for the challenge's ceremony decides how spending it ends.
    if (!event.type.startsWith('spendChallenge.')) return true
    const { answered, ceremony } = snapshot.context as WebAuthnSignInContext
    return (event.reason === 'mismatch') === (answered !== ceremony)
  },
  label: (event) => {
    if (event.type === 'webauthn.answer') return `${event.ceremony} answer`
    if (event.type === 'webauthn.options') {
      const how = event.verifier === null ? '' : event.mayEmail ? ', POST, e-mail verifies' : ', GET, e-mail verifies'
      return `options (action ${event.action ?? 'none'}${how})`
    }
    if (event.type === 'findUser.done') {
      const entry = Object.entries(FOUND).find(([, found]) => found === event.output)
      return `asked by ${entry?.[0]}`
    }
    return undefined
  },
  world: () => ({
    store: createMemoryStore(),
    authStore: memoryAuthStore(),
    authenticator: new SoftwareAuthenticator(ORIGIN),
    jar: new CookieJar(),
    logger: spyLogger(),
    situation: 'anonymous',
    options: null,
    fails: new Set(),
    answer: 'genuine',
    verifier: null,
    outbox: [],
    badAddress: false,
    throttled: false,
    mailerDown: false,
    typed: 'right',
    wrongs: 0,
    attempts: 5,
    late: false,
    tokenGone: false,
  }),
  arrange: {
    'findUser.done': (world, event) => {
      world.situation = (Object.keys(FOUND) as Situation[]).find((s) => FOUND[s] === event.output)!
    },
    'findUser.failed': (world) => {
      world.situation = 'knownEmail'
      world.fails.add('findUser')
    },
    'admitAddress.done': () => {},
    'admitAddress.failed': (world, event) => {
      if (event.reason === 'throttled') world.throttled = true
      else world.badAddress = true
    },
    'sendCode.done': () => {},
    'sendCode.failed': (world, event) => {
      if (event.reason === 'notSent') world.mailerDown = true
      else world.fails.add('createVerificationToken')
    },
    'checkCode.done': (world) => {
      world.typed = 'right'
    },
    'checkCode.failed': (world, event) => {
      world.typed = 'wrong'
      if (event.reason === 'exhausted') world.attempts = world.wrongs + 1
      if (event.reason === 'expired') world.late = true
    },
    'voidToken.done': () => {},
    'spendToken.done': () => {},
    'spendToken.failed': (world, event) => {
      if (event.reason === 'invalid') world.tokenGone = true
      else world.fails.add('useVerificationToken')
    },
    'createAuthenticationOptions.done': () => {},
    'createAuthenticationOptions.failed': (world) => void world.fails.add('relyingParty'),
    'createRegistrationOptions.done': () => {},
    'createRegistrationOptions.failed': (world) => void world.fails.add('relyingParty'),
    'spendChallenge.done': () => {},
    'spendChallenge.failed': (world, event) => {
      if (event.reason === 'replayed') world.answer = 'replayed'
      else if (event.reason === 'threw') world.fails.add('claim')
    },
    'findAuthenticator.done': () => {},
    'findAuthenticator.failed': (world, event) => {
      if (event.reason === 'invalid') world.answer = 'malformed'
      else if (event.reason === 'unknown') world.answer = 'unknownCredential'
      else world.fails.add('getAuthenticator')
    },
    'verifyAssertion.done': () => {},
    'verifyAssertion.failed': (world) => {
      world.answer = 'forged'
    },
    'updateCounter.done': () => {},
    'updateCounter.failed': (world) => void world.fails.add('updateCounter'),
    'findAccount.done': () => {},
    'findAccount.failed': (world) => void world.fails.add('getAccount'),
    'verifyAttestation.done': () => {},
    'verifyAttestation.failed': (world, event) => {
      world.answer = event.reason === 'invalid' ? 'forged' : 'genuine'
    },
  },
  send: {
    'webauthn.options': async (world, event, inspect) => {
      await seedPasskeyUser(world.store, world.authenticator, ADA)
      if (world.situation === 'signedIn') await signInAs(world.store, world.jar, ADA.id)
      world.verifier = event.verifier
      const query: Record<string, string> = {}
      if (event.action !== null) query.action = event.action
      if (world.situation === 'newEmail') query.email = NEWCOMER
      if (world.situation === 'knownEmail') query.email = ADA.email
      if (world.throttled) {
        // The one message the limit allows, sent before this request (and not traced by it).
        const sender = { ...world, jar: new CookieJar(), throttled: false }
        await post(sender, configFor(sender, () => {}), '/auth/signin/email', { email: NEWCOMER })
        world.outbox.length = 0
      }
      const config = configFor(world, inspect)
      let response: Response
      if (event.mayEmail) {
        response = await post(world, config, '/auth/webauthn-options/passkey', query)
      } else {
        response = await Auth(authRequest({ path: '/auth/webauthn-options/passkey', query, cookies: world.jar }), config)
        world.jar.store(response)
      }
      world.options = response.status === 200 ? (((await response.clone().json()) as { options?: Record<string, unknown> }).options ?? null) : null
      return response
    },
    'webauthn.code': async (world, _event, inspect) => {
      const sent = world.outbox.at(-1)!.code!
      const code = world.typed === 'right' ? sent : sent === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ'
      if (world.tokenGone) world.store.verificationTokens.clear()
      if (world.late) {
        vi.useFakeTimers({ toFake: ['Date'] })
        vi.setSystemTime(Date.now() + (CODE_MAX_AGE + 1) * 1000)
      }
      try {
        const response = await post(world, configFor(world, inspect), '/auth/webauthn-options/passkey', { code })
        world.options = response.status === 200 ? (((await response.clone().json()) as { options?: Record<string, unknown> }).options ?? null) : null
        return response
      } finally {
        if (world.typed === 'wrong') world.wrongs++
        vi.useRealTimers()
      }
    },
    'webauthn.answer': async (world, event, inspect) => {
      if (world.answer === 'replayed') {
        // The challenge was already spent on another instance sharing the store.
        await world.authStore.claim(`webauthn-challenge:${String(world.options!.challenge)}`, 900)
      }
      const response = await Auth(
        authRequest({
          path: '/auth/callback/passkey',
          body: { action: event.ceremony, data: answerFor(world, event.ceremony), callbackUrl: '/dashboard' },
          cookies: world.jar,
        }),
        configFor(world, inspect),
      )
      world.jar.store(response)
      return response
    },
  },
  expect: {
    awaitingCode: async (response, world) => {
      const rejected = world.wrongs > 0 && world.typed === 'wrong'
      expect(response.status).toBe(rejected ? 400 : 200)
      expect(response.headers.get('cache-control')).toContain('no-store')
      expect(await response.json()).toEqual(rejected ? { action: 'verify-email', error: 'Invalid code' } : { action: 'verify-email' })
      expect(setCookie(response, CHALLENGE_COOKIE)?.attributes).toMatchObject({ httponly: true, 'max-age': '900', path: '/' })
      // One message, to the address typed in, with a code of the default shape.
      expect(world.outbox.map((m) => m.identifier)).toEqual([NEWCOMER])
      expect(world.outbox[0]!.code).toMatch(/^[0-9A-Z]{6}$/)
      expect(world.store.users.size).toBe(1)
    },
    verificationRequired: async (response, world) => {
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: 'Email verification required' })
      expect(setCookie(response, CHALLENGE_COOKIE)).toBeUndefined()
      expect(world.outbox).toEqual([])
    },
    codeNotSent: async (response, world) => {
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: 'The e-mail could not be sent' })
      expect(setCookie(response, CHALLENGE_COOKIE)).toBeUndefined()
      expect(world.outbox).toEqual([])
      expect(world.logger.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'EmailSignInError' }))
    },
    codeRefused: async (response, world) => {
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: 'The code is no longer valid' })
      expect(setCookie(response, CHALLENGE_COOKIE)?.attributes['max-age']).toBe('0')
      // The message's link died with the code: the token is spent (or, for a late code, expired).
      expect(world.store.verificationTokens.size).toBe(world.late ? 1 : 0)
      expect(world.store.users.size).toBe(1)
    },
    awaitingAnswer: async (response, world) => {
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toContain('no-store')
      expect(setCookie(response, CHALLENGE_COOKIE)?.attributes).toMatchObject({ httponly: true, 'max-age': '900', path: '/' })
      const body = (await response.json()) as
        | { action: 'authenticate'; options: PublicKeyCredentialRequestOptionsJSON }
        | { action: 'register'; options: PublicKeyCredentialCreationOptionsJSON }
      const known = world.situation === 'knownEmail' || world.situation === 'signedIn'
      if (body.action === 'authenticate') {
        expect(body.options.rpId).toBe(RP_ID)
        // A known user's passkeys are allowed by id; an anonymous request allows any discoverable one.
        expect(body.options.allowCredentials?.length ?? 0).toBe(known ? 1 : 0)
        return
      }
      expect(body.options.rp).toEqual({ id: RP_ID, name: RP_ID })
      expect(body.options.user.name).toBe(world.situation === 'signedIn' ? ADA.email : NEWCOMER)
      // A signed-in user's existing passkeys are excluded, so one authenticator is not enrolled twice.
      expect(body.options.excludeCredentials?.length ?? 0).toBe(world.situation === 'signedIn' ? 1 : 0)
    },
    invalidAction: async (response) => {
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: 'Invalid action' })
    },
    undecided: async (response) => {
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: 'Invalid request' })
    },
    verified: async (response, world) => {
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
      expect(setCookie(response, CHALLENGE_COOKIE)?.attributes['max-age']).toBe('0')
      const row = world.store.sessions.get(setCookie(response, SESSION_COOKIE)!.value)!
      const user = world.store.users.get(row.userId)!
      // Creation options name an RP: the user signed up, or (signed in) added a passkey.
      const registered = world.options?.rp !== undefined
      const signedUp = registered && world.situation !== 'signedIn'
      expect(user.email).toBe(signedUp ? NEWCOMER : ADA.email)
      // A sign-up's address is verified exactly when a code sent to it came back.
      if (signedUp) expect(user.emailVerified instanceof Date).toBe(world.outbox.length > 0)
      if (world.outbox.length > 0) expect(world.store.verificationTokens.size).toBe(0)
      const passkeys = [...world.store.authenticators.values()].filter((a) => a.userId === user.id)
      if (registered) expect(passkeys.length).toBe(signedUp ? 1 : 2)
      else expect(passkeys.map((a) => a.counter)).toEqual([1])
    },
    rejected: (response, world) => expectRefused(response, world, 'error?error=WebAuthnVerificationError'),
    failed: (response, world) => expectRefused(response, world, 'error?error=Configuration'),
  },
}

function expectRefused(response: Response, world: World, target: string): void {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/${target}`)
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  expect(world.logger.error).toHaveBeenCalled()
  // Nothing was stored on the refused user's behalf.
  expect([...world.store.authenticators.values()].map((a) => a.userId)).toEqual([ADA.id])
}

describeModel('WebAuthn machine', driver)
