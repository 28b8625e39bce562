/**
 * Model-based test of the OAuth sign-in machine against the real OpenID Provider: every path the
 * chart allows is driven as a browser would (POST /signin, the provider's pages, the callback),
 * with the world arranged so each effect yields the modelled result: the provider refuses or
 * succeeds, the database is down, the callbacks decide.
 */
import { afterAll, expect, vi, type Mock } from 'vitest'
import type { ExpectedCookie, ExpectedResponse } from '../../testing/index.js'
import { string, type as looseObject } from 'superstruct'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth, customFetch } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import { oauthSignInMachine } from '../../machines/oauth-signin.machine.js'
import { authRequest, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CALLBACK_BASE, opClient } from '../oauth/helpers.js'
import { describeModel, freezeClock, httpDate, JWE, SECURE_ATTRIBUTES, takeLoggedErrors, UUID, type ModelDriver } from './harness.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const STATE_COOKIE = '__Secure-authjs.state'
const PROVIDER = 'op'
const T0 = Math.floor(Date.now() / 1000)
const EMAIL = OP_ACCOUNT.email.toLowerCase()

const op = await startOidcProvider({ clients: [await opClient('client_secret_basic', PROVIDER)] })
afterAll(() => op.close())

freezeClock(T0)

const MAX_AGE = 2_592_000
const ATTRIBUTES = SECURE_ATTRIBUTES
/** The sealed flow, for 15 minutes; then cleared by the callback, whatever it brings. */
const FLOW_SEALED: ExpectedCookie = {
  value: JWE,
  attributes: { ...ATTRIBUTES, 'max-age': '900', expires: httpDate(T0 + 900) },
}
const FLOW_CLEARED: ExpectedCookie = { value: '', attributes: { ...ATTRIBUTES, 'max-age': '0' } }
const sessionIssued = (value: RegExp): ExpectedCookie => ({
  value,
  attributes: { ...ATTRIBUTES, expires: httpDate(T0 + MAX_AGE) },
})
const CONFIGURATION = `${ORIGIN}/auth/error?error=Configuration`
const failedCallback = (errors: string[]): ExpectedResponse => ({
  status: 302,
  location: CONFIGURATION,
  cookies: { [SESSION_COOKIE]: null, [STATE_COOKIE]: FLOW_CLEARED },
  errors,
})

/** What each (final state, cause) must answer, from the spec rather than the chart. */
const ORACLE: Record<string, ExpectedResponse> = {
  'awaitingCallback ← sign-in started': {
    status: 302,
    location: new RegExp(`^${op.issuer}/auth\\?`),
    cookies: { [STATE_COOKIE]: FLOW_SEALED, [SESSION_COOKIE]: null },
    errors: [],
  },
  'failed ← discovery fails': {
    status: 302,
    location: CONFIGURATION,
    cookies: { [STATE_COOKIE]: null, [SESSION_COOKIE]: null },
    // The sign-in could not start (not a callback); answered as Auth.js answers an error not its own.
    errors: ['OAuthSignInError'],
  },
  'refusedByProvider ← provider denies': {
    status: 302,
    location: `${ORIGIN}/auth/signin?error=OAuthCallbackError`,
    cookies: { [SESSION_COOKIE]: null, [STATE_COOKIE]: FLOW_CLEARED },
    errors: ['OAuthCallbackError'],
  },
  'failed ← callback names another issuer': failedCallback(['InvalidCheck']),
  'failed ← code forged': failedCallback(['CallbackRouteError']),
  'failed ← userinfo fails': failedCallback(['CallbackRouteError']),
  'failed ← profile misfits': failedCallback(['OAuthProfileParseError']),
  'failed ← account lookup fails': failedCallback(['AdapterError', 'AdapterError']),
  'verified ← no adapter, signed in': {
    status: 302,
    location: `${ORIGIN}/dashboard`,
    cookies: { [SESSION_COOKIE]: sessionIssued(JWE), [STATE_COOKIE]: FLOW_CLEARED },
    errors: [],
  },
  'verified ← adapter, account unknown, signed in': {
    status: 302,
    location: `${ORIGIN}/dashboard`,
    cookies: { [SESSION_COOKIE]: sessionIssued(UUID), [STATE_COOKIE]: FLOW_CLEARED },
    errors: [],
  },
  'verified ← adapter, account linked, signed in': {
    status: 302,
    location: `${ORIGIN}/dashboard`,
    cookies: { [SESSION_COOKIE]: sessionIssued(UUID), [STATE_COOKIE]: FLOW_CLEARED },
    errors: [],
  },
}

