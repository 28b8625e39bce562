import { expect, vi, type Mock } from 'vitest'
import { Auth } from '../../core/index.js'
import { CredentialsSignin } from '../../core/errors.js'
import { decode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { credentialsSignInMachine } from '../../machines/credentials-signin.machine.js'
import Credentials from '../../providers/credentials.js'
import { ALICE, authRequest, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { describeModel, type ModelDriver } from './harness.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const T0 = Math.floor(Date.now() / 1000)
const jwtPolicy = { strategy: 'jwt', maxAge: 2_592_000 } as const
const dbPolicy = { strategy: 'database', maxAge: 2_592_000 } as const
const account = { providerAccountId: ALICE.id, type: 'credentials', provider: 'credentials' }

class WrongPassword extends CredentialsSignin {
  override code = 'wrong-password'
}

interface World {
  strategy: 'jwt' | 'database'
  store: MemoryStore
  databaseDown: boolean
  authorize: 'accepts' | 'returnsNull' | 'rejectsWithCode' | 'throws'
  signIn: 'allows' | 'redirects' | 'refuses' | 'throws'
  jwt: 'identity' | 'revokes' | 'throws'
  events: { signIn: Mock<(message: unknown) => void> }
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    inspect,
    events: world.events,
    session: { strategy: world.strategy },
    ...(world.strategy === 'database'
      ? {
          adapter: {
            ...MemoryAdapter(world.store),
            createSession: async (session: Parameters<ReturnType<typeof MemoryAdapter>['createSession']>[0]) => {
              if (world.databaseDown) throw new Error('database unavailable')
              return MemoryAdapter(world.store).createSession(session)
            },
          },
        }
      : {}),
    providers: [
      Credentials({
        credentials: { username: {}, password: {} },
        authorize: (credentials) => {
          if (world.authorize === 'throws') throw new Error('database is down')
          if (world.authorize === 'rejectsWithCode') throw new WrongPassword()
          if (world.authorize === 'returnsNull') return null
          expect(credentials.username).toBe('alice')
          return { ...ALICE }
        },
      }),
    ],
    callbacks: {
      signIn: ({ credentials }) => {
        // The callback still sees the submitted credentials (Auth.js passes them).
        expect(credentials?.username).toBe('alice')
        if (world.signIn === 'throws') throw new Error('policy service down')
        if (world.signIn === 'refuses') return false
        return world.signIn === 'redirects' ? '/welcome' : true
      },
      jwt: ({ token }) => {
        if (world.jwt === 'throws') throw new Error('jwt callback failed')
        return world.jwt === 'revokes' ? null : token
      },
    },
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
    { type: 'authorize.done', at: T0, output: { user: ALICE, account } },
    { type: 'authorize.failed', at: T0, reason: 'rejected', error: 'CredentialsSignin', code: 'credentials' },
    { type: 'authorize.failed', at: T0, reason: 'rejected', error: 'CredentialsSignin', code: 'wrong-password' },
    { type: 'authorize.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'checkSignIn.done', at: T0, output: { redirect: null } },
    { type: 'checkSignIn.done', at: T0, output: { redirect: `${ORIGIN}/welcome` } },
    { type: 'checkSignIn.failed', at: T0, reason: 'denied', error: 'AccessDenied' },
    { type: 'issueSession.done', at: T0, output: { value: 'sealed', expires: T0 + 2_592_000 } },
    { type: 'issueSession.done', at: T0, output: { value: null, expires: T0 + 2_592_000 } },
    { type: 'issueSession.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'emitSignInEvent.done', at: T0, output: null },
    {
      type: 'createDatabaseSession.done',
      at: T0,
      output: { value: 'token', expires: T0 + 2_592_000, user: ALICE },
    },
    { type: 'createDatabaseSession.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
  ],
  label: (event) => {
    if (event.policy) return `${event.type} (${event.policy.strategy})`
    if (event.type === 'authorize.failed') {
      return event.reason === 'threw' ? 'authorize throws' : `authorize rejects (code ${event.code})`
    }
    if (event.type === 'checkSignIn.done') {
      return event.output.redirect ? 'signIn callback returns a URL' : 'signIn callback allows'
    }
    if (event.type === 'issueSession.done') {
      return event.output.value ? 'session issued' : 'jwt callback returns null'
    }
    return undefined
  },
  world: () => ({
    strategy: 'jwt',
    store: createMemoryStore(),
    databaseDown: false,
    authorize: 'accepts',
    signIn: 'allows',
    jwt: 'identity',
    events: { signIn: vi.fn() },
  }),
  arrange: {
    'authorize.done': (world) => {
      world.authorize = 'accepts'
    },
    'authorize.failed': (world, event) => {
      const { reason, code } = event
      world.authorize =
        reason === 'threw' ? 'throws' : code === 'credentials' ? 'returnsNull' : 'rejectsWithCode'
    },
    'checkSignIn.done': (world, event) => {
      world.signIn = event.output.redirect
        ? 'redirects'
        : 'allows'
    },
    'checkSignIn.failed': (world) => {
      world.signIn = 'refuses'
    },
    'issueSession.done': (world, event) => {
      world.jwt = event.output.value ? 'identity' : 'revokes'
    },
    'issueSession.failed': (world) => {
      world.jwt = 'throws'
    },
    'emitSignInEvent.done': () => {},
    'createDatabaseSession.done': () => {},
    'createDatabaseSession.failed': (world) => {
      world.databaseDown = true
    },
  },
  send: {
    'credentials.submit': async (world, event, inspect) => {
      world.strategy = event.policy.strategy
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
    signedIn: async (response, world) => {
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
      const cookie = setCookie(response, SESSION_COOKIE)
      if (world.strategy === 'database') {
        // A real database session: the cookie holds its token, the row exists, the user too.
        const stored = world.store.sessions.get(cookie!.value)!
        expect(stored.userId).toBe(ALICE.id)
        expect(Date.parse(cookie!.attributes.expires as string)).toBe(stored.expires.getTime())
        expect(world.store.users.get(ALICE.id)).toMatchObject({ email: ALICE.email })
      } else if (world.jwt === 'revokes') {
        expect(cookie).toBeUndefined()
      } else {
        const token = await decode({ token: cookie!.value, secret: SECRET, salt: SESSION_COOKIE })
        expect(token).toMatchObject({ sub: ALICE.id, email: ALICE.email, picture: ALICE.image })
      }
      expect(world.events.signIn).toHaveBeenCalledWith({
        user: expect.objectContaining({ id: ALICE.id }),
        account,
      })
    },
    redirectedBySignIn: (response) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/welcome`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    rejected: (response, world) => {
      const code = world.authorize === 'returnsNull' ? 'credentials' : 'wrong-password'
      expect(response.headers.get('location')).toBe(
        `${ORIGIN}/auth/signin?error=CredentialsSignin&code=${code}`,
      )
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    denied: (response) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    failed: (response) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
  },
}

describeModel('credentials sign-in machine', driver)
