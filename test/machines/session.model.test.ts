import { afterAll, expect, vi, type Mock } from 'vitest'
import type { ExpectedCookie, ExpectedResponse } from '../../testing/index.js'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { assertConfig, Auth, customFetch, memoryAuthStore } from '../../core/index.js'
import { endJwtSessionsOf, endJwtSessionsOfProviderSession } from '../../core/session/lifecycle.js'
import { decode, encode } from '../../core/jwt.js'
import OAuth from '../../providers/oauth.js'
import { startOAuth2Server } from '../fixtures/oauth2-server.js'
import { startOidcProvider } from '../fixtures/oidc-provider.js'
import type { AuthConfig } from '../../core/types.js'
import { sessionMachine } from '../../machines/session.machine.js'
import { authRequest, ALICE, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { describeModel, freezeClock, httpDate, JWE, SECURE_ATTRIBUTES, takeLoggedErrors, type ModelDriver } from './harness.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const MAX_AGE = 2_592_000
const UPDATE_AGE = 86_400
const T0 = Math.floor(Date.now() / 1000)
const jwtPolicy = { strategy: 'jwt', maxAge: MAX_AGE, updateAge: UPDATE_AGE } as const
const dbPolicy = { strategy: 'database', maxAge: MAX_AGE, updateAge: UPDATE_AGE } as const
const claims = { name: ALICE.name, email: ALICE.email, picture: ALICE.image, sub: ALICE.id }
const FRESH = { ...claims, iat: T0, exp: T0 + MAX_AGE }
const OLD = { ...claims, iat: T0 - 2 * UPDATE_AGE, exp: T0 + MAX_AGE - 2 * UPDATE_AGE }
/**
 * Stored session ends: just created, extended two days ago (due), already expired, and (idle
 * expiry ahead) past the absolute lifetime since sign-in.
 */
const ROW = { fresh: T0 + MAX_AGE, due: T0 + MAX_AGE - 2 * UPDATE_AGE, expired: T0 - 60, pastLifetime: T0 - 30 }
/** The absolute lifetime configured for the sessions past it (`session.absoluteMaxAge`). */
const ABSOLUTE_MAX_AGE = 7 * UPDATE_AGE
/** Cookies of JWT sessions that can be read but have ended on the server's side, and why. */
const ENDED_COOKIES = {
  expired: 'expired',
  'past-lifetime': 'absolute-lifetime',
  'signed-out-everywhere': 'signed-out-everywhere',
  'provider-logged-out': 'provider-logout',
} as const
type EndedCookie = keyof typeof ENDED_COOKIES
const STORED_TOKEN = 'stored-session-token'
/** A provider that opts in to refresh-token rotation, and its token endpoint on loopback. */
const REFRESHING = 'acme'
const jwtRefreshPolicy = { ...jwtPolicy, refreshProviders: [REFRESHING] }
const dbRefreshPolicy = { ...dbPolicy, refreshProviders: [REFRESHING] }
const EXPIRING = { ...FRESH, oauth: { provider: REFRESHING, access_token: 'old', refresh_token: 'r', expires_at: T0 - 10 } }
const tokenServer = await startOAuth2Server({
  clientId: 'app',
  clientSecret: 'app-secret',
  clientAuth: 'client_secret_basic',
  authorizePath: '/authorize',
  tokenPath: '/token',
  api: {},
})
afterAll(() => tokenServer.close())
/** An OIDC provider the user is signed out of too (RP-initiated logout), and a real one to do it. */
const LOGGING_OUT = 'op'
const jwtLogoutPolicy = { ...jwtPolicy, logoutProviders: [LOGGING_OUT] }
const ENDING = { ...FRESH, oauth: { provider: LOGGING_OUT, id_token: 'the-id-token' } }
const op = await startOidcProvider({
  clients: [{ client_id: LOGGING_OUT, client_secret: 'op-secret', redirect_uris: [`${ORIGIN}/auth/callback/op`], post_logout_redirect_uris: [`${ORIGIN}/bye`] }],
})
afterAll(() => op.close())

freezeClock(T0)

type AdapterMethod = 'getSessionAndUser' | 'deleteSession' | 'updateSession'

/** On the refreshing and logout branches, the one failure reason explored per effect with several. */
const REPRESENTATIVE_FAILURE: Record<string, string> = {
  'decodeSessionToken.failed': 'invalid',
  'getSessionAndUser.failed': 'threw',
  'deleteSession.failed': 'threw',
}

interface World {
  strategy: 'jwt' | 'database'
  cookie: 'none' | 'garbage' | 'fresh' | 'old' | 'stored' | 'unknown' | 'expiring' | 'ending' | EndedCookie
  /** The store sign-out everywhere and the provider's logout write to (`config.store`). */
  authStore: ReturnType<typeof memoryAuthStore>
  refresh: 'works' | 'rejected'
  /** Whether a provider with refresh-token rotation is configured. */
  refreshing: boolean
  /** Database strategy: the user's linked account whose access token is due. */
  accountRefresh: 'none' | 'works' | 'rejected'
  providerLogout: 'works' | 'discoveryFails'
  row: keyof typeof ROW
  failing: Set<AdapterMethod>
  jwt: 'identity' | 'changes' | 'revokes' | 'throws'
  sessionThrows: boolean
  encodeThrows: boolean
  request: 'read' | 'update' | 'signOut'
  store: MemoryStore
  events: { session: Mock<(message: unknown) => void>; signOut: Mock<(message: unknown) => void> }
  logger: ReturnType<typeof spyLogger>
}

/** The memory adapter, with the methods the world says are down throwing. */
function adapterFor(world: World): Adapter {
  const adapter = MemoryAdapter(world.store)
  const failing = (name: AdapterMethod) => (...args: unknown[]) => {
    if (world.failing.has(name)) throw new Error(`${name}: database unavailable`)
    return (adapter[name] as (...a: unknown[]) => unknown)(...args)
  }
  return {
    ...adapter,
    getSessionAndUser: failing('getSessionAndUser') as Adapter['getSessionAndUser'],
    deleteSession: failing('deleteSession') as Adapter['deleteSession'],
    updateSession: failing('updateSession') as Adapter['updateSession'],
  }
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  return {
    secret: SECRET,
    trustHost: true,
    providers:
      world.refreshing
        ? [
            OAuth({
              id: REFRESHING,
              authorization: `${tokenServer.origin}/authorize`,
              token: `${tokenServer.origin}/token`,
              userinfo: `${tokenServer.origin}/me`,
              clientId: 'app',
              clientSecret: 'app-secret',
              refreshTokens: true,
            }),
          ]
        : world.cookie === 'ending'
          ? [
              {
                id: LOGGING_OUT,
                name: 'OP',
                type: 'oidc' as const,
                issuer: op.issuer,
                clientId: LOGGING_OUT,
                clientSecret: 'op-secret',
                logout: true,
                // A fetch of this world's own, so its discovery is not shared with other worlds.
                [customFetch]: (input: RequestInfo | URL, init?: RequestInit) =>
                  world.providerLogout === 'discoveryFails'
                    ? Promise.resolve(new Response('unavailable', { status: 503 }))
                    : fetch(input, init),
              },
            ]
          : [],
    logger: world.logger,
    inspect,
    events: world.events,
    session: {
      strategy: world.strategy,
      ...(world.cookie === 'past-lifetime' || (world.cookie === 'stored' && world.row === 'pastLifetime')
        ? { absoluteMaxAge: ABSOLUTE_MAX_AGE }
        : {}),
    },
    ...(world.cookie === 'signed-out-everywhere' || world.cookie === 'provider-logged-out' ? { store: world.authStore } : {}),
    ...(world.strategy === 'database' ? { adapter: adapterFor(world) } : {}),
    ...(world.encodeThrows
      ? {
          jwt: {
            encode: () => {
              throw new Error('encoder down')
            },
          },
        }
      : {}),
    callbacks: {
      jwt: ({ token }) => {
        if (world.jwt === 'throws') throw new Error('jwt callback failed')
        if (world.jwt === 'revokes') return null
        return world.jwt === 'changes' ? { ...token, role: 'admin' } : token
      },
      session: ({ session }) => {
        if (world.sessionThrows) throw new Error('session callback failed')
        return session
      },
    },
  }
}

async function jwtCookie(old: boolean): Promise<string> {
  if (old) vi.setSystemTime((T0 - 2 * UPDATE_AGE) * 1000)
  try {
    return await encode({ token: claims, secret: SECRET, salt: SESSION_COOKIE })
  } finally {
    vi.setSystemTime(T0 * 1000)
  }
}

async function sessionCookie(world: World): Promise<Record<string, string>> {
  switch (world.cookie) {
    case 'none':
      return {}
    case 'garbage':
      return { [SESSION_COOKIE]: 'not-a-jwe' }
    case 'unknown':
      return { [SESSION_COOKIE]: 'a-token-the-database-never-issued' }
    case 'expiring': {
      const refresh_token = world.refresh === 'works' ? tokenServer.seedRefreshToken() : 'spent-refresh-token'
      const token = { ...claims, oauth: { ...EXPIRING.oauth, refresh_token } }
      return { [SESSION_COOKIE]: await encode({ token, secret: SECRET, salt: SESSION_COOKIE }) }
    }
    case 'ending':
      return { [SESSION_COOKIE]: await encode({ token: { ...claims, oauth: ENDING.oauth }, secret: SECRET, salt: SESSION_COOKIE }) }
    case 'expired':
      // Issued maxAge + a minute ago: past its exp, which the decoder itself refuses.
      vi.setSystemTime((T0 - MAX_AGE - 60) * 1000)
      try {
        return { [SESSION_COOKIE]: await encode({ token: claims, secret: SECRET, salt: SESSION_COOKIE }) }
      } finally {
        vi.setSystemTime(T0 * 1000)
      }
    case 'past-lifetime': {
      const token = { ...claims, auth_time: T0 - ABSOLUTE_MAX_AGE - 1 }
      return { [SESSION_COOKIE]: await encode({ token, secret: SECRET, salt: SESSION_COOKIE }) }
    }
    case 'signed-out-everywhere': {
      await endJwtSessionsOf(assertConfig(configFor(world, undefined)), ALICE.id, T0 - 10)
      const token = { ...claims, auth_time: T0 - 60 }
      return { [SESSION_COOKIE]: await encode({ token, secret: SECRET, salt: SESSION_COOKIE }) }
    }
    case 'provider-logged-out': {
      await endJwtSessionsOfProviderSession(assertConfig(configFor(world, undefined)), LOGGING_OUT, 'sid-1', T0 - 10)
      const token = { ...claims, auth_time: T0 - 60, idp: LOGGING_OUT, sid: 'sid-1' }
      return { [SESSION_COOKIE]: await encode({ token, secret: SECRET, salt: SESSION_COOKIE }) }
    }
    case 'stored':
      world.store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
      if (world.accountRefresh !== 'none') {
        await MemoryAdapter(world.store).linkAccount({
          userId: ALICE.id,
          provider: REFRESHING,
          providerAccountId: 'acme-alice',
          type: 'oauth',
          access_token: 'old',
          refresh_token: world.accountRefresh === 'works' ? tokenServer.seedRefreshToken() : 'spent-refresh-token',
          expires_at: T0 - 10,
        })
      }
      world.store.sessions.set(STORED_TOKEN, {
        sessionToken: STORED_TOKEN,
        userId: ALICE.id,
        ...(world.row === 'pastLifetime'
          ? { expires: new Date(ROW.fresh * 1000), createdAt: new Date((ROW.pastLifetime - ABSOLUTE_MAX_AGE) * 1000) }
          : { expires: new Date(ROW[world.row] * 1000) }),
      })
      return { [SESSION_COOKIE]: STORED_TOKEN }
    default:
      return { [SESSION_COOKIE]: await jwtCookie(world.cookie === 'old') }
  }
}

async function csrf(config: AuthConfig, jar: CookieJar): Promise<string> {
  const response = await Auth(authRequest({ path: '/auth/csrf', cookies: jar }), config)
  jar.store(response)
  return ((await response.json()) as { csrfToken: string }).csrfToken
}

/**
 * Why a request ends where it does, in the words of the world the path arranged: the strategy,
 * the request, the cookie sent (for a database session: the stored row) and what fails.
 */
function causeOf(world: World): string {
  const cookie =
    world.cookie === 'stored'
      ? `${world.row} row${world.accountRefresh === 'none' ? '' : `, account refresh ${world.accountRefresh}`}`
      : world.cookie === 'expiring'
        ? `expiring access token, refresh ${world.refresh}`
        : world.cookie === 'ending'
          ? `token of a logout provider, ${world.providerLogout === 'works' ? 'end-session endpoint found' : 'discovery fails'}`
          : `${world.cookie} cookie`
  const trouble = [
    ...[...world.failing].map((method) => `${method} fails`),
    ...(world.jwt === 'identity' ? [] : [`jwt callback ${world.jwt}`]),
    ...(world.sessionThrows ? ['session callback throws'] : []),
    ...(world.encodeThrows ? ['encode throws'] : []),
  ]
  return `${world.strategy} ${world.request}, ${cookie}${trouble.length > 0 ? `; ${trouble.join(', ')}` : ''}`
}

const ATTRIBUTES = SECURE_ATTRIBUTES
/** A session cookie (re)issued to expire at T0 + maxAge: a JWE, or the stored row's token. */
const ISSUED = (value: string | RegExp = JWE): Record<string, ExpectedCookie> => ({
  [SESSION_COOKIE]: { value, attributes: { ...ATTRIBUTES, expires: httpDate(T0 + MAX_AGE) } },
})
const EXTENDED = ISSUED(STORED_TOKEN)
const CLEARED: Record<string, ExpectedCookie> = { [SESSION_COOKIE]: { value: '', attributes: { ...ATTRIBUTES, 'max-age': '0' } } }
const UNTOUCHED = { [SESSION_COOKIE]: null }

const ok = (cookies: ExpectedResponse['cookies'], errors: string[] = []): ExpectedResponse => ({ status: 200, location: null, cookies, errors })
const redirect = (location: string, cookies: ExpectedResponse['cookies'], errors: string[] = []): ExpectedResponse => ({
  status: 302,
  location,
  cookies,
  errors,
})
const DB_DOWN = ['AdapterError', 'SessionTokenError']
const REFRESH_REFUSED = 'Error'
const BYE = `${ORIGIN}/bye`

/**
 * What each (final state, cause) must answer, written from the spec and Auth.js's behaviour rather
 * than read off the chart: a chart that turns wrong (an expired row served as active, a cookie kept
 * that should be cleared) ends in a pair this table does not list, or answers other than it says.
 */
const ORACLE: Record<string, ExpectedResponse> = {
  // A live session: re-issued (a new expiry) only when updateAge passed, the token changed or the
  // client asked for an update; a database session only when its row was extended.
  'active ← jwt read, fresh cookie': ok(UNTOUCHED),
  'active ← jwt read, fresh cookie; jwt callback changes': ok(ISSUED()),
  'active ← jwt read, old cookie': ok(ISSUED()),
  'active ← jwt update, fresh cookie': ok(ISSUED()),
  'active ← jwt update, fresh cookie; jwt callback changes': ok(ISSUED()),
  'active ← jwt update, old cookie': ok(ISSUED()),
  'active ← jwt read, expiring access token, refresh works': ok(ISSUED()),
  'active ← database read, fresh row': ok(UNTOUCHED),
  'active ← database update, fresh row': ok(UNTOUCHED),
  'active ← database read, due row': ok(EXTENDED),
  'active ← database update, due row': ok(EXTENDED),
  'active ← database read, fresh row, account refresh works': ok(UNTOUCHED),
  'active ← database read, fresh row, account refresh rejected': ok(UNTOUCHED, [REFRESH_REFUSED]),
  'active ← database read, due row, account refresh works': ok(EXTENDED),
  'active ← database read, due row, account refresh rejected': ok(EXTENDED, [REFRESH_REFUSED]),
  // No cookie, nothing to do.
  'noSession ← jwt read, none cookie': ok(UNTOUCHED),
  'noSession ← jwt update, none cookie': ok(UNTOUCHED),
  'noSession ← database read, none cookie': ok(UNTOUCHED),
  'noSession ← database update, none cookie': ok(UNTOUCHED),
  // A cookie that can no longer be a session is cleared, with the reason logged as Auth.js logs it.
  'tampered ← jwt read, garbage cookie': ok(CLEARED, ['JWTSessionError']),
  'tampered ← jwt update, garbage cookie': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, fresh cookie; jwt callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt update, fresh cookie; jwt callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, fresh cookie; session callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt update, fresh cookie; session callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, fresh cookie; jwt callback changes, session callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt update, fresh cookie; jwt callback changes, session callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, old cookie; session callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt update, old cookie; session callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, fresh cookie; jwt callback changes, encode throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt update, fresh cookie; encode throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt update, fresh cookie; jwt callback changes, encode throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, old cookie; encode throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt update, old cookie; encode throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, expiring access token, refresh works; jwt callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, expiring access token, refresh works; session callback throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, expiring access token, refresh works; encode throws': ok(CLEARED, ['JWTSessionError']),
  'callbackFailed ← jwt read, expiring access token, refresh rejected; jwt callback throws': ok(CLEARED, [REFRESH_REFUSED, 'JWTSessionError']),
  // An expired row, or one past its absolute lifetime, ends the session: the row is deleted (a
  // failed delete is logged); an unknown one is no session.
  'pastAbsoluteLifetime ← database read, pastLifetime row': ok(CLEARED),
  'pastAbsoluteLifetime ← database update, pastLifetime row': ok(CLEARED),
  'pastAbsoluteLifetime ← database read, pastLifetime row; deleteSession fails': ok(CLEARED, DB_DOWN),
  'pastAbsoluteLifetime ← database update, pastLifetime row; deleteSession fails': ok(CLEARED, DB_DOWN),
  'expired ← database read, expired row': ok(CLEARED),
  'expired ← database update, expired row': ok(CLEARED),
  'expired ← database read, expired row; deleteSession fails': ok(CLEARED, DB_DOWN),
  'expired ← database update, expired row; deleteSession fails': ok(CLEARED, DB_DOWN),
  'unknownSession ← database read, unknown cookie': ok(CLEARED),
  'unknownSession ← database update, unknown cookie': ok(CLEARED),
  // A token that can be read but whose session has ended answers as a tampered one: null, the
  // cookie cleared. Only the decoder's own refusal of an expired token is logged, as Auth.js does.
  ...Object.fromEntries(
    (['read', 'update'] as const).flatMap((request) => [
      [`expired ← jwt ${request}, expired cookie`, ok(CLEARED, ['JWTSessionError'])],
      [`pastAbsoluteLifetime ← jwt ${request}, past-lifetime cookie`, ok(CLEARED)],
      [`signedOutEverywhere ← jwt ${request}, signed-out-everywhere cookie`, ok(CLEARED)],
      [`providerLoggedOut ← jwt ${request}, provider-logged-out cookie`, ok(CLEARED)],
    ]),
  ),
  // The jwt callback returned null: the session is over, quietly.
  'revoked ← jwt read, fresh cookie; jwt callback revokes': ok(CLEARED),
  'revoked ← jwt update, fresh cookie; jwt callback revokes': ok(CLEARED),
  // The database is down or the callback failed: no session now, but the cookie is kept.
  'sessionUnavailable ← database read, fresh row; getSessionAndUser fails': ok(UNTOUCHED, DB_DOWN),
  'sessionUnavailable ← database update, fresh row; getSessionAndUser fails': ok(UNTOUCHED, DB_DOWN),
  'sessionUnavailable ← database read, due row; updateSession fails': ok(UNTOUCHED, DB_DOWN),
  'sessionUnavailable ← database update, due row; updateSession fails': ok(UNTOUCHED, DB_DOWN),
  'sessionUnavailable ← database read, fresh row; session callback throws': ok(UNTOUCHED, ['SessionTokenError']),
  'sessionUnavailable ← database update, fresh row; session callback throws': ok(UNTOUCHED, ['SessionTokenError']),
  'sessionUnavailable ← database read, due row; session callback throws': ok(UNTOUCHED, ['SessionTokenError']),
  'sessionUnavailable ← database update, due row; session callback throws': ok(UNTOUCHED, ['SessionTokenError']),
  'sessionUnavailable ← database read, fresh row, account refresh works; session callback throws': ok(UNTOUCHED, ['SessionTokenError']),
  'sessionUnavailable ← database read, fresh row, account refresh rejected; session callback throws': ok(UNTOUCHED, [REFRESH_REFUSED, 'SessionTokenError']),
  'sessionUnavailable ← database read, due row, account refresh works; session callback throws': ok(UNTOUCHED, ['SessionTokenError']),
  'sessionUnavailable ← database read, due row, account refresh rejected; session callback throws': ok(UNTOUCHED, [REFRESH_REFUSED, 'SessionTokenError']),
  // Sign-out clears the cookie and lands on the callback URL (or the provider's end-session page).
  'signedOut ← jwt signOut, fresh cookie': redirect(BYE, CLEARED),
  'signedOut ← jwt signOut, garbage cookie': redirect(BYE, CLEARED, ['SignOutError']),
  // Signing out of a session that has already ended: the same redirect, no signOut event.
  'signedOut ← jwt signOut, expired cookie': redirect(BYE, CLEARED, ['SignOutError']),
  'signedOut ← jwt signOut, past-lifetime cookie': redirect(BYE, CLEARED),
  'signedOut ← jwt signOut, signed-out-everywhere cookie': redirect(BYE, CLEARED),
  'signedOut ← jwt signOut, provider-logged-out cookie': redirect(BYE, CLEARED),
  'signedOut ← database signOut, fresh row': redirect(BYE, CLEARED),
  'signedOut ← jwt signOut, token of a logout provider, end-session endpoint found': redirect(
    `${op.issuer}/session/end?${new URLSearchParams({ id_token_hint: 'the-id-token', post_logout_redirect_uri: BYE, client_id: LOGGING_OUT })}`,
    CLEARED,
  ),
  'signedOut ← jwt signOut, token of a logout provider, discovery fails': redirect(BYE, CLEARED, ['SignOutError']),
  'signOutFailed ← database signOut, fresh row; deleteSession fails': redirect(`${ORIGIN}/auth/error?error=Configuration`, CLEARED, ['AdapterError', 'SignOutError']),
  'leftWithoutSession ← jwt signOut, none cookie': redirect(BYE, UNTOUCHED),
  'leftWithoutSession ← database signOut, none cookie': redirect(BYE, UNTOUCHED),
}

const reissueExpected = (world: World) =>
  world.strategy === 'database'
    ? world.row === 'due'
    : world.request === 'update' || world.jwt === 'changes' || world.cookie === 'old' || world.cookie === 'expiring'

/** A session that is over, or cannot be served: null, the cookie cleared, an ended row deleted. */
async function ended(response: Response, world: World): Promise<void> {
  expect(response.status).toBe(200)
  expect(await response.json()).toBeNull()
  expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
  if (world.cookie === 'stored' && (world.row === 'expired' || world.row === 'pastLifetime') && !world.failing.has('deleteSession')) {
    expect(world.store.sessions.has(STORED_TOKEN)).toBe(false)
  }
}

const driver: ModelDriver<World> = {
  machine: sessionMachine,
  samples: [
    ...[jwtPolicy, dbPolicy].flatMap((policy) => [
      { type: 'session.read', at: T0, policy },
      { type: 'session.update', at: T0, policy, data: { name: 'Alice Liddell' } },
      { type: 'session.signOut', at: T0, policy, callbackUrl: `${ORIGIN}/bye` },
    ]),
    { type: 'session.read', at: T0, policy: jwtRefreshPolicy },
    { type: 'session.read', at: T0, policy: dbRefreshPolicy },
    { type: 'refreshAccountTokens.done', at: T0, output: { rejected: false } },
    { type: 'refreshAccountTokens.done', at: T0, output: { rejected: true } },
    { type: 'session.signOut', at: T0, policy: jwtLogoutPolicy, callbackUrl: `${ORIGIN}/bye` },
    { type: 'decodeSessionToken.done', at: T0, output: { token: ENDING } },
    { type: 'buildProviderLogout.done', at: T0, output: { url: 'https://op/session/end' } },
    { type: 'buildProviderLogout.failed', at: T0, reason: 'threw' },
    { type: 'decodeSessionToken.done', at: T0, output: { token: FRESH } },
    { type: 'decodeSessionToken.done', at: T0, output: { token: EXPIRING } },
    { type: 'refreshAccessToken.done', at: T0, output: { token: { ...EXPIRING, oauth: { ...EXPIRING.oauth, access_token: 'new' } } } },
    { type: 'refreshAccessToken.failed', at: T0, reason: 'rejected' },
    { type: 'decodeSessionToken.failed', at: T0, reason: 'missing' },
    { type: 'decodeSessionToken.failed', at: T0, reason: 'invalid' },
    ...Object.values(ENDED_COOKIES).map((reason) => ({ type: 'decodeSessionToken.failed', at: T0, reason })),
    { type: 'runJwtCallback.done', at: T0, output: { token: FRESH, changed: false } },
    { type: 'runJwtCallback.done', at: T0, output: { token: OLD, changed: false } },
    { type: 'runJwtCallback.done', at: T0, output: { token: { ...FRESH, role: 'admin' }, changed: true } },
    { type: 'runJwtCallback.done', at: T0, output: { token: null, changed: false } },
    { type: 'runJwtCallback.failed', at: T0, reason: 'threw' },
    { type: 'runSessionCallback.done', at: T0, output: { session: { user: {}, expires: '' } } },
    { type: 'runSessionCallback.failed', at: T0, reason: 'threw' },
    { type: 'encodeSessionToken.done', at: T0, output: { value: 'sealed' } },
    { type: 'encodeSessionToken.failed', at: T0, reason: 'threw' },
    { type: 'emitSessionEvent.done', at: T0, output: null },
    { type: 'emitSignOutEvent.done', at: T0, output: null },
    ...Object.entries(ROW).map(([row, expires]) => ({
      type: 'getSessionAndUser.done',
      at: T0,
      output: {
        sessionToken: STORED_TOKEN,
        expires,
        endsByLifetime: row === 'pastLifetime',
        user: ALICE,
        session: { id: 'row-1', sessionToken: STORED_TOKEN },
      },
    })),
    { type: 'getSessionAndUser.failed', at: T0, reason: 'missing' },
    { type: 'getSessionAndUser.failed', at: T0, reason: 'notFound' },
    { type: 'getSessionAndUser.failed', at: T0, reason: 'threw' },
    { type: 'deleteExpiredSession.done', at: T0, output: null },
    { type: 'deleteExpiredSession.failed', at: T0, reason: 'threw' },
    { type: 'extendSession.done', at: T0, output: { expires: T0 + MAX_AGE } },
    { type: 'extendSession.failed', at: T0, reason: 'threw' },
    { type: 'runDatabaseSessionCallback.done', at: T0, output: { session: { user: {}, expires: '' } } },
    { type: 'runDatabaseSessionCallback.failed', at: T0, reason: 'threw' },
    { type: 'deleteSession.done', at: T0, output: { session: null } },
    { type: 'deleteSession.failed', at: T0, reason: 'missing' },
    { type: 'deleteSession.failed', at: T0, reason: 'threw' },
  ],
  possible: (snapshot, event) => {
    // The refreshing and logout policies are explored along their own branch: an expiring (or
    // ending) token, the happy path, and one representative failure per effect. The filter can only
    // choose among the samples of a type, never rule a type out: createTestModel would inject a
    // bare event of it, which the harness refuses.
    const refreshing = snapshot.context.policy?.refreshProviders !== undefined
    const loggingOut = snapshot.context.policy?.logoutProviders !== undefined
    if (event.type === 'decodeSessionToken.done') {
      const { token } = event.output
      return token === (refreshing ? EXPIRING : loggingOut ? ENDING : FRESH)
    }
    if (!refreshing && !loggingOut) return true
    if (event.type === 'runJwtCallback.done') return event.output.token === FRESH
    const representative = REPRESENTATIVE_FAILURE[event.type]
    return representative === undefined || event.reason === representative
  },
  label: (event) => {
    if (event.policy?.refreshProviders) return `${event.type} (${event.policy.strategy}, refreshing provider)`
    if (event.type === 'refreshAccountTokens.done') {
      return event.output.rejected ? 'the provider refuses the refresh token' : 'account tokens refreshed'
    }
    if (event.policy?.logoutProviders) return `${event.type} (jwt, provider with RP-initiated logout)`
    if (event.type === 'decodeSessionToken.done' && event.output.token === ENDING) {
      return 'a token from a provider to sign out of'
    }
    if (event.policy) return `${event.type} (${event.policy.strategy})`
    if (event.type === 'decodeSessionToken.done' && event.output.token === EXPIRING) {
      return 'a token whose access token expired'
    }
    if (event.type === 'getSessionAndUser.done') {
      const row = Object.entries(ROW).find(([, expires]) => expires === event.output.expires)![0]
      return `a ${row} session is found`
    }
    if (event.type !== 'runJwtCallback.done') return undefined
    const { token, changed } = event.output
    if (token === null) return 'jwt callback revokes the token'
    if (changed) return 'jwt callback changes the token'
    return token.iat < T0 ? 'jwt callback keeps a token older than updateAge' : 'jwt callback keeps a fresh token'
  },
  world: () => ({
    strategy: 'jwt',
    cookie: 'none',
    refresh: 'works',
    refreshing: false,
    accountRefresh: 'none',
    providerLogout: 'works',
    row: 'fresh',
    failing: new Set(),
    jwt: 'identity',
    sessionThrows: false,
    encodeThrows: false,
    request: 'read',
    store: createMemoryStore(),
    authStore: memoryAuthStore(),
    events: { session: vi.fn(), signOut: vi.fn() },
    logger: spyLogger(),
  }),
  cause: causeOf,
  oracle: ORACLE,
  loggedErrors: (world) => takeLoggedErrors(world.logger),
  arrange: {
    'decodeSessionToken.done': (world, event) => {
      const { token } = event.output
      world.cookie = token === EXPIRING ? 'expiring' : token === ENDING ? 'ending' : 'fresh'
    },
    'buildProviderLogout.done': (world) => {
      world.providerLogout = 'works'
    },
    'buildProviderLogout.failed': (world) => {
      world.providerLogout = 'discoveryFails'
    },
    'refreshAccountTokens.done': (world, event) => {
      world.accountRefresh = event.output.rejected ? 'rejected' : 'works'
    },
    'refreshAccessToken.done': (world) => {
      world.refresh = 'works'
    },
    'refreshAccessToken.failed': (world) => {
      world.refresh = 'rejected'
    },
    'decodeSessionToken.failed': (world, event) => {
      const ended = Object.entries(ENDED_COOKIES).find(([, reason]) => reason === event.reason)
      world.cookie = event.reason === 'missing' ? 'none' : ended ? (ended[0] as EndedCookie) : 'garbage'
    },
    'runJwtCallback.done': (world, event) => {
      const { token, changed } = event.output
      if (token === null) world.jwt = 'revokes'
      else if (changed) world.jwt = 'changes'
      else if (token.iat < T0) world.cookie = 'old'
    },
    'runJwtCallback.failed': (world) => {
      world.jwt = 'throws'
    },
    'runSessionCallback.done': () => {},
    'runSessionCallback.failed': (world) => {
      world.sessionThrows = true
    },
    'encodeSessionToken.done': () => {},
    'encodeSessionToken.failed': (world) => {
      world.encodeThrows = true
    },
    'emitSessionEvent.done': () => {},
    'emitSignOutEvent.done': () => {},
    'getSessionAndUser.done': (world, event) => {
      world.cookie = 'stored'
      world.row = Object.entries(ROW).find(([, e]) => e === event.output.expires)![0] as World['row']
    },
    'getSessionAndUser.failed': (world, event) => {
      if (event.reason === 'missing') world.cookie = 'none'
      else if (event.reason === 'notFound') world.cookie = 'unknown'
      else {
        world.cookie = 'stored'
        world.failing.add('getSessionAndUser')
      }
    },
    'deleteExpiredSession.done': () => {},
    'deleteExpiredSession.failed': (world) => {
      world.failing.add('deleteSession')
    },
    'extendSession.done': () => {},
    'extendSession.failed': (world) => {
      world.failing.add('updateSession')
    },
    'runDatabaseSessionCallback.done': () => {},
    'runDatabaseSessionCallback.failed': (world) => {
      world.sessionThrows = true
    },
    'deleteSession.done': (world) => {
      world.cookie = 'stored'
    },
    'deleteSession.failed': (world, event) => {
      if (event.reason === 'missing') world.cookie = 'none'
      else {
        world.cookie = 'stored'
        world.failing.add('deleteSession')
      }
    },
  },
  send: {
    'session.read': async (world, event, inspect) => {
      world.request = 'read'
      world.strategy = event.policy.strategy
      world.refreshing = event.policy.refreshProviders !== undefined
      const config = configFor(world, inspect)
      return Auth(authRequest({ path: '/auth/session', cookies: await sessionCookie(world) }), config)
    },
    'session.update': async (world, event, inspect) => {
      world.request = 'update'
      world.strategy = event.policy.strategy
      const config = configFor(world, inspect)
      const jar = new CookieJar(await sessionCookie(world))
      const csrfToken = await csrf(config, jar)
      const data = event.data
      return Auth(authRequest({ path: '/auth/session', json: { csrfToken, data }, cookies: jar }), config)
    },
    'session.signOut': async (world, event, inspect) => {
      world.request = 'signOut'
      world.strategy = event.policy.strategy
      const config = configFor(world, inspect)
      const jar = new CookieJar(await sessionCookie(world))
      const csrfToken = await csrf(config, jar)
      return Auth(
        authRequest({ path: '/auth/signout', body: { csrfToken, callbackUrl: '/bye' }, cookies: jar }),
        config,
      )
    },
  },
  expect: {
    active: async (response, world) => {
      expect(response.status).toBe(200)
      const body = (await response.json()) as { user: { email: string }; expires: string; error?: string }
      expect(body.user.email).toBe(ALICE.email)
      // Every live session of this file ends at T0 + maxAge: minted, re-issued or extended at T0.
      expect(body.expires).toBe(new Date((T0 + MAX_AGE) * 1000).toISOString())
      const cookie = setCookie(response, SESSION_COOKIE)
      if (world.accountRefresh !== 'none') {
        const account = await MemoryAdapter(world.store).getAccount('acme-alice', REFRESHING)
        if (world.accountRefresh === 'works') {
          expect(body.error).toBeUndefined()
          expect(account?.access_token).not.toBe('old')
          expect(account?.expires_at).toBeGreaterThan(T0)
        } else {
          expect(body.error).toBe('RefreshTokenError')
          expect(account?.refresh_token ?? null, 'the refused refresh token is dropped').toBeNull()
        }
      }
      if (world.cookie === 'expiring') {
        const token = await decode({ token: cookie!.value, secret: SECRET, salt: SESSION_COOKIE })
        const oauth = token!.oauth as { access_token: string; refresh_token?: string }
        if (world.refresh === 'works') {
          expect(body.error).toBeUndefined()
          expect(oauth.access_token).not.toBe('old')
        } else {
          expect(body.error).toBe('RefreshTokenError')
          expect(oauth.refresh_token).toBeUndefined()
        }
      }
      if (!reissueExpected(world)) {
        expect(cookie).toBeUndefined()
      } else if (world.strategy === 'jwt') {
        expect(cookie?.value).toMatch(/^eyJ/)
        expect(await decode({ token: cookie!.value, secret: SECRET, salt: SESSION_COOKIE })).toMatchObject({ iat: T0, exp: T0 + MAX_AGE })
      } else {
        // The cookie is rewritten exactly when the row is, with the row's expiry.
        const stored = world.store.sessions.get(STORED_TOKEN)!.expires
        expect(cookie?.value).toBe(STORED_TOKEN)
        expect(Date.parse(cookie!.attributes.expires as string)).toBe(Math.floor(stored.getTime() / 1000) * 1000)
        expect(Date.parse(body.expires)).toBe(stored.getTime())
      }
      expect(world.events.session).toHaveBeenCalledTimes(1)
    },
    noSession: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.json()).toBeNull()
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    sessionUnavailable: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.json()).toBeNull()
      // A database outage must not sign the user out: the cookie is kept for the next try.
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    tampered: ended,
    unknownSession: ended,
    expired: ended,
    pastAbsoluteLifetime: ended,
    signedOutEverywhere: ended,
    providerLoggedOut: ended,
    callbackFailed: ended,
    revoked: async (response) => {
      expect(await response.json()).toBeNull()
      expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    },
    signedOut: (response, world) => {
      expect(response.status).toBe(302)
      if (world.cookie === 'ending' && world.providerLogout === 'works') {
        const location = new URL(response.headers.get('location')!)
        expect(`${location.origin}${location.pathname}`).toBe(`${op.issuer}/session/end`)
        expect(Object.fromEntries(location.searchParams)).toEqual({
          id_token_hint: 'the-id-token',
          post_logout_redirect_uri: `${ORIGIN}/bye`,
          client_id: LOGGING_OUT,
        })
      } else {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/bye`)
      }
      expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
      const announced = world.cookie !== 'garbage' && !(world.cookie in ENDED_COOKIES) && !world.failing.has('deleteSession')
      expect(world.events.signOut).toHaveBeenCalledTimes(announced ? 1 : 0)
      if (world.strategy === 'database' && announced) {
        expect(world.store.sessions.has(STORED_TOKEN)).toBe(false)
        expect(world.events.signOut).toHaveBeenCalledWith({
          session: expect.objectContaining({ sessionToken: STORED_TOKEN }),
        })
      }
    },
    signOutFailed: (response, world) => {
      // The row survived: the answer is the error, not the callback URL, and no signOut event.
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
      expect(world.store.sessions.has(STORED_TOKEN)).toBe(true)
      expect(world.events.signOut).not.toHaveBeenCalled()
    },
    leftWithoutSession: (response) => {
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/bye`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
  },
}

describeModel('session machine', driver)
