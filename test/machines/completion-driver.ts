/**
 * The model driver of the sign-in completion, for the built-in chart and for charts an application
 * extended (the extension adds its samples, arrangements, requests and expectations): the tail every
 * first factor hands its verified user to. Paths start with a credentials sign-in (JWT or database sessions), an OIDC
 * sign-in at the real test provider (JWT sessions with an adapter, so the user is stored), an
 * e-mail link confirmed on its page or a passkey (database sessions); the
 * world decides what the `signIn` callback says, how storing the user goes, whether the user has
 * a second factor and which code they type, what the `jwt` callback returns and whether the
 * session store works.
 */
import { afterAll, expect, vi, type Mock } from 'vitest'
import type { AnyStateMachine } from 'xstate'
import type { FlowExtension } from '../../core/extensions.js'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { clientAttemptsKeyOf, deviceAttemptsKey, deviceSlotKey, MAX_USER_ATTEMPTS, sealFactorSecret, TOTP_STEP_CLAIM_SECONDS, totpStepKey, userAttemptsKey, userSlotKey } from '../../core/second-factor/index.js'
import { TOTP_PERIOD } from '../../core/second-factor/totp-parameters.js'
import { CODE_MESSAGES } from '../../core/pages/messages.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import type { Adapter } from '../../core/adapters.js'
import type { AuthConfig } from '../../core/types.js'
import { signInCompletionMachine } from '../../machines/signin-completion.machine.js'
import Credentials from '../../providers/credentials.js'
import Email from '../../providers/email.js'
import Passkey from '../../providers/passkey.js'
import { ALICE, authRequest, Client, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { EmailClient, lastLink, type Outbox } from '../email/helpers.js'
import type { ExpectedCookie, ExpectedResponse, ModelStep } from '../../testing/index.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { PasskeyBrowser, seedPasskeyUser } from '../webauthn/helpers.js'
import { freezeClock, httpDate, JWE, SECURE_ATTRIBUTES, takeLoggedErrors, UUID, type ModelDriver, type ModelEvent } from './harness.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

const op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
afterAll(() => op.close())
const OP_EMAIL = OP_ACCOUNT.email.toLowerCase()

const SESSION_COOKIE = '__Secure-authjs.session-token'
const COMPLETION_COOKIE = '__Secure-authchart.flow.signin-completion'
const T0 = Math.floor(Date.now() / 1000)
const account = { providerAccountId: ALICE.id, type: 'credentials', provider: 'credentials' }
const RETURNING = { id: 'db-alice', name: 'Alice (stored)', email: ALICE.email, emailVerified: null }
const OTHER = { id: 'oauth-alice', name: 'Alice (GitHub)', email: ALICE.email, emailVerified: null }

freezeClock(T0)

const MAX_AGE = 2_592_000
const ATTRIBUTES = SECURE_ATTRIBUTES
/** The resting completion, sealed for 15 minutes. */
export const FLOW_SEALED: ExpectedCookie = { value: JWE, attributes: { ...ATTRIBUTES, 'max-age': '900', expires: httpDate(T0 + 900) } }
export const FLOW_CLEARED: ExpectedCookie = { value: '', attributes: { ...ATTRIBUTES, 'max-age': '0' } }
const SESSION_ISSUED = (world: World): ExpectedCookie => ({
  value: world.policy.strategy === 'database' ? UUID : JWE,
  attributes: { ...ATTRIBUTES, expires: httpDate(T0 + MAX_AGE) },
})
const DB_DOWN = ['AdapterError', 'AdapterError']
const STEP_PAGE = `${ORIGIN}/auth/step/signin-completion`
const CONFIGURATION = `${ORIGIN}/auth/error?error=Configuration`
const DASHBOARD = `${ORIGIN}/dashboard`

/** A refusal or failure: no session; after a second step the resting flow is cleared. */
const refusal = (location: string, errors: readonly string[], secondStep: boolean) => (): ExpectedResponse => ({
  status: 302,
  location,
  cookies: { [SESSION_COOKIE]: null, ...(secondStep ? { [COMPLETION_COOKIE]: FLOW_CLEARED } : { [COMPLETION_COOKIE]: null }) },
  errors,
})
const signedIn = (location: string, secondStep: boolean) => (world: World): ExpectedResponse => ({
  status: 302,
  location,
  cookies: {
    [SESSION_COOKIE]: SESSION_ISSUED(world),
    [COMPLETION_COOKIE]: secondStep ? FLOW_CLEARED : null,
  },
  errors: [],
})

/** Each way in: a first factor, and the session policy it is tried with. */
const ENTRIES = [
  // Credentials users stay out of the database with JWT sessions; their second factor is found
  // by the id `authorize` returns.
  { firstFactor: 'credentials', policy: { strategy: 'jwt', maxAge: 2_592_000, newUserUrl: null } },
  { firstFactor: 'credentials', policy: { strategy: 'database', maxAge: 2_592_000, newUserUrl: '/welcome-new' } },
  // An OAuth user is stored whenever there is an adapter, even with JWT sessions.
  { firstFactor: 'oauth', policy: { strategy: 'jwt', maxAge: 2_592_000, newUserUrl: null } },
  // A passkey: a URL returned by the signIn callback is ignored, as in Auth.js.
  { firstFactor: 'webauthn', policy: { strategy: 'database', maxAge: 2_592_000, newUserUrl: '/welcome-new' } },
  // An e-mail link, confirmed on its page: the user is stored (created verified, or marked so).
  { firstFactor: 'email', policy: { strategy: 'database', maxAge: 2_592_000, newUserUrl: '/welcome-new' } },
] as const

/** Each way in as causes and oracle keys name it: `<first factor> <session strategy>`. */
export const ENTRY_NAMES: readonly string[] = ENTRIES.map(({ firstFactor, policy }) => `${firstFactor} ${policy.strategy}`)
/** The ways in whose first sign-in goes to the configured newUser page. */
export const WELCOMING_ENTRY_NAMES: readonly string[] = ENTRIES.filter(({ policy }) => policy.newUserUrl !== null).map(
  ({ firstFactor, policy }) => `${firstFactor} ${policy.strategy}`,
)


/**
 * What each (final state, cause) must answer, from the spec rather than the chart: a gate that lets
 * an enrolled user through, a session issued after a refusal, a cookie left behind all end in a pair
 * this table does not list or answer other than it says.
 */
const ORACLE: NonNullable<ModelDriver<World>['oracle']> = {}
for (const entry of ENTRY_NAMES) {
  const oauth = entry.startsWith('oauth')
  Object.assign(ORACLE, {
    [`awaitingSecondFactor ← ${entry}: second factor enrolled`]: (): ExpectedResponse => ({
      status: 302,
      location: STEP_PAGE,
      cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: FLOW_SEALED },
      errors: [],
    }),
    [`awaitingSecondFactor ← ${entry}: wrong code`]: (): ExpectedResponse => ({
      status: 302,
      location: STEP_PAGE,
      cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: FLOW_SEALED },
      errors: [],
    }),
    [`awaitingSecondFactor ← ${entry}: code already used`]: (): ExpectedResponse => ({
      status: 302,
      location: STEP_PAGE,
      cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: FLOW_SEALED },
      errors: [],
    }),
    [`awaitingSecondFactor ← ${entry}: user locked this minute`]: (): ExpectedResponse => ({
      status: 302,
      location: STEP_PAGE,
      cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: FLOW_SEALED },
      errors: [],
    }),
    [`denied ← ${entry}: signIn refuses`]: refusal(`${ORIGIN}/auth/error?error=AccessDenied`, ['AccessDenied'], false),
    // Exhausted attempts are a warning (second-factor-attempts-exhausted), not an error.
    [`denied ← ${entry}: attempts exhausted`]: refusal(`${ORIGIN}/auth/error?error=AccessDenied`, [], true),
    [`redirectedBySignIn ← ${entry}: signIn redirects`]: refusal(`${ORIGIN}/from-signin`, [], false),
    [`notLinked ← ${entry}: e-mail address taken`]: refusal(
      `${ORIGIN}/auth/signin?error=${oauth ? 'OAuthAccountNotLinked' : 'AccountNotLinked'}`,
      [oauth ? 'OAuthAccountNotLinked' : 'AccountNotLinked'],
      false,
    ),
    [`failed ← ${entry}: storing the user fails`]: refusal(CONFIGURATION, DB_DOWN, false),
    [`failed ← ${entry}: factor lookup fails`]: refusal(CONFIGURATION, DB_DOWN, false),
    [`failed ← ${entry}: factor store fails`]: refusal(CONFIGURATION, DB_DOWN, true),
    [`failed ← ${entry}: jwt callback throws`]: (world: World) => refusal(CONFIGURATION, ['CallbackRouteError'], world.factor === 'enrolled')(),
    [`failed ← ${entry}: session store fails`]: (world: World) => refusal(CONFIGURATION, DB_DOWN, world.factor === 'enrolled')(),
    // The jwt callback returned null: signed in as Auth.js does it, without a session cookie.
    [`signedIn ← ${entry}: jwt callback revokes`]: (world: World): ExpectedResponse => ({
      status: 302,
      location: DASHBOARD,
      cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: world.factor === 'enrolled' ? FLOW_CLEARED : null },
      errors: [],
    }),
    [`signedIn ← ${entry}: new user signed in`]: signedIn(DASHBOARD, false),
    [`signedIn ← ${entry}: returning user signed in`]: signedIn(DASHBOARD, false),
    [`signedIn ← ${entry}: returning user signed in with a code`]: signedIn(DASHBOARD, true),
    [`signedIn ← ${entry}: new user signed in with a code`]: signedIn(DASHBOARD, true),
  })
}
// Only a first sign-in with a configured newUser page is welcomed there.
for (const entry of WELCOMING_ENTRY_NAMES) {
  ORACLE[`welcomedNewUser ← ${entry}: new user signed in`] = signedIn(`/welcome-new?callbackUrl=${encodeURIComponent(DASHBOARD)}`, false)
}

