/**
 * Model-based test of turning on two-step verification, through `Auth`: a signed-in user starts it
 * (POST /two-factor), the QR code page waits for the app's code (POST /step/totp-enrolment), and
 * the world decides whether the user already has a factor, which code is typed, and whether the
 * factor store works.
 */
import { expect, vi } from 'vitest'
import type { ExpectedCookie, ExpectedResponse } from '../../testing/index.js'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import type { AuthConfig } from '../../core/types.js'
import { totpEnrolmentMachine } from '../../machines/totp-enrolment.machine.js'
import { authRequest, CookieJar, ORIGIN, spyLogger, featureConfig } from '../fixtures/http.js'
import { describeModel, freezeClock, httpDate, JWE, SECURE_ATTRIBUTES, takeLoggedErrors, type ModelDriver } from './harness.js'
import { stepUp } from '../../core/step-up.js'

const T0 = Math.floor(Date.now() / 1000)
const ENROLMENT_COOKIE = '__Secure-authchart.flow.totp-enrolment'

freezeClock(T0)

const ATTRIBUTES = SECURE_ATTRIBUTES
const SEALED: ExpectedCookie = { value: JWE, attributes: { ...ATTRIBUTES, 'max-age': '900', expires: httpDate(T0 + 900) } }
const CLEARED: ExpectedCookie = { value: '', attributes: { ...ATTRIBUTES, 'max-age': '0' } }
const REAUTH_COOKIE = '__Secure-authchart.flow.reauthenticate'
const STALE = 11 * 60
const STEP_PAGE = `${ORIGIN}/auth/step/totp-enrolment`
const DB_DOWN = ['AdapterError', 'AdapterError']

/** What each (final state, cause) must answer, from the spec rather than the chart. */
const ORACLE: Record<string, ExpectedResponse> = {
  // A request that does not ask for HTML (this driver's) gets 401 with the page's URL.
  'reauthenticationRequired ← the proof is too old': {
    status: 401,
    location: null,
    cookies: {
      [ENROLMENT_COOKIE]: null,
      [REAUTH_COOKIE]: { value: JWE, attributes: { ...ATTRIBUTES, 'max-age': '900', expires: httpDate(T0 + STALE + 900) } },
    },
    errors: [],
  },
  'awaitingConfirmation ← enrolment started': { status: 302, location: STEP_PAGE, cookies: { [ENROLMENT_COOKIE]: SEALED }, errors: [] },
  'awaitingConfirmation ← wrong code': { status: 302, location: STEP_PAGE, cookies: { [ENROLMENT_COOKIE]: SEALED }, errors: [] },
  'enrolled ← right code': { status: 200, location: null, cookies: { [ENROLMENT_COOKIE]: CLEARED }, errors: [] },
  'alreadyEnrolled ← already enrolled': { status: 302, location: `${ORIGIN}/account`, cookies: { [ENROLMENT_COOKIE]: null }, errors: [] },
  'failed ← factor store fails at the gate': {
    status: 302,
    location: `${ORIGIN}/auth/error?error=Configuration`,
    cookies: { [ENROLMENT_COOKIE]: null },
    errors: DB_DOWN,
  },
  'failed ← factor store fails at the start': {
    status: 302,
    location: `${ORIGIN}/auth/error?error=Configuration`,
    cookies: { [ENROLMENT_COOKIE]: null },
    errors: DB_DOWN,
  },
  'failed ← factor store fails at the confirmation': {
    status: 302,
    location: `${ORIGIN}/auth/error?error=Configuration`,
    cookies: { [ENROLMENT_COOKIE]: CLEARED },
    errors: DB_DOWN,
  },
  'failed ← session ended before the confirmation': {
    status: 302,
    location: `${ORIGIN}/auth/error?error=AccessDenied`,
    cookies: { [ENROLMENT_COOKIE]: CLEARED },
    errors: [],
  },
  'alreadyEnrolled ← a factor enrolled meanwhile': {
    status: 302,
    location: `${ORIGIN}/account`,
    cookies: { [ENROLMENT_COOKIE]: CLEARED },
    errors: [],
  },
}

