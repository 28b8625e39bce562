/**
 * Every transition of the password sign-up chart, driven through `Auth`: a sign-up (its input
 * refused, its registration failing) and a verification (refused, limited, failing) each arranged
 * in the world, and the response checked for the state the chart came to rest in.
 */
import { describe, expect, it } from 'vitest'
import { Auth, type AuthConfig } from '../../core/index.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthStore } from '../../core/store/types.js'
import { describeFlowModel, flowMachine } from '../../testing/index.js'
import { authRequest, Client, CookieJar, ORIGIN, setCookie } from '../fixtures/http.js'
import { passwordWorld, postPassword, type PasswordWorld } from './fixtures.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const EMAIL = 'new@example.com'
const PASSWORD = 'a new password'

interface World {
  password: PasswordWorld
  typed: string
  confirmWith: string
  jar: CookieJar
  policyBroken: boolean
  hasherBroken: boolean
  limited: boolean
  adapterBroken: boolean
}

const limitedStore = (inner: AuthStore): AuthStore => ({ ...inner, consume: async (_key, points) => ({ allowed: false, count: points + 1, retryAfter: 30 }) })

/** Posts `body` to the password callback under the world's configuration, as each failure wants it. */
async function post(world: World, body: Record<string, string>, inspect: (trace: never) => void) {
  const { password } = world
  const adapter = password.config.adapter!
  const provider = password.config.providers[0] as unknown as Record<string, unknown>
  const config = {
    ...password.config,
    inspect,
    ...(world.limited ? { store: limitedStore(memoryAuthStore()) } : {}),
    providers: [
      {
        ...provider,
        ...(world.policyBroken ? { policy: () => Promise.reject(new TypeError('the policy service is down')) } : {}),
        ...(world.hasherBroken ? { hasher: { ...password.hasher, hash: () => Promise.reject(new TypeError('the hasher is broken')) } } : {}),
      },
    ],
    adapter: world.adapterBroken ? { ...adapter, getUser: () => Promise.reject(new TypeError('the database is gone')) } : adapter,
  }
  const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config as unknown as AuthConfig)
  world.jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  return Auth(authRequest({ path: '/auth/callback/password', body: { ...body, csrfToken }, cookies: world.jar }), config as unknown as AuthConfig)
}

const machine = flowMachine(passwordWorld().config, 'password-signup')

describeFlowModel<World>(
  'the password sign-up',
  {
    machine,
    samples: [
      { type: 'password.signup', at: 0, providerId: 'password', email: EMAIL, password: PASSWORD, name: null, fields: {}, answerUrl: '' },
      { type: 'password.verify', at: 0, providerId: 'password', token: 't', password: PASSWORD, answerUrl: '' },
      { type: 'checkSignUp.done', at: 0, output: { email: EMAIL, fields: {} } },
      { type: 'checkSignUp.failed', at: 0, reason: 'invalid', error: 'CredentialsSignin', code: 'password_too_short' },
      { type: 'checkSignUp.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'register.done', at: 0, output: null },
      { type: 'register.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'verifyAddress.done', at: 0, output: null },
      { type: 'verifyAddress.failed', at: 0, reason: 'refused', error: 'Verification' },
      { type: 'verifyAddress.failed', at: 0, reason: 'limited', error: 'Verification', retryAfter: 30 },
      { type: 'verifyAddress.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    ],
    onlySamples: true,
    world: () => ({
      password: passwordWorld(),
      typed: PASSWORD,
      confirmWith: PASSWORD,
      jar: new CookieJar(),
      policyBroken: false,
      hasherBroken: false,
      limited: false,
      adapterBroken: false,
    }),
    arrange: {
      'checkSignUp.done': () => {},
      'checkSignUp.failed': (world, event) => {
        if (event.reason === 'invalid') world.typed = 'short'
        else world.policyBroken = true
      },
      'register.done': () => {},
      'register.failed': (world) => {
        world.hasherBroken = true
      },
      'verifyAddress.done': () => {},
      'verifyAddress.failed': (world, event) => {
        if (event.reason === 'refused') world.confirmWith = 'not the password'
        if (event.reason === 'limited') world.limited = true
        if (event.reason === 'threw') world.adapterBroken = true
      },
    },
    send: {
      'password.signup': (world, _event, inspect) => post(world, { intent: 'signup', email: EMAIL, password: world.typed }, inspect as never),
      'password.verify': async (world, _event, inspect) => {
        // Signed up beforehand, outside the request under test.
        await postPassword(new Client(world.password.config), { intent: 'signup', email: EMAIL, password: PASSWORD })
        const token = new URL(world.password.mailbox.at(-1)!.url).searchParams.get('token')!
        return post(world, { intent: 'verify', token, password: world.confirmWith }, inspect as never)
      },
    },
    expect: {
      checkEmail: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/verify-request?provider=password&type=email`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      },
      invalid: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=password_too_short`)
      },
      addressVerified: (response, world) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
        expect([...world.password.store.users.values()][0]!.emailVerified).toBeInstanceOf(Date)
      },
      refused: (response, world) => {
        expect(response.headers.get('location')).toMatch(new RegExp(`^${ORIGIN}/auth/error\\?error=Verification`))
        expect([...world.password.store.users.values()][0]!.emailVerified).toBeNull()
      },
      failed: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      },
    },
  },
  { describe, it },
)
