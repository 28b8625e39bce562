/**
 * The test kit on an application's extended flow: the sign-in completion with the terms step
 * inserted, model-tested through `Auth` with `describeFlowModel` (`authchart/testing`) exactly as
 * an application would, to 100% of the extended chart's transitions — the core's and the
 * extension's.
 */
import { describe, expect, it } from 'vitest'
import { termsExtension } from 'authchart/extensions/terms'
import { describeFlowModel, flowMachine } from 'authchart/testing'
import { Auth } from '../../core/index.js'
import { authRequest, ORIGIN, SECRET } from '../fixtures/http.js'
import type { ExpectedResponse } from 'authchart/testing'
import {
  FLOW_CLEARED,
  FLOW_SEALED,
  causeOf,
  completionDriver,
  expectNoSessionYet,
  ENTRY_NAMES,
  WELCOMING_ENTRY_NAMES,
  configFor,
  expectNothingIssued,
  type ExtensionDriver,
  type World,
} from '../machines/completion-driver.js'
import { httpDate, JWE, reportCoverage, SECURE_ATTRIBUTES, UUID } from '../machines/harness.js'
import { SIGN_IN_COMPLETION_VERSION } from '../../machines/signin-completion.logic.js'

const T0 = Math.floor(Date.now() / 1000)
const SESSION_COOKIE = '__Secure-authjs.session-token'

interface TermsWorld {
  terms: 'accepted' | 'notAccepted'
  recording: 'works' | 'fails'
  answered: 'nothing' | 'accepted' | 'declined'
  recorded: string[]
}

/** The world of the path being driven (paths run one after another). */
let current: TermsWorld
const terms = termsExtension({
  version: '2026-01',
  html: '<p>Be excellent to each other.</p>',
  acceptedVersion: () => (current.terms === 'accepted' ? '2026-01' : null),
  recordAcceptance: (userId) => {
    if (current.recording === 'fails') throw new Error('terms store unavailable')
    current.recorded.push(userId)
  },
})

const termsOf = (world: World) => world.extension as unknown as TermsWorld

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

const COMPLETION_COOKIE = '__Secure-authchart.flow.signin-completion'

/** What the ends the terms step decides must answer, per way in. */
const ORACLE: Record<string, ExpectedResponse | ((world: World) => ExpectedResponse)> = {}
for (const entry of ENTRY_NAMES) {
  const refused = (errors: string[], code = ''): ExpectedResponse => ({
    status: 302,
    location: `${ORIGIN}/auth/error?error=AccessDenied${code}`,
    cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: FLOW_CLEARED },
    errors,
  })
  Object.assign(ORACLE, {
    [`awaitingTerms ← ${entry}: terms to accept`]: {
      status: 302,
      location: `${ORIGIN}/auth/step/signin-completion`,
      cookies: { [SESSION_COOKIE]: null, [COMPLETION_COOKIE]: FLOW_SEALED },
      errors: [],
    },
    // A decline says so: the error page names it instead of "You do not have permission".
    [`denied ← ${entry}: terms declined`]: refused([], '&code=terms.declined'),
    [`denied ← ${entry}: recording the acceptance fails`]: refused(['Error']),
    [`signedIn ← ${entry}: terms accepted`]: (world: World): ExpectedResponse => ({
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
    }),
  })
}
// A first sign-in with a newUser page goes there once the terms are accepted.
for (const entry of WELCOMING_ENTRY_NAMES) {
  ORACLE[`welcomedNewUser ← ${entry}: terms accepted`] = (world) => ({
    ...(ORACLE[`signedIn ← ${entry}: terms accepted`] as (w: World) => ExpectedResponse)(world),
    location: `/welcome-new?callbackUrl=${encodeURIComponent(`${ORIGIN}/dashboard`)}`,
  })
}

const extension: ExtensionDriver = {
  extensions: [terms],
  cause: (world, request) => {
    const own = termsOf(world)
    const entry = `${world.firstFactor} ${world.policy.strategy}`
    const answering = request[0]!.event.type.startsWith('terms.')
    if (answering && own.answered === 'declined') return `${entry}: terms declined`
    if (answering && own.recording === 'fails') return `${entry}: recording the acceptance fails`
    if (answering) return `${entry}: terms accepted`
    // The first-factor or code request: the terms stop it, when not accepted yet, where it would
    // otherwise have signed the user in.
    const reachesTheSession = causeOf(world, request).endsWith('signed in') || causeOf(world, request).endsWith('with a code')
    return reachesTheSession && own.terms === 'notAccepted' ? `${entry}: terms to accept` : undefined
  },
  oracle: ORACLE,
  samples: [
    { type: 'checkTerms.done', at: T0, output: { accepted: true } },
    { type: 'checkTerms.done', at: T0, output: { accepted: false } },
    { type: 'terms.accept', at: T0 },
    { type: 'terms.decline', at: T0 },
    { type: 'recordTerms.done', at: T0, output: null },
    { type: 'recordTerms.failed', at: T0, reason: 'threw' },
  ],
  world: () => {
    current = { terms: 'notAccepted', recording: 'works', answered: 'nothing', recorded: [] }
    return current as unknown as Record<string, unknown>
  },
  arrange: {
    'checkTerms.done': (world, event) => {
      termsOf(world).terms = event.output.accepted ? 'accepted' : 'notAccepted'
    },
    'recordTerms.done': (world) => {
      termsOf(world).recording = 'works'
    },
    'recordTerms.failed': (world) => {
      termsOf(world).recording = 'fails'
    },
  },
  send: {
    'terms.accept': async (world, _event, inspect) => {
      termsOf(world).answered = 'accepted'
      return answerTerms(world, 'terms.accept', inspect)
    },
    'terms.decline': async (world, _event, inspect) => {
      termsOf(world).answered = 'declined'
      return answerTerms(world, 'terms.decline', inspect)
    },
  },
  expect: {
    awaitingTerms: async (response, world) => {
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
      await expectNoSessionYet(response, world, configFor(world, () => {}, [terms]))
      const page = await Auth(authRequest({ path: '/auth/step/signin-completion', cookies: world.jar }), configFor(world, () => {}, [terms]))
      const html = await page.text()
      expect(html).toContain('Be excellent to each other.')
      expect(html).toContain('value="terms.accept"')
    },
    denied: (response, world) => {
      const own = termsOf(world)
      expect(response.headers.get('location')).toBe(
        `${ORIGIN}/auth/error?error=AccessDenied${own.answered === 'declined' ? '&code=terms.declined' : ''}`,
      )
      if (own.answered === 'declined' || own.recording === 'fails') {
        // Refused by the terms step: the user may be stored, but no session exists.
        expect(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
        expect(world.store.sessions.size).toBe(0)
        expect(world.events.signIn).not.toHaveBeenCalled()
      } else {
        expectNothingIssued(response, world)
      }
    },
  },
}

const machine = flowMachine({ secret: SECRET, providers: [], extensions: [terms] }, 'signin-completion')

describe('the extended chart', () => {
  it('is the built-in one with the terms states inserted, under a version of its own', () => {
    expect(machine.version).toBe(`${SIGN_IN_COMPLETION_VERSION}+terms@1`)
    expect(Object.keys(machine.root.states)).toEqual(
      expect.arrayContaining(['checkingSecondFactor', 'checkingTerms', 'awaitingTerms', 'recordingAcceptance']),
    )
  })
})

describeFlowModel('sign-in completion with the terms step', completionDriver(machine, extension), { describe, it }, {
  onCoverage: (result) => reportCoverage({ ...result, machine: `${result.machine} + terms` }),
})
