/**
 * The flags of the routing table as requests meet them: every POST route refuses a post without
 * this browser's token, but those that another party posts to (the provider's callback, its
 * back-channel logout, the passkey answer, each proven otherwise); every page with a form hands out
 * a token, and pages without one do not; the routes that go on to a page of the application take
 * their callback URL from the request (and keep it in its cookie), and no other does. Each route is
 * asked through `Auth`, so a flag dropped from (or added to) one route fails here by name.
 */
import { object } from 'superstruct'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { setup, type AnyStateMachine } from 'xstate'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { createHandler } from '../../core/auth.js'
import { defineFlow } from '../../core/engine/flow.js'
import { effects } from '../../core/flows/effect.js'
import { assertConfig, Auth, customFetch, skipCSRFCheck } from '../../core/index.js'
import { routesOf, type Route } from '../../core/http/routes.js'
import { REAUTHENTICATE, SESSION_MARKING_STATE } from '../../machines/reauthenticate.machine.js'
import { SIGN_IN_COMPLETION } from '../../machines/signin-completion.machine.js'
import { finalStateOutcome } from '../../machines/shared/outcome.js'
import Email from '../../providers/email.js'
import OAuth from '../../providers/oauth.js'
import OIDC from '../../providers/oidc.js'
import Passkey from '../../providers/passkey.js'
import Password from '../../providers/password.js'
import { testHasher } from '../password-flow/fixtures.js'
import { authRequest, Client, credentialsProvider, ORIGIN, featureConfig } from '../fixtures/http.js'
import { everyFlow } from '../../core/flows/catalogue.js'
import { apiKeys } from '../../core/api-keys.js'

/** Every route authchart ships: the built-in flows', the optional features' and the API keys'. */
const routes = routesOf(everyFlow, apiKeys().routes)

const CSRF_COOKIE = '__Host-authjs.csrf-token'
const CALLBACK_COOKIE = '__Secure-authjs.callback-url'

/** Posted without a token by design: the caller proves itself another way (see core/http/routes.ts). */
const POSTS_WITHOUT_TOKEN = ['POST callback oauth', 'POST callback oidc', 'POST backchannel-logout oidc', 'POST callback webauthn']
/** Pages that show a form (sign-in, sign-out, the e-mail link, a password step, a step, the enrolment) and so hand out a token. */
const PAGES_WITH_TOKEN = [
  'GET csrf none',
  'GET signin none',
  'GET signout none',
  'GET callback email',
  'GET callback password',
  'GET step none',
  'GET two-factor none',
]

/** Routes that read the callback URL of the request (and keep it in its cookie). */
const TAKE_CALLBACK_URL = [
  'GET reauthenticate none',
  'GET signin none',
  'POST signin none',
  'POST signin credentials',
  'POST signin webauthn',
  'POST signout none',
  'POST callback credentials',
  'POST signin oauth',
  'POST signin oidc',
  'POST signin email',
  'GET callback email',
  'POST callback email',
  'POST two-factor none',
  'POST webauthn-options webauthn',
  'POST signin password',
  'GET callback password',
  'POST callback password',
]
/** Reads it too, but its refusal of a malformed answer carries no cookie: not observable this way. */
const CALLBACK_URL_UNSEEN = ['POST callback webauthn']

const offline = { [customFetch]: () => Promise.reject(new TypeError('offline')) }
const config = featureConfig({
  adapter: MemoryAdapter(createMemoryStore()),
  experimental: { enableWebAuthn: true },
  providers: [
    credentialsProvider(),
    OAuth({ id: 'op', authorization: 'https://op.invalid/authorize', token: 'https://op.invalid/token', userinfo: 'https://op.invalid/me', clientId: 'c', clientSecret: 's', ...offline } as never),
    OIDC({ id: 'corp', issuer: 'https://op.invalid', clientId: 'c', clientSecret: 's', ...offline } as never),
    Email({ sendVerificationRequest: async () => {} }),
    Passkey(),
    Password({ hasher: testHasher(), send: () => {} }),
  ] as never,
  apiKeys: apiKeys(),
})
const providerOfType = new Map(assertConfig(config).providers.map((p) => [p.type as string, p.id]))
const nameOf = (route: Route) => `${route.method} ${route.action} ${route.provider}`
const pathOf = (route: Route) => {
  const flow = route.action === 'step' ? '/signin-completion' : ''
  return `/auth/${route.action}${route.provider === 'none' ? flow : `/${providerOfType.get(route.provider)}`}`
}