interface World {
  store: MemoryStore
  jar: CookieJar
  enrolled: boolean
  /** Whether the user's proof is older than the step-up policy when the enrolment starts. */
  stale: boolean
  /** `failsAfterGate`: the freshness gate still reads the user's factors, the enrolment cannot. */
  factorStore: 'works' | 'fails' | 'failsAfterGate'
  /** Whether the gate has read the factors in the current request. */
  gateRead: boolean
  code: 'right' | 'wrong'
  /** Whether the session is still there when the code is confirmed. */
  session: 'alive' | 'ended'
  /** Whether another enrolment of the user was confirmed while this one waited. */
  enrolledMeanwhile: boolean
  config?: AuthConfig
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  const memory = MemoryAdapter(world.store)
  world.config ??= featureConfig({
    // This world's user signs in with the password alone: with a factor already enrolled, the
    // default policy would ask for that factor first; this world refuses the enrolment for the
    // factor itself, so its policy accepts the password.
    ...(world.enrolled ? { stepUp: stepUp({ actions: { 'enrol-second-factor': { aal: 1 as const } } }) } : {}),
    adapter: {
      ...memory,
      async listSecondFactors(userId) {
        if (world.factorStore === 'fails') throw new Error('database unavailable')
        if (world.factorStore === 'failsAfterGate') {
          if (world.gateRead) throw new Error('database unavailable')
          world.gateRead = true
        }
        return memory.listSecondFactors(userId)
      },
    },
  })
  return { ...world.config, inspect }
}

async function csrf(world: World, config: AuthConfig): Promise<string> {
  const response = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
  world.jar.store(response)
  return ((await response.json()) as { csrfToken: string }).csrfToken
}

async function post(world: World, config: AuthConfig, path: string, body: Record<string, string>): Promise<Response> {
  const response = await Auth(authRequest({ path, body: { ...body, csrfToken: await csrf(world, config) }, cookies: world.jar }), config)
  world.jar.store(response)
  return response
}

const secretOf = async (world: World, config: AuthConfig) => {
  const page = await (await Auth(authRequest({ path: '/auth/step/totp-enrolment', cookies: world.jar }), config)).text()
  return /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
}

