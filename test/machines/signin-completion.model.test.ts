/**
 * Model-based test of the sign-in completion through `Auth`: the tail every first factor hands its
 * verified user to. Paths start with a credentials sign-in (JWT or database sessions) or an OIDC
 * sign-in at the real test provider (JWT sessions with an adapter, so the user is stored); the
 * world decides what the `signIn` callback says, how storing the user goes, what the `jwt`
 * callback returns and whether the session store works.
 */
import { afterAll, expect, vi, type Mock } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import { signInCompletionMachine } from '../../machines/signin-completion.machine.js'
import Credentials from '../../providers/credentials.js'
import { ALICE, authRequest, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { Client } from '../fixtures/http.js'
import { describeModel, type ModelDriver } from './harness.js'

const op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
afterAll(() => op.close())
const OP_EMAIL = OP_ACCOUNT.email.toLowerCase()

const SESSION_COOKIE = '__Secure-authjs.session-token'
const T0 = Math.floor(Date.now() / 1000)
const account = { providerAccountId: ALICE.id, type: 'credentials', provider: 'credentials' }
const RETURNING = { id: 'db-alice', name: 'Alice (stored)', email: ALICE.email, emailVerified: null }
const OTHER = { id: 'oauth-alice', name: 'Alice (GitHub)', email: ALICE.email, emailVerified: null }

/** Each way in: a first factor, and the session policy it is tried with. */
const ENTRIES = [
  { firstFactor: 'credentials', policy: { strategy: 'jwt', maxAge: 2_592_000, newUserUrl: null } },
  { firstFactor: 'credentials', policy: { strategy: 'database', maxAge: 2_592_000, newUserUrl: '/welcome-new' } },
  // An OAuth user is stored whenever there is an adapter, even with JWT sessions.
  { firstFactor: 'oauth', policy: { strategy: 'jwt', maxAge: 2_592_000, newUserUrl: null } },
] as const

interface World {
  firstFactor: (typeof ENTRIES)[number]['firstFactor']
  policy: (typeof ENTRIES)[number]['policy']
  store: MemoryStore
  signIn: 'allows' | 'redirects' | 'refuses'
  stored: 'createsUser' | 'returning' | 'emailTaken' | 'fails'
  jwt: 'identity' | 'revokes' | 'throws'
  sessionStore: 'works' | 'fails'
  events: { signIn: Mock<(message: unknown) => void> }
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  const memory = MemoryAdapter(world.store)
  const stored = world.policy.strategy === 'database' || world.firstFactor === 'oauth'
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    inspect,
    events: world.events,
    session: { strategy: world.policy.strategy },
    ...(world.policy.newUserUrl ? { pages: { newUser: world.policy.newUserUrl } } : {}),
    ...(stored
      ? {
          adapter: {
            ...memory,
            async linkAccount(linked) {
              if (world.stored === 'fails') throw new Error('database unavailable')
              await memory.linkAccount(linked)
            },
            async createSession(session) {
              if (world.sessionStore === 'fails') throw new Error('database unavailable')
              return memory.createSession(session)
            },
          },
        }
      : {}),
    providers: [
      Credentials({
        credentials: { username: {}, password: {} },
        authorize: () => ({ ...ALICE }),
      }),
      appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'] }),
    ] as never,
    callbacks: {
      signIn: ({ credentials, profile }) => {
        // The callback sees what was submitted (credentials) or the provider's profile (OAuth).
        if (world.firstFactor === 'credentials') expect(credentials?.password).toBe('wonderland')
        else expect(profile?.sub).toBe(OP_ACCOUNT.sub)
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

/** Puts the store in the state the world describes before the sign-in. */
async function seed(world: World): Promise<void> {
  const email = emailOf(world)
  if (world.stored === 'returning') {
    world.store.users.set(RETURNING.id, { ...RETURNING, email })
    const linked =
      world.firstFactor === 'oauth'
        ? { provider: 'op', providerAccountId: OP_ACCOUNT.sub, type: 'oidc' as const }
        : { ...account, type: 'credentials' as never }
    await MemoryAdapter(world.store).linkAccount({ ...linked, userId: RETURNING.id })
  } else if (world.stored === 'emailTaken') {
    world.store.users.set(OTHER.id, { ...OTHER, email })
  }
}

const emailOf = (world: World) => (world.firstFactor === 'oauth' ? OP_EMAIL : ALICE.email)

const driver: ModelDriver<World> = {
  machine: signInCompletionMachine,
  samples: [
    ...ENTRIES.map(({ firstFactor, policy }) => ({
      type: 'signin.verified',
      at: T0,
      policy,
      identity: { firstFactor, persist: firstFactor === 'oauth' || policy.strategy === 'database' },
    })),
    { type: 'checkSignIn.done', at: T0, output: { redirect: null } },
    { type: 'checkSignIn.done', at: T0, output: { redirect: `${ORIGIN}/from-signin` } },
    { type: 'checkSignIn.failed', at: T0, reason: 'denied', error: 'AccessDenied' },
    { type: 'storeUser.done', at: T0, output: { user: {}, account: {}, isNewUser: true } },
    { type: 'storeUser.done', at: T0, output: { user: {}, account: {}, isNewUser: false } },
    { type: 'storeUser.failed', at: T0, reason: 'notLinked', error: 'AccountNotLinked' },
    { type: 'storeUser.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'issueSession.done', at: T0, output: { value: 'sealed', expires: T0 + 2_592_000 } },
    { type: 'issueSession.done', at: T0, output: { value: null, expires: T0 + 2_592_000 } },
    { type: 'issueSession.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'createDatabaseSession.done', at: T0, output: { value: 'token', expires: T0 + 2_592_000 } },
    { type: 'createDatabaseSession.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'emitSignInEvent.done', at: T0, output: null },
  ],
  label: (event) => {
    if (event.policy) return `${event.type} (${event.identity.firstFactor}, ${event.policy.strategy})`
    if (event.type === 'checkSignIn.done') {
      return event.output.redirect ? 'signIn callback returns a URL' : 'signIn callback allows'
    }
    if (event.type === 'storeUser.done') return event.output.isNewUser ? 'new user created' : 'returning user'
    if (event.type === 'issueSession.done') return event.output.value ? 'session issued' : 'jwt callback returns null'
    return undefined
  },
  world: () => ({
    firstFactor: ENTRIES[0].firstFactor,
    policy: ENTRIES[0].policy,
    store: createMemoryStore(),
    signIn: 'allows',
    stored: 'createsUser',
    jwt: 'identity',
    sessionStore: 'works',
    events: { signIn: vi.fn() },
  }),
  arrange: {
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
    'signin.verified': async (world, event, inspect) => {
      world.policy = event.policy
      world.firstFactor = event.identity.firstFactor
      await seed(world)
      const config = configFor(world, inspect)
      if (world.firstFactor === 'oauth') {
        const { callback } = await signInThroughProvider(new Client(config), 'op', { callbackUrl: '/dashboard' })
        return callback
      }
      const jar = new CookieJar()
      const csrfResponse = await Auth(authRequest({ path: '/auth/csrf', cookies: jar }), config)
      jar.store(csrfResponse)
      const { csrfToken } = (await csrfResponse.json()) as { csrfToken: string }
      return Auth(
        authRequest({
          path: '/auth/callback/credentials',
          body: { username: 'alice', password: 'wonderland', csrfToken, callbackUrl: '/dashboard' },
          cookies: jar,
        }),
        config,
      )
    },
  },
  expect: {
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
      expectNothingIssued(response, world)
    },
    notLinked: (response, world) => {
      const error = world.firstFactor === 'oauth' ? 'OAuthAccountNotLinked' : 'AccountNotLinked'
      expectError(response, `signin?error=${error}`)
      expectNothingIssued(response, world)
    },
    failed: (response) => expectError(response, 'error?error=Configuration'),
  },
}

function expectError(response: Response, target: string): void {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/${target}`)
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
}

/** No session, and nothing stored on the user's behalf (a refused sign-in creates no user). */
function expectNothingIssued(response: Response, world: World): void {
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  expect(world.store.sessions.size).toBe(0)
  const seeded = world.stored === 'returning' || world.stored === 'emailTaken' ? 1 : 0
  expect(world.store.users.size).toBe(seeded)
  expect(world.events.signIn).not.toHaveBeenCalled()
}

async function expectSession(response: Response, world: World): Promise<void> {
  const cookie = setCookie(response, SESSION_COOKIE)
  expect(world.events.signIn).toHaveBeenCalledOnce()
  if (world.jwt === 'revokes') {
    expect(cookie?.value ?? '').toBe('')
    return
  }
  if (world.policy.strategy === 'database') {
    const row = world.store.sessions.get(cookie!.value)!
    const user = world.store.users.get(row.userId)!
    expect(user.email).toBe(ALICE.email)
    if (world.stored === 'returning') expect(user.id).toBe(RETURNING.id)
    expect(Date.parse(cookie!.attributes.expires as string)).toBe(row.expires.getTime())
  } else if (world.firstFactor === 'oauth') {
    // The JWT names the stored user the OAuth account is linked to.
    const token = await decode({ token: cookie!.value, secret: SECRET, salt: SESSION_COOKIE })
    const linked = await MemoryAdapter(world.store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub })
    expect(token).toMatchObject({ sub: linked!.id, email: OP_EMAIL })
    if (world.stored === 'returning') expect(linked!.id).toBe(RETURNING.id)
  } else {
    const token = await decode({ token: cookie!.value, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ sub: ALICE.id, email: ALICE.email })
  }
}

describeModel('sign-in completion machine', driver)
