/**
 * Model-based test of the OAuth sign-in machine against the real OpenID Provider: every path the
 * chart allows is driven as a browser would (POST /signin, the provider's pages, the callback),
 * with the world arranged so each effect yields the modelled result: the provider refuses or
 * succeeds, the database is down, the callbacks decide.
 */
import { afterAll, expect, vi, type Mock } from 'vitest'
import { string, type as looseObject } from 'superstruct'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth, customFetch } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import { oauthSignInMachine } from '../../machines/oauth-signin.machine.js'
import { authRequest, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CALLBACK_BASE, opClient } from '../oauth/helpers.js'
import { describeModel, type ModelDriver } from './harness.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const STATE_COOKIE = '__Secure-authjs.state'
const PROVIDER = 'op'
const T0 = Math.floor(Date.now() / 1000)
const EMAIL = OP_ACCOUNT.email.toLowerCase()

const op = await startOidcProvider({ clients: [await opClient('client_secret_basic', PROVIDER)] })
afterAll(() => op.close())

const POLICIES = [
  { strategy: 'jwt', maxAge: 2_592_000, hasAdapter: false, newUserUrl: null },
  { strategy: 'jwt', maxAge: 2_592_000, hasAdapter: true, newUserUrl: '/welcome-new' },
  { strategy: 'database', maxAge: 2_592_000, hasAdapter: true, newUserUrl: null },
] as const

interface World {
  policy: (typeof POLICIES)[number]
  store: MemoryStore
  jar: CookieJar
  fetch: typeof fetch
  authorizationUrl: string
  discovery: 'works' | 'fails'
  provider: 'accepts' | 'denies'
  callback: 'untouched' | 'wrongIssuer'
  code: 'untouched' | 'forged'
  userinfo: 'works' | 'fails'
  profile: 'fits' | 'misfits'
  account: 'unknown' | 'linked' | 'lookupFails'
  signIn: 'allows' | 'redirects' | 'refuses'
  link: 'createsUser' | 'linksByEmail' | 'emailTaken' | 'fails'
  jwt: 'identity' | 'revokes' | 'throws'
  sessionStore: 'works' | 'fails'
  events: { signIn: Mock<(message: unknown) => void> }
}

function worldFetch(world: World): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input)
    if (world.discovery === 'fails' && url.includes('/.well-known/')) {
      return new Response('unavailable', { status: 503 })
    }
    if (world.userinfo === 'fails' && url.endsWith('/me')) return new Response('oops', { status: 500 })
    return fetch(input, init)
  }
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  const memory = MemoryAdapter(world.store)
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    inspect,
    events: world.events,
    session: { strategy: world.policy.strategy },
    ...(world.policy.newUserUrl ? { pages: { newUser: world.policy.newUserUrl } } : {}),
    ...(world.policy.hasAdapter
      ? {
          adapter: {
            ...memory,
            async getUserByAccount(account) {
              if (world.account === 'lookupFails') throw new Error('database unavailable')
              return memory.getUserByAccount(account)
            },
            async linkAccount(account) {
              if (world.link === 'fails') throw new Error('database unavailable')
              await memory.linkAccount(account)
            },
            async updateAccount(account) {
              if (world.link === 'fails') throw new Error('database unavailable')
              return memory.updateAccount(account)
            },
            async createSession(session) {
              if (world.sessionStore === 'fails') throw new Error('database unavailable')
              return memory.createSession(session)
            },
          },
        }
      : {}),
    providers: [
      appProvider(op.issuer, 'client_secret_basic', PROVIDER, {
        checks: ['pkce', 'state', 'nonce'],
        idToken: false,
        allowDangerousEmailAccountLinking: world.link === 'linksByEmail',
        ...(world.profile === 'misfits' ? { profileSchema: looseObject({ favourite_colour: string() }) } : {}),
        [customFetch]: world.fetch,
      }),
    ] as never,
    callbacks: {
      signIn: () => (world.signIn === 'refuses' ? false : world.signIn === 'redirects' ? '/from-signin' : true),
      jwt: ({ token }) => {
        if (world.jwt === 'throws') throw new Error('jwt callback failed')
        return world.jwt === 'revokes' ? null : token
      },
    },
  }
}

/** Puts the store in the state the world describes before the callback arrives. */
async function seed(world: World): Promise<void> {
  const existing = { id: 'u-existing', email: EMAIL, emailVerified: null, name: 'Existing' }
  if (world.account === 'linked') {
    world.store.users.set(existing.id, existing)
    await MemoryAdapter(world.store).linkAccount({
      userId: existing.id,
      provider: PROVIDER,
      providerAccountId: OP_ACCOUNT.sub,
      type: 'oidc',
      access_token: 'stale-token',
    })
  } else if (world.link === 'linksByEmail' || world.link === 'emailTaken') {
    world.store.users.set(existing.id, existing)
  }
}

