/**
 * The sign-in completion with an application's step at `afterFirstFactor` (before the second
 * factor), model-tested through `Auth` with `describeFlowModel` to 100% of the extended chart's
 * transitions, on every way in (credentials with JWT and database sessions, OIDC at the local
 * provider, an e-mail link, a passkey): a new and a stored user alike reach the step, which waits
 * with no session anywhere, and only then comes the second factor.
 *
 * The step is the application's own, built with `defineExtension`: a sign-in from a device the
 * user has not used asks "Was this you?"; "It was me" goes on, "It was not me" refuses.
 */
import { object } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { CONTINUE, DENY, denyBecause, stepForm, toStepPage, type FlowExtension } from 'authchart'
import { defineExtension } from 'authchart/extensions'
import { describeFlowModel, flowMachine } from 'authchart/testing'
import type { ExpectedResponse } from 'authchart/testing'
import { Auth } from '../../core/index.js'
import { authRequest, ORIGIN, SECRET } from '../fixtures/http.js'
import {
  FLOW_CLEARED,
  FLOW_SEALED,
  causeOf,
  completionDriver,
  configFor,
  ENTRY_NAMES,
  expectNoSessionYet,
  WELCOMING_ENTRY_NAMES,
  type ExtensionDriver,
  type World,
} from '../machines/completion-driver.js'
import { httpDate, JWE, reportCoverage, SECURE_ATTRIBUTES, UUID } from '../machines/harness.js'
import { SIGN_IN_COMPLETION_VERSION } from '../../machines/signin-completion.logic.js'

const T0 = Math.floor(Date.now() / 1000)
const SESSION_COOKIE = '__Secure-authjs.session-token'
const COMPLETION_COOKIE = '__Secure-authchart.flow.signin-completion'
const STEP_PAGE = `${ORIGIN}/auth/step/signin-completion`
const CONFIGURATION = `${ORIGIN}/auth/error?error=Configuration`
const DASHBOARD = `${ORIGIN}/dashboard`
const DB_DOWN = ['AdapterError', 'AdapterError']

interface DeviceWorld {
  /** Whether the device is one the user signed in from before; `checkFails` when that cannot be told. */
  device: 'known' | 'unknown' | 'checkFails'
  answered: 'nothing' | 'confirmed' | 'denied'
  /** The users the step asked about, by id (never empty once asked: the step sees who signed in). */
  asked: string[]
}

/** The world of the path being driven (paths run one after another). */
let current: DeviceWorld

/** An application's step before the second factor: "Was this you?" for a device not seen before. */
const deviceCheck: FlowExtension = defineExtension({
  id: 'device-check',
  version: '1',
  at: 'afterFirstFactor',
  initial: 'checkingDevice',
  guards: {
    isKnownDevice: ({ event }: { event: { output?: { known?: boolean } } }) => event.output?.known === true,
  },
  states: {
    checkingDevice: {
      tags: 'effect.checkDevice',
      description: 'Looks up whether the user signed in from this device before.',
      on: {
        'checkDevice.done': [{ guard: 'isKnownDevice', target: CONTINUE }, { target: 'confirmingDevice' }],
        'checkDevice.failed': DENY,
      },
    },
    confirmingDevice: {
      tags: 'awaitsRequest',
      description: 'Asks whether it was the user who signed in (POST /step/signin-completion).',
      meta: {
        outcome: toStepPage,
        step: { page: 'device-check', events: { 'device.confirm': object(), 'device.deny': object() } },
      },
      on: { 'device.confirm': CONTINUE, 'device.deny': denyBecause('not-me') },
    },
  },
  effects: {
    async checkDevice(context, ctx) {
      const userId = String((context.user as { id?: unknown } | null)?.id ?? '')
      current.asked.push(userId)
      if (current.device === 'checkFails') {
        ctx.logger.error(new Error('device store unavailable'))
        return { type: 'checkDevice.failed', reason: 'threw', at: ctx.at }
      }
      return { type: 'checkDevice.done', output: { known: current.device === 'known' }, at: ctx.at }
    },
  },
  denials: { 'not-me': 'You said it was not you: nobody is signed in. Change your password.' },
  pages: {
    'device-check': (view) => ({
      title: 'Was this you?',
      html:
        `<h1>Was this you?</h1><p>Someone signed in as ${String(view.user?.email ?? '')} from a new device.</p>` +
        stepForm(view, '', 'It was me', 'device.confirm') +
        stepForm(view, '', 'It was not me', 'device.deny', 'secondary'),
    }),
  },
})

