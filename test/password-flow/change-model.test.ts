/**
 * Every transition of the signed-in user's password chart, driven through `Auth`: a change, a set
 * and a removal, each refused (nobody signed in, the policy, the last way in) or failing (the
 * hasher, the adapter) as the path says, from a fresh password sign-in.
 */
import { describe, expect, it } from 'vitest'
import { Auth, type AuthConfig } from '../../core/index.js'
import { describeFlowModel, flowMachine } from '../../testing/index.js'
import Email from '../../providers/email.js'
import { authRequest, Client, ORIGIN } from '../fixtures/http.js'
import { addUser, passwordWorld, signInWithPassword, type PasswordWorld } from './fixtures.js'

const EMAIL = 'alice@example.com'

interface World {
  password: PasswordWorld
  mode: 'change' | 'set' | 'remove'
  newPassword: string
  keepOthers: boolean
  signedIn: boolean
  anotherWayIn: boolean
  broken: 'none' | 'getUser' | 'hash' | 'setUserPassword' | 'listSessions'
}

async function send(world: World, inspect: unknown): Promise<Response> {
  const { password } = world
  if (world.anotherWayIn) password.config.providers.push(Email({ sendVerificationRequest: async () => {} }) as never)
  await addUser(password, EMAIL, world.mode === 'set' ? null : 'the old password')
  const client = new Client(password.config)
  if (world.signedIn) {
    // A password user signs in; a user without one is given a session the way e-mail would.
    if (world.mode === 'set') await addUser(password, 'helper@example.com', 'helper password')
    await signInWithPassword(client, world.mode === 'set' ? 'helper@example.com' : EMAIL, world.mode === 'set' ? 'helper password' : 'the old password')
    if (world.mode === 'set') {
      const alice = [...password.store.users.values()].find((u) => u.email === EMAIL)!
      for (const session of password.store.sessions.values()) session.userId = alice.id
    }
    // Another session of the user, which a change ends unless told otherwise.
    await signInWithPassword(new Client(password.config), world.mode === 'set' ? 'helper@example.com' : EMAIL, world.mode === 'set' ? 'helper password' : 'the old password')
  }
  const adapter = password.config.adapter!
  const provider = password.config.providers[0] as unknown as Record<string, unknown>
  const fail = (what: string) => () => Promise.reject(new TypeError(`${what} is broken`))
  const config = {
    ...password.config,
    inspect,
    providers: [world.broken === 'hash' ? { ...provider, hasher: { ...password.hasher, hash: fail('the hasher') } } : provider, ...password.config.providers.slice(1)],
    adapter: world.broken === 'none' || world.broken === 'hash' ? adapter : { ...adapter, [world.broken]: fail(`the adapter's ${world.broken}`) },
  }
  const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: client.jar }), config as unknown as AuthConfig)
  client.jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const body = { intent: world.mode, password: world.newPassword, endOtherSessions: world.keepOthers ? 'false' : 'true', callbackUrl: '/account', csrfToken }
  return Auth(authRequest({ path: '/auth/signin/password', body, cookies: client.jar }), config as unknown as AuthConfig)
}

const machine = flowMachine(passwordWorld().config, 'password-change')

describeFlowModel<World>(
  "the signed-in user's password",
  {
    machine,
    samples: [
      { type: 'password.change', at: 0, providerId: 'password', mode: 'change', password: 'a brand new password', endOtherSessions: true, answerUrl: '' },
      { type: 'password.change', at: 0, providerId: 'password', mode: 'change', password: 'a brand new password', endOtherSessions: false, answerUrl: '' },
      { type: 'password.change', at: 0, providerId: 'password', mode: 'remove', password: '', endOtherSessions: true, answerUrl: '' },
      { type: 'checkChange.done', at: 0, output: null },
      { type: 'checkChange.failed', at: 0, reason: 'signedOut', error: 'AccessDenied' },
      { type: 'checkChange.failed', at: 0, reason: 'invalid', error: 'CredentialsSignin', code: 'password_too_short' },
      { type: 'checkChange.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'storePassword.done', at: 0, output: null },
      { type: 'storePassword.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'removePassword.done', at: 0, output: null },
      { type: 'removePassword.failed', at: 0, reason: 'lastFactor', error: 'AccessDenied' },
      { type: 'removePassword.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'endOtherSessions.done', at: 0, output: null },
      { type: 'endOtherSessions.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    ],
    onlySamples: true,
    world: () => ({
      password: passwordWorld(),
      mode: 'change',
      newPassword: 'a brand new password',
      keepOthers: false,
      signedIn: true,
      anotherWayIn: true,
      broken: 'none',
    }),
    arrange: {
      'checkChange.done': () => {},
      'checkChange.failed': (world, event) => {
        if (event.reason === 'signedOut') world.signedIn = false
        if (event.reason === 'invalid') world.newPassword = 'short'
        if (event.reason === 'threw') world.broken = 'getUser'
      },
      'storePassword.done': () => {},
      'storePassword.failed': (world) => {
        world.broken = 'hash'
      },
      'removePassword.done': () => {},
      'removePassword.failed': (world, event) => {
        if (event.reason === 'lastFactor') world.anotherWayIn = false
        else world.broken = 'setUserPassword'
      },
      'endOtherSessions.done': () => {},
      'endOtherSessions.failed': (world) => {
        world.broken = 'listSessions'
      },
    },
    send: {
      'password.change': (world, event, inspect) => {
        // A removal sets no password, so no policy refuses it: the policy's refusal is driven as a change.
        world.mode = event.mode === 'remove' && world.newPassword === 'short' ? 'change' : event.mode
        world.keepOthers = !event.endOtherSessions
        return send(world, inspect)
      },
    },
    expect: {
      changed: (response, world) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/account`)
        const sessions = world.password.store.sessions.size
        expect(sessions).toBe(world.keepOthers ? 2 : 1)
      },
      invalid: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=password_too_short`)
      },
      refused: (response, world) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
        expect(world.password.store.passwords.size).toBeGreaterThan(0)
      },
      failed: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      },
    },
  },
  { describe, it },
)