const link = (isNewUser: boolean) => ({
  type: 'linkAccount.done',
  at: T0,
  output: { user: { id: 'u' }, account: {}, isNewUser },
})

const driver: ModelDriver<World> = {
  machine: oauthSignInMachine,
  samples: [
    ...POLICIES.map((policy) => ({
      type: 'oauth.start',
      at: T0,
      providerId: PROVIDER,
      callbackUrl: `${ORIGIN}/dashboard`,
      params: {},
      policy,
    })),
    { type: 'createAuthorizationRequest.done', at: T0, output: { url: 'u', redirectUri: 'r', state: 's', codeVerifier: 'v', nonce: 'n' } },
    { type: 'createAuthorizationRequest.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'oauth.callback', at: T0, params: {} },
    { type: 'validateCallback.done', at: T0, output: null },
    { type: 'validateCallback.failed', at: T0, reason: 'providerError', error: 'OAuthCallbackError' },
    { type: 'validateCallback.failed', at: T0, reason: 'invalid', error: 'InvalidCheck' },
    { type: 'exchangeCode.done', at: T0, output: { tokens: {} } },
    { type: 'exchangeCode.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'fetchProfile.done', at: T0, output: { profile: {}, user: {}, account: {} } },
    { type: 'fetchProfile.failed', at: T0, reason: 'invalidProfile', error: 'OAuthProfileParseError' },
    { type: 'fetchProfile.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'lookUpAccount.done', at: T0, output: { user: null } },
    { type: 'lookUpAccount.done', at: T0, output: { user: { id: 'u-existing' } } },
    { type: 'lookUpAccount.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'checkSignIn.done', at: T0, output: { redirect: null } },
    { type: 'checkSignIn.done', at: T0, output: { redirect: `${ORIGIN}/from-signin` } },
    { type: 'checkSignIn.failed', at: T0, reason: 'denied', error: 'AccessDenied' },
    link(true),
    link(false),
    { type: 'linkAccount.failed', at: T0, reason: 'notLinked', error: 'OAuthAccountNotLinked' },
    { type: 'linkAccount.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'issueSession.done', at: T0, output: { value: 'sealed', expires: T0 + 2_592_000 } },
    { type: 'issueSession.done', at: T0, output: { value: null, expires: T0 + 2_592_000 } },
    { type: 'issueSession.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'createDatabaseSession.done', at: T0, output: { value: 'token', expires: T0 + 2_592_000, user: {} } },
    { type: 'createDatabaseSession.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'emitSignInEvent.done', at: T0, output: null },
  ],
  possible: (snapshot, event) => {
    const linked = snapshot.context.storedUser !== null
    // An account found linked can be neither a new user nor refused for its e-mail address.
    if (event.type === 'linkAccount.done' && event.output.isNewUser) return !linked
    if (event.type === 'linkAccount.failed' && event.reason === 'notLinked') return !linked
    // The jwt callback's verdict cannot differ between sign-ins with and without an adapter.
    return true
  },
  label: (event) => {
    if (event.policy) {
      const { strategy, hasAdapter, newUserUrl } = event.policy
      return `${event.type} (${strategy}${hasAdapter ? ', adapter' : ''}${newUserUrl ? ', new-user page' : ''})`
    }
    if (event.type === 'lookUpAccount.done') return event.output.user ? 'account linked' : 'account unknown'
    if (event.type === 'checkSignIn.done') {
      return event.output.redirect ? 'signIn callback returns a URL' : 'signIn callback allows'
    }
    if (event.type === 'linkAccount.done') return event.output.isNewUser ? 'new user created' : 'existing user'
    if (event.type === 'issueSession.done') return event.output.value ? 'session issued' : 'jwt callback returns null'
    return undefined
  },
  world: () => {
    const world = {
      policy: POLICIES[0],
      store: createMemoryStore(),
      jar: new CookieJar(),
      authorizationUrl: '',
      discovery: 'works',
      provider: 'accepts',
      callback: 'untouched',
      code: 'untouched',
      userinfo: 'works',
      profile: 'fits',
      account: 'unknown',
      signIn: 'allows',
      link: 'createsUser',
      jwt: 'identity',
      sessionStore: 'works',
      events: { signIn: vi.fn() },
    } as Omit<World, 'fetch'> as World
    world.fetch = worldFetch(world)
    return world
  },
  arrange: {
    'createAuthorizationRequest.done': () => {},
    'createAuthorizationRequest.failed': (world) => {
      world.discovery = 'fails'
    },
    'validateCallback.done': () => {},
    'validateCallback.failed': (world, event) => {
      if (event.reason === 'providerError') world.provider = 'denies'
      else world.callback = 'wrongIssuer'
    },
    'exchangeCode.done': () => {},
    'exchangeCode.failed': (world) => {
      world.code = 'forged'
    },
    'fetchProfile.done': () => {},
    'fetchProfile.failed': (world, event) => {
      if (event.reason === 'invalidProfile') world.profile = 'misfits'
      else world.userinfo = 'fails'
    },
    'lookUpAccount.done': (world, event) => {
      world.account = event.output.user ? 'linked' : 'unknown'
    },
    'lookUpAccount.failed': (world) => {
      world.account = 'lookupFails'
    },
    'checkSignIn.done': (world, event) => {
      world.signIn = event.output.redirect ? 'redirects' : 'allows'
    },
    'checkSignIn.failed': (world) => {
      world.signIn = 'refuses'
    },
    'linkAccount.done': (world, event) => {
      if (world.account !== 'linked') world.link = event.output.isNewUser ? 'createsUser' : 'linksByEmail'
    },
    'linkAccount.failed': (world, event) => {
      world.link = event.reason === 'notLinked' ? 'emailTaken' : 'fails'
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
    'oauth.start': async (world, event, inspect) => {
      world.policy = event.policy
      const config = configFor(world, inspect)
      const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
      world.jar.store(csrf)
      const { csrfToken } = (await csrf.json()) as { csrfToken: string }
      const response = await Auth(
        authRequest({
          path: `/auth/signin/${PROVIDER}`,
          body: { csrfToken, callbackUrl: '/dashboard' },
          cookies: world.jar,
        }),
        config,
      )
      world.jar.store(response)
      world.authorizationUrl = response.headers.get('location') ?? ''
      return response
    },
    'oauth.callback': async (world, _event, inspect) => {
      await seed(world)
      op.decision = world.provider === 'denies' ? 'deny' : 'accept'
      const answer = await visitProvider(world.authorizationUrl, CALLBACK_BASE)
      const params = answer.url.searchParams
      if (world.callback === 'wrongIssuer') params.set('iss', 'https://evil.example')
      if (world.code === 'forged') params.set('code', 'forged-code')
      const response = await Auth(
        authRequest({
          path: answer.url.pathname,
          query: Object.fromEntries(params),
          cookies: world.jar,
        }),
        configFor(world, inspect),
      )
      world.jar.store(response)
      return response
    },
  },
  expect: {
    awaitingCallback: (response) => {
      expect(response.status).toBe(302)
      const location = new URL(response.headers.get('location')!)
      expect(location.origin).toBe(op.issuer)
      expect(location.searchParams.get('code_challenge_method')).toBe('S256')
      expect(setCookie(response, STATE_COOKIE)?.value).toMatch(/^ey/)
    },
    signedIn: async (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
      await expectSession(response, world)
    },
    welcomedNewUser: async (response, world) => {
      expect(response.headers.get('location')).toBe(
        `/welcome-new?callbackUrl=${encodeURIComponent(`${ORIGIN}/dashboard`)}`,
      )
      await expectSession(response, world)
    },
    redirectedBySignIn: (response) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/from-signin`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    refusedByProvider: (response) => expectError(response, 'signin?error=OAuthCallbackError'),
    denied: (response) => expectError(response, 'error?error=AccessDenied'),
    notLinked: (response) => expectError(response, 'signin?error=OAuthAccountNotLinked'),
    failed: (response) => expectError(response, 'error?error=Configuration'),
  },
}

function expectError(response: Response, target: string): void {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/${target}`)
  expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
}

async function expectSession(response: Response, world: World): Promise<void> {
  const cookie = setCookie(response, SESSION_COOKIE)
  expect(world.events.signIn).toHaveBeenCalledOnce()
  if (world.jwt === 'revokes') {
    expect(cookie?.value ?? '').toBe('')
    return
  }
  if (world.policy.strategy === 'database') {
    const row = world.store.sessions.get(cookie!.value)
    expect(world.store.users.get(row!.userId)?.email).toBe(EMAIL)
  } else {
    const token = await decode({ token: cookie!.value, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ email: EMAIL })
  }
  if (world.policy.hasAdapter) {
    const account = await MemoryAdapter(world.store).getAccount(OP_ACCOUNT.sub, PROVIDER)
    // A repeat sign-in stores the provider's fresh tokens on the linked account.
    expect(account?.access_token).toEqual(expect.any(String))
    expect(account?.access_token).not.toBe('stale-token')
  }
}

describeModel('OAuth sign-in machine', driver)
