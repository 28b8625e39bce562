/**
 * Model-based test of logout by the provider, through `Auth`: the real OpenID Provider's keys sign
 * the Logout Tokens posted to the back-channel URI, and a browser carrying a JWT session signed in
 * through the provider session `sid` loads the front-channel URI. The world decides whether the
 * token is right, was seen before, whether the provider or the store fail, and whether the browser's
 * session is the one the front-channel request names.
 */
import { afterAll, expect, vi } from 'vitest'
import { Auth, customFetch } from '../../core/index.js'
import { encode } from '../../core/jwt.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { logoutMachine } from '../../machines/logout.machine.js'
import { authRequest, CookieJar, ORIGIN, SECRET, spyLogger, testConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient } from '../oauth/helpers.js'
import { logoutToken } from '../oauth/logout-tokens.js'
import { describeModel, freezeClock, takeLoggedErrors, type ModelDriver } from './harness.js'

const T0 = Math.floor(Date.now() / 1000)
const SESSION_COOKIE = '__Secure-authjs.session-token'
const PROVIDER = 'op'
/** The provider session our browser signed in through. */
const SID = 'op-session-1'
const FORM = 'application/x-www-form-urlencoded'

const op = await startOidcProvider({ clients: [await opClient('client_secret_basic', PROVIDER)] })
afterAll(() => op.close())

freezeClock(T0)

interface World {
  jar: CookieJar
  /** The session cookie as it was before the request (to show a copy of it is refused too). */
  cookie: string
  token: 'right' | 'wrongAudience'
  /** Whether the same Logout Token was delivered once before. */
  replayed: boolean
  /** The provider (discovery, key set) cannot be reached. */
  providerDown: boolean
  storeFails: 'never' | 'claim' | 'put'
  /** The front-channel request: for our session's sid, another one, or without sid. */
  frontChannel: 'ourSid' | 'anotherSid' | 'noSid'
  config?: AuthConfig & { logger: ReturnType<typeof spyLogger> }
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  if (!world.config) {
    const store = memoryAuthStore()
    const providerFetch: typeof fetch = (input, init) =>
      world.providerDown ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init)
    world.config = testConfig({
      // A fetch of its own per world: discovery and the key set are not shared between paths.
      providers: [appProvider(op.issuer, 'client_secret_basic', PROVIDER, { [customFetch]: providerFetch })] as never,
      store: {
        ...store,
        claim: (key, ttl) => (world.storeFails === 'claim' ? Promise.reject(new Error('store unavailable')) : store.claim(key, ttl)),
        put: (key, value, ttl) => (world.storeFails === 'put' ? Promise.reject(new Error('store unavailable')) : store.put(key, value, ttl)),
      },
    })
  }
  return { ...world.config, inspect }
}

/** Whether the browser's session (the cookie it had before the request) is still live. */
async function signedIn(world: World): Promise<boolean> {
  const response = await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: world.cookie } }), world.config!)
  return ((await response.json()) as unknown) !== null
}

const backchannel = (world: World, config: AuthConfig, token: string) =>
  Auth(authRequest({ path: `/auth/backchannel-logout/${PROVIDER}`, body: { logout_token: token } }), config)

