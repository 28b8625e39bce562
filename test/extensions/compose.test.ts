/**
 * Extensions an application developer can guess (issue 27 item 5): several at one point run in
 * the order of the array; a waiting state needs no `meta.outcome` (it shows its step page); two
 * extensions that name the same guard, action, field, effect, event or page are refused at load,
 * naming both, instead of one silently replacing the other.
 */
import { nullable, object, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { assign } from 'xstate'
import { flowMachine } from 'authchart/testing'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig } from '../../core/index.js'
import { CONTINUE, type ExtensionEnv, type ExtensionPoint, type FlowExtension } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { stepForm } from '../../core/pages/steps.js'
import type { AuthConfig } from '../../core/types.js'
import { flowMachines } from '../../machines/index.js'
import { ALICE, Client, credentialsProvider, ORIGIN, SECRET, spyLogger, featureConfig } from '../fixtures/http.js'
import { refusal } from './helpers.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'
import Passkey from '../../providers/passkey.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const STEP_PAGE = `${ORIGIN}/auth/step/signin-completion`

/** An extension at `at` whose one effect writes its id into `ran` and continues. */
function noting(id: string, at: ExtensionPoint, ran: string[]): FlowExtension {
  const effect = `note${id}`
  return defineExtension({
    id,
    version: '1',
    at,
    initial: `noting${id}`,
    states: { [`noting${id}`]: { tags: `effect.${effect}`, on: { [`${effect}.done`]: CONTINUE } } },
    effects: {
      [effect]: async (_context: unknown, env: ExtensionEnv) => {
        ran.push(id)
        return { type: `${effect}.done`, output: null, at: env.at }
      },
    },
  })
}