/** Whether Auth answered a request as a missing CSRF token (Auth.js's error redirect, or 400 for a JSON route). */
function refusedForCsrf(response: Response, route: Route): boolean {
  const location = response.headers.get('location') ?? ''
  return location.includes('error=MissingCSRF') || (route.failure === 'json-null' && response.status === 400)
}

describe('the CSRF flags of the routing table, through Auth', () => {
  const posts = routes.filter((route) => route.method === 'POST')
  const gets = routes.filter((route) => route.method === 'GET')

  it('names every exception that exists (a stale list would hide a route)', () => {
    const names = routes.map(nameOf)
    expect(names).toEqual(expect.arrayContaining([...POSTS_WITHOUT_TOKEN, ...PAGES_WITH_TOKEN]))
  })

  it.each(posts.filter((route) => !POSTS_WITHOUT_TOKEN.includes(nameOf(route))).map((route) => [nameOf(route), route] as const))(
    '%s refuses a post without a token, before anything else runs',
    async (_name, route) => {
      const response = await Auth(authRequest({ path: pathOf(route), body: { username: 'alice', password: 'wonderland', email: 'a@example.com' } }), config)
      expect(refusedForCsrf(response, route), `${response.status} ${response.headers.get('location')}`).toBe(true)
      expect(response.headers.getSetCookie().some((c) => c.includes('session-token=') && !c.includes('Max-Age=0') && !c.includes('Expires=Thu, 01 Jan 1970'))).toBe(false)
    },
  )

  it.each(posts.filter((route) => POSTS_WITHOUT_TOKEN.includes(nameOf(route))).map((route) => [nameOf(route), route] as const))(
    '%s is not refused for want of a token (its caller is not our form)',
    async (_name, route) => {
      const response = await Auth(authRequest({ path: pathOf(route), body: { action: 'authenticate', data: '{}' } }), config)
      expect(refusedForCsrf(response, route), `${response.status} ${response.headers.get('location')}`).toBe(false)
    },
  )

  it.each(gets.map((route) => [nameOf(route), route] as const))('%s hands out a CSRF token only if it shows a form', async (name, route) => {
    const response = await Auth(authRequest({ path: pathOf(route), query: { action: 'authenticate' } }), config)
    const handsOut = response.headers.getSetCookie().some((c) => c.startsWith(`${CSRF_COOKIE}=`))
    expect(handsOut, `${response.status} ${response.headers.get('location')}`).toBe(PAGES_WITH_TOKEN.includes(name))
  })

  it.each(routes.filter((route) => !CALLBACK_URL_UNSEEN.includes(nameOf(route))).map((route) => [nameOf(route), route] as const))(
    '%s keeps the callback URL of the request only if it goes on to a page of the application',
    async (name, route) => {
      const client = new Client(config)
      const csrfToken = await client.csrfToken()
      const callbackUrl = 'https://authchart.test/dest'
      const path = pathOf(route).slice('/auth'.length)
      const response =
        route.method === 'GET'
          ? await client.send({ path, query: { callbackUrl, action: 'authenticate' } })
          : await client.send({ path, body: { csrfToken, callbackUrl, username: 'nobody', password: 'x', email: 'a@example.com', action: 'authenticate', data: '{}' } })
      const kept = response.headers.getSetCookie().some((c) => c.startsWith(`${CALLBACK_COOKIE}=${encodeURIComponent(callbackUrl)}`))
      expect(kept, `${response.status} ${response.headers.get('location')}`).toBe(TAKE_CALLBACK_URL.includes(name))
    },
  )
})