/** RFC 8176 `amr` of each first factor (a passkey is a hardware-bound key). */
const FIRST_FACTOR_AMR = { credentials: 'pwd', oauth: 'fed', webauthn: 'hwk', email: 'email' } as const

export interface World {
  firstFactor: (typeof ENTRIES)[number]['firstFactor']
  policy: (typeof ENTRIES)[number]['policy']
  store: MemoryStore
  authStore: AuthStore
  jar: CookieJar
  signIn: 'allows' | 'redirects' | 'refuses'
  stored: 'createsUser' | 'returning' | 'emailTaken' | 'fails'
  factor: 'none' | 'enrolled'
  factorStore: 'works' | 'fails'
  totpSecret: string
  /**
   * The code typed: right, wrong, wrong once the user's codes are spent (it voids the sign-in), or
   * right while the user is locked and this minute's check is taken (it is not checked), or the
   * current code already spent by an earlier sign-in.
   */
  code: 'right' | 'wrong' | 'overTheLimit' | 'locked' | 'used'
  jwt: 'identity' | 'revokes' | 'throws'
  sessionStore: 'works' | 'fails'
  events: { signIn: Mock<(message: unknown) => void> }
  logger: ReturnType<typeof spyLogger>
  /** What an extension's steps keep of the world (their own knobs). */
  extension: Record<string, unknown>
  authenticator: SoftwareAuthenticator
  /** The messages the e-mail provider sent. */
  outbox: Outbox
}