/** Why a request ends where it does, in the words of the arranged world (the first thing to go wrong). */
function causeOf(world: World, request: readonly { event: { type: string } }[]): string {
  if (world.discovery === 'fails') return 'discovery fails'
  if (request[0]!.event.type === 'oauth.start') return 'sign-in started'
  if (world.provider === 'denies') return 'provider denies'
  if (world.callback === 'wrongIssuer') return 'callback names another issuer'
  if (world.code === 'forged') return 'code forged'
  if (world.userinfo === 'fails') return 'userinfo fails'
  if (world.profile === 'misfits') return 'profile misfits'
  if (world.account === 'lookupFails') return 'account lookup fails'
  return world.policy.hasAdapter ? `adapter, account ${world.account}, signed in` : 'no adapter, signed in'
}

const POLICIES = [{ hasAdapter: false }, { hasAdapter: true }] as const

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
  events: { signIn: Mock<(message: unknown) => void> }
  logger: ReturnType<typeof spyLogger>
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

/** With an adapter, sessions are database rows (the strategy the adapter implies). */
function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  const memory = MemoryAdapter(world.store)
  return {
    secret: SECRET,
    trustHost: true,
    logger: world.logger,
    inspect,
    events: world.events,
    ...(world.policy.hasAdapter
      ? {
          adapter: {
            ...memory,
            async getUserByAccount(account) {
              if (world.account === 'lookupFails') throw new Error('database unavailable')
              return memory.getUserByAccount(account)
            },
          },
        }
      : {}),
    providers: [
      appProvider(op.issuer, 'client_secret_basic', PROVIDER, {
        checks: ['pkce', 'state', 'nonce'],
        idToken: false,
        ...(world.profile === 'misfits' ? { profileSchema: looseObject({ favourite_colour: string() }) } : {}),
        [customFetch]: world.fetch,
      }),
    ] as never,
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
  }
}

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
    { type: 'createAuthorizationRequest.failed', at: T0, reason: 'threw' },
    { type: 'oauth.callback', at: T0, params: {} },
    { type: 'validateCallback.done', at: T0, output: null },
    { type: 'validateCallback.failed', at: T0, reason: 'providerError', error: 'OAuthCallbackError' },
    { type: 'validateCallback.failed', at: T0, reason: 'invalid', error: 'InvalidCheck' },
    { type: 'exchangeCode.done', at: T0, output: { tokens: {}, sessionClaims: null } },
    { type: 'exchangeCode.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'fetchProfile.done', at: T0, output: { profile: {}, user: {}, account: {} } },
    { type: 'fetchProfile.failed', at: T0, reason: 'invalidProfile', error: 'OAuthProfileParseError' },
    { type: 'fetchProfile.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'lookUpAccount.done', at: T0, output: { user: null } },
    { type: 'lookUpAccount.done', at: T0, output: { user: { id: 'u-existing' } } },
    { type: 'lookUpAccount.failed', at: T0, reason: 'threw', error: 'AdapterError' },
  ],
  label: (event) => {
    if (event.policy) return `${event.type} (${event.policy.hasAdapter ? 'adapter' : 'no adapter'})`
    if (event.type === 'lookUpAccount.done') return event.output.user ? 'account linked' : 'account unknown'
    return undefined
  },
  cause: causeOf,
  oracle: ORACLE,
  // The errors of the request just sent: the log is emptied after each read.
  loggedErrors: (world) => takeLoggedErrors(world.logger),
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
      events: { signIn: vi.fn() },
      logger: spyLogger(),
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
  },
  send: {
    'oauth.start': async (world, event, inspect) => {
      world.policy = event.policy
      const config = configFor(world, inspect)
      const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
      world.jar.store(csrf)
      const { csrfToken } = (await csrf.json()) as { csrfToken: string }
      // Every sign-in also names a redirect_uri of its own: it must never reach the provider.
      const response = await Auth(
        authRequest({
          path: `/auth/signin/${PROVIDER}`,
          query: { redirect_uri: 'https://evil.example/cb' },
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
      expect(location.searchParams.getAll('redirect_uri')).toEqual([`${CALLBACK_BASE}${PROVIDER}`])
      expect(setCookie(response, STATE_COOKIE)?.value).toMatch(/^ey/)
    },
    // The provider vouched for the user; the sign-in completion (its own model test) did the rest.
    verified: async (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
      expect(setCookie(response, STATE_COOKIE)?.attributes['max-age']).toBe('0')
      await expectSession(response, world)
    },
    refusedByProvider: (response) => expectError(response, 'signin?error=OAuthCallbackError'),
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
  if (world.policy.hasAdapter) {
    const row = world.store.sessions.get(cookie!.value)
    expect(world.store.users.get(row!.userId)?.email).toBe(EMAIL)
    const account = await MemoryAdapter(world.store).getAccount(OP_ACCOUNT.sub, PROVIDER)
    expect(account?.userId).toBe(row!.userId)
    // A repeat sign-in stores the provider's fresh tokens on the linked account.
    expect(account?.access_token).toEqual(expect.any(String))
    expect(account?.access_token).not.toBe('stale-token')
  } else {
    const token = await decode({ token: cookie!.value, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ email: EMAIL })
  }
}

describeModel('OAuth sign-in machine', driver)