describe('the gate in dispatch, through Auth', () => {
  const errorsOf = (logger: { error: { mock: { calls: unknown[][] } } }) =>
    logger.error.mock.calls.map(([error]) => `${(error as Error).name}: ${(error as Error).message}`)

  it('names the missing CSRF token, the unknown provider and the unknown action in the log', async () => {
    const local = featureConfig({ providers: [credentialsProvider(), { ...credentialsProvider(), id: 'pin' }] as never })
    await Auth(authRequest({ path: '/auth/signin/credentials', body: {} }), local)
    await Auth(authRequest({ path: '/auth/signin/nope', body: {} }), local)
    await Auth(authRequest({ path: '/auth/csrf', body: {} }), local)
    expect(errorsOf(local.logger).join('\n')).toContain('CSRF token was missing during an action signin')
    expect(errorsOf(local.logger).join('\n')).toContain('Provider with id "nope" not found. Available providers: [credentials, pin].')
    expect(errorsOf(local.logger).join('\n')).toContain('Cannot handle action: csrf')
  })

  it('hands out a token on the sessions page (a route whose flag is a function), not on its JSON', async () => {
    const page = await Auth(authRequest({ path: '/auth/sessions', headers: { accept: 'text/html' } }), config)
    expect(page.headers.getSetCookie().some((c) => c.startsWith(`${CSRF_COOKIE}=`))).toBe(true)
    const json = await Auth(authRequest({ path: '/auth/sessions' }), config)
    expect(json.headers.getSetCookie().some((c) => c.startsWith(`${CSRF_COOKIE}=`))).toBe(false)
  })

  it("with skipCSRFCheck, neither checks nor hands out a token: the page's forms carry an empty one", async () => {
    const skipping = featureConfig({ skipCSRFCheck } as never)
    const page = await Auth(authRequest({ path: '/auth/signin' }), skipping)
    expect(page.headers.getSetCookie().some((c) => c.startsWith(`${CSRF_COOKIE}=`))).toBe(false)
    expect(await page.text()).toContain('<input type="hidden" name="csrfToken" value="">')
    const signIn = await Auth(authRequest({ path: '/auth/callback/credentials', body: { username: 'alice', password: 'wonderland' } }), skipping)
    expect(signIn.headers.getSetCookie().some((c) => c.startsWith('__Secure-authjs.session-token='))).toBe(true)
  })

  it('lets the session flow set the session cookie (an update reissues it)', async () => {
    const client = new Client(featureConfig())
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const update = await client.send({ path: '/session', json: { csrfToken: await client.csrfToken(), data: {} } })
    expect(update.status).toBe(200)
    expect(update.headers.getSetCookie().some((c) => c.startsWith('__Secure-authjs.session-token=') && !c.includes('Max-Age=0'))).toBe(true)
  })

  /**
   * A chart named `id`, served by a route of its own (GET /providers, whose request sends `go`),
   * whose outcome sets a session; `implementations` answer its effects.
   */
  function chartServing(id: string, states: Record<string, unknown>, implementations: Record<string, () => object> = {}) {
    const machine: AnyStateMachine = setup({}).createMachine({
      id,
      version: '1',
      initial: 'idle',
      context: {},
      output: finalStateOutcome,
      states: states as never,
    }) as unknown as AnyStateMachine
    const flow = defineFlow({ machine, context: object(), effects: effects(machine, implementations as never) })
    const table: Route[] = [
      ...routes.filter((r) => r.action !== 'providers'),
      { method: 'GET', action: 'providers', provider: 'none', serve: { flow, params: object() as never, toEvent: (ctx) => ({ type: 'go', at: ctx.at }) } },
    ]
    return createHandler(table)
  }

  describe('refuses a session from the sign-in completion that did not pass an issuing state', () => {
    const setsSession = { type: 'redirect', url: '/', session: { op: 'set', value: 'forged', expires: 2_000_000_000 } }

    it.each([
      ['a final state reached around the issuing states', { idle: { on: { go: 'signedIn' } }, signedIn: { type: 'final', output: () => setsSession } }],
      [
        'a waiting state after an issuing state',
        {
          idle: { on: { go: 'issuingSession' } },
          // An issuing state left at once: its effect stands for the one that issues the session.
          issuingSession: { tags: 'effect.issue', on: { 'issue.done': 'waiting' } },
          waiting: { tags: 'awaitsRequest', meta: { outcome: () => setsSession }, on: { never: 'idle' } },
        },
      ],
    ])('%s', async (_name, states) => {
      const local = featureConfig()
      const response = await chartServing(SIGN_IN_COMPLETION, states, { issue: () => ({}) })(authRequest({ path: '/auth/providers' }), local)
      expect(response.headers.getSetCookie().some((c) => c.includes('session-token=forged'))).toBe(false)
      expect(errorsOf(local.logger).join('\n')).toContain(`${SIGN_IN_COMPLETION} may not set a session outside its issuing states`)
    })
  })

  describe('refuses a session from the re-authentication outside the state that records the proof', () => {
    const setsSession = { type: 'redirect', url: '/', session: { op: 'set', value: 'reissued', expires: 2_000_000_000 } }
    const marking = { tags: 'effect.mark', on: { 'mark.done': 'done' } }
    const ask = async (states: Record<string, unknown>) => {
      const local = featureConfig()
      // `mark` stands for the effect that records the proof: its answer is a step from that state.
      const response = await chartServing(REAUTHENTICATE, states, { mark: () => ({}) })(authRequest({ path: '/auth/providers' }), local)
      return { local, setsCookie: response.headers.getSetCookie().some((c) => c.includes('session-token=reissued')) }
    }

    it('lets it re-issue the session from that state', async () => {
      const { setsCookie } = await ask({
        idle: { on: { go: SESSION_MARKING_STATE } },
        [SESSION_MARKING_STATE]: marking,
        done: { type: 'final', output: () => setsSession },
      })
      expect(setsCookie).toBe(true)
    })

    it.each([
      ['a final state reached around it', { idle: { on: { go: 'proven' } }, proven: marking, done: { type: 'final', output: () => setsSession } }],
      [
        'a waiting state after it',
        {
          idle: { on: { go: SESSION_MARKING_STATE } },
          [SESSION_MARKING_STATE]: { tags: 'effect.mark', on: { 'mark.done': 'waiting' } },
          waiting: { tags: 'awaitsRequest', meta: { outcome: () => setsSession }, on: { never: 'idle' } },
        },
      ],
    ])('%s', async (_name, states) => {
      const { local, setsCookie } = await ask(states)
      expect(setsCookie).toBe(false)
      expect(errorsOf(local.logger).join('\n')).toContain(`${REAUTHENTICATE} may not set a session outside its issuing states`)
    })
  })

  it('answers 503 when a route\'s handler met an outage it logged, whatever the handler answered', async () => {
    const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
    /** A handler that reads the adapter, logs its failure and answers without it. */
    const table: Route[] = [
      ...routes.filter((r) => r.action !== 'providers'),
      {
        method: 'GET',
        action: 'providers',
        provider: 'none',
        serve: async (ctx) => {
          try {
            await ctx.adapter!.getUser!('u-1')
          } catch (error) {
            ctx.logger.error(error as Error)
          }
          return { body: 'answered without the database' }
        },
      },
    ]
    const handler = createHandler(table)
    const memory = MemoryAdapter(createMemoryStore())
    const failing = featureConfig({ adapter: { ...memory, getUser: () => Promise.reject(down()) } })
    const response = await handler(authRequest({ path: '/auth/providers' }), failing)
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('5')
    const working = await handler(authRequest({ path: '/auth/providers' }), featureConfig({ adapter: memory }))
    expect(working.status).toBe(200)
    expect(await working.text()).toBe('answered without the database')
  })
})