const driver: ModelDriver<World> = {
  machine: logoutMachine,
  samples: [
    { type: 'logout.backchannel', at: T0, providerId: PROVIDER, logoutToken: 'a-logout-token', mediaType: FORM },
    { type: 'logout.frontchannel', at: T0, providerId: PROVIDER, iss: 'the-issuer', sid: SID },
    { type: 'verifyLogoutToken.done', at: T0, output: { jti: 'j', sid: SID, sub: OP_ACCOUNT.sub } },
    { type: 'verifyLogoutToken.failed', at: T0, reason: 'invalid', code: 'aud does not name our client' },
    { type: 'verifyLogoutToken.failed', at: T0, reason: 'threw' },
    { type: 'spendLogoutToken.done', at: T0, output: null },
    { type: 'spendLogoutToken.failed', at: T0, reason: 'replayed' },
    { type: 'spendLogoutToken.failed', at: T0, reason: 'threw' },
    { type: 'endProviderSessions.done', at: T0, output: { ended: 1 } },
    { type: 'endProviderSessions.failed', at: T0, reason: 'threw' },
    { type: 'findBrowserSession.done', at: T0, output: null },
    { type: 'findBrowserSession.failed', at: T0, reason: 'notThisSession' },
    { type: 'findBrowserSession.failed', at: T0, reason: 'invalid', code: 'iss and sid are required' },
    { type: 'findBrowserSession.failed', at: T0, reason: 'threw' },
    { type: 'endBrowserSession.done', at: T0, output: null },
    { type: 'endBrowserSession.failed', at: T0, reason: 'threw' },
  ],
  world: () => {
    vi.setSystemTime(T0 * 1000)
    return {
      jar: new CookieJar(),
      cookie: '',
      token: 'right',
      replayed: false,
      providerDown: false,
      storeFails: 'never',
      frontChannel: 'ourSid',
    }
  },
  arrange: {
    'verifyLogoutToken.done': () => {},
    'verifyLogoutToken.failed': (world, event) => {
      if (event.reason === 'invalid') world.token = 'wrongAudience'
      else world.providerDown = true
    },
    'spendLogoutToken.done': () => {},
    'spendLogoutToken.failed': (world, event) => {
      if (event.reason === 'replayed') world.replayed = true
      else world.storeFails = 'claim'
    },
    'endProviderSessions.done': () => {},
    'endProviderSessions.failed': (world) => {
      world.storeFails = 'put'
    },
    'findBrowserSession.done': () => {},
    'findBrowserSession.failed': (world, event) => {
      if (event.reason === 'notThisSession') world.frontChannel = 'anotherSid'
      else if (event.reason === 'invalid') world.frontChannel = 'noSid'
      else world.providerDown = true
    },
    'endBrowserSession.done': () => {},
    'endBrowserSession.failed': (world) => {
      world.storeFails = 'put'
    },
  },
  send: {
    'logout.backchannel': async (world, _event, inspect) => {
      const config = configFor(world, () => {})
      world.cookie = await sessionSignedInThrough(SID)
      const token = await logoutToken(op, world.token === 'right' ? PROVIDER : 'another-client', SID)
      if (world.replayed) {
        // The first delivery ends the session; a second later a browser signs in through the same
        // provider session again, and the replayed token must not end that one.
        expect((await backchannel(world, config, token)).status).toBe(200)
        vi.setSystemTime((T0 + 1) * 1000)
        world.cookie = await sessionSignedInThrough(SID)
      }
      return backchannel(world, configFor(world, inspect), token)
    },
    'logout.frontchannel': async (world, _event, inspect) => {
      configFor(world, () => {})
      world.cookie = await sessionSignedInThrough(SID)
      world.jar.cookies.set(SESSION_COOKIE, world.cookie)
      const query: Record<string, string> = { iss: op.issuer, sid: world.frontChannel === 'anotherSid' ? 'op-session-2' : SID }
      if (world.frontChannel === 'noSid') delete query.sid
      return Auth(authRequest({ path: `/auth/frontchannel-logout/${PROVIDER}`, query, cookies: world.jar }), configFor(world, inspect))
    },
  },
  expect: {
    loggedOut: async (response, world) => {
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toContain('no-store')
      expect(await response.json()).toEqual({})
      expect(await signedIn(world), 'the session signed in through the sid is over').toBe(false)
      expect(takeLoggedErrors(world.config!.logger)).toEqual([])
    },
    refused: async (response, world) => {
      expect(response.status).toBe(400)
      expect(response.headers.get('cache-control')).toContain('no-store')
      const description = world.replayed ? 'the logout token was already used (jti)' : 'the logout token is invalid: aud does not name our client'
      expect(await response.json()).toEqual({ error: 'invalid_request', error_description: description })
      expect(await signedIn(world), 'no session touched').toBe(true)
      expect(takeLoggedErrors(world.config!.logger)).toEqual(['LogoutRefused'])
    },
    failed: async (response, world) => {
      expect(response.status).toBe(400)
      expect(response.headers.get('cache-control')).toContain('no-store')
      expect(await response.json()).toEqual({ error: 'logout_failed', error_description: 'the sessions could not be ended; see the server log' })
      world.storeFails = 'never'
      world.providerDown = false
      expect(await signedIn(world), 'the session is left as it was').toBe(true)
      expect(takeLoggedErrors(world.config!.logger)).toEqual(['LogoutRefused'])
    },
    browserLoggedOut: async (response, world) => {
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toContain('no-store')
      expect(response.headers.get('x-frame-options'), 'the provider frames this page').toBeNull()
      expect(response.headers.get('content-security-policy'), 'framed by the provider only').toMatch(new RegExp(`; frame-ancestors ${new URL(op.issuer).origin}$`))
      expect(await response.text()).toContain('You are signed out.')
      expect(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`))).toBe(true)
      expect(await signedIn(world), 'a copy of the cookie is refused too').toBe(false)
    },
    notThisSession: async (response, world) => {
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toContain('no-store')
      expect(await response.text()).toContain('There was no session to end here.')
      expect(response.headers.getSetCookie().filter((c) => c.startsWith(`${SESSION_COOKIE}=`))).toEqual([])
      expect(await signedIn(world)).toBe(true)
    },
    frontChannelRefused: async (response, world) => {
      expect(response.status).toBe(400)
      expect(response.headers.get('cache-control')).toContain('no-store')
      expect(response.headers.getSetCookie().filter((c) => c.startsWith(`${SESSION_COOKIE}=`))).toEqual([])
      expect(await signedIn(world)).toBe(true)
      expect(takeLoggedErrors(world.config!.logger)).toEqual(['LogoutRefused'])
    },
    frontChannelFailed: async (response, world) => {
      expect(response.status).toBe(400)
      expect(response.headers.getSetCookie().filter((c) => c.startsWith(`${SESSION_COOKIE}=`))).toEqual([])
      world.storeFails = 'never'
      world.providerDown = false
      expect(await signedIn(world), 'the session is left as it was').toBe(true)
      expect(takeLoggedErrors(world.config!.logger)).toEqual(['LogoutRefused'])
    },
  },
}

/** A JWT session cookie as a sign-in through provider session `sid` at the provider writes it. */
async function sessionSignedInThrough(sid: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return encode({
    token: { sub: 'user-1', name: OP_ACCOUNT.name, email: OP_ACCOUNT.email, auth_time: now, sid, idp: PROVIDER },
    secret: SECRET,
    salt: SESSION_COOKIE,
  })
}

describeModel('logout machine', driver)