describe('several extensions at one point', () => {
  it.each(['afterFirstFactor', 'beforeSession'] as const)('run in the order of the array at %s, then the sign-in goes on', async (at) => {
    const ran: string[] = []
    const client = new Client(featureConfig({ extensions: [noting('first', at, ran), noting('second', at, ran), noting('third', at, ran)] }))
    const response = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(ran).toEqual(['first', 'second', 'third'])
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()

    ran.length = 0
    await new Client(featureConfig({ extensions: [noting('third', at, ran), noting('first', at, ran)] })).signIn({ username: 'alice', password: 'wonderland' })
    expect(ran).toEqual(['third', 'first'])
  })

  it('run in order across the three points, each point in array order', async () => {
    const ran: string[] = []
    const extensions = [
      noting('late', 'beforeSession', ran),
      noting('early', 'afterFirstFactor', ran),
      noting('once', 'afterFirstSignIn', ran),
      noting('later', 'beforeSession', ran),
      noting('twice', 'afterFirstSignIn', ran),
    ]
    const client = new Client(featureConfig({ extensions }))
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(ran).toEqual(['early', 'once', 'twice', 'late', 'later'])
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('at afterFirstSignIn each runs until its own completion is recorded, and then no more', async () => {
    const ran: string[] = []
    const adapter = MemoryAdapter(createMemoryStore())
    const config = {
      secret: SECRET,
      secondFactor: totp(),
      stepUp: stepUp(),
      trustHost: true,
      logger: spyLogger(),
      adapter,
      session: { strategy: 'jwt' },
      providers: [credentialsProvider()],
      extensions: [noting('terms', 'afterFirstSignIn', ran), noting('profile', 'afterFirstSignIn', ran)],
    } as AuthConfig
    await new Client(config).signIn({ username: 'alice', password: 'wonderland' })
    expect(ran).toEqual(['terms', 'profile'])
    expect(await adapter.getCompletedSteps!(ALICE.id)).toEqual([
      { stepId: 'terms', version: '1' },
      { stepId: 'profile', version: '1' },
    ])

    ran.length = 0
    const again = new Client(config)
    await again.signIn({ username: 'alice', password: 'wonderland' })
    expect(ran).toEqual([])
    expect(again.jar.get(SESSION_COOKIE)).toBeDefined()
  })
})

describe('a waiting state without meta.outcome', () => {
  it('shows its step page and goes on when the user answers', async () => {
    const asking = defineExtension({
      id: 'nickname',
      version: '1',
      at: 'beforeSession',
      initial: 'askingNickname',
      context: { schema: { nickname: nullable(string()) }, initial: { nickname: null } },
      states: {
        askingNickname: {
          tags: 'awaitsRequest',
          meta: { step: { page: 'nickname', events: { 'nickname.submit': object({ nickname: string() }) } } },
          on: { 'nickname.submit': { target: CONTINUE, actions: 'rememberNickname' } },
        },
      },
      actions: { rememberNickname: assign({ nickname: ({ event }: { event: { nickname?: string } }) => event.nickname ?? null }) },
      pages: { nickname: (view) => ({ title: 'Nickname', html: stepForm(view, '<input name="nickname">', 'Go on') }) },
    })
    const client = new Client(featureConfig({ extensions: [asking] }))
    const signIn = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(signIn.headers.get('location')).toBe(STEP_PAGE)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    const page = await client.send({ path: '/step/signin-completion' })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('name="nickname"')
    const answered = await client.send({
      path: '/step/signin-completion',
      body: { csrfToken: await client.csrfToken(), event: 'nickname.submit', nickname: 'al' },
    })
    expect(answered.headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })
})

describe('names two extensions share are refused at load, naming both', () => {
  const base = (id: string, overrides: Partial<FlowExtension> = {}): FlowExtension =>
    defineExtension({
      id,
      version: '1',
      at: 'beforeSession',
      initial: `${id}State`,
      states: { [`${id}State`]: { tags: `effect.${id}Effect`, on: { [`${id}Effect.done`]: CONTINUE } } },
      effects: { [`${id}Effect`]: async (_context: unknown, env: ExtensionEnv) => ({ type: `${id}Effect.done`, output: null, at: env.at }) },
      ...overrides,
    })
  const guard = { isReady: () => true }
  const field = { schema: { shared: nullable(string()) }, initial: { shared: null } }
  const waiting = (id: string, page: string, event: string) => ({
    [`${id}State`]: { tags: 'awaitsRequest', meta: { step: { page, events: { [event]: object() } } }, on: { [event]: CONTINUE } },
  })
  const page = () => ({ title: 't', html: '' })

  it.each([
    ['the id', base('a'), base('a', { at: 'afterFirstFactor', states: { other: { tags: 'effect.aEffect', on: { 'aEffect.done': CONTINUE } } }, initial: 'other' }), 'two extensions have the id "a"'],
    ['a guard', base('a', { guards: guard }), base('b', { guards: guard }), 'extensions "a" and "b" both name the guard "isReady"'],
    ['an action', base('a', { actions: { note: assign({}) } }), base('b', { actions: { note: assign({}) } }), 'extensions "a" and "b" both name the action "note"'],
    ['a context field', base('a', { context: field }), base('b', { context: field }), 'extensions "a" and "b" both name the context field "shared"'],
    ['an effect', base('a'), base('b', { states: { bState: { tags: 'effect.aEffect', on: { 'aEffect.done': CONTINUE } } } }), 'extensions "a" and "b" both name the effect "aEffect"'],
    ['an effect only implemented', base('a', { effects: { aEffect: async () => ({ type: 'aEffect.done' }), spare: async () => ({ type: 'x' }) } }), base('b', { effects: { bEffect: async () => ({ type: 'bEffect.done' }), spare: async () => ({ type: 'x' }) } }), 'extensions "a" and "b" both name the effect "spare"'],
    ['a step event', base('a', { states: waiting('a', 'pa', 'go.on'), effects: {}, pages: { pa: page } }), base('b', { states: waiting('b', 'pb', 'go.on'), effects: {}, pages: { pb: page } }), 'extensions "a" and "b" both name the event "go.on"'],
    ['a page', base('a', { states: waiting('a', 'pa', 'a.go'), effects: {}, pages: { pa: page } }), base('b', { states: waiting('b', 'pb', 'b.go'), effects: {}, pages: { pa: page, pb: page } }), 'extensions "a" and "b" both name the page "pa"'],
  ])('%s', (_name, first, second, message) => {
    expect(refusal([first, second])).toContain(message)
  })

  it.each([
    ['a core event', { aState: { tags: 'effect.aEffect', on: { 'aEffect.done': CONTINUE, 'checkSignIn.done': CONTINUE } } }, 'extension "a": state "aState" takes the sign-in completion\'s event "checkSignIn.done"'],
    ['the second factor\'s step event', { aState: { tags: 'awaitsRequest', meta: { step: { page: 'second-factor', events: { 'secondFactor.submit': object() } } }, on: { 'secondFactor.submit': CONTINUE } } }, 'takes the sign-in completion\'s event "secondFactor.submit"'],
  ])('an extension taking %s is refused by name', (_name, states, message) => {
    expect(refusal([base('a', { states: states as never })])).toContain(message)
  })

  it('the same names in one extension, or none shared, are accepted', () => {
    expect(() => assertConfig(featureConfig({ extensions: [base('a', { guards: guard }), base('b')] }))).not.toThrow()
  })
})

describe('the test kit\'s flowMachine', () => {
  const FLOWS = ['session', 'credentials-signin', 'oauth-signin', 'email-signin', 'webauthn-signin', 'signin-completion', 'totp-enrolment', 'logout', 'reauthenticate']

  // Every flow: the features' too (the second factor, step-up, and WebAuthn with its preset).
  const everyFeature = () =>
    featureConfig({
      adapter: MemoryAdapter(createMemoryStore()),
      experimental: { enableWebAuthn: true },
      providers: [credentialsProvider(), Passkey()],
    })

  it.each(FLOWS)('returns the chart Auth runs for "%s"', (id) => {
    expect(flowMachine(everyFeature(), id).id).toBe(id)
  })

  it('knows every built-in flow, and says which when asked for another', () => {
    expect(flowMachines.map((machine) => machine.id).sort()).toEqual([...FLOWS].sort())
    const config = everyFeature()
    const configured = assertConfig(config).flows.map((flow) => flow.id)
    expect([...configured].sort()).toEqual([...FLOWS].sort())
    expect(() => flowMachine(config, 'magic-number')).toThrow(`no flow "magic-number": one of ${configured.join(', ')}`)
  })

  it('returns the sign-in completion with the config\'s extensions, chained', () => {
    const ran: string[] = []
    const machine = flowMachine(featureConfig({ extensions: [noting('one', 'beforeSession', ran), noting('two', 'beforeSession', ran)] }), 'signin-completion')
    expect(Object.keys(machine.states)).toEqual(expect.arrayContaining(['notingone', 'notingtwo']))
    expect(machine.states.notingone!.on['noteone.done']![0]!.target![0]!.key).toBe('notingtwo')
    expect(machine.states.notingtwo!.on['notetwo.done']![0]!.target![0]!.key).toBe('preparingSession')
  })
})

describe('the extended sign-in completion', () => {
  it('is built once, when the config is loaded: requests run that build', async () => {
    const ran: string[] = []
    const extension = noting('counted', 'beforeSession', ran)
    let builds = 0
    const counted = Object.defineProperty({ ...extension }, 'initial', {
      get: () => {
        builds++
        return extension.initial
      },
      enumerable: true,
    })
    const config = featureConfig({ extensions: [counted] })
    const resolved = assertConfig(config)
    const atLoad = builds
    expect(atLoad).toBeGreaterThan(0)
    for (const client of [new Client(config), new Client(config)]) await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(ran).toEqual(['counted', 'counted'])
    expect(builds).toBe(atLoad)
    expect(flowMachine(config, 'signin-completion')).toBe(resolved.completion.machine)
  })
})
