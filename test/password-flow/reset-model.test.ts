/**
 * Every transition of the forgotten-password chart, driven through `Auth`: a request (limited, its
 * store or adapter failing) and a reset (its token refused or spent meanwhile, its password
 * refused, its hasher, adapter or session end failing) each arranged in the world.
 */
import { describe, expect, it } from 'vitest'
import { Auth, type AuthConfig } from '../../core/index.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthStore } from '../../core/store/types.js'
import { describeFlowModel, flowMachine } from '../../testing/index.js'
import { authRequest, Client, CookieJar, ORIGIN, setCookie } from '../fixtures/http.js'
import { addUser, passwordWorld, postPassword, signInWithPassword, type PasswordWorld } from './fixtures.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const EMAIL = 'alice@example.com'

interface World {
  password: PasswordWorld
  newPassword: string
  token: 'issued' | 'made-up'
  jar: CookieJar
  store: 'open' | 'limited' | 'broken' | 'spent-meanwhile'
  broken: 'none' | 'getUserByEmail' | 'getUser' | 'hash' | 'listSessions'
}

/** The shared store as the world wants it. */
function storeOf(world: World, inner: AuthStore): AuthStore {
  return {
    ...inner,
    consume: async (key, points, window) => {
      if (world.store === 'limited') return { allowed: false, count: points + 1, retryAfter: 30 }
      if (world.store === 'broken') throw new TypeError('the limiter is misconfigured')
      return inner.consume(key, points, window)
    },
    // Another request spent the link between the check and the spend.
    claim: async (key, ttl) => (world.store === 'spent-meanwhile' && key.startsWith('password:spent:') ? false : inner.claim(key, ttl)),
  }
}

async function post(world: World, body: Record<string, string>, inspect: unknown) {
  const { password } = world
  const adapter = password.config.adapter!
  const provider = password.config.providers[0] as unknown as Record<string, unknown>
  const fail = (what: string) => () => Promise.reject(new TypeError(`${what} is broken`))
  const config = {
    ...password.config,
    inspect,
    store: storeOf(world, (password.config as { store: AuthStore }).store),
    providers: [world.broken === 'hash' ? { ...provider, hasher: { ...password.hasher, hash: fail('the hasher') } } : provider],
    adapter: world.broken === 'none' || world.broken === 'hash' ? adapter : { ...adapter, [world.broken]: fail(`the adapter's ${world.broken}`) },
  }
  const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config as unknown as AuthConfig)
  world.jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  return Auth(authRequest({ path: '/auth/callback/password', body: { ...body, csrfToken }, cookies: world.jar }), config as unknown as AuthConfig)
}

const machine = flowMachine(passwordWorld().config, 'password-reset')

describeFlowModel<World>(
  'the forgotten-password reset',
  {
    machine,
    samples: [
      { type: 'password.forgot', at: 0, providerId: 'password', email: EMAIL, answerUrl: '' },
      { type: 'password.reset', at: 0, providerId: 'password', token: 't', password: 'a brand new password', answerUrl: '' },
      { type: 'admitResetRequest.done', at: 0, output: null },
      { type: 'admitResetRequest.failed', at: 0, reason: 'limited', error: 'EmailSignInError', retryAfter: 30 },
      { type: 'admitResetRequest.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'sendResetLink.done', at: 0, output: null },
      { type: 'sendResetLink.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'checkNewPassword.done', at: 0, output: null },
      { type: 'checkNewPassword.failed', at: 0, reason: 'refused', error: 'Verification' },
      { type: 'checkNewPassword.failed', at: 0, reason: 'invalid', error: 'CredentialsSignin', code: 'password_too_short' },
      { type: 'checkNewPassword.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'setPassword.done', at: 0, output: { userId: 'u' } },
      { type: 'setPassword.failed', at: 0, reason: 'refused', error: 'Verification' },
      { type: 'setPassword.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'endSessions.done', at: 0, output: null },
      { type: 'endSessions.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    ],
    onlySamples: true,
    world: () => ({ password: passwordWorld(), newPassword: 'a brand new password', token: 'issued', jar: new CookieJar(), store: 'open', broken: 'none' }),
    arrange: {
      'admitResetRequest.done': () => {},
      'admitResetRequest.failed': (world, event) => {
        world.store = event.reason === 'limited' ? 'limited' : 'broken'
      },
      'sendResetLink.done': () => {},
      'sendResetLink.failed': (world) => {
        world.broken = 'getUserByEmail'
      },
      'checkNewPassword.done': () => {},
      'checkNewPassword.failed': (world, event) => {
        if (event.reason === 'refused') world.token = 'made-up'
        if (event.reason === 'invalid') world.newPassword = 'short'
        if (event.reason === 'threw') world.broken = 'getUser'
      },
      'setPassword.done': () => {},
      'setPassword.failed': (world, event) => {
        if (event.reason === 'refused') world.store = 'spent-meanwhile'
        else world.broken = 'hash'
      },
      'endSessions.done': () => {},
      'endSessions.failed': (world) => {
        world.broken = 'listSessions'
      },
    },
    send: {
      'password.forgot': async (world, _event, inspect) => {
        await addUser(world.password, EMAIL, 'the old password')
        return post(world, { intent: 'forgot', email: EMAIL }, inspect)
      },
      'password.reset': async (world, _event, inspect) => {
        await addUser(world.password, EMAIL, 'the old password')
        // Signed in elsewhere, and a link asked for, before the request under test.
        await signInWithPassword(new Client(world.password.config), EMAIL, 'the old password')
        await postPassword(new Client(world.password.config), { intent: 'forgot', email: EMAIL })
        const token = world.token === 'issued' ? new URL(world.password.mailbox.at(-1)!.url).searchParams.get('token')! : 'b'.repeat(64)
        return post(world, { intent: 'reset', token, password: world.newPassword }, inspect)
      },
    },
    expect: {
      checkEmail: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/verify-request?provider=password&type=email`)
      },
      limited: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin&retryAfter=30`)
      },
      refused: (response, world) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
        expect(world.password.store.sessions.size).toBe(1)
      },
      invalid: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=password_too_short`)
      },
      passwordReset: (response, world) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
        expect(world.password.store.sessions.size).toBe(0)
      },
      failed: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      },
    },
  },
  { describe, it },
)