/** What an application's extension adds to the driver. */
export interface ExtensionDriver {
  extensions: FlowExtension[]
  samples: ModelEvent[]
  arrange: ModelDriver<World>['arrange']
  send: ModelDriver<World>['send']
  expect: ModelDriver<World>['expect']
  world: () => Record<string, unknown>
  /** The cause of a request's end when the extension's steps decided it; `undefined` otherwise. */
  cause?: (world: World, request: readonly ModelStep[]) => string | undefined
  /** Oracle entries for the ends the extension's steps decide. */
  oracle?: ModelDriver<World>['oracle']
}

/** The config a path runs under: the world's, with the extensions under test. */
export function configFor(world: World, inspect: AuthConfig['inspect'], extensions: FlowExtension[] = []): AuthConfig {
  const memory = MemoryAdapter(world.store)
  const passkeys = world.firstFactor === 'webauthn'
  const email = world.firstFactor === 'email'
  return {
    ...(extensions.length > 0 ? { extensions } : {}),
    ...(passkeys ? { experimental: { enableWebAuthn: true } } : {}),
    secret: SECRET,
    secondFactor: totp(),
    stepUp: stepUp(),
    trustHost: true,
    logger: world.logger,
    inspect,
    events: world.events,
    store: world.authStore,
    session: { strategy: world.policy.strategy },
    ...(world.policy.newUserUrl ? { pages: { newUser: world.policy.newUserUrl } } : {}),
    adapter: {
      ...memory,
      async linkAccount(linked) {
        if (world.stored === 'fails') throw new Error('database unavailable')
        await memory.linkAccount(linked)
      },
      async createUserAndAccount(user, linked) {
        if (world.stored === 'fails') throw new Error('database unavailable')
        return memory.createUserAndAccount(user, linked)
      },
      // An e-mail sign-in links no account: it creates the user, or marks the address verified.
      async createUser(user) {
        if (world.stored === 'fails' && email) throw new Error('database unavailable')
        return memory.createUser(user)
      },
      async updateUser(user) {
        if (world.stored === 'fails' && email) throw new Error('database unavailable')
        return memory.updateUser(user)
      },
      async listSecondFactors(userId) {
        if (world.factorStore === 'fails') throw new Error('database unavailable')
        return memory.listSecondFactors(userId)
      },
      async createSession(session) {
        if (world.sessionStore === 'fails') throw new Error('database unavailable')
        return memory.createSession(session)
      },
      // An extension's driver may stand in for adapter methods its steps use.
      ...(world.extension.adapter as Partial<Adapter> | undefined),
    },
    providers: [
      Credentials({
        credentials: { username: {}, password: {} },
        authorize: () => ({ ...ALICE }),
      }),
      appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'] }),
      ...(passkeys ? [Passkey()] : []),
      // Only with e-mail as the way in: with an e-mail provider a passkey sign-up verifies the address first.
      ...(email ? [Email({ sendVerificationRequest: async (params) => void world.outbox.push(params) })] : []),
    ] as never,
    callbacks: {
      signIn: ({ credentials, profile, account, email }) => {
        // Asked before the message is sent too: that question is the e-mail flow's, not the completion's.
        if (email?.verificationRequest) return true
        // The callback sees what was submitted (credentials), the provider's profile (OAuth), the
        // e-mail account or the passkey's account.
        if (world.firstFactor === 'credentials') expect(credentials?.password).toBe('wonderland')
        else if (world.firstFactor === 'oauth') expect(profile?.sub).toBe(OP_ACCOUNT.sub)
        else if (world.firstFactor === 'email') expect(account?.type).toBe('email')
        else expect(account?.type).toBe('webauthn')
        if (world.signIn === 'refuses') return false
        return world.signIn === 'redirects' ? '/from-signin' : true
      },
      jwt: ({ token }) => {
        if (world.jwt === 'throws') throw new Error('jwt callback failed')
        return world.jwt === 'revokes' ? null : token
      },
    },
  }
}

