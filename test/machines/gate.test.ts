/**
 * The second-factor gate, checked on the charts of every machine in the registry (and on an
 * extended chart): no path reaches a session around it. Each check is shown to fail on a chart
 * edited to skip the gate, and the engine refuses at run time a session set by any flow but the
 * sign-in completion. The list of charts it walks is proved to be the set of charts requests can
 * reach, derived from the routing table and seen at run time through `Auth`.
 */
import { object } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { createMachine, setup, type AnyStateMachine } from 'xstate'
import { CONTINUE, stepForm, toStepPage, type AuthConfig, type ExtensionPoint, type FlowExtension, type FlowTrace } from 'authchart'
import { defineExtension } from 'authchart/extensions'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { termsExtension } from '../../extensions/terms.js'
import { assertConfig, Auth, customFetch } from '../../core/index.js'
import type { ResolvedConfig } from '../../core/config/resolve-config.js'
import { defineFlow } from '../../core/engine/flow.js'
import { createHandler } from '../../core/auth.js'
import { RequestError } from '../../core/errors.js'
import type { RequestContext } from '../../core/http/context.js'
import { routesOf, handoffs, type FlowBinding, type Route } from '../../core/http/routes.js'
import Email from '../../providers/email.js'
import OAuth from '../../providers/oauth.js'
import OIDC from '../../providers/oidc.js'
import Passkey from '../../providers/passkey.js'
import Password from '../../providers/password.js'
import { testHasher } from '../password-flow/fixtures.js'
import { PASSWORD_INTENTS } from '../../core/flows/password/index.js'
import { secondFactorGateViolations } from '../../machines/checks.js'
import { buildSignInCompletion, credentialsSignInMachine, signInCompletionMachine } from '../../machines/index.js'
import { finalStateOutcome } from '../../machines/shared/outcome.js'
import { builtInMachines } from '../../visualizations/flows.js'
import { authRequest, Client, credentialsProvider, ORIGIN, featureConfig } from '../fixtures/http.js'
import { everyFlow } from '../../core/flows/catalogue.js'

/** Every route authchart ships: the built-in flows' and the optional features'. */
const routes = routesOf(everyFlow)

const STEP = `${ORIGIN}/auth/step/signin-completion`

/** The completion's config with one state's transitions replaced. */
function editedCompletion(state: string, on: Record<string, unknown>): AnyStateMachine {
  const { config } = signInCompletionMachine
  const states = config.states as Record<string, Record<string, unknown>>
  return createMachine({ ...config, states: { ...states, [state]: { ...states[state], on: { ...(states[state]!.on as object), ...on } } } } as never)
}

/**
 * The charts the gate check walks. `the gate walks what the router routes` below proves this is
 * every chart a request can reach, and nothing else.
 */
const GATE_CHECKED: readonly AnyStateMachine[] = builtInMachines

const terms = termsExtension({ version: '1', html: '', acceptedVersion: () => null, recordAcceptance: () => {} })
const termsAfterFirstSignIn = termsExtension({ version: '1', html: '', acceptedVersion: () => null, recordAcceptance: () => {}, at: 'afterFirstSignIn' })

describe('the second-factor gate on the graph', () => {
  it.each([
    ...GATE_CHECKED.map((m) => [m.id, m] as const),
    ['signin-completion with terms before the session', buildSignInCompletion([terms])] as const,
    ['signin-completion with terms after the first sign-in', buildSignInCompletion([termsAfterFirstSignIn])] as const,
  ])(
    'no path of %s reaches a session around it',
    (_id, machine) => {
      expect(secondFactorGateViolations(machine)).toEqual([])
    },
  )

  it('finds a stored user sent straight to the session', () => {
    const skipped = editedCompletion('storingUser', { 'storeUser.done': { target: 'preparingSession' } })
    expect(secondFactorGateViolations(skipped)).toContainEqual(expect.stringContaining('without the second-factor gate'))
  })

  it('finds an enrolled user whose code is never checked', () => {
    const unchecked = editedCompletion('awaitingSecondFactor', { 'secondFactor.submit': { target: 'preparingSession' } })
    expect(secondFactorGateViolations(unchecked)).toContainEqual(expect.stringContaining('without a verified code'))
    const wrongIsFine = editedCompletion('verifyingSecondFactor', { 'verifySecondFactor.failed': { target: 'preparingSession' } })
    expect(secondFactorGateViolations(wrongIsFine)).toContainEqual(expect.stringContaining('without a verified code'))
  })

  it('finds a gate whose enrolled branch is shadowed', () => {
    const shadowed = editedCompletion('checkingSecondFactor', {
      'findSecondFactor.done': [{ target: 'preparingSession' }, { guard: 'isEnrolled', target: 'awaitingSecondFactor' }],
    })
    expect(secondFactorGateViolations(shadowed)).toContainEqual(expect.stringContaining('first choice is not "isEnrolled"'))
  })

  it('finds a first factor that issues a session itself', () => {
    const { config } = credentialsSignInMachine
    const states = config.states as Record<string, Record<string, unknown>>
    const shortcut = createMachine({
      ...config,
      states: { ...states, issuingSession: { tags: 'effect.issueSession', on: { 'issueSession.done': 'verified' } } },
    } as never)
    expect(secondFactorGateViolations(shortcut)).toEqual([
      'credentials-signin: "issuingSession" issues a session without the sign-in completion',
    ])
  })
})

