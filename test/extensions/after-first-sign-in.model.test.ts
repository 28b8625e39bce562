/**
 * The sign-in completion with a step at `afterFirstSignIn` (the terms step), model-tested through
 * `Auth` to 100% of the extended chart's transitions: the lookup of the user's completed steps
 * (pending, completed, the store down), the step, and the record of its completion (stored, the
 * store down), on every way in.
 */
import { describe, expect, it } from 'vitest'
import { termsExtension } from 'authchart/extensions/terms'
import { describeFlowModel, flowMachine } from 'authchart/testing'
import type { ExpectedResponse } from 'authchart/testing'
import type { AdapterCompletedStep } from '../../core/adapters.js'
import { Auth } from '../../core/index.js'
import { authRequest, ORIGIN, SECRET } from '../fixtures/http.js'
import {
  FLOW_CLEARED,
  FLOW_SEALED,
  causeOf,
  completionDriver,
  expectNoSessionYet,
  ENTRY_NAMES,
  WELCOMING_ENTRY_NAMES,
  configFor,
  type ExtensionDriver,
  type World,
} from '../machines/completion-driver.js'
import { httpDate, JWE, reportCoverage, SECURE_ATTRIBUTES, UUID } from '../machines/harness.js'
import { SIGN_IN_COMPLETION_VERSION } from '../../machines/signin-completion.logic.js'

const T0 = Math.floor(Date.now() / 1000)
const SESSION_COOKIE = '__Secure-authjs.session-token'
const COMPLETION_COOKIE = '__Secure-authchart.flow.signin-completion'
const TERMS_VERSION = '2026-01'

interface StepWorld {
  terms: 'accepted' | 'notAccepted'
  recording: 'works' | 'fails'
  answered: 'nothing' | 'accepted' | 'declined'
  /** Whether the user completed the step at its version before. */
  completed: boolean
  /** The completed-steps store: works, or fails on reading or on recording. */
  steps: 'works' | 'readFails' | 'recordFails'
  recorded: AdapterCompletedStep[]
  adapter: {
    getCompletedSteps: (userId: string) => Promise<AdapterCompletedStep[]>
    recordCompletedStep: (userId: string, stepId: string, version: string) => Promise<void>
  }
}

/** The world of the path being driven (paths run one after another). */
let current: StepWorld
const terms = termsExtension({
  version: TERMS_VERSION,
  html: '<p>Be excellent to each other.</p>',
  acceptedVersion: () => (current.terms === 'accepted' ? TERMS_VERSION : null),
  recordAcceptance: () => {
    if (current.recording === 'fails') throw new Error('terms store unavailable')
  },
  at: 'afterFirstSignIn',
})

const stepOf = (world: World) => world.extension as unknown as StepWorld

async function answerTerms(world: World, event: 'terms.accept' | 'terms.decline', inspect: Parameters<typeof configFor>[1]) {
  const config = configFor(world, inspect, [terms])
  const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
  world.jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const response = await Auth(
    authRequest({ path: '/auth/step/signin-completion', body: { csrfToken, event }, cookies: world.jar }),
    config,
  )
  world.jar.store(response)
  return response
}

const DB_DOWN = ['AdapterError', 'AdapterError']
const CONFIGURATION = `${ORIGIN}/auth/error?error=Configuration`
/** A request that resumed the resting completion (a code, an answer) clears its cookie at the end. */
const RESUMED = ' after a step'