const emailOf = (world: World) => (world.firstFactor === 'oauth' ? OP_EMAIL : ALICE.email)

/** The id the second factor belongs to: the stored user, or the credentials user's own id. */
const userIdOf = (world: World) =>
  world.firstFactor === 'credentials' && world.policy.strategy === 'jwt' ? ALICE.id : RETURNING.id

/** Puts the store in the state the world describes before the sign-in. */
async function seed(world: World): Promise<void> {
  const email = emailOf(world)
  const memory = MemoryAdapter(world.store)
  if (world.firstFactor === 'webauthn') {
    if (world.stored === 'returning') await seedPasskeyUser(world.store, world.authenticator, { ...RETURNING, email })
    // A taken address is taken between the options and the answer (see `passkeySignIn`).
  } else if (world.firstFactor === 'email') {
    if (world.stored === 'returning') world.store.users.set(RETURNING.id, { ...RETURNING, email })
    // An address is never adopted from a passkey user who did not verify it.
    if (world.stored === 'emailTaken') await seedPasskeyUser(world.store, new SoftwareAuthenticator(ORIGIN), { ...OTHER, email })
  } else if (world.stored === 'returning') {
    world.store.users.set(RETURNING.id, { ...RETURNING, email })
    const linked =
      world.firstFactor === 'oauth'
        ? { provider: 'op', providerAccountId: OP_ACCOUNT.sub, type: 'oidc' as const }
        : { ...account, type: 'credentials' as never }
    await memory.linkAccount({ ...linked, userId: RETURNING.id })
  } else if (world.stored === 'emailTaken') {
    world.store.users.set(OTHER.id, { ...OTHER, email })
  }
  if (world.factor === 'enrolled') {
    await memory.createSecondFactor({
      id: 'factor-1',
      userId: userIdOf(world),
      type: 'totp',
      secret: await sealFactorSecret(world.totpSecret, [SECRET]),
      createdAt: new Date(),
    })
  }
}