describe('the gate at run time', () => {
  it('refuses a session cookie from a flow other than the sign-in completion', async () => {
    const rogue = setup({}).createMachine({
      id: 'rogue-signin',
      version: '1',
      initial: 'idle',
      context: {},
      output: finalStateOutcome,
      states: {
        idle: { tags: 'awaitsRequest', on: { 'rogue.submit': 'signedIn' } },
        signedIn: {
          type: 'final',
          output: () => ({ type: 'redirect', url: '/', session: { op: 'set', value: 'forged', expires: 2_000_000_000 } }),
        },
      },
    })
    const flow = defineFlow({ machine: rogue, context: object(), effects: {} })
    const table: Route[] = [
      ...routes.filter((r) => r.action !== 'providers'),
      { method: 'GET', action: 'providers', provider: 'none', serve: { flow, params: object() as never, toEvent: (ctx) => ({ type: 'rogue.submit', at: ctx.at }) } },
    ]
    const config = featureConfig()
    const response = await createHandler(table)(authRequest({ path: '/auth/providers' }), config)
    expect(response.headers.get('location')).toBe('https://authchart.test/auth/error?error=Configuration')
    expect(response.headers.getSetCookie().some((c) => c.includes('session-token'))).toBe(false)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ code: 'ERR_FLOW_SESSION_REFUSED' }))
  })
})

/** A step an application inserts at `at`: one page that goes on. */
const pageAt = (at: ExtensionPoint, id: string): FlowExtension =>
  defineExtension({
    id,
    version: '1',
    at,
    initial: `${id}Page`,
    states: {
      [`${id}Page`]: {
        tags: 'awaitsRequest',
        meta: { outcome: toStepPage, step: { page: id, events: { [`${id}.continue`]: object() } } },
        on: { [`${id}.continue`]: CONTINUE },
      },
    },
    pages: { [id]: (view) => ({ title: id, html: stepForm(view, '', 'Continue') }) },
  })

const oauthWithoutDiscovery = () =>
  OAuth({
    id: 'op',
    authorization: 'https://op.invalid/authorize',
    token: 'https://op.invalid/token',
    userinfo: 'https://op.invalid/me',
    clientId: 'client',
    clientSecret: 'secret',
  })

/** A configuration with a provider of every kind and a step at every insertion point. */
function everyKindOfConfig(providers: unknown[] = []): AuthConfig {
  return featureConfig({
    adapter: MemoryAdapter(createMemoryStore()),
    experimental: { enableWebAuthn: true },
    providers: [
      credentialsProvider(),
      oauthWithoutDiscovery(),
      Email({ sendVerificationRequest: async () => {} }),
      Passkey(),
      Password({ hasher: testHasher(), send: () => {} }),
      ...providers,
    ] as never,
    extensions: [pageAt('afterFirstFactor', 'first'), pageAt('afterFirstSignIn', 'once'), pageAt('beforeSession', 'last')],
  })
}

/** What a flow binding reads of the request to find its flow: the config and the flow a step names. */
const contextOf = (config: ResolvedConfig, flowId?: string, body?: Record<string, unknown>) =>
  ({ config, flowId, request: { body: body ?? {}, query: {} } }) as unknown as RequestContext

/**
 * The charts requests can reach under `config`, derived from the routing table: the flow of every
 * route, the flows its charts hand over to (the completion with the config's extensions), and the
 * flows a step may resume (only one that a route or a handoff started can be at rest).
 */
async function routedCharts(config: AuthConfig): Promise<AnyStateMachine[]> {
  // The first request loads the flow modules the providers need, as it does in an application.
  await Auth(authRequest({ path: '/auth/providers' }), config)
  const resolved = assertConfig(config)
  const found = new Map<string, AnyStateMachine>()
  const add = (machine: AnyStateMachine) => found.set(machine.id, machine)
  const bindings = routes.map((r) => r.serve).filter((serve): serve is FlowBinding<never> => typeof serve !== 'function')
  const chartOf = (binding: FlowBinding<never>, flowId?: string) =>
    (typeof binding.flow === 'function' ? binding.flow(contextOf(resolved, flowId)) : binding.flow).machine
  for (const binding of bindings) if (!binding.step) add(chartOf(binding))
  // The password callback starts the flow its body's `intent` names: each of them.
  const passwordCallback = routes.find((r) => r.provider === 'password' && r.method === 'POST' && r.action === 'callback')!.serve as FlowBinding<never>
  for (const intent of PASSWORD_INTENTS) add((passwordCallback.flow as (ctx: RequestContext) => { machine: AnyStateMachine })(contextOf(resolved, undefined, { intent })).machine)
  for (const handoff of Object.values(handoffs)) add(handoff.flow(contextOf(resolved)).machine)
  for (const binding of bindings.filter((b) => b.step)) {
    for (const id of [...found.keys()]) {
      try {
        add(chartOf(binding, id))
      } catch (error) {
        if (!(error instanceof RequestError)) throw error // a flow that has no steps
      }
    }
  }
  return [...found.values()]
}

