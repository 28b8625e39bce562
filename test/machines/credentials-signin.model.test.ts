/**
 * Model-based test of the credentials machine (the first factor) through `Auth`: every path from
 * the submitted form to `authorize`'s verdict and, with database sessions, to the credentials
 * account's lookup. A verified user is handed to the sign-in completion, whose own model test
 * walks the rest; here it runs with its defaults and must sign the user in.
 */
import { expect, vi, type Mock } from 'vitest'
import type { ExpectedCookie, ExpectedResponse } from '../../testing/index.js'
import { Auth } from '../../core/index.js'
import { CredentialsSignin } from '../../core/errors.js'
import { decode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import { admitAttempt } from '../../core/store/limits.js'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { credentialsSignInMachine } from '../../machines/credentials-signin.machine.js'
import Credentials from '../../providers/credentials.js'
import { ALICE, authRequest, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { describeModel, freezeClock, httpDate, JWE, SECURE_ATTRIBUTES, takeLoggedErrors, UUID, type ModelDriver } from './harness.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const T0 = Math.floor(Date.now() / 1000)
const jwtPolicy = { strategy: 'jwt', maxAge: 2_592_000 } as const
const dbPolicy = { strategy: 'database', maxAge: 2_592_000 } as const
const account = { providerAccountId: ALICE.id, type: 'credentials', provider: 'credentials' }
const RETURNING = { id: 'db-alice', name: 'Alice (stored)', email: ALICE.email, emailVerified: null }
const MAX_AGE = jwtPolicy.maxAge

freezeClock(T0)

const ATTRIBUTES = SECURE_ATTRIBUTES
const session = (value: RegExp): Record<string, ExpectedCookie> => ({
  [SESSION_COOKIE]: { value, attributes: { ...ATTRIBUTES, expires: httpDate(T0 + MAX_AGE) } },
  '__Secure-authjs.callback-url': { value: `${ORIGIN}/dashboard`, attributes: ATTRIBUTES },
})
const RATE_LIMITED = new RegExp(
  `^${ORIGIN.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/auth/signin\\?error=CredentialsSignin&code=rate_limited&retryAfter=\\d+$`,
)
const refused = (location: string | RegExp, errors: string[]): ExpectedResponse => ({
  status: 302,
  location,
  cookies: { [SESSION_COOKIE]: null },
  errors,
})

/**
 * What each (final state, cause) must answer, from the spec rather than the chart: a verdict of
 * `authorize` or the database that the chart mishandles ends in a pair this table does not list.
 */
const ORACLE: Record<string, ExpectedResponse> = {
  'verified ← jwt, authorize accepts': { status: 302, location: `${ORIGIN}/dashboard`, cookies: session(JWE), errors: [] },
  'verified ← database, authorize accepts, account unknown': { status: 302, location: `${ORIGIN}/dashboard`, cookies: session(UUID), errors: [] },
  'verified ← database, authorize accepts, account linked': { status: 302, location: `${ORIGIN}/dashboard`, cookies: session(UUID), errors: [] },
  'rejected ← jwt, authorize returns null': refused(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=credentials`, ['CredentialsSignin']),
  'rejected ← database, authorize returns null': refused(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=credentials`, ['CredentialsSignin']),
  'rejected ← jwt, authorize rejects with a code': refused(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=wrong-password`, ['CredentialsSignin']),
  'rejected ← database, authorize rejects with a code': refused(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=wrong-password`, ['CredentialsSignin']),
  'failed ← jwt, authorize throws': refused(`${ORIGIN}/auth/error?error=Configuration`, ['CallbackRouteError']),
  'failed ← database, authorize throws': refused(`${ORIGIN}/auth/error?error=Configuration`, ['CallbackRouteError']),
  'failed ← database, authorize accepts, account lookup fails': refused(`${ORIGIN}/auth/error?error=Configuration`, ['AdapterError', 'AdapterError']),
  // Over the limit: authorize is not asked, the answer names no account (a warning, not an error).
  'limited ← jwt, over the limit': refused(RATE_LIMITED, []),
  'limited ← database, over the limit': refused(RATE_LIMITED, []),
  'failed ← jwt, the store fails': refused(`${ORIGIN}/auth/error?error=Configuration`, ['CallbackRouteError']),
  'failed ← database, the store fails': refused(`${ORIGIN}/auth/error?error=Configuration`, ['CallbackRouteError']),
}

/** Why the request ends where it does, in the words of the arranged world. */
function causeOf(world: World): string {
  // The limit is checked before authorize: past it, nothing else of the world is reached.
  if (world.limit !== 'within') return `${world.strategy}, ${world.limit === 'over' ? 'over the limit' : 'the store fails'}`
  const verdict = {
    accepts: 'authorize accepts',
    returnsNull: 'authorize returns null',
    rejectsWithCode: 'authorize rejects with a code',
    throws: 'authorize throws',
  }[world.authorize]
  const lookup = world.strategy === 'database' && world.authorize === 'accepts'
    ? `, account ${world.account === 'lookupFails' ? 'lookup fails' : world.account}`
    : ''
  return `${world.strategy}, ${verdict}${lookup}`
}

class WrongPassword extends CredentialsSignin {
  override code = 'wrong-password'
}

interface World {
  strategy: 'jwt' | 'database'
  store: MemoryStore
  authorize: 'accepts' | 'returnsNull' | 'rejectsWithCode' | 'throws'
  account: 'unknown' | 'linked' | 'lookupFails'
  /** Where the attempt stands against the rate limit (one attempt per identifier here). */
  limit: 'within' | 'over' | 'storeFails'
  limits: AuthStore
  authorizeCalls: number
  events: { signIn: Mock<(message: unknown) => void> }
  logger: ReturnType<typeof spyLogger>
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  const memory = MemoryAdapter(world.store)
  return {
    secret: SECRET,
    trustHost: true,
    logger: world.logger,
    inspect,
    events: world.events,
    session: { strategy: world.strategy },
    rateLimit: { credentials: { perIdentifier: 1 } },
    store:
      world.limit === 'storeFails'
        ? { ...world.limits, consume: () => Promise.reject(new Error('the store is unreachable')) }
        : world.limits,
    ...(world.strategy === 'database'
      ? {
          adapter: {
            ...memory,
            async getUserByAccount(key) {
              if (world.account === 'lookupFails') throw new Error('database unavailable')
              return memory.getUserByAccount(key)
            },
          },
        }
      : {}),
    providers: [
      Credentials({
        credentials: { username: {}, password: {} },
        authorize: (credentials) => {
          world.authorizeCalls++
          if (world.authorize === 'throws') throw new Error('database is down')
          if (world.authorize === 'rejectsWithCode') throw new WrongPassword()
          if (world.authorize === 'returnsNull') return null
          expect(credentials.username).toBe('alice')
          return { ...ALICE }
        },
      }),
    ],
  }
}

const driver: ModelDriver<World> = {
  machine: credentialsSignInMachine,
  samples: [
    ...[jwtPolicy, dbPolicy].map((policy) => ({
      type: 'credentials.submit',
      at: T0,
      providerId: 'credentials',
      credentials: { username: 'alice', password: 'wonderland' },
      callbackUrl: `${ORIGIN}/dashboard`,
      policy,
    })),
    { type: 'admitAttempt.done', at: T0, output: null },
    { type: 'admitAttempt.failed', at: T0, reason: 'limited', error: 'CredentialsSignin', code: 'rate_limited', retryAfter: 900 },
    { type: 'admitAttempt.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'authorize.done', at: T0, output: { user: ALICE, account } },
    { type: 'authorize.failed', at: T0, reason: 'rejected', error: 'CredentialsSignin', code: 'credentials' },
    { type: 'authorize.failed', at: T0, reason: 'rejected', error: 'CredentialsSignin', code: 'wrong-password' },
    { type: 'authorize.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'lookUpAccount.done', at: T0, output: { user: null } },
    { type: 'lookUpAccount.done', at: T0, output: { user: RETURNING } },
    { type: 'lookUpAccount.failed', at: T0, reason: 'threw', error: 'AdapterError' },
  ],
  label: (event) => {
    if (event.policy) return `${event.type} (${event.policy.strategy})`
    if (event.type === 'authorize.failed') {
      return event.reason === 'threw' ? 'authorize throws' : `authorize rejects (code ${event.code})`
    }
    if (event.type === 'admitAttempt.failed') return event.reason === 'limited' ? 'over the limit' : 'store fails'
    if (event.type === 'lookUpAccount.done') return event.output.user ? 'account linked' : 'account unknown'
    return undefined
  },
  world: () => ({
    strategy: 'jwt',
    store: createMemoryStore(),
    authorize: 'accepts',
    account: 'unknown',
    limit: 'within',
    limits: memoryAuthStore(),
    authorizeCalls: 0,
    events: { signIn: vi.fn() },
    logger: spyLogger(),
  }),
  cause: causeOf,
  oracle: ORACLE,
  loggedErrors: (world) => takeLoggedErrors(world.logger),
  arrange: {
    'admitAttempt.done': (world) => {
      world.limit = 'within'
    },
    'admitAttempt.failed': async (world, event) => {
      world.limit = event.reason === 'limited' ? 'over' : 'storeFails'
      // Alice's one attempt of the window, spent by an earlier request (the same key the flow counts).
      if (world.limit === 'over') {
        await admitAttempt(world.limits, 'credentials:credentials', SECRET, [
          { kind: 'identifier', value: 'alice', limit: { points: 1, window: 900 } },
        ])
      }
    },
    'authorize.done': (world) => {
      world.authorize = 'accepts'
    },
    'authorize.failed': (world, event) => {
      const { reason, code } = event
      world.authorize =
        reason === 'threw' ? 'throws' : code === 'credentials' ? 'returnsNull' : 'rejectsWithCode'
    },
    'lookUpAccount.done': (world, event) => {
      world.account = event.output.user ? 'linked' : 'unknown'
    },
    'lookUpAccount.failed': (world) => {
      world.account = 'lookupFails'
    },
  },
  send: {
    'credentials.submit': async (world, event, inspect) => {
      world.strategy = event.policy.strategy
      if (world.account === 'linked') {
        world.store.users.set(RETURNING.id, { ...RETURNING })
        await MemoryAdapter(world.store).linkAccount({ ...account, type: 'credentials' as never, userId: RETURNING.id })
      }
      const config = configFor(world, inspect)
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
    verified: async (response, world) => {
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
      const cookie = setCookie(response, SESSION_COOKIE)!
      if (world.strategy === 'database') {
        // A real database session for the user the credentials account is linked to.
        const stored = world.store.sessions.get(cookie.value)!
        const user = world.store.users.get(stored.userId)!
        expect(user.email).toBe(ALICE.email)
        if (world.account === 'linked') expect(user.id).toBe(RETURNING.id)
        expect(world.store.users.size).toBe(1)
        expect(Date.parse(cookie.attributes.expires as string)).toBe(stored.expires.getTime())
      } else {
        const token = await decode({ token: cookie.value, secret: SECRET, salt: SESSION_COOKIE })
        expect(token).toMatchObject({ sub: ALICE.id, email: ALICE.email, picture: ALICE.image })
        // JWT sessions keep credentials users out of the database, as Auth.js does.
        expect(world.store.users.size).toBe(0)
        expect(world.events.signIn).toHaveBeenCalledWith({ user: expect.objectContaining({ id: ALICE.id }), account })
      }
      expect(world.events.signIn).toHaveBeenCalledOnce()
    },
    limited: (response, world) => {
      const location = new URL(response.headers.get('location')!)
      expect(`${location.origin}${location.pathname}`).toBe(`${ORIGIN}/auth/signin`)
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'CredentialsSignin',
        code: 'rate_limited',
        retryAfter: expect.stringMatching(/^(9\d\d|[1-8]\d\d)$/),
      })
      expect(world.authorizeCalls, 'authorize is not called over the limit').toBe(0)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    rejected: (response, world) => {
      const code = world.authorize === 'returnsNull' ? 'credentials' : 'wrong-password'
      expect(response.headers.get('location')).toBe(
        `${ORIGIN}/auth/signin?error=CredentialsSignin&code=${code}`,
      )
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    failed: (response) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
  },
}

describeModel('credentials sign-in machine', driver)