describe("the step-up gate of a route (POST /sessions: 'revoke-sessions')", () => {
  afterEach(() => vi.useRealTimers())

  it('sends a stale session to re-authenticate and revokes nothing; a fresh one revokes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const store = createMemoryStore()
    const local = featureConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database' } })
    const laptop = new Client(local)
    await laptop.signIn({ username: 'alice', password: 'wonderland' })
    const phone = new Client(local)
    await phone.signIn({ username: 'alice', password: 'wonderland' })
    vi.setSystemTime(Date.now() + 11 * 60_000)
    const revokeOthers = async (headers: Record<string, string> = {}) =>
      laptop.send({ path: '/sessions', body: { csrfToken: await laptop.csrfToken(), revoke: 'others' }, headers })
    const page = await revokeOthers({ accept: 'text/html' })
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe(`${ORIGIN}/auth/step/${REAUTHENTICATE}`)
    const fetched = await revokeOthers()
    expect(fetched.status).toBe(401)
    expect(fetched.headers.get('www-authenticate')).toContain('insufficient_user_authentication')
    expect(store.sessions.size).toBe(2)
    expect(local.logger.debug).toHaveBeenCalledWith('step-up required', { action: 'revoke-sessions' })

    // Signed in again just now: fresh, the same request revokes the other sessions.
    const fresh = new Client(local)
    await fresh.signIn({ username: 'alice', password: 'wonderland' })
    const revoked = await fresh.send({ path: '/sessions', body: { csrfToken: await fresh.csrfToken(), revoke: 'others' } })
    expect(await revoked.json()).toEqual({ revoked: 2 })
    expect(store.sessions.size).toBe(1)
  })
})