const idsOf = (machines: readonly AnyStateMachine[]) => machines.map((m) => m.id).sort()
/**
 * Charts a feature's own route handler runs (not a flow binding of the table): the organisation
 * invitations, behind `POST /organization/invite | invitation`, the memberships, behind
 * `POST /organization/suspend | reinstate | remove | leave | role | transfer | update | delete`, and the
 * device authorization grant, behind `/device_authorization`, the token endpoint and `POST /device`.
 * Walked all the same (GATE_CHECKED).
 */
const RUN_BY_FEATURE_HANDLERS = ['organization-invitation', 'organization-membership', 'device-authorization']
const routed = await routedCharts(everyKindOfConfig([OIDC({ id: 'corp', issuer: 'https://op.invalid', clientId: 'c', clientSecret: 's' })]))

describe('the gate walks what the router routes', () => {
  it('walks exactly the charts the routing table, its handoffs and its steps reach', () => {
    expect(idsOf(routed)).toContain('signin-completion')
    expect(idsOf(GATE_CHECKED)).toEqual([...idsOf(routed), ...RUN_BY_FEATURE_HANDLERS].sort())
  })

  it.each(routed.map((m) => [m.id, m] as const))(
    'finds no way around the gate in %s as requests reach it (the completion with a step at every point)',
    (id, machine) => {
      expect(secondFactorGateViolations(machine)).toEqual([])
      expect(idsOf(GATE_CHECKED)).toContain(id)
    },
  )

  it('runs only charts it walks: every flow route of the table, asked through Auth, runs a chart of the list', async () => {
    const ran = new Set<string>()
    // An OpenID Connect provider too (the logout routes answer only for one), offline: no request
    // leaves the machine, and the routes that would need its metadata fail short of a 500.
    const offline = { [customFetch]: () => Promise.reject(new TypeError('offline')) }
    const oidc = OIDC({ id: 'corp', issuer: 'https://op.invalid', clientId: 'c', clientSecret: 's', ...offline } as never)
    const config = { ...everyKindOfConfig([oidc]), inspect: (trace: FlowTrace) => void ran.add(trace.flow) }
    const browser = new Client(config)
    // Signed in past the three steps, so that the routes for a signed-in user run their flows too.
    expect((await browser.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(STEP)
    for (const event of ['first.continue', 'once.continue', 'last.continue']) {
      await browser.send({ path: '/step/signin-completion', body: { event, csrfToken: await browser.csrfToken() } })
    }
    expect(((await browser.session()).body as { user?: unknown } | null)?.user).toBeDefined()
    const providerOfType = new Map(assertConfig(config).providers.map((p) => [p.type as string, p.id]))
    // Signing out (which deletes the shared session row) last.
    const signOutLast = [...routes].sort((a, b) => Number(a.action === 'signout') - Number(b.action === 'signout'))
    for (const route of signOutLast) {
      if (typeof route.serve === 'function' || route.action === 'step') continue
      if (route.provider !== 'none' && !providerOfType.has(route.provider)) continue
      const path = `/${route.action}${route.provider === 'none' ? '' : `/${providerOfType.get(route.provider)}`}`
      const copy = new Client(config)
      for (const [name, value] of browser.jar.cookies) copy.jar.cookies.set(name, value)
      const csrfToken = await copy.csrfToken()
      const fields = { csrfToken, username: 'alice', password: 'wonderland', email: 'alice@example.com', action: 'authenticate' }
      // The password callback once per intent: each starts its own flow.
      const passwordRoute = route.provider === 'password' && route.method === 'POST'
      // (and the signed-in user's password settings, which start the change chart)
      const intents = passwordRoute && route.action === 'callback' ? PASSWORD_INTENTS : passwordRoute && route.action === 'signin' ? (['change'] as const) : [undefined]
      for (const intent of intents) {
        const body = intent === undefined ? fields : { ...fields, intent, csrfToken: await copy.csrfToken() }
        const response = await copy.send(route.method === 'GET' ? { path, query: { action: 'authenticate' } } : { path, body })
        expect(response.status, `${route.method} ${path} ${intent ?? ''}`).toBeLessThan(500)
      }
    }
    expect([...ran].sort()).toEqual(idsOf(routed))
    for (const id of ran) expect(idsOf(GATE_CHECKED)).toContain(id)
  })
})