const deviceOf = (world: World) => world.extension as unknown as DeviceWorld

async function answer(world: World, event: 'device.confirm' | 'device.deny', inspect: Parameters<typeof configFor>[1]) {
  const config = configFor(world, inspect, [deviceCheck])
  const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
  world.jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const response = await Auth(authRequest({ path: '/auth/step/signin-completion', body: { csrfToken, event }, cookies: world.jar }), config)
  world.jar.store(response)
  return response
}

/** What the core decided before the step: these ends come before `afterFirstFactor`. */
const BEFORE_THE_STEP = ['signIn refuses', 'signIn redirects', 'e-mail address taken', 'storing the user fails']
/** A cause past "It was me": the core's own words after the step, in a request that resumed the flow. */
const CONFIRMED = 'device confirmed, '

const ORACLE: Record<string, ExpectedResponse | ((world: World) => ExpectedResponse)> = {}
for (const entry of ENTRY_NAMES) {
  const ended = (location: string, errors: string[], resumed: boolean): ExpectedResponse => ({
    status: 302,
    location,
    cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: resumed ? FLOW_CLEARED : null },
    errors,
  })
  const signedIn = (location: string) => (world: World): ExpectedResponse => ({
    status: 302,
    location,
    cookies: {
      [SESSION_COOKIE]: {
        value: world.policy.strategy === 'database' ? UUID : JWE,
        attributes: { ...SECURE_ATTRIBUTES, expires: httpDate(T0 + 2_592_000) },
      },
      [COMPLETION_COOKIE]: FLOW_CLEARED,
    },
    errors: [],
  })
  const waiting: ExpectedResponse = {
    status: 302,
    location: STEP_PAGE,
    cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: FLOW_SEALED },
    errors: [],
  }
  Object.assign(ORACLE, {
    [`confirmingDevice ← ${entry}: device to confirm`]: waiting,
    [`denied ← ${entry}: device check fails`]: ended(`${ORIGIN}/auth/error?error=AccessDenied`, ['Error'], false),
    // "It was not me" says so on the error page.
    [`denied ← ${entry}: device denied`]: ended(`${ORIGIN}/auth/error?error=AccessDenied&code=device-check.not-me`, [], true),
    // Past the step, the second factor is asked as ever.
    [`awaitingSecondFactor ← ${entry}: ${CONFIRMED}second factor enrolled`]: waiting,
    [`failed ← ${entry}: ${CONFIRMED}factor lookup fails`]: ended(CONFIGURATION, DB_DOWN, true),
    [`failed ← ${entry}: ${CONFIRMED}jwt callback throws`]: ended(CONFIGURATION, ['CallbackRouteError'], true),
    [`failed ← ${entry}: ${CONFIRMED}session store fails`]: ended(CONFIGURATION, DB_DOWN, true),
    [`signedIn ← ${entry}: ${CONFIRMED}jwt callback revokes`]: ended(DASHBOARD, [], true),
    [`signedIn ← ${entry}: ${CONFIRMED}new user signed in`]: signedIn(DASHBOARD),
    [`signedIn ← ${entry}: ${CONFIRMED}returning user signed in`]: signedIn(DASHBOARD),
  })
}
for (const entry of WELCOMING_ENTRY_NAMES) {
  ORACLE[`welcomedNewUser ← ${entry}: ${CONFIRMED}new user signed in`] = (world) => ({
    ...(ORACLE[`signedIn ← ${entry}: ${CONFIRMED}new user signed in`] as (w: World) => ExpectedResponse)(world),
    location: `/welcome-new?callbackUrl=${encodeURIComponent(DASHBOARD)}`,
  })
}

/** The core's own expectations of the states the extension's driver also checks. */
const core = completionDriver().expect