/** The completion's driver; with `extension`, for the chart the extension builds. */
export function completionDriver(machine: AnyStateMachine = signInCompletionMachine, extension?: ExtensionDriver): ModelDriver<World> {
  const extensions = extension?.extensions ?? []
  const configOf = (world: World, inspect: AuthConfig['inspect']) => configFor(world, inspect, extensions)
  return {
  machine,
  samples: [
    ...ENTRIES.map(({ firstFactor, policy }) => ({
      type: 'signin.verified',
      at: T0,
      policy,
      identity: {
        firstFactor,
        persist: firstFactor !== 'credentials' || policy.strategy === 'database',
        ignoresSignInRedirect: firstFactor === 'webauthn',
      },
    })),
    { type: 'checkSignIn.done', at: T0, output: { redirect: null } },
    { type: 'checkSignIn.done', at: T0, output: { redirect: `${ORIGIN}/from-signin` } },
    { type: 'checkSignIn.failed', at: T0, reason: 'denied', error: 'AccessDenied' },
    { type: 'storeUser.done', at: T0, output: { user: {}, account: {}, isNewUser: true } },
    { type: 'storeUser.done', at: T0, output: { user: {}, account: {}, isNewUser: false } },
    { type: 'storeUser.failed', at: T0, reason: 'notLinked', error: 'AccountNotLinked' },
    { type: 'storeUser.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'findSecondFactor.done', at: T0, output: { challenge: null } },
    { type: 'findSecondFactor.done', at: T0, output: { challenge: 'challenge' } },
    { type: 'findSecondFactor.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'secondFactor.submit', at: T0, code: '000000' },
    { type: 'verifySecondFactor.done', at: T0, output: { method: 'otp' } },
    { type: 'verifySecondFactor.failed', at: T0, reason: 'wrongCode' },
    { type: 'verifySecondFactor.failed', at: T0, reason: 'locked' },
    { type: 'verifySecondFactor.failed', at: T0, reason: 'codeUsed' },
    { type: 'verifySecondFactor.failed', at: T0, reason: 'exhausted', error: 'AccessDenied' },
    { type: 'verifySecondFactor.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'prepareSession.done', at: T0, output: { amr: ['pwd'] } },
    { type: 'prepareSession.done', at: T0, output: { amr: ['pwd', 'otp'] } },
    { type: 'issueSession.done', at: T0, output: { value: 'sealed', expires: T0 + 2_592_000 } },
    { type: 'issueSession.done', at: T0, output: { value: null, expires: T0 + 2_592_000 } },
    { type: 'issueSession.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'createDatabaseSession.done', at: T0, output: { value: 'token', expires: T0 + 2_592_000 } },
    { type: 'createDatabaseSession.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'emitSignInEvent.done', at: T0, output: null },
    ...(extension?.samples ?? []),
  ],
  possible: (snapshot, event) => {
    // A user created just now has no second factor yet.
    if (event.type === 'findSecondFactor.done' && event.output.challenge !== null) return !snapshot.context.isNewUser
    // The session records a second factor exactly when one was passed.
    if (event.type === 'prepareSession.done') return event.output.amr.length === 1 + snapshot.context.amr.length
    return true
  },
  label: (event) => {
    if (event.policy) return `${event.type} (${event.identity.firstFactor}, ${event.policy.strategy})`
    if (event.type === 'checkSignIn.done') {
      return event.output.redirect ? 'signIn callback returns a URL' : 'signIn callback allows'
    }
    if (event.type === 'storeUser.done') return event.output.isNewUser ? 'new user created' : 'returning user'
    if (event.type === 'findSecondFactor.done') return event.output.challenge ? 'second factor enrolled' : 'no second factor'
    if (event.type === 'issueSession.done') return event.output.value ? 'session issued' : 'jwt callback returns null'
    return undefined
  },
  world: () => ({
    firstFactor: ENTRIES[0].firstFactor,
    policy: ENTRIES[0].policy,
    store: createMemoryStore(),
    authStore: memoryAuthStore(),
    jar: new CookieJar(),
    signIn: 'allows',
    stored: 'createsUser',
    factor: 'none',
    factorStore: 'works',
    totpSecret: createTotpSecret(),
    code: 'right',
    jwt: 'identity',
    sessionStore: 'works',
    events: { signIn: vi.fn() },
    logger: spyLogger(),
    extension: extension?.world() ?? {},
    authenticator: new SoftwareAuthenticator(ORIGIN),
    outbox: [],
  }),
  cause: (world, request) => extension?.cause?.(world, request) ?? causeOf(world, request),
  oracle: { ...ORACLE, ...extension?.oracle },
  // The errors of the request just sent: the log is emptied after each read.
  loggedErrors: (world) => takeLoggedErrors(world.logger),
  arrange: {
    ...extension?.arrange,
    'checkSignIn.done': (world, event) => {
      world.signIn = event.output.redirect ? 'redirects' : 'allows'
    },
    'checkSignIn.failed': (world) => {
      world.signIn = 'refuses'
    },
    'storeUser.done': (world, event) => {
      world.stored = event.output.isNewUser ? 'createsUser' : 'returning'
    },
    'storeUser.failed': (world, event) => {
      world.stored = event.reason === 'notLinked' ? 'emailTaken' : 'fails'
    },
    'findSecondFactor.done': (world, event) => {
      world.factor = event.output.challenge ? 'enrolled' : 'none'
    },
    'findSecondFactor.failed': (world) => {
      world.factorStore = 'fails'
    },
    'verifySecondFactor.done': (world) => {
      world.code = 'right'
      world.factorStore = 'works'
    },
    'verifySecondFactor.failed': (world, event) => {
      if (event.reason === 'threw') {
        world.factorStore = 'fails'
        // The code reaches the factor store: it is checked, not locked out.
        if (world.code === 'locked') world.code = 'right'
      } else if (event.reason === 'codeUsed') world.code = 'used'
      else world.code = event.reason === 'wrongCode' ? 'wrong' : event.reason === 'locked' ? 'locked' : 'overTheLimit'
    },
    'prepareSession.done': () => {},
    'issueSession.done': (world, event) => {
      world.jwt = event.output.value ? 'identity' : 'revokes'
    },
    'issueSession.failed': (world) => {
      world.jwt = 'throws'
    },
    'createDatabaseSession.done': () => {},
    'createDatabaseSession.failed': (world) => {
      world.sessionStore = 'fails'
    },
    'emitSignInEvent.done': () => {},
  },
  send: {
    ...extension?.send,
    'signin.verified': async (world, event, inspect) => {
      world.policy = event.policy
      world.firstFactor = event.identity.firstFactor
      await seed(world)
      const config = configOf(world, inspect)
      if (world.firstFactor === 'oauth') {
        const client = new Client(config)
        const { callback } = await signInThroughProvider(client, 'op', { callbackUrl: '/dashboard' })
        world.jar = client.jar
        return callback
      }
      if (world.firstFactor === 'webauthn') return passkeySignIn(world, config)
      if (world.firstFactor === 'email') return emailSignIn(world, config)
      const csrfResponse = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
      world.jar.store(csrfResponse)
      const { csrfToken } = (await csrfResponse.json()) as { csrfToken: string }
      const response = await Auth(
        authRequest({
          path: '/auth/callback/credentials',
          body: { username: 'alice', password: 'wonderland', csrfToken, callbackUrl: '/dashboard' },
          cookies: world.jar,
        }),
        config,
      )
      world.jar.store(response)
      return response
    },
    'secondFactor.submit': async (world, _event, inspect) => {
      const config = configOf(world, inspect)
      const at = Math.floor(Date.now() / 1000)
      // Each submission stands in its own minute of its own quarter hour: the user's count and this
      // minute's late check are what the world says, whatever earlier steps of the path left.
      const userId = userIdOf(world)
      // A passkey sign-in's codes count as a known device's; others as this client's (the tests
      // give no address: the unknown client) and the user's.
      const passkey = world.firstFactor === 'webauthn'
      const counters = passkey
        ? [deviceAttemptsKey(userId, 'passkey')]
        : [userAttemptsKey(userId), await clientAttemptsKeyOf(userId, undefined, [SECRET])]
      const slot = passkey ? deviceSlotKey(userId, 'passkey', at) : userSlotKey(userId, at)
      await Promise.all([...counters, slot].map((key) => world.authStore.reset(key)))
      if (world.code === 'overTheLimit' || world.code === 'locked') {
        // This client has spent every code of the last quarter hour, in other sign-ins.
        for (let i = 0; i < MAX_USER_ATTEMPTS; i++) for (const key of counters) await world.authStore.increment(key, 900)
      }
      // An earlier sign-in spent the current code.
      if (world.code === 'used') await world.authStore.claim(totpStepKey('factor-1', Math.floor(at / TOTP_PERIOD)), TOTP_STEP_CLAIM_SECONDS)
      // And another sign-in had this minute's one late check.
      if (world.code === 'locked') await world.authStore.claim(slot, 60)
      const csrfResponse = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
      world.jar.store(csrfResponse)
      const { csrfToken } = (await csrfResponse.json()) as { csrfToken: string }
      // Wrong once the codes are spent: the sign-in's late check fails, and it is void.
      const code = world.code === 'wrong' || world.code === 'overTheLimit' ? wrongCode(world) : totpCode(world.totpSecret, at)
      const response = await Auth(
        authRequest({ path: '/auth/step/signin-completion', body: { code, csrfToken }, cookies: world.jar }),
        config,
      )
      world.jar.store(response)
      return response
    },
  },
  expect: {
    awaitingSecondFactor: async (response, world) => {
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
      await expectNoSessionYet(response, world, configOf(world, () => {}))
      expect(setCookie(response, COMPLETION_COOKIE)?.value).toMatch(/^ey/)
      // The page asks for the code, and says so when the last one was wrong.
      const page = await Auth(
        authRequest({ path: '/auth/step/signin-completion', cookies: world.jar }),
        configOf(world, () => {}),
      )
      expect(page.status).toBe(200)
      expect(page.headers.get('cache-control')).toContain('no-store')
      const html = await page.text()
      expect(html).toContain('Two-step verification')
      expect(html.includes('That code is not right')).toBe(world.code === 'wrong')
      expect(html.includes(CODE_MESSAGES.codesTried)).toBe(world.code === 'locked')
      expect(html.includes(CODE_MESSAGES.codeUsed)).toBe(world.code === 'used')
    },
    signedIn: async (response, world) => {
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
      await expectSession(response, world)
    },
    welcomedNewUser: async (response, world) => {
      expect(response.headers.get('location')).toBe(
        `/welcome-new?callbackUrl=${encodeURIComponent(`${ORIGIN}/dashboard`)}`,
      )
      await expectSession(response, world)
    },
    redirectedBySignIn: (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/from-signin`)
      expectNothingIssued(response, world)
    },
    denied: (response, world) => {
      expectError(response, 'error?error=AccessDenied')
      if (world.factor === 'enrolled') expect(setCookie(response, COMPLETION_COOKIE)?.attributes['max-age']).toBe('0')
      expectNothingIssued(response, world)
    },
    notLinked: (response, world) => {
      const error = world.firstFactor === 'oauth' ? 'OAuthAccountNotLinked' : 'AccountNotLinked'
      expectError(response, `signin?error=${error}`)
      expectNothingIssued(response, world)
    },
    failed: (response) => expectError(response, 'error?error=Configuration'),
    // An extension's expectations come last: it knows how its own steps end.
    ...extension?.expect,
  },
  }
}

/**
 * Why a request of the completion ends where it does, in the words of the arranged world: the way
 * in, then the first thing that decides (the signIn callback, the store, the second factor, the
 * code typed, the jwt callback, the session store).
 */
export function causeOf(world: World, request: readonly ModelStep[]): string {
  const entry = `${world.firstFactor} ${world.policy.strategy}`
  const secondStep = request[0]!.event.type === 'secondFactor.submit'
  const decided = (() => {
    if (!secondStep) {
      if (world.signIn === 'refuses') return 'signIn refuses'
      // A passkey sign-in ignores a URL from the signIn callback, as Auth.js does.
      if (world.signIn === 'redirects' && world.firstFactor !== 'webauthn') return 'signIn redirects'
      if (world.stored === 'emailTaken') return 'e-mail address taken'
      if (world.stored === 'fails') return 'storing the user fails'
      if (world.factorStore === 'fails') return 'factor lookup fails'
      if (world.factor === 'enrolled') return 'second factor enrolled'
    } else {
      // What this request arranged comes first: a store outage after an earlier wrong code.
      if (world.factorStore === 'fails') return 'factor store fails'
      if (world.code === 'overTheLimit') return 'attempts exhausted'
      if (world.code === 'locked') return 'user locked this minute'
      if (world.code === 'used') return 'code already used'
      if (world.code === 'wrong') return 'wrong code'
    }
    if (world.jwt === 'throws') return 'jwt callback throws'
    if (world.jwt === 'revokes') return 'jwt callback revokes'
    if (world.sessionStore === 'fails') return 'session store fails'
    return `${world.stored === 'createsUser' ? 'new' : 'returning'} user signed in${secondStep ? ' with a code' : ''}`
  })()
  return `${entry}: ${decided}`
}

/** A passkey sign-in (returning user) or sign-up (anyone else), as the built-in page runs it. */
async function passkeySignIn(world: World, config: AuthConfig): Promise<Response> {
  const browser = new PasskeyBrowser(config, world.authenticator)
  world.jar = browser.jar
  const returning = world.stored === 'returning'
  const { body } = await browser.options(returning ? { action: 'authenticate' } : { email: ALICE.email })
  if (world.stored === 'emailTaken') world.store.users.set(OTHER.id, { ...OTHER })
  const answer = returning
    ? world.authenticator.authenticate(body.options as never)
    : world.authenticator.register(body.options as never)
  return browser.answer(body.action, answer, { callbackUrl: '/dashboard' })
}

/** An e-mail sign-in: the address posted, the link opened and confirmed on its page. */
async function emailSignIn(world: World, config: AuthConfig): Promise<Response> {
  const client = new EmailClient(config)
  world.jar = client.jar
  const asked = await client.requestLink(emailOf(world), { callbackUrl: '/dashboard' })
  expect(asked.headers.get('location')).toBe(`${ORIGIN}/auth/verify-request?provider=email&type=email`)
  return client.confirm(lastLink(world.outbox))
}

/** A six-digit code that is not the current one. */
function wrongCode(world: World): string {
  const right = totpCode(world.totpSecret, Math.floor(Date.now() / 1000))
  return right === '123456' ? '654321' : '123456'
}

/**
 * A sign-in that waits for a step (a code, an application's page) holds no session anywhere: no
 * session cookie set or kept, none readable through `/session`, no session row, no signIn event.
 */
export async function expectNoSessionYet(response: Response, world: World, config: AuthConfig): Promise<void> {
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  expect(world.jar.get(SESSION_COOKIE)).toBeUndefined()
  expect(world.store.sessions.size).toBe(0)
  expect(world.events.signIn).not.toHaveBeenCalled()
  const session = await Auth(authRequest({ path: '/auth/session', cookies: world.jar }), config)
  expect(await session.json()).toBeNull()
}

export function expectError(response: Response, target: string): void {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/${target}`)
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
}

/** No session, and nothing stored on the user's behalf (a refused sign-in creates no user). */
export function expectNothingIssued(response: Response, world: World): void {
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  expect(world.store.sessions.size).toBe(0)
  const seeded = world.stored === 'returning' || world.stored === 'emailTaken' ? 1 : 0
  expect(world.store.users.size).toBe(seeded)
  expect(world.events.signIn).not.toHaveBeenCalled()
}

export async function expectSession(response: Response, world: World): Promise<void> {
  const cookie = setCookie(response, SESSION_COOKIE)
  expect(world.events.signIn).toHaveBeenCalledOnce()
  if (world.jwt === 'revokes') {
    expect(cookie?.value ?? '').toBe('')
    return
  }
  const multiFactor = world.factor === 'enrolled'
  if (world.policy.strategy === 'database') {
    const row = world.store.sessions.get(cookie!.value)!
    const user = world.store.users.get(row.userId)!
    expect(user.email).toBe(ALICE.email)
    if (world.stored === 'returning') expect(user.id).toBe(RETURNING.id)
    expect(Date.parse(cookie!.attributes.expires as string)).toBe(row.expires.getTime())
    // The row records how the user signed in after a second factor.
    expect(row.amr).toEqual(multiFactor ? [FIRST_FACTOR_AMR[world.firstFactor], 'otp'] : undefined)
    return
  }
  const token = await decode({ token: cookie!.value, secret: SECRET, salt: SESSION_COOKIE })
  if (world.firstFactor === 'oauth') {
    // The JWT names the stored user the OAuth account is linked to.
    const linked = await MemoryAdapter(world.store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub })
    expect(token).toMatchObject({ sub: linked!.id, email: OP_EMAIL })
    if (world.stored === 'returning') expect(linked!.id).toBe(RETURNING.id)
  } else {
    expect(token).toMatchObject({ sub: ALICE.id, email: ALICE.email })
  }
  if (multiFactor) {
    expect(token).toMatchObject({ amr: [FIRST_FACTOR_AMR[world.firstFactor], 'otp'], aal: 2 })
  } else {
    // A single-factor token is exactly Auth.js's: nothing added.
    expect(token).not.toHaveProperty('amr')
    expect(token).not.toHaveProperty('aal')
  }
}

