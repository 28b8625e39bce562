/**
 * Every transition of the password sign-in chart, driven through `Auth`: each path's world is
 * arranged so that each effect answers as the path says (a wrong password, an outdated hash, a
 * store that refuses), and the response is checked for the state the chart came to rest in.
 */
import { describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthStore } from '../../core/store/types.js'
import { describeFlowModel, flowMachine } from '../../testing/index.js'
import { authRequest, CookieJar, ORIGIN, setCookie } from '../fixtures/http.js'
import { addUser, outdatedHash, passwordWorld, type PasswordWorld } from './fixtures.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const EMAIL = 'alice@example.com'
const PASSWORD = 'correct horse battery'

interface World {
  password: PasswordWorld
  typed: string
  jar: CookieJar
  limit: 'open' | 'limited' | 'broken'
  hasherBroken: boolean
  unverified: boolean
  outdated: boolean
  storeBroken: boolean
}

/** The shared store as the world wants it: counting, refusing every attempt, or throwing. */
function storeOf(world: World, inner: AuthStore): AuthStore {
  return {
    ...inner,
    consume: async (key, points, window) => {
      if (world.limit === 'limited') return { allowed: false, count: points + 1, retryAfter: 30 }
      if (world.limit === 'broken') throw new TypeError('the limiter is misconfigured')
      return inner.consume(key, points, window)
    },
  }
}

const machine = flowMachine(passwordWorld().config, 'password-signin')

describeFlowModel<World>(
  'the password sign-in',
  {
    machine,
    samples: [
      { type: 'password.signin', at: 0, providerId: 'password', email: EMAIL, password: PASSWORD, callbackUrl: `${ORIGIN}/dashboard` },
      { type: 'admitAttempt.done', at: 0, output: null },
      { type: 'admitAttempt.failed', at: 0, reason: 'limited', error: 'CredentialsSignin', code: 'rate_limited', retryAfter: 30 },
      { type: 'admitAttempt.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'verifyPassword.done', at: 0, output: { user: { id: 'u' }, needsRehash: false } },
      { type: 'verifyPassword.done', at: 0, output: { user: { id: 'u' }, needsRehash: true } },
      { type: 'verifyPassword.failed', at: 0, reason: 'rejected', error: 'CredentialsSignin', code: 'credentials' },
      { type: 'verifyPassword.failed', at: 0, reason: 'unverified', error: 'CredentialsSignin', code: 'email_unverified' },
      { type: 'verifyPassword.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'rehashPassword.done', at: 0, output: null },
      { type: 'rehashPassword.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    ],
    onlySamples: true,
    world: () => ({
      password: passwordWorld(),
      typed: PASSWORD,
      jar: new CookieJar(),
      limit: 'open',
      hasherBroken: false,
      unverified: false,
      outdated: false,
      storeBroken: false,
    }),
    arrange: {
      'admitAttempt.done': (world) => {
        world.limit = 'open'
      },
      'admitAttempt.failed': (world, event) => {
        world.limit = event.reason === 'limited' ? 'limited' : 'broken'
      },
      'verifyPassword.done': (world, event) => {
        world.outdated = (event.output as { needsRehash: boolean }).needsRehash
      },
      'verifyPassword.failed': (world, event) => {
        if (event.reason === 'rejected') world.typed = 'not the password'
        if (event.reason === 'unverified') world.unverified = true
        if (event.reason === 'threw') world.hasherBroken = true
      },
      'rehashPassword.done': () => {},
      'rehashPassword.failed': (world) => {
        world.storeBroken = true
      },
    },
    send: {
      'password.signin': async (world, _event, inspect) => {
        const { password } = world
        const user = await addUser(password, EMAIL, null, { verified: !world.unverified })
        const hash = world.outdated ? await outdatedHash(PASSWORD) : await password.hasher.hash(PASSWORD)
        await password.config.adapter!.setUserPassword!(user.id, hash)
        const hasher = password.hasher
        if (world.hasherBroken) hasher.verify = async () => Promise.reject(new TypeError('the hasher is broken'))
        const adapter = password.config.adapter!
        const config = {
          ...password.config,
          inspect,
          store: storeOf(world, memoryAuthStore()),
          adapter: world.storeBroken
            ? { ...adapter, setUserPassword: async () => Promise.reject(new TypeError('the database is read-only')) }
            : adapter,
        }
        const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
        world.jar.store(csrf)
        const { csrfToken } = (await csrf.json()) as { csrfToken: string }
        return Auth(
          authRequest({
            path: '/auth/callback/password',
            body: { email: EMAIL, password: world.typed, csrfToken, callbackUrl: '/dashboard' },
            cookies: world.jar,
          }),
          config,
        )
      },
    },
    expect: {
      verified: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
        expect(setCookie(response, SESSION_COOKIE)).toBeDefined()
      },
      rejected: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=credentials`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      },
      unverified: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=email_unverified`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      },
      limited: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=rate_limited&retryAfter=30`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      },
      failed: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      },
    },
  },
  { describe, it },
)