const driver: ModelDriver<World> = {
  machine: totpEnrolmentMachine,
  samples: [
    { type: 'enrolment.start', at: T0, callbackUrl: `${ORIGIN}/account` },
    { type: 'checkFreshness.done', at: T0, output: null },
    { type: 'checkFreshness.failed', at: T0, reason: 'stale' },
    { type: 'checkFreshness.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'createTotpSecret.done', at: T0, output: { userId: 'u', secret: 's', challenge: 'c' } },
    { type: 'createTotpSecret.failed', at: T0, reason: 'alreadyEnrolled' },
    { type: 'createTotpSecret.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'enrolment.confirm', at: T0, code: '000000' },
    { type: 'confirmTotp.done', at: T0, output: { codes: [] } },
    { type: 'confirmTotp.failed', at: T0, reason: 'wrongCode' },
    { type: 'confirmTotp.failed', at: T0, reason: 'signedOut', error: 'AccessDenied' },
    { type: 'confirmTotp.failed', at: T0, reason: 'alreadyEnrolled' },
    { type: 'confirmTotp.failed', at: T0, reason: 'threw', error: 'AdapterError' },
  ],
  world: () => ({
    store: createMemoryStore(),
    jar: new CookieJar(),
    enrolled: false,
    stale: false,
    gateRead: false,
    factorStore: 'works',
    code: 'right',
    session: 'alive',
    enrolledMeanwhile: false,
  }),
  cause: (world, request) => {
    if (request[0]!.event.type === 'enrolment.start') {
      if (world.stale) return 'the proof is too old'
      if (world.factorStore === 'fails') return 'factor store fails at the gate'
      if (world.factorStore === 'failsAfterGate') return 'factor store fails at the start'
      return world.enrolled ? 'already enrolled' : 'enrolment started'
    }
    if (world.factorStore === 'fails') return 'factor store fails at the confirmation'
    if (world.session === 'ended') return 'session ended before the confirmation'
    if (world.enrolledMeanwhile) return 'a factor enrolled meanwhile'
    return world.code === 'wrong' ? 'wrong code' : 'right code'
  },
  oracle: ORACLE,
  // The errors of the request just sent: the log is emptied after each read.
  loggedErrors: (world) => takeLoggedErrors(world.config!.logger as ReturnType<typeof spyLogger>),
  arrange: {
    'checkFreshness.done': () => {},
    'checkFreshness.failed': (world, event) => {
      if (event.reason === 'stale') world.stale = true
      else world.factorStore = 'fails'
    },
    'createTotpSecret.done': () => {},
    'createTotpSecret.failed': (world, event) => {
      if (event.reason === 'alreadyEnrolled') world.enrolled = true
      else world.factorStore = 'failsAfterGate'
    },
    'confirmTotp.done': (world) => {
      world.code = 'right'
      world.factorStore = 'works'
    },
    'confirmTotp.failed': (world, event) => {
      world.code = event.reason === 'wrongCode' ? 'wrong' : 'right'
      if (event.reason === 'threw') world.factorStore = 'fails'
      if (event.reason === 'signedOut') world.session = 'ended'
      if (event.reason === 'alreadyEnrolled') world.enrolledMeanwhile = true
    },
  },
  send: {
    'enrolment.start': async (world, _event, inspect) => {
      const config = configFor(world, () => {})
      // The user signs in before the world turns against them.
      const factorStore = world.factorStore
      world.factorStore = 'works'
      await post(world, config, '/auth/callback/credentials', { username: 'alice', password: 'wonderland' })
      world.factorStore = factorStore
      if (world.enrolled) {
        const [user] = [...world.store.users.values()]
        await MemoryAdapter(world.store).createSecondFactor({ id: 'f', userId: user!.id, type: 'totp', secret: 'sealed', createdAt: new Date() })
      }
      // Eleven minutes later the sign-in's proof is older than the default step-up policy.
      if (world.stale) vi.setSystemTime((T0 + STALE) * 1000)
      world.gateRead = false
      try {
        return await post(world, configFor(world, inspect), '/auth/two-factor', { callbackUrl: '/account' })
      } finally {
        vi.setSystemTime(T0 * 1000)
      }
    },
    'enrolment.confirm': async (world, _event, inspect) => {
      const config = configFor(world, inspect)
      const code = world.code === 'right' ? totpCode(await secretOf(world, config), Math.floor(Date.now() / 1000)) : '000000'
      if (world.session === 'ended') world.jar.cookies.delete('__Secure-authjs.session-token')
      if (world.enrolledMeanwhile) {
        const [user] = [...world.store.users.values()]
        await MemoryAdapter(world.store).createSecondFactor({ id: 'meanwhile', userId: user!.id, type: 'totp', secret: 'sealed', createdAt: new Date() })
      }
      return post(world, config, '/auth/step/totp-enrolment', { code })
    },
  },
  expect: {
    reauthenticationRequired: async (response, world) => {
      expect(await response.json()).toMatchObject({ error: 'insufficient_user_authentication', url: `${ORIGIN}/auth/step/reauthenticate` })
      expect(world.store.secondFactors.size).toBe(0)
    },
    awaitingConfirmation: async (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)
      expect(response.headers.getSetCookie().some((c) => c.startsWith(`${ENROLMENT_COOKIE}=ey`))).toBe(true)
      const page = await (await Auth(authRequest({ path: '/auth/step/totp-enrolment', cookies: world.jar }), world.config!)).text()
      expect(page).toContain('<svg')
      expect(page.includes('That code is not right')).toBe(world.code === 'wrong')
    },
    enrolled: async (response, world) => {
      expect(response.status).toBe(200)
      const html = await response.text()
      expect([...html.matchAll(/<li><code>/g)]).toHaveLength(10)
      expect(html).toContain(`href="${ORIGIN}/account"`)
      expect([...world.store.secondFactors.values()].map((f) => f.type).sort()).toEqual(['backup-codes', 'totp'])
    },
    alreadyEnrolled: (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/account`)
      expect(world.store.secondFactors.size).toBe(1)
    },
    failed: (response, world) => {
      const error = world.session === 'ended' ? 'AccessDenied' : 'Configuration'
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=${error}`)
      expect([...world.store.secondFactors.values()].filter((f) => f.id !== 'f')).toEqual([])
    },
  },
}

describeModel('TOTP enrolment machine', driver)