const extension: ExtensionDriver = {
  extensions: [deviceCheck],
  cause: (world, request) => {
    const own = deviceOf(world)
    const entry = `${world.firstFactor} ${world.policy.strategy}`
    const first = request[0]!.event.type
    const decided = causeOf(world, request).slice(entry.length + 2)
    if (first === 'device.deny') return `${entry}: device denied`
    if (first === 'device.confirm') return `${entry}: ${CONFIRMED}${decided}`
    if (first !== 'signin.verified' || BEFORE_THE_STEP.includes(decided)) return undefined
    // Every user the first factor verified, new or found in the store, meets the step here.
    if (own.device === 'checkFails') return `${entry}: device check fails`
    if (own.device === 'unknown') return `${entry}: device to confirm`
    return undefined
  },
  oracle: ORACLE,
  samples: [
    { type: 'checkDevice.done', at: T0, output: { known: true } },
    { type: 'checkDevice.done', at: T0, output: { known: false } },
    { type: 'checkDevice.failed', at: T0, reason: 'threw' },
    { type: 'device.confirm', at: T0 },
    { type: 'device.deny', at: T0 },
  ],
  world: () => {
    current = { device: 'unknown', answered: 'nothing', asked: [] }
    return current as unknown as Record<string, unknown>
  },
  arrange: {
    'checkDevice.done': (world, event) => {
      deviceOf(world).device = event.output.known ? 'known' : 'unknown'
    },
    'checkDevice.failed': (world) => {
      deviceOf(world).device = 'checkFails'
    },
  },
  send: {
    'device.confirm': async (world, _event, inspect) => {
      deviceOf(world).answered = 'confirmed'
      return answer(world, 'device.confirm', inspect)
    },
    'device.deny': async (world, _event, inspect) => {
      deviceOf(world).answered = 'denied'
      return answer(world, 'device.deny', inspect)
    },
  },
  expect: {
    confirmingDevice: async (response, world) => {
      const config = configFor(world, () => {}, [deviceCheck])
      await expectNoSessionYet(response, world, config)
      // Before the second factor: the step saw the verified user, and no code was asked yet.
      expect(deviceOf(world).asked).toHaveLength(1)
      expect(deviceOf(world).asked[0]).not.toBe('')
      const page = await (await Auth(authRequest({ path: '/auth/step/signin-completion', cookies: world.jar }), config)).text()
      expect(page).toContain('<h1>Was this you?</h1>')
      expect(page).toContain('value="device.deny"')
      expect(page).not.toContain('Two-step verification')
    },
    denied: async (response, world) => {
      const own = deviceOf(world)
      if (own.answered !== 'denied' && own.device !== 'checkFails') return core.denied!(response, world)
      expect(response.headers.get('location')).toBe(
        `${ORIGIN}/auth/error?error=AccessDenied${own.answered === 'denied' ? '&code=device-check.not-me' : ''}`,
      )
      // Refused by the step: the user may be stored (found or created before it), but never signed in.
      expect(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
      expect(world.store.sessions.size).toBe(0)
      expect(world.events.signIn).not.toHaveBeenCalled()
    },
  },
}

const machine = flowMachine({ secret: SECRET, providers: [], extensions: [deviceCheck] }, 'signin-completion')

describe('the chart with a step after the first factor', () => {
  it('enters the step from the signIn callback and from the stored user, and leaves it for the second-factor gate', () => {
    expect(machine.version).toBe(`${SIGN_IN_COMPLETION_VERSION}+device-check@1`)
    const targets = (state: string, event: string) =>
      (machine.root.states[state]!.transitions.get(event) ?? []).flatMap((t) => (t.target ?? []).map((n) => n.key))
    expect(targets('checkingSignIn', 'checkSignIn.done')).toContain('checkingDevice')
    expect(targets('checkingSignIn', 'checkSignIn.done')).not.toContain('checkingSecondFactor')
    expect(targets('storingUser', 'storeUser.done')).toEqual(['checkingDevice'])
    expect(targets('confirmingDevice', 'device.confirm')).toEqual(['checkingSecondFactor'])
  })
})

describeFlowModel('sign-in completion with a step after the first factor', completionDriver(machine, extension), { describe, it }, {
  onCoverage: (result) => reportCoverage({ ...result, machine: `${result.machine} + device check after the first factor` }),
})