const ORACLE: Record<string, ExpectedResponse | ((world: World) => ExpectedResponse)> = {}
for (const entry of ENTRY_NAMES) {
  const ended = (location: string, errors: string[], resumed: boolean): ExpectedResponse => ({
    status: 302,
    location,
    cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: resumed ? FLOW_CLEARED : null },
    errors,
  })
  const signedIn = (world: World): ExpectedResponse => ({
    status: 302,
    location: `${ORIGIN}/dashboard`,
    cookies: {
      [SESSION_COOKIE]: {
        value: world.policy.strategy === 'database' ? UUID : JWE,
        attributes: { ...SECURE_ATTRIBUTES, expires: httpDate(T0 + 2_592_000) },
      },
      [COMPLETION_COOKIE]: FLOW_CLEARED,
    },
    errors: [],
  })
  Object.assign(ORACLE, {
    [`awaitingTerms ← ${entry}: terms to accept`]: {
      status: 302,
      location: `${ORIGIN}/auth/step/signin-completion`,
      cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: FLOW_SEALED },
      errors: [],
    },
    // A decline says so: the error page names it instead of "You do not have permission".
    [`denied ← ${entry}: terms declined`]: ended(`${ORIGIN}/auth/error?error=AccessDenied&code=terms.declined`, [], true),
    [`denied ← ${entry}: recording the acceptance fails`]: ended(`${ORIGIN}/auth/error?error=AccessDenied`, ['Error'], true),
    [`failed ← ${entry}: completed steps cannot be read`]: ended(CONFIGURATION, DB_DOWN, false),
    [`failed ← ${entry}: completed steps cannot be read${RESUMED}`]: ended(CONFIGURATION, DB_DOWN, true),
    [`failed ← ${entry}: the completed step cannot be recorded`]: ended(CONFIGURATION, DB_DOWN, false),
    [`failed ← ${entry}: the completed step cannot be recorded${RESUMED}`]: ended(CONFIGURATION, DB_DOWN, true),
    [`signedIn ← ${entry}: terms accepted`]: signedIn,
  })
}
// A first sign-in with a newUser page goes there once the terms are accepted.
for (const entry of WELCOMING_ENTRY_NAMES) {
  ORACLE[`welcomedNewUser ← ${entry}: terms accepted`] = (world) => ({
    ...(ORACLE[`signedIn ← ${entry}: terms accepted`] as (w: World) => ExpectedResponse)(world),
    location: `/welcome-new?callbackUrl=${encodeURIComponent(`${ORIGIN}/dashboard`)}`,
  })
}

/** The core's own expectations of the states the extension's driver also checks. */
const core = completionDriver().expect

