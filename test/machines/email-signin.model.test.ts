/**
 * Model-based test of the e-mail machine (the first factor) through `Auth`: every path from the
 * posted address, the confirmed link or the typed code to the chart's ends, with the world
 * arranged so each effect yields the modelled result (a bad address, a send limit reached, a user
 * found or new, the `signIn` callback's verdict, a failed send, right, wrong, exhausted and expired
 * codes, spent and missing tokens, a database down). A verified address is handed to the sign-in
 * completion, whose own model test walks the rest; here it must sign the user in.
 */
import { afterEach, expect, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { SendVerificationRequestParams } from '../../core/email/provider.js'
import { hashToken } from '../../core/email/secrets.js'
import { Auth, memoryAuthStore, type AuthStore } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'
import { emailSignInMachine } from '../../machines/email-signin.machine.js'
import Email from '../../providers/email.js'
import { authRequest, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { describeModel, type ModelDriver } from './harness.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const FLOW_COOKIE = '__Secure-authchart.flow.email-signin'
const T0 = Math.floor(Date.now() / 1000)
const ALICE = 'alice@example.com'
const CALLBACK = `${ORIGIN}/inbox`
const VERIFY_REQUEST = `${ORIGIN}/auth/verify-request?provider=email&type=email`
const STORED = { id: 'u-alice', email: ALICE, emailVerified: null }

afterEach(() => {
  vi.useRealTimers()
})

interface World {
  database: MemoryStore
  store: AuthStore
  jar: CookieJar
  outbox: SendVerificationRequestParams[]
  address: string
  throttled: boolean
  lookup: 'found' | 'new' | 'fails'
  signIn: 'allows' | 'redirects' | 'denies'
  send: 'works' | 'fails' | 'storeFails'
  code: boolean
  typed: 'right' | 'wrong'
  wrongs: number
  attempts: number
  late: boolean
  link: 'valid' | 'unknown' | 'missing'
  tokenGone: boolean
  useFails: boolean
}

function configFor(world: World, inspect?: AuthConfig['inspect']): AuthConfig {
  const memory = MemoryAdapter(world.database)
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    ...(inspect ? { inspect } : {}),
    store: world.store,
    session: { strategy: 'jwt' },
    callbacks: {
      signIn: ({ email }) => {
        if (!email?.verificationRequest) return true
        return world.signIn === 'allows' ? true : world.signIn === 'redirects' ? '/elsewhere' : false
      },
    },
    adapter: {
      ...memory,
      async getUserByEmail(email) {
        if (world.lookup === 'fails') throw new Error('database unavailable')
        return memory.getUserByEmail(email)
      },
      async createVerificationToken(token) {
        if (world.send === 'storeFails') throw new Error('database unavailable')
        return memory.createVerificationToken(token)
      },
      async useVerificationToken(params) {
        if (world.useFails) throw new Error('database unavailable')
        return memory.useVerificationToken(params)
      },
    },
    providers: [
      Email({
        throttle: { perIdentifier: 1 },
        ...(world.code ? { code: { attempts: world.attempts } } : {}),
        sendVerificationRequest: async (params) => {
          if (world.send === 'fails') throw new Error('SMTP refused')
          world.outbox.push(params)
        },
      }),
    ],
  }
}

async function post(world: World, config: AuthConfig, path: string, body: Record<string, string>) {
  const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
  world.jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const response = await Auth(authRequest({ path, body: { ...body, csrfToken }, cookies: world.jar }), config)
  world.jar.store(response)
  return response
}

/** Puts Alice in the database, or takes her out, as the lookup in this request must find. */
async function arrangeUser(world: World) {
  const memory = MemoryAdapter(world.database)
  const existing = await memory.getUserByEmail(ALICE)
  if (world.lookup === 'found' && !existing) await memory.createUser({ ...STORED })
  if (world.lookup === 'new' && existing) world.database.users.delete(existing.id)
}

const verificationFailure = { at: T0, error: 'Verification' }

const driver: ModelDriver<World> = {
  machine: emailSignInMachine,
  samples: [
    { type: 'email.request', at: T0, providerId: 'email', callbackUrl: CALLBACK, email: ALICE },
    { type: 'email.verifyLink', at: T0, providerId: 'email', callbackUrl: CALLBACK, token: 'sent', email: ALICE },
    { type: 'email.submitCode', at: T0, code: 'typed' },
    { type: 'admitRequest.done', at: T0, output: { identifier: ALICE } },
    { type: 'admitRequest.failed', at: T0, reason: 'invalidIdentifier', error: 'EmailSignInError' },
    { type: 'admitRequest.failed', at: T0, reason: 'throttled', error: 'EmailSignInError' },
    { type: 'lookUpUser.done', at: T0, output: { user: STORED, stored: true } },
    { type: 'lookUpUser.done', at: T0, output: { user: { id: 'new', email: ALICE, emailVerified: null }, stored: false } },
    { type: 'lookUpUser.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'checkSignIn.done', at: T0, output: { redirect: null } },
    { type: 'checkSignIn.done', at: T0, output: { redirect: `${ORIGIN}/elsewhere` } },
    { type: 'checkSignIn.failed', at: T0, reason: 'denied', error: 'AccessDenied' },
    { type: 'sendVerificationRequest.done', at: T0, output: { verifyRequestUrl: VERIFY_REQUEST, code: null } },
    {
      type: 'sendVerificationRequest.done',
      at: T0,
      output: { verifyRequestUrl: VERIFY_REQUEST, code: { tokenHash: 'h', codeHash: 'c', expires: T0 + 600 } },
    },
    { type: 'sendVerificationRequest.failed', at: T0, reason: 'notSent', error: 'EmailSignInError' },
    { type: 'sendVerificationRequest.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'checkCode.done', at: T0, output: null },
    { type: 'checkCode.failed', reason: 'wrong', ...verificationFailure },
    { type: 'checkCode.failed', reason: 'exhausted', ...verificationFailure },
    { type: 'checkCode.failed', reason: 'expired', ...verificationFailure },
    { type: 'voidToken.done', at: T0, output: null },
    { type: 'consumeToken.done', at: T0, output: { identifier: ALICE } },
    { type: 'consumeToken.failed', reason: 'invalid', ...verificationFailure },
    { type: 'consumeToken.failed', at: T0, reason: 'missingToken' },
    { type: 'consumeToken.failed', at: T0, reason: 'threw', error: 'AdapterError' },
  ],
  // A token can be missing only from a link; a code always stands for one.
  possible: (snapshot, event) =>
    !(event.type === 'consumeToken.failed' && event.reason === 'missingToken' && snapshot.context.tokenHash !== null),
  label: (event) => {
    if (event.type === 'lookUpUser.done') return event.output.stored ? 'user found' : 'new user'
    if (event.type === 'checkSignIn.done') return event.output.redirect ? 'signIn redirects' : 'signIn allows'
    if (event.type === 'sendVerificationRequest.done') return event.output.code ? 'sent with a code' : 'link sent'
    return undefined
  },
  world: () => ({
    database: createMemoryStore(),
    store: memoryAuthStore(),
    jar: new CookieJar(),
    outbox: [],
    address: ALICE,
    throttled: false,
    lookup: 'new',
    signIn: 'allows',
    send: 'works',
    code: false,
    typed: 'right',
    wrongs: 0,
    attempts: 5,
    late: false,
    link: 'valid',
    tokenGone: false,
    useFails: false,
  }),
  arrange: {
    'admitRequest.done': (world) => {
      world.address = ALICE
    },
    'admitRequest.failed': (world, event) => {
      if (event.reason === 'throttled') world.throttled = true
      else world.address = 'not-an-address'
    },
    'lookUpUser.done': (world, event) => {
      world.lookup = event.output.stored ? 'found' : 'new'
    },
    'lookUpUser.failed': (world) => {
      world.lookup = 'fails'
    },
    'checkSignIn.done': (world, event) => {
      world.signIn = event.output.redirect ? 'redirects' : 'allows'
    },
    'checkSignIn.failed': (world) => {
      world.signIn = 'denies'
    },
    'sendVerificationRequest.done': (world, event) => {
      world.send = 'works'
      world.code = event.output.code !== null
    },
    'sendVerificationRequest.failed': (world, event) => {
      world.send = event.reason === 'notSent' ? 'fails' : 'storeFails'
    },
    'checkCode.done': (world) => {
      world.typed = 'right'
      world.attempts = 5
    },
    'checkCode.failed': (world, event) => {
      world.typed = 'wrong'
      if (event.reason === 'exhausted') world.attempts = world.wrongs + 1
      if (event.reason === 'expired') world.late = true
    },
    'voidToken.done': () => {},
    'consumeToken.done': (world) => {
      world.link = 'valid'
    },
    'consumeToken.failed': (world, event) => {
      if (event.reason === 'threw') world.useFails = true
      else if (event.reason === 'missingToken') world.link = 'missing'
      else {
        world.link = 'unknown'
        world.tokenGone = true
      }
    },
  },
  send: {
    'email.request': async (world, _event, inspect) => {
      await arrangeUser(world)
      if (world.throttled) {
        // The one send the limit allows, made before this request (and not traced by it).
        await post(world, { ...configFor({ ...world, send: 'works', signIn: 'allows' }) }, '/auth/signin/email', { email: ALICE })
        world.jar = new CookieJar()
      }
      return post(world, configFor(world, inspect), '/auth/signin/email', { email: world.address, callbackUrl: '/inbox' })
    },
    'email.verifyLink': async (world, _event, inspect) => {
      await arrangeUser(world)
      let token = 'f'.repeat(64)
      if (world.link === 'valid') {
        token = 'a'.repeat(64)
        await MemoryAdapter(world.database).createVerificationToken({
          identifier: ALICE,
          token: await hashToken(token, SECRET),
          expires: new Date((T0 + 3600) * 1000),
        })
      }
      return post(world, configFor(world, inspect), '/auth/callback/email', {
        token: world.link === 'missing' ? '' : token,
        email: ALICE,
        callbackUrl: '/inbox',
      })
    },
    'email.submitCode': async (world, _event, inspect) => {
      await arrangeUser(world)
      const sent = world.outbox.at(-1)!.code!
      const code = world.typed === 'right' ? sent : sent === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ'
      if (world.tokenGone) world.database.verificationTokens.clear()
      if (world.late) {
        vi.useFakeTimers({ toFake: ['Date'] })
        vi.setSystemTime(Date.now() + 601_000)
      }
      try {
        return await post(world, configFor(world, inspect), '/auth/callback/email', { code })
      } finally {
        if (world.typed === 'wrong') world.wrongs++
        vi.useRealTimers()
      }
    },
  },
  expect: {
    linkSent: (response, world) => {
      expect(response.headers.get('location')).toBe(VERIFY_REQUEST)
      expect(world.outbox.at(-1)!.code).toBeUndefined()
      expect(setCookie(response, FLOW_COOKIE)).toBeUndefined()
    },
    awaitingCode: (response, world) => {
      const rejected = world.wrongs > 0 && world.typed === 'wrong'
      expect(response.headers.get('location')).toBe(rejected ? `${VERIFY_REQUEST}&error=InvalidCode` : VERIFY_REQUEST)
      expect(setCookie(response, FLOW_COOKIE)?.value).toBeTruthy()
      expect(world.outbox.at(-1)!.code).toMatch(/^[0-9A-Z]{6}$/)
    },
    verified: (response, world) => {
      expect(response.headers.get('location')).toBe(CALLBACK)
      expect(setCookie(response, SESSION_COOKIE)?.value).toBeTruthy()
      const user = [...world.database.users.values()].find((u) => u.email === ALICE)!
      expect(user.emailVerified).toBeInstanceOf(Date)
      expect(world.database.verificationTokens.size).toBe(0)
    },
    redirectedBySignIn: (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/elsewhere`)
      expect(world.outbox).toHaveLength(0)
    },
    denied: (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
      expect(world.outbox).toHaveLength(0)
    },
    refused: (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      expect(world.outbox.length).toBeLessThanOrEqual(world.throttled ? 1 : 0)
    },
    invalidToken: (response) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    failed: (response) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
  },
}

describeModel('e-mail sign-in machine', driver)
