/**
 * Model-based test of step-up re-authentication, through `Auth` with database sessions: a
 * signed-in user is sent to re-authenticate (GET /reauthenticate, as `requireRecentAuth` sends a
 * stale session), proves the password, a one-time code, an e-mailed code or a passkey (POST
 * /step/reauthenticate, the passkey's options asked for first), or logs in again at the local
 * OpenID provider (its answer delivered at the registered callback), and the world decides whether
 * the proof is right, whether the session is still there, and whether the session row can be updated.
 */
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { afterAll, expect, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { sealFactorSecret } from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { reauthenticateMachine } from '../../machines/reauthenticate.machine.js'
import Passkey from '../../providers/passkey.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { seedPasskeyUser } from '../webauthn/helpers.js'
import { authRequest, CookieJar, credentialsProvider, ORIGIN, SECRET, spyLogger, featureConfig } from '../fixtures/http.js'
import { describeModel, freezeClock, takeLoggedErrors, type ModelDriver } from './harness.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider } from '../fixtures/oidc-provider.js'
import { CALLBACK_BASE, appProvider, opClient } from '../oauth/helpers.js'

const T0 = Math.floor(Date.now() / 1000)
const FLOW_COOKIE = '__Secure-authchart.flow.reauthenticate'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`

freezeClock(T0)
const op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
afterAll(() => op.close())

interface World {
  store: MemoryStore
  jar: CookieJar
  signedIn: boolean
  password: 'right' | 'wrong'
  code: 'right' | 'wrong'
  /** Whether the mailer delivers, and which code the user types from the message. */
  mailer: 'works' | 'fails'
  emailCode: 'right' | 'wrong'
  /** Whether the assertion is the user's own passkey answering for this site, or forged. */
  passkey: 'right' | 'wrong'
  /** At the provider: the user's own account logs in, another account does, or the user declines. */
  federated: 'right' | 'otherAccount' | 'declined'
  /** The provider's login the re-authentication sent the browser to last. */
  authorizationUrl?: string
  authenticator: SoftwareAuthenticator
  /** The passkey options the re-authentication handed out last. */
  passkeyOptions?: PublicKeyCredentialRequestOptionsJSON
  /** The last code the mailer was given. */
  mailed?: string
  /** The session is gone (signed out elsewhere) by the time the proof is posted. */
  sessionEnded: boolean
  /** The session row cannot be updated. */
  updateFails: boolean
  secret: string
  config?: AuthConfig
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  const memory = MemoryAdapter(world.store)
  world.config ??= featureConfig({
    session: { strategy: 'database' },
    experimental: { enableWebAuthn: true },
    providers: [
      credentialsProvider(),
      Passkey(),
      appProvider(op.issuer, 'client_secret_basic', 'op'),
      {
        id: 'email',
        type: 'email',
        name: 'Email',
        from: 'no-reply@authchart.test',
        sendVerificationRequest: ({ code }: { code?: string }) => {
          if (world.mailer === 'fails') throw new Error('mail server unavailable')
          world.mailed = code
        },
      } as never,
    ],
    // One store for every request of the world (each config object would otherwise get its own).
    store: memoryAuthStore(),
    adapter: {
      ...memory,
      async updateSession(session) {
        if (world.updateFails) throw new Error('database unavailable')
        return memory.updateSession!(session)
      },
    },
  })
  return { ...world.config, inspect }
}

async function csrf(world: World, config: AuthConfig): Promise<string> {
  const response = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
  world.jar.store(response)
  return ((await response.json()) as { csrfToken: string }).csrfToken
}

async function post(world: World, config: AuthConfig, path: string, body: Record<string, string>): Promise<Response> {
  const response = await Auth(authRequest({ path, body: { ...body, csrfToken: await csrf(world, config) }, cookies: world.jar }), config)
  world.jar.store(response)
  return response
}

/** Posts `proof` (after the session ended, when the world says so). */
async function postProof(world: World, inspect: AuthConfig['inspect'], proof: Record<string, string>) {
  if (world.sessionEnded) world.jar.cookies.delete(SESSION_COOKIE)
  return post(world, configFor(world, inspect), '/auth/step/reauthenticate', proof)
}

const stored = (world: World) => [...world.store.sessions.values()][0]

const driver: ModelDriver<World> = {
  machine: reauthenticateMachine,
  // An e-mailed code is taken only once one was sent: no bare event where the guard refuses it.
  onlySamples: true,
  samples: [
    { type: 'reauth.start', at: T0, action: 'app', intent: { method: 'GET', url: '/account', fields: {} }, policy: { maxAge: 600, factors: ['hwk', 'otp', 'pwd', 'email', 'fed'] } },
    {
      type: 'findFactors.done',
      at: T0,
      output: { userId: 'u', sessionKey: 'k', factors: ['hwk', 'otp', 'pwd', 'email', 'fed'], challenge: 'c', providers: [{ id: 'op', name: 'OP' }] },
    },
    { type: 'findFactors.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'reauth.password', at: T0, username: 'alice', password: 'wonderland' },
    { type: 'reauth.code', at: T0, code: '000000' },
    { type: 'reauth.sendEmailCode', at: T0 },
    { type: 'reauth.emailCode', at: T0, code: '00000000' },
    { type: 'sendEmailCode.done', at: T0, output: null },
    { type: 'sendEmailCode.failed', at: T0, reason: 'notSent' },
    { type: 'sendEmailCode.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'verifyEmailCode.done', at: T0, output: { factor: 'email' } },
    { type: 'verifyEmailCode.failed', at: T0, reason: 'wrong' },
    { type: 'verifyEmailCode.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'verifyPassword.done', at: T0, output: { factor: 'pwd' } },
    { type: 'verifyPassword.failed', at: T0, reason: 'wrong' },
    { type: 'verifyPassword.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'verifyCode.done', at: T0, output: { factor: 'otp' } },
    { type: 'verifyCode.failed', at: T0, reason: 'wrong' },
    { type: 'verifyCode.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'reauth.passkeyOptions', at: T0 },
    { type: 'createPasskeyOptions.done', at: T0, output: { options: { challenge: 'c' }, challenge: 'c' } },
    { type: 'createPasskeyOptions.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'reauth.passkey', at: T0, response: '{}' },
    { type: 'verifyPasskey.done', at: T0, output: { factor: 'hwk' } },
    { type: 'verifyPasskey.failed', at: T0, reason: 'wrong' },
    { type: 'verifyPasskey.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'reauth.federated', at: T0, provider: 'op' },
    {
      type: 'createAuthorizationRequest.done',
      at: T0,
      output: { providerId: 'op', url: 'https://op.test/auth', redirectUri: 'r', state: 's', codeVerifier: 'v', nonce: 'n', requestedAt: T0 },
    },
    { type: 'createAuthorizationRequest.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'reauth.callback', at: T0, params: {} },
    { type: 'verifyFederated.done', at: T0, output: { factor: 'fed' } },
    { type: 'verifyFederated.failed', at: T0, reason: 'wrong' },
    { type: 'verifyFederated.failed', at: T0, reason: 'refused', error: 'AccessDenied' },
    { type: 'markVerified.done', at: T0, output: { session: null } },
    { type: 'markVerified.failed', at: T0, reason: 'threw', error: 'AdapterError' },

  ],
  world: () => ({
    store: createMemoryStore(),
    jar: new CookieJar(),
    signedIn: true,
    password: 'right',
    code: 'right',
    mailer: 'works',
    emailCode: 'right',
    passkey: 'right',
    federated: 'right',
    authenticator: new SoftwareAuthenticator(ORIGIN),
    sessionEnded: false,
    updateFails: false,
    secret: createTotpSecret(),
  }),
  loggedErrors: (world) => takeLoggedErrors(world.config!.logger as ReturnType<typeof spyLogger>),
  arrange: {
    'findFactors.done': () => {},
    'findFactors.failed': (world) => {
      world.signedIn = false
    },
    'verifyPassword.done': (world) => {
      world.password = 'right'
    },
    'verifyPassword.failed': (world, event) => {
      if (event.reason === 'wrong') world.password = 'wrong'
      else world.sessionEnded = true
    },
    'verifyCode.done': (world) => {
      world.code = 'right'
    },
    'verifyCode.failed': (world, event) => {
      if (event.reason === 'wrong') world.code = 'wrong'
      else world.sessionEnded = true
    },
    'sendEmailCode.done': (world) => {
      world.mailer = 'works'
    },
    'sendEmailCode.failed': (world, event) => {
      if (event.reason === 'notSent') world.mailer = 'fails'
      else world.sessionEnded = true
    },
    'verifyEmailCode.done': (world) => {
      world.emailCode = 'right'
    },
    'verifyEmailCode.failed': (world, event) => {
      if (event.reason === 'wrong') world.emailCode = 'wrong'
      else world.sessionEnded = true
    },
    'createPasskeyOptions.done': () => {},
    'createPasskeyOptions.failed': (world) => {
      world.sessionEnded = true
    },
    'verifyPasskey.done': (world) => {
      world.passkey = 'right'
    },
    'verifyPasskey.failed': (world, event) => {
      if (event.reason === 'wrong') world.passkey = 'wrong'
      else world.sessionEnded = true
    },
    'createAuthorizationRequest.done': () => {},
    'createAuthorizationRequest.failed': (world) => {
      world.sessionEnded = true
    },
    'verifyFederated.done': (world) => {
      world.federated = 'right'
    },
    'verifyFederated.failed': (world, event) => {
      world.federated = event.reason === 'wrong' ? 'declined' : 'otherAccount'
    },
    'markVerified.done': () => {},
    'markVerified.failed': (world) => {
      world.updateFails = true
    },
  },
  send: {
    'reauth.start': async (world, _event, inspect) => {
      const config = configFor(world, () => {})
      if (world.signedIn) {
        await post(world, config, '/auth/callback/credentials', { username: 'alice', password: 'wonderland' })
        // The user turned on an authenticator app after signing in.
        const [user] = [...world.store.users.values()]
        await MemoryAdapter(world.store).createSecondFactor({
          id: 'totp:alice',
          userId: user!.id,
          type: 'totp',
          secret: await sealFactorSecret(world.secret, [SECRET]),
          createdAt: new Date(),
        })
        await seedPasskeyUser(world.store, world.authenticator, { id: user!.id, email: String(user!.email) })
        // And linked their account at the OpenID provider.
        await MemoryAdapter(world.store).linkAccount({ provider: 'op', type: 'oidc', providerAccountId: OP_ACCOUNT.sub, userId: user!.id })
      }
      const response = await Auth(authRequest({ path: '/auth/reauthenticate', query: { callbackUrl: '/account' }, cookies: world.jar }), configFor(world, inspect))
      world.jar.store(response)
      return response
    },
    'reauth.password': (world, _event, inspect) =>
      postProof(world, inspect, { event: 'reauth.password', username: 'alice', password: world.password === 'right' ? 'wonderland' : 'guess' }),
    'reauth.sendEmailCode': (world, _event, inspect) => postProof(world, inspect, { event: 'reauth.sendEmailCode' }),
    'reauth.emailCode': (world, _event, inspect) =>
      postProof(world, inspect, { event: 'reauth.emailCode', code: world.emailCode === 'right' ? world.mailed! : 'WRONG000' }),
    'reauth.passkeyOptions': async (world, _event, inspect) => {
      const response = await postProof(world, inspect, { event: 'reauth.passkeyOptions' })
      if (response.status === 200) world.passkeyOptions = ((await response.clone().json()) as { options: PublicKeyCredentialRequestOptionsJSON }).options
      return response
    },
    'reauth.passkey': (world, _event, inspect) => {
      // A wrong answer: the user's own passkey, signing for another site.
      const answer = world.authenticator.authenticate(world.passkeyOptions!, world.passkey === 'wrong' ? { origin: 'https://evil.test' } : {})
      return postProof(world, inspect, { event: 'reauth.passkey', response: JSON.stringify(answer) })
    },
    'reauth.federated': async (world, _event, inspect) => {
      const response = await postProof(world, inspect, { event: 'reauth.federated', provider: 'op' })
      if (response.status === 302) world.authorizationUrl = response.headers.get('location')!
      return response
    },
    'reauth.callback': async (world, _event, inspect) => {
      op.decision = world.federated === 'declined' ? 'deny' : 'accept'
      op.loginAs = world.federated === 'otherAccount' ? 'mallory-at-op' : OP_ACCOUNT.sub
      const answer = await visitProvider(world.authorizationUrl!, CALLBACK_BASE)
      op.decision = 'accept'
      op.loginAs = OP_ACCOUNT.sub
      if (world.sessionEnded) world.jar.cookies.delete(SESSION_COOKIE)
      const query = Object.fromEntries(answer.url.searchParams)
      const response = await Auth(authRequest({ path: '/auth/callback/op', query, cookies: world.jar }), configFor(world, inspect))
      world.jar.store(response)
      return response
    },
    'reauth.code': (world, _event, inspect) =>
      postProof(world, inspect, { event: 'reauth.code', code: world.code === 'right' ? totpCode(world.secret, T0) : '000000' }),
  },
  expect: {
    awaitingProof: async (response, world) => {
      expect(response.headers.get('location')).toBe(STEP_PAGE)
      expect(response.headers.getSetCookie().some((c) => c.startsWith(`${FLOW_COOKIE}=ey`))).toBe(true)
      const page = await (await Auth(authRequest({ path: '/auth/step/reauthenticate', cookies: world.jar }), world.config!)).text()
      expect(page).toContain("Confirm it's you to continue")
      expect(page.includes('That did not work')).toBe(
        world.password === 'wrong' || world.code === 'wrong' || world.emailCode === 'wrong' || world.passkey === 'wrong' || world.federated === 'declined',
      )
      expect(page).toContain('Confirm with a passkey')
      expect(page).toContain('Continue with OP (client_secret_basic)')
      expect(page.includes('The e-mail could not be sent')).toBe(world.mailer === 'fails')
    },
    awaitingPasskey: async (response, world) => {
      expect(response.status).toBe(200)
      const { options } = (await response.clone().json()) as { options: PublicKeyCredentialRequestOptionsJSON }
      // Only the user's own passkey is allowed.
      expect(options.allowCredentials?.map((c) => c.id)).toEqual([world.authenticator.passkeys[0]!.id])
      expect(response.headers.getSetCookie().some((c) => c.startsWith(`${FLOW_COOKIE}=ey`))).toBe(true)
    },
    awaitingProvider: (response) => {
      expect(response.status).toBe(302)
      const asked = new URL(response.headers.get('location')!)
      expect(asked.origin).toBe(new URL(op.issuer).origin)
      expect([asked.searchParams.get('prompt'), asked.searchParams.get('max_age')]).toEqual(['login', '0'])
      expect(response.headers.getSetCookie().some((c) => c.startsWith(`${FLOW_COOKIE}=ey`))).toBe(true)
    },
    resumed: (response, world) => {
      expect(response.headers.get('location')).toBe('/account')
      const fva = stored(world)!.fva as Record<string, number>
      expect(Math.max(fva.pwd ?? 0, fva.otp ?? 0, fva.email ?? 0, fva.hwk ?? 0, fva.fed ?? 0)).toBe(T0)
    },
    failed: (response, world) => {
      const error = world.updateFails ? 'Configuration' : 'AccessDenied'
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=${error}`)
      // Nothing was recorded: the session (if any) keeps the sign-in's proof only.
      if (stored(world)) expect(stored(world)!.fva).toEqual({ pwd: T0 })
    },
  },
}

vi.setConfig({ testTimeout: 30_000 })
describeModel('re-authentication machine', driver)