const extension: ExtensionDriver = {
  extensions: [terms],
  cause: (world, request) => {
    const own = stepOf(world)
    const entry = `${world.firstFactor} ${world.policy.strategy}`
    const resumed = request[0]!.event.type === 'signin.verified' ? '' : RESUMED
    if (request[0]!.event.type.startsWith('terms.')) {
      if (own.answered === 'declined') return `${entry}: terms declined`
      if (own.recording === 'fails') return `${entry}: recording the acceptance fails`
      if (own.steps === 'recordFails') return `${entry}: the completed step cannot be recorded${resumed}`
      return `${entry}: terms accepted`
    }
    // The first-factor or code request reaches the step where it would otherwise have signed the
    // user in; a user who completed it goes on to the session.
    const core = causeOf(world, request)
    if (!core.endsWith('signed in') && !core.endsWith('with a code')) return undefined
    if (own.steps === 'readFails') return `${entry}: completed steps cannot be read${resumed}`
    if (own.completed) return undefined
    if (own.terms === 'notAccepted') return `${entry}: terms to accept`
    if (own.steps === 'recordFails') return `${entry}: the completed step cannot be recorded${resumed}`
    return undefined
  },
  oracle: ORACLE,
  samples: [
    { type: 'findCompletedStep.done', at: T0, output: { pending: true } },
    { type: 'findCompletedStep.done', at: T0, output: { pending: false } },
    { type: 'findCompletedStep.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'recordCompletedStep.done', at: T0, output: null },
    { type: 'recordCompletedStep.failed', at: T0, reason: 'threw', error: 'AdapterError' },
    { type: 'checkTerms.done', at: T0, output: { accepted: true } },
    { type: 'checkTerms.done', at: T0, output: { accepted: false } },
    { type: 'terms.accept', at: T0 },
    { type: 'terms.decline', at: T0 },
    { type: 'recordTerms.done', at: T0, output: null },
    { type: 'recordTerms.failed', at: T0, reason: 'threw' },
  ],
  world: () => {
    const world: StepWorld = {
      terms: 'notAccepted',
      recording: 'works',
      answered: 'nothing',
      completed: false,
      steps: 'works',
      recorded: [],
      adapter: {
        async getCompletedSteps() {
          if (world.steps === 'readFails') throw new Error('database unavailable')
          return world.completed ? [{ stepId: 'terms', version: TERMS_VERSION }] : []
        },
        async recordCompletedStep(_userId, stepId, version) {
          if (world.steps === 'recordFails') throw new Error('database unavailable')
          world.recorded.push({ stepId, version })
        },
      },
    }
    current = world
    return world as unknown as Record<string, unknown>
  },
  arrange: {
    'findCompletedStep.done': (world, event) => {
      stepOf(world).completed = !event.output.pending
    },
    'findCompletedStep.failed': (world) => {
      stepOf(world).steps = 'readFails'
    },
    'recordCompletedStep.done': (world) => {
      stepOf(world).steps = 'works'
    },
    'recordCompletedStep.failed': (world) => {
      stepOf(world).steps = 'recordFails'
    },
    'checkTerms.done': (world, event) => {
      stepOf(world).terms = event.output.accepted ? 'accepted' : 'notAccepted'
    },
    'recordTerms.done': (world) => {
      stepOf(world).recording = 'works'
    },
    'recordTerms.failed': (world) => {
      stepOf(world).recording = 'fails'
    },
  },
  send: {
    'terms.accept': async (world, _event, inspect) => {
      stepOf(world).answered = 'accepted'
      return answerTerms(world, 'terms.accept', inspect)
    },
    'terms.decline': async (world, _event, inspect) => {
      stepOf(world).answered = 'declined'
      return answerTerms(world, 'terms.decline', inspect)
    },
  },
  expect: {
    awaitingTerms: async (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
      await expectNoSessionYet(response, world, configFor(world, () => {}, [terms]))
      const page = await Auth(authRequest({ path: '/auth/step/signin-completion', cookies: world.jar }), configFor(world, () => {}, [terms]))
      expect(await page.text()).toContain('value="terms.accept"')
    },
    denied: (response, world) => {
      expect(response.headers.get('location')).toBe(
        `${ORIGIN}/auth/error?error=AccessDenied${stepOf(world).answered === 'declined' ? '&code=terms.declined' : ''}`,
      )
      expect(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
      expect(world.store.sessions.size).toBe(0)
      // Declining is not completing: nothing was recorded.
      expect(stepOf(world).recorded).toEqual([])
    },
    signedIn: async (response, world) => {
      await core.signedIn!(response, world)
      expectCompletionOnRecord(world)
    },
    welcomedNewUser: async (response, world) => {
      await core.welcomedNewUser!(response, world)
      expectCompletionOnRecord(world)
    },
  },
}

/** Signed in past the step: its completion at this version is on record (or was already). */
function expectCompletionOnRecord(world: World): void {
  const own = stepOf(world)
  expect(own.completed || own.recorded.some((step) => step.stepId === 'terms' && step.version === TERMS_VERSION)).toBe(true)
}

const machine = flowMachine({ secret: SECRET, providers: [], extensions: [terms] }, 'signin-completion')

describe('the chart with a step after the first sign-in', () => {
  it('looks up and records the completion around the step, under a version of its own', () => {
    expect(machine.version).toBe(`${SIGN_IN_COMPLETION_VERSION}+terms@1`)
    expect(Object.keys(machine.root.states)).toEqual(
      expect.arrayContaining(['checkingFirstSignInStep', 'checkingTerms', 'awaitingTerms', 'recordingAcceptance', 'recordingFirstSignInStep']),
    )
  })
})

describeFlowModel('sign-in completion with the terms step after the first sign-in', completionDriver(machine, extension), { describe, it }, {
  onCoverage: (result) => reportCoverage({ ...result, machine: `${result.machine} + terms after the first sign-in` }),
})
